// DeviceContext: one GPU's current-device guard, stream-ordered memory pool and default stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <set>
#include <vector>

namespace ember::cuda {

class DeviceContext {
 public:
  /// Throws DeviceError when `index` is not a visible GPU.
  explicit DeviceContext(int index);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int index() const { return index_; }
  cudaStream_t stream() const { return stream_; }
  /// Makes this GPU current for the calling thread.
  void activate() const;
  /// Stream-ordered allocation from the device's pool; DeviceMemoryError says how much was asked
  /// for and how much is free.
  void* allocate(std::size_t bytes, cudaStream_t stream);
  void deallocate(void* p, cudaStream_t stream) noexcept;
  /// A stream of this GPU besides the default one, from the device's pool. Streams given back
  /// are kept for reuse and destroyed with the device: a handle that an object still holds
  /// after its owner gave the stream back stays valid (it only shares the queue).
  cudaStream_t take_stream();
  /// Returns a stream of take_stream to the pool, after waiting for its work.
  void give_back_stream(cudaStream_t stream) noexcept;
  /// Lets this GPU read the memory pool of GPU `peer` directly (peer access, and access to its
  /// pool's allocations), once per peer; a no-op where the two GPUs cannot reach each other
  /// (copies between them are then staged through the host by the driver).
  void enable_peer(int peer);

 private:
  int index_;
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  std::mutex streams_mutex_;
  std::vector<cudaStream_t> all_streams_, free_streams_;
  std::mutex peers_mutex_;
  std::set<int> peers_;  // peers enable_peer has handled
};

}  // namespace ember::cuda
