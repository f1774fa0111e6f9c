// Host launcher of the NTT's column phase (see launch/ntt.cu for the schedules around it).
#include "launch/ntt_launch.h"

namespace ember::cuda::ntt_detail {

namespace {

/// Column phase of 2^kLogSubs columns per block.
template <int kLogSubs, class WordT>
void columns_of(const NttBatchT<WordT>& a, std::size_t rows, bool forward, u32 n1, bool last,
                cudaStream_t s) {
  constexpr u32 kSubs = 1u << kLogSubs;
  const u32 n2 = a.n / n1;
  const u32 threads = kSubs * n1 / 8;
  // Values plus the N1-entry twiddle table (pairs of words) shared by the block's columns.
  const std::size_t smem = (std::size_t{kSubs} + 2) * n1 * sizeof(WordT);
  const dim3 grid(n2 / kSubs, static_cast<u32>(rows));
  if constexpr (sizeof(WordT) == 4) {
    // 32-bit words: the integer path without lifts, and the column sizes run_two_kernel gives
    // N = 2^14 .. 2^17 (2^7, 2^8); smaller N run as one chunk.
    dispatch_log<7, 8>(log2u(n1), [&](auto L) {
      constexpr int kLog = decltype(L)::value;
      constexpr auto kInt = kernels::NttPaths::kInt;
      if (forward)
        launch_smem(kernels::ntt_column_kernel<true, kLog, kLogSubs, kInt, kernels::kNoLift, WordT>,
                    grid, threads, smem, s, a, last);
      else
        launch_smem(
            kernels::ntt_column_kernel<false, kLog, kLogSubs, kInt, kernels::kNoLift, WordT>, grid,
            threads, smem, s, a, last);
    });
    return;
  } else {
    dispatch_log<3, 9>(log2u(n1), [&](auto L) {
      constexpr int kLog = decltype(L)::value;
      dispatch_paths(a.paths, [&](auto P) {
        constexpr kernels::NttPaths kP = decltype(P)::value;
        // Every kernel takes the batch's paths alone: for ModUp's lifted rows measured on an H200
        // (bench/RESULTS.md) 2 % faster BGV and BFV N15 rotations and relinearizations than one
        // kernel with both paths, and a division's conversion from one prime has no room for
        // both paths and its maps in the 40-register budget.
        if (forward && a.lift_rows && !a.lift_maps)
          launch_smem(kernels::ntt_column_kernel<true, kLog, kLogSubs, kP, kernels::kReduceLift>,
                      grid, threads, smem, s, a, last);
        else if (forward && a.lift_rows)
          launch_smem(kernels::ntt_column_kernel<true, kLog, kLogSubs, kP, kernels::kConvertLift>,
                      grid, threads, smem, s, a, last);
        else if (forward)
          launch_smem(kernels::ntt_column_kernel<true, kLog, kLogSubs, kP, kernels::kNoLift>, grid,
                      threads, smem, s, a, last);
        else
          launch_smem(kernels::ntt_column_kernel<false, kLog, kLogSubs, kP, kernels::kNoLift>, grid,
                      threads, smem, s, a, last);
      });
    });
  }
}

}  // namespace

template <class WordT>
void columns(const NttBatchT<WordT>& a, std::size_t rows, bool forward, u32 n1, bool last,
             cudaStream_t s) {
  const u32 n2 = a.n / n1;
  if (n2 < 16) throw ParameterError("column phase needs at least 16 columns");
  if (std::size_t{n2 / 16} * rows < busy_blocks())
    columns_of<2>(a, rows, forward, n1, last, s);
  else
    columns_of<4>(a, rows, forward, n1, last, s);
}

template void columns(const NttBatchT<u64>&, std::size_t, bool, u32, bool, cudaStream_t);
template void columns(const NttBatchT<u32>&, std::size_t, bool, u32, bool, cudaStream_t);

}  // namespace ember::cuda::ntt_detail
