// What Ember must know about its process: how many times it has forked (so that randomness and
// thread pools are not carried over from a parent into its children).
#pragma once

#include <cstdint>

namespace ember {

/// How many fork() calls lie between the program's start and this process: 0 in the original
/// process, 1 in its children, 2 in theirs. A child's count differs from every count its parent
/// saw, so state captured with the count (a CSPRNG key, a started thread pool) can tell that it
/// was copied by a fork. The fork handler is installed by the first call; call this before the
/// first fork that matters (every Sampler and the CPU backend do, when they are made).
std::uint64_t fork_generation();

}  // namespace ember
