// DeviceContext: device selection, the stream-ordered memory pool and the default stream.
#include <cstdint>
#include <string>

#include "ember/core/errors.h"
#include "runtime/cuda_check.h"
#include "runtime/device_context.h"

namespace ember::cuda {

DeviceContext::DeviceContext(int index) : index_(index) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    count = 0;
  }
  if (index < 0 || index >= count)
    throw DeviceError("no CUDA device cuda:" + std::to_string(index) + " (" +
                      std::to_string(count) + " visible); use device='cpu' or a listed GPU");
  activate();
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  // The device's default pool, told to keep freed memory cached: allocations in hot paths then
  // come from the pool without a driver call (RMM's pool model, built into CUDA).
  check(cudaDeviceGetDefaultMemPool(&pool_, index), "cudaDeviceGetDefaultMemPool");
  std::uint64_t keep = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep),
        "cudaMemPoolSetAttribute");
}

DeviceContext::~DeviceContext() {
  if (stream_) {
    cudaSetDevice(index_);
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

void DeviceContext::activate() const { check(cudaSetDevice(index_), "cudaSetDevice"); }

void* DeviceContext::allocate(std::size_t bytes, cudaStream_t stream) {
  activate();
  void* p = nullptr;
  cudaError_t st = cudaMallocFromPoolAsync(&p, bytes, pool_, stream);
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw DeviceMemoryError("GPU cuda:" + std::to_string(index_) + " is out of memory: asked for " +
                            std::to_string(bytes >> 20) + " MiB, " + std::to_string(free_b >> 20) +
                            " MiB free of " + std::to_string(total_b >> 20) +
                            " MiB; free objects or use a smaller batch");
  }
  check(st, "cudaMallocFromPoolAsync");
  return p;
}

void DeviceContext::deallocate(void* p, cudaStream_t stream) noexcept {
  cudaSetDevice(index_);
  cudaFreeAsync(p, stream);
}

}  // namespace ember::cuda
