// RankWorkers: a generation counter wakes the workers for each run; the caller waits for the
// count of pending ranks to reach zero.
#include "ember/dist/rank_workers.h"

namespace ember::dist {

RankWorkers::RankWorkers(std::size_t ranks) : errors_(ranks == 0 ? 1 : ranks) {
  for (std::size_t r = 1; r < errors_.size(); ++r) threads_.emplace_back([this, r] { loop(r); });
}

RankWorkers::~RankWorkers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : threads_) t.join();
}

void RankWorkers::loop(std::size_t rank) {
  unsigned long long seen = 0;
  for (;;) {
    const std::function<void(std::size_t)>* task;
    {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      task = task_;
    }
    try {
      (*task)(rank);
    } catch (...) {
      errors_[rank] = std::current_exception();
    }
    bool last;
    {
      std::lock_guard lock(mutex_);
      last = --pending_ == 0;
    }
    if (last) done_.notify_one();
  }
}

void RankWorkers::run(const std::function<void(std::size_t rank)>& f) {
  for (auto& e : errors_) e = nullptr;
  if (!threads_.empty()) {
    {
      std::lock_guard lock(mutex_);
      task_ = &f;
      pending_ = threads_.size();
      ++generation_;
    }
    start_.notify_all();
  }
  try {
    f(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  if (!threads_.empty()) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }
  for (const auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

}  // namespace ember::dist
