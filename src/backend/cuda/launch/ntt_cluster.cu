// Host launcher of the one-pass cluster NTT (kernels/ntt_cluster.cuh), compiled apart from the
// other schedules so that the NTT's translation units build in parallel.
#include "kernels/ntt_cluster.cuh"
#include "launch/ntt_launch.h"

namespace ember::cuda::ntt_detail {

namespace {

/// The affine map of a forward transform with a division's store (nullptr: a plain transform).
struct AffineMap {
  const kernels::AffineArgs* args;
  const u64* mul;
  const u64* mul_companion;
};

/// Clusters of 2^kLogC blocks with chunks of 2^kLogS values, one cluster per limb.
template <int kLogC, int kLogS>
void cluster_of(const NttBatch& a, std::size_t rows, bool forward, const AffineMap& affine,
                cudaStream_t s) {
  constexpr u32 kC = 1u << kLogC;
  constexpr std::size_t kSmem = kernels::cluster_smem_bytes<kLogC, kLogS>();
  const dim3 grid(kC, static_cast<u32>(rows));
  auto go = [&](auto kernel, auto... args) {
    if (kSmem > 48 * 1024)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(kSmem)),
            "cudaFuncSetAttribute(ntt_cluster_kernel)");
    if (kC > 8)  // 16 blocks per cluster: beyond the portable size of 8 (Hopper allows 16)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
            "cudaFuncSetAttribute(ntt_cluster_kernel, non-portable cluster)");
    launch_in_clusters(kernel, grid, 1u << (kLogS - 3), kSmem, s, kC, "ntt_cluster_kernel", a,
                       args...);
  };
  using kernels::NttPaths;
  if (forward && a.lift_rows)  // as in chunks(): lifted batches take the kernel with both paths
    return go(kernels::ntt_cluster_kernel<true, kLogC, kLogS, NttPaths::kMixed, true>);
  dispatch_paths(a.paths, [&](auto P) {
    constexpr NttPaths kP = decltype(P)::value;
    if (affine.args)
      go(kernels::ntt_cluster_affine_kernel<kLogC, kLogS, kP>, *affine.args, affine.mul,
         affine.mul_companion);
    else if (forward)
      go(kernels::ntt_cluster_kernel<true, kLogC, kLogS, kP, false>);
    else
      go(kernels::ntt_cluster_kernel<false, kLogC, kLogS, kP, false>);
  });
}

bool cluster_any(const NttBatch& a, std::size_t rows, bool forward, const AffineMap& affine,
                 cudaStream_t s) {
  // Chunks of 2^9 .. 2^12 values (64 .. 512 threads per block). Measured on an H200 (2026-11-22,
  // bench/RESULTS.md): chunks of 2^10 with clusters of 8 (N = 2^13) and 16 (2^14) are the fastest
  // choices; blocks of 512 threads (N = 2^15 with clusters of 8, 2^16) are slower than the
  // two-kernel schedules.
  switch (log2u(a.n)) {
    case 12:
      return cluster_of<3, 9>(a, rows, forward, affine, s), true;
    case 13:
      return cluster_of<3, 10>(a, rows, forward, affine, s), true;
    case 14:
      return cluster_of<4, 10>(a, rows, forward, affine, s), true;
    case 15:
      return cluster_of<4, 11>(a, rows, forward, affine, s), true;
    case 16:
      return cluster_of<4, 12>(a, rows, forward, affine, s), true;
    default:
      return false;
  }
}

}  // namespace

bool cluster_transform(const NttBatch& a, std::size_t rows, bool forward, cudaStream_t s) {
  return cluster_any(a, rows, forward, AffineMap{nullptr, nullptr, nullptr}, s);
}

bool cluster_transform_affine(const NttBatch& a, std::size_t rows, const kernels::AffineArgs& args,
                              const u64* mul, const u64* mul_companion, cudaStream_t s) {
  if (a.lift_rows || a.src0) return false;  // in place on the batch, as the division has it
  return cluster_any(a, rows, true, AffineMap{&args, mul, mul_companion}, s);
}

}  // namespace ember::cuda::ntt_detail
