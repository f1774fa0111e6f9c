// Buffer: an owning, move-only allocation in one backend's memory (stream-ordered release).
#pragma once

#include <cstddef>
#include <utility>

#include "ember/backend/backend.h"

namespace ember::backend {

class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend& be, std::size_t bytes, Stream stream) : be_(&be), bytes_(bytes), stream_(stream) {
    if (bytes_) ptr_ = be.allocate(bytes_, stream_);
  }
  /// Allocates and copies `bytes` from host memory.
  static Buffer from_host(Backend& be, const void* src, std::size_t bytes, Stream stream) {
    Buffer b(be, bytes, stream);
    if (bytes) be.copy_from_host_async(b.ptr_, src, bytes, stream);
    return b;
  }
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (ptr_) be_->deallocate(ptr_, bytes_, stream_);
  }

  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  Backend* backend() const { return be_; }
  /// Orders the release on `stream` (of the same backend) instead of the allocating stream: for
  /// a buffer whose last reader runs there, after waiting for the allocating stream's work.
  void release_on(Stream stream) { stream_ = stream; }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(be_, o.be_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(stream_, o.stream_);
  }
  Backend* be_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  Stream stream_{};
};

}  // namespace ember::backend
