// Kernel launches with programmatic dependent launch: the next kernel of a stream is scheduled
// while the previous one drains (hiding the launch gap between dependent kernels), and waits on
// the device (kernels::wait_for_previous_kernels) for the previous kernels' results.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "runtime/cuda_check.h"

namespace ember::cuda {

/// Launches kernel<<<grid, block, smem, s>>>(args...) in clusters of `cluster_x` blocks along x
/// (1: no clusters) with the programmatic stream serialization attribute. Only for kernels that
/// call kernels::wait_for_previous_kernels() before their first access to memory that earlier
/// work of the stream may touch. Every kernel of the backend is launched this way: an A/B on an
/// H200 that launched the NTT's chunk kernel without the attribute was faster for a few small
/// forward transforms but slower overall (bootstrap 23.2 -> 23.6 ms, N14 rotations 1.26x slower).
///
/// Every launch also asks for the largest shared-memory carveout: left to the driver, adjacent
/// kernels get different L1 / shared-memory splits, and an SM changes its split only once idle,
/// so the next kernel could not start while the previous one drained (docs/architecture.md,
/// "Kernel launches", has the measurements).
template <class... Params, class... Args>
void launch_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                        cudaStream_t s, unsigned cluster_x, const char* name, Args&&... args) {
  cudaLaunchAttribute attrs[3]{};
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  attrs[1].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
  attrs[1].val.sharedMemCarveout = cudaSharedmemCarveoutMaxShared;
  attrs[2].id = cudaLaunchAttributeClusterDimension;
  attrs[2].val.clusterDim.x = cluster_x;
  attrs[2].val.clusterDim.y = 1;
  attrs[2].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = attrs;
  cfg.numAttrs = cluster_x > 1 ? 3 : 2;
  check(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...), name);
}

/// launch_in_clusters without clusters: the launch of every kernel but the cluster NTT.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s,
            const char* name, Args&&... args) {
  launch_in_clusters(kernel, grid, block, smem, s, 1, name, std::forward<Args>(args)...);
}

}  // namespace ember::cuda
