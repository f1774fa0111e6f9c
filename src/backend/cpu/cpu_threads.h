// The CPU backend's OpenMP team size: the caller's setting, and a single thread after a fork.
#pragma once

#include <omp.h>

#include <atomic>
#include <cstdint>

#include "ember/core/errors.h"
#include "ember/core/process.h"

namespace ember::backend {

/// GNU OpenMP keeps its worker threads in a pool that fork() does not copy: a child whose parent
/// had started the pool hangs in its first parallel region. So once a team of several threads
/// has run, a forked child runs Ember's CPU work on one thread (documented in docs/security.md;
/// the spawn and forkserver start methods of multiprocessing keep every thread).
class CpuThreads {
 public:
  /// Threads for later parallel regions: n >= 1, or 0 for OpenMP's default (OMP_NUM_THREADS,
  /// else one per core).
  void set(int n) {
    if (n < 0) throw ParameterError("the thread count must be >= 1, or 0 for OpenMP's default");
    requested_.store(n, std::memory_order_relaxed);
  }
  int requested() const { return requested_.load(std::memory_order_relaxed); }
  /// The team size the setting gives (OpenMP's default when it is 0), before fork's limit.
  int configured() const { return requested() > 0 ? requested() : omp_get_max_threads(); }

  /// The team size for the next parallel region.
  int team() {
    const std::uint64_t generation = fork_generation();
    if (pool_started_.load(std::memory_order_acquire) &&
        pool_generation_.load(std::memory_order_relaxed) != generation)
      return 1;  // the pool was started before a fork: its threads are not in this process
    const int n = configured();
    if (n > 1 && !pool_started_.load(std::memory_order_relaxed)) {
      pool_generation_.store(generation, std::memory_order_relaxed);
      pool_started_.store(true, std::memory_order_release);
    }
    return n;
  }

 private:
  std::atomic<int> requested_{0};
  std::atomic<bool> pool_started_{false};
  std::atomic<std::uint64_t> pool_generation_{0};
};

}  // namespace ember::backend
