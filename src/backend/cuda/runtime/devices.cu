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
    // cudaDeviceProp lost its memory clock in CUDA 13; the attributes keep it.
    int mem_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, i) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, i) == cudaSuccess)
      g.memory_bandwidth_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    out.push_back(g);
  }
  return out;
}

}  // namespace ember::backend
