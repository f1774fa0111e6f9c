// PerDevice<T>: tables built once per device on first use and cached (thread-safe), and the
// upload helper they share.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ember/backend/buffer.h"

namespace ember::backend {

/// A host vector copied into a new buffer on `be` (stream-ordered on its default stream).
template <class T>
Buffer upload(Backend& be, const std::vector<T>& v) {
  return Buffer::from_host(be, v.data(), v.size() * sizeof(T), Stream{});
}

template <class T>
class PerDevice {
 public:
  /// The entry for be's device, made by `make(be)` the first time (then synchronized).
  template <class Make>
  const T& get(Backend& be, Make&& make) const {
    std::lock_guard lock(mutex_);
    const Device d = be.device();
    const auto key = std::make_pair(static_cast<int>(d.kind), d.index);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      auto entry = std::make_shared<T>(make(be));
      be.synchronize(Stream{});
      it = entries_.emplace(key, std::move(entry)).first;
    }
    return *it->second;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::pair<int, int>, std::shared_ptr<T>> entries_;
};

}  // namespace ember::backend
