// The fork counter: a pthread_atfork child handler that counts forks along the process's ancestry.
#include "ember/core/process.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

#include "ember/core/errors.h"

namespace ember {

namespace {
// The one process-wide value Ember keeps: it describes the process itself, not an option.
std::atomic<std::uint64_t> forks_so_far{0};

void count_fork_in_child() { forks_so_far.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

std::uint64_t fork_generation() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    if (pthread_atfork(nullptr, nullptr, count_fork_in_child) != 0)
      throw Error("cannot install Ember's fork handler (pthread_atfork failed)");
  });
  return forks_so_far.load(std::memory_order_relaxed);
}

}  // namespace ember
