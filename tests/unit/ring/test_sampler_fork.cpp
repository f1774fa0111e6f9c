// The Sampler's stream after fork(): an OS-keyed sampler re-keys in the child, a fixed key does
// not.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "ember/core/process.h"
#include "ember/ring/sampler.h"

namespace {

using ember::ChaChaKey;
using ember::ring::Sampler;

/// The key a forked child derives from `sampler` (its first draw after the fork).
ChaChaKey derived_in_child(Sampler& sampler) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const ChaChaKey k = sampler.derive_key();
    const bool ok = write(fds[1], &k, sizeof k) == static_cast<ssize_t>(sizeof k) &&
                    ember::fork_generation() == 1;
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  ChaChaKey k{};
  EXPECT_EQ(read(fds[0], &k, sizeof k), static_cast<ssize_t>(sizeof k));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return k;
}

bool same(const ChaChaKey& a, const ChaChaKey& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(SamplerFork, OsKeyedSamplerDrawsANewStreamInEachChild) {
  Sampler sampler;
  const ChaChaKey parent_key = sampler.key();
  const ChaChaKey first = derived_in_child(sampler);
  const ChaChaKey second = derived_in_child(sampler);
  // Same nonce (the parent drew none) in both children: only a new key makes them differ.
  EXPECT_FALSE(same(first, second));
  EXPECT_TRUE(same(sampler.key(), parent_key));  // the parent keeps its stream
  EXPECT_TRUE(sampler.keyed_from_os());
}

TEST(SamplerFork, FixedKeyStaysFixed) {
  ChaChaKey key{};
  key.words[0] = 42;
  Sampler sampler(key);
  const ChaChaKey first = derived_in_child(sampler);
  const ChaChaKey second = derived_in_child(sampler);
  EXPECT_TRUE(same(first, second));
  EXPECT_TRUE(same(first, sampler.derive_key()));
}

}  // namespace
