// Enumeration of the visible CUDA GPUs.
#include <cuda_runtime.h>

#include <vector>

#include "ember/backend/backend.h"

namespace ember::backend {

std::vector<GpuInfo> cuda_device_list() {
  int count = 0;
  // No driver or no GPU: report none rather than failing (a CPU machine with a CUDA build).
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  std::vector<GpuInfo> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    GpuInfo g;
    g.index = i;
    g.name = p.name;
    g.memory_bytes = p.totalGlobalMem;
    g.major = p.major;
    g.minor = p.minor;
    g.multiprocessors = p.multiProcessorCount;
    out.push_back(g);
  }
  return out;
}

}  // namespace ember::backend
