// Translation of CUDA runtime status codes into Ember's typed exceptions.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "ember/core/errors.h"

namespace ember::cuda {

/// Throws DeviceMemoryError for out-of-memory, DeviceError for any other failure.
inline void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::string msg =
      std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
  if (status == cudaErrorMemoryAllocation) throw DeviceMemoryError(msg);
  throw DeviceError(msg);
}

/// Checks the launch that was just enqueued.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

}  // namespace ember::cuda
