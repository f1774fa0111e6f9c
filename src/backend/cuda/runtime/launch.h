// Kernel launches with programmatic dependent launch: the next kernel of a stream is scheduled
// while the previous one drains (hiding the launch gap between dependent kernels), and waits on
// the device (kernels::wait_for_previous_kernels) for the previous kernels' results.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "runtime/cuda_check.h"

namespace ember::cuda {

/// Launches kernel<<<grid, block, smem, s>>>(args...) with the programmatic stream serialization
/// attribute. Only for kernels that call kernels::wait_for_previous_kernels() before their first
/// access to memory that earlier work of the stream may touch. Every kernel of the backend is
/// launched this way: an A/B on an H200 that launched the NTT's chunk kernel without the
/// attribute was faster for a few small forward transforms but slower overall (bootstrap
/// 23.2 -> 23.6 ms, N14 rotations 1.26x slower).
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s,
            const char* name, Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  check(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...), name);
}

}  // namespace ember::cuda
