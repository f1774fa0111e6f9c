// RankWorkers: one persistent host thread per extra rank of a device set, so that the host work of
// queueing each device's part of an operation runs in parallel instead of one device after another.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::dist {

/// run(f) calls f(0) on the calling thread and f(1) .. f(ranks - 1) on the workers, and returns
/// when every call has returned; the first exception thrown (lowest rank) is rethrown. One run at
/// a time per object (run is not reentrant and not thread-safe). Threads start on construction
/// and stop on destruction.
class RankWorkers {
 public:
  explicit RankWorkers(std::size_t ranks);
  ~RankWorkers();
  RankWorkers(const RankWorkers&) = delete;
  RankWorkers& operator=(const RankWorkers&) = delete;

  std::size_t ranks() const { return errors_.size(); }
  void run(const std::function<void(std::size_t rank)>& f);

 private:
  void loop(std::size_t rank);

  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  unsigned long long generation_ = 0;
  std::size_t pending_ = 0;
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::thread> threads_;
};

}  // namespace ember::dist
