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
  cudaSetDevice(index_);
  for (cudaStream_t s : all_streams_) {
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }
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

cudaStream_t DeviceContext::take_stream() {
  std::lock_guard lock(streams_mutex_);
  if (!free_streams_.empty()) {
    cudaStream_t s = free_streams_.back();
    free_streams_.pop_back();
    return s;
  }
  activate();
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  all_streams_.push_back(s);
  return s;
}

void DeviceContext::give_back_stream(cudaStream_t stream) noexcept {
  cudaSetDevice(index_);
  cudaStreamSynchronize(stream);
  std::lock_guard lock(streams_mutex_);
  free_streams_.push_back(stream);
}

void DeviceContext::enable_peer(int peer) {
  std::lock_guard lock(peers_mutex_);
  if (peer == index_ || !peers_.insert(peer).second) return;
  int can = 0;
  check(cudaDeviceCanAccessPeer(&can, index_, peer), "cudaDeviceCanAccessPeer");
  if (!can) return;
  activate();
  const cudaError_t st = cudaDeviceEnablePeerAccess(peer, 0);
  if (st == cudaErrorPeerAccessAlreadyEnabled)
    cudaGetLastError();
  else
    check(st, "cudaDeviceEnablePeerAccess");
  // Stream-ordered pools do not follow peer access: the peer's pool grants this GPU access.
  cudaMemPool_t peer_pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&peer_pool, peer), "cudaDeviceGetDefaultMemPool");
  cudaMemAccessDesc desc{};
  desc.location.type = cudaMemLocationTypeDevice;
  desc.location.id = index_;
  desc.flags = cudaMemAccessFlagsProtReadWrite;
  check(cudaMemPoolSetAccess(peer_pool, &desc, 1), "cudaMemPoolSetAccess");
}

void DeviceContext::deallocate(void* p, cudaStream_t stream) noexcept {
  cudaSetDevice(index_);
  cudaFreeAsync(p, stream);
}

}  // namespace ember::cuda
