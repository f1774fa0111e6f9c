// Host launcher of the one-pass cluster NTT (kernels/ntt_cluster.cuh), compiled apart from the
// other schedules so that the NTT's translation units build in parallel.
#include <map>
#include <mutex>
#include <utility>

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

/// Prepares `kernel` once per device (its shared memory size, clusters of 16 where asked) and
/// says whether the device can run its clusters at all: a MIG slice or another GPU may not hold
/// clusters of 16 blocks, and the launch would fail. Cached: the NTT launches this on every
/// transform.
bool clusters_run(const void* kernel, u32 threads, std::size_t smem, u32 cluster) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, bool> prepared;
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  std::lock_guard lock(mutex);
  const auto key = std::make_pair(dev, kernel);
  if (const auto it = prepared.find(key); it != prepared.end()) return it->second;
  if (smem > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem)),
          "cudaFuncSetAttribute(ntt_cluster_kernel)");
  if (cluster > 8)  // beyond the portable cluster size of 8 (Hopper allows 16)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
          "cudaFuncSetAttribute(ntt_cluster_kernel, non-portable cluster)");
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(cluster, 1);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  const bool ok =
      cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) == cudaSuccess && clusters > 0;
  if (!ok) (void)cudaGetLastError();  // a refused query is an answer, not an error to keep
  prepared[key] = ok;
  return ok;
}

/// Clusters of 2^kLogC blocks with chunks of 2^kLogS values, one cluster per limb; false,
/// launching nothing, where the device cannot run them.
template <int kLogC, int kLogS>
bool cluster_of(const NttBatch& a, std::size_t rows, bool forward, const AffineMap& affine,
                cudaStream_t s) {
  constexpr u32 kC = 1u << kLogC, kThreads = 1u << (kLogS - 3);
  constexpr std::size_t kSmem = kernels::cluster_smem_bytes<kLogC, kLogS>();
  const dim3 grid(kC, static_cast<u32>(rows));
  bool launched = false;
  auto go = [&](auto kernel, auto... args) {
    if (!clusters_run(reinterpret_cast<const void*>(kernel), kThreads, kSmem, kC)) return;
    launch_in_clusters(kernel, grid, kThreads, kSmem, s, kC, "ntt_cluster_kernel", a, args...);
    launched = true;
  };
  using kernels::NttPaths;
  dispatch_paths(a.paths, [&](auto P) {
    constexpr NttPaths kP = decltype(P)::value;
    if (forward && a.lift_rows && !affine.args)  // ModUp's lifted rows (see ntt_columns.cu)
      go(kernels::ntt_cluster_kernel<true, kLogC, kLogS, kP, kernels::kReduceLift>);
    else if (affine.args && a.lift_rows)  // a division's conversion from one prime
      go(kernels::ntt_cluster_affine_kernel<kLogC, kLogS, kP, kernels::kConvertLift>, *affine.args,
         affine.mul, affine.mul_companion);
    else if (affine.args)
      go(kernels::ntt_cluster_affine_kernel<kLogC, kLogS, kP, kernels::kNoLift>, *affine.args,
         affine.mul, affine.mul_companion);
    else if (forward)
      go(kernels::ntt_cluster_kernel<true, kLogC, kLogS, kP, kernels::kNoLift>);
    else
      go(kernels::ntt_cluster_kernel<false, kLogC, kLogS, kP, kernels::kNoLift>);
  });
  return launched;
}

bool cluster_any(const NttBatch& a, std::size_t rows, bool forward, const AffineMap& affine,
                 cudaStream_t s) {
  // Chunks of 2^9 .. 2^12 values (64 .. 512 threads per block). Measured on an H200 (2026-11-22,
  // bench/RESULTS.md): chunks of 2^10 with clusters of 8 (N = 2^13) and 16 (2^14) are the fastest
  // choices; blocks of 512 threads (N = 2^15 with clusters of 8, 2^16) are slower than the
  // two-kernel schedules.
  switch (log2u(a.n)) {
    case 12:
      return cluster_of<3, 9>(a, rows, forward, affine, s);
    case 13:
      return cluster_of<3, 10>(a, rows, forward, affine, s);
    case 14:
      return cluster_of<4, 10>(a, rows, forward, affine, s);
    case 15:
      return cluster_of<4, 11>(a, rows, forward, affine, s);
    case 16:
      return cluster_of<4, 12>(a, rows, forward, affine, s);
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
  // In place on the batch, as the division has it, or converted from one prime on the way in.
  if (a.src0 && (!a.lift_rows || !a.lift_maps)) return false;
  return cluster_any(a, rows, true, AffineMap{&args, mul, mul_companion}, s);
}

}  // namespace ember::cuda::ntt_detail
