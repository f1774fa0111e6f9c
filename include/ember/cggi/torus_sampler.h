// Torus samplers for CGGI: uniform words, binary keys, Gaussian and TUniform noise, drawn from
// the ChaCha20 stream of a ring::Sampler (OS-keyed, re-keyed after fork()).
#pragma once

#include <cstdint>
#include <vector>

#include "ember/cggi/params.h"
#include "ember/ring/sampler.h"

namespace ember::cggi {

/// One draw (a fresh nonce of the sampler's key): a sequence of 64-bit words.
class TorusDraw {
 public:
  explicit TorusDraw(ring::Sampler& s) : key_(s.key()), nonce_(s.next_nonce()) {}
  std::uint64_t word();
  /// A uniform double in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(word() >> 11) * 0x1.0p-53; }
  /// A standard normal (Box-Muller).
  double normal();
  /// A noise value on the 2^torus_bits scale (wrapped into the word by the caller's cast).
  std::int64_t noise(const Noise& e, int torus_bits);
  /// One bit.
  std::uint8_t bit() { return static_cast<std::uint8_t>(word() & 1); }

 private:
  ChaChaKey key_;
  std::uint64_t nonce_, counter_ = 0;
  std::uint64_t buf_[8];
  int used_ = 8;
  double spare_ = 0;
  bool has_spare_ = false;
};

/// A uniform binary vector of `n` entries.
std::vector<std::uint8_t> binary_key(ring::Sampler& s, std::size_t n);

}  // namespace ember::cggi
