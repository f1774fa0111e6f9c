// Helpers shared by the NTT launchers (ntt.cu: schedules, chunk and warp-shuffle phases;
// ntt_columns.cu: the column phase; ntt_cluster.cu: the one-pass cluster transform; compiled
// apart so that the kernels build in parallel).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "ember/core/errors.h"
#include "kernels/ntt.cuh"
#include "runtime/cuda_check.h"
#include "runtime/launch.h"

namespace ember::cuda::ntt_detail {

using kernels::NttBatch;
using kernels::NttBatchT;

/// Blocks that keep every SM of the current device busy twice over: below this, a schedule's
/// kernels split their work into smaller blocks, since small transforms are bound by the latency
/// of each block's chain of rounds, not by throughput.
std::size_t busy_blocks();

inline u32 log2u(std::size_t x) {
  u32 l = 0;
  while ((std::size_t{1} << l) < x) ++l;
  return l;
}

template <class Kernel, class... Args>
void launch_smem(Kernel kernel, dim3 grid, u32 threads, std::size_t smem, cudaStream_t s,
                 Args... args) {
  if (smem > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem)),
          "cudaFuncSetAttribute(ntt kernel)");
  launch(kernel, grid, threads, smem, s, "ntt_smem_kernel", args...);
}

/// Calls f(std::integral_constant<NttPaths, P>) for the batch's set of arithmetic paths.
template <class F>
void dispatch_paths(kernels::NttPaths paths, F&& f) {
  using kernels::NttPaths;
  switch (paths) {
    case NttPaths::kInt:
      return f(std::integral_constant<NttPaths, NttPaths::kInt>{});
    case NttPaths::kFloat:
      return f(std::integral_constant<NttPaths, NttPaths::kFloat>{});
    default:
      return f(std::integral_constant<NttPaths, NttPaths::kMixed>{});
  }
}

/// Calls f(std::integral_constant<int, L>) for the runtime value log in [Lo, Hi].
template <int Lo, int Hi, class F>
void dispatch_log(u32 log, F&& f) {
  if constexpr (Lo <= Hi) {
    if (log == Lo) return f(std::integral_constant<int, Lo>{});
    dispatch_log<Lo + 1, Hi>(log, std::forward<F>(f));
  } else {
    throw ParameterError("NTT sub-transform of 2^" + std::to_string(log) +
                         " values is unsupported");
  }
}

/// Column phase: n2 columns of n1 = n / n2 values (8 <= n1 <= 512), 16 columns per block (whole
/// 128-byte rows), or 4 when that leaves SMs idle.
/// On 64- or 32-bit words (NttBatchT<u64> = NttBatch, NttBatchT<u32>).
template <class WordT>
void columns(const kernels::NttBatchT<WordT>& a, std::size_t rows, bool forward, u32 n1, bool last,
             cudaStream_t s);

/// The one-pass transform of one limb per thread-block cluster (launch/ntt_cluster.cu) for
/// 2^12 <= N <= 2^16; returns false, launching nothing, for other sizes and on devices that
/// cannot run its clusters.
bool cluster_transform(const NttBatch& a, std::size_t rows, bool forward, cudaStream_t s);
/// The forward cluster transform with a division's affine map as its store (see
/// launch_ntt_forward_affine); false, launching nothing, where cluster_transform has no schedule
/// or the batch is neither in place nor lifted with conversion maps.
bool cluster_transform_affine(const NttBatch& a, std::size_t rows, const kernels::AffineArgs& args,
                              const u64* mul, const u64* mul_companion, cudaStream_t s);

}  // namespace ember::cuda::ntt_detail
