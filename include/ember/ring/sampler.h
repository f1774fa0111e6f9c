// Sampler: uniform, ternary and discrete-Gaussian polynomials from a counter-based ChaCha20 stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ember/core/chacha20.h"
#include "ember/ring/rns_poly.h"

namespace ember::ring {

/// Each draw consumes a fresh nonce of the key's stream, so draws never overlap; the same key and
/// nonce produce the same polynomial on every backend. The key comes from the OS CSPRNG unless a
/// fixed one is given (tests only). An OS-keyed sampler copied into a child by fork() draws a new
/// key from the OS before the child's first draw: two children of one parent never share a
/// stream (they would otherwise encrypt with the same randomness, and the difference of their
/// ciphertexts would reveal the difference of their plaintexts). A fixed key stays fixed.
class Sampler {
 public:
  Sampler();
  explicit Sampler(const ChaChaKey& key, u64 first_nonce = 0);
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// Uniform mod each prime (a 128-bit draw reduced mod q: statistical distance < 2^-66).
  RnsPoly uniform(const RnsBasis& basis, Device device, Form form = Form::eval);
  /// Ternary {-1, 0, 1}: nonzero with probability `prob_nonzero` (2/3 gives the uniform ternary),
  /// each sign equally likely. Coefficient form.
  RnsPoly ternary(const RnsBasis& basis, Device device, double prob_nonzero = 2.0 / 3.0);
  /// Ternary with exactly `hamming_weight` nonzero coefficients (Fisher-Yates on the host).
  RnsPoly ternary_hamming(const RnsBasis& basis, Device device, std::size_t hamming_weight);
  /// Signed values of the exact-weight ternary draw (the host step of ternary_hamming).
  std::vector<std::int64_t> ternary_hamming_values(std::size_t n, std::size_t hamming_weight);
  /// Discrete Gaussian of standard deviation `sigma`, tail cut at 6 sigma (CDT). Coefficient form.
  RnsPoly gaussian(const RnsBasis& basis, Device device, double sigma = 3.2);
  /// Integers of a rounded Gaussian of standard deviation `sigma` in [1, 2^100] (coefficient
  /// form): noise flooding, far wider than gaussian()'s table allows. Each value is sigma g for a
  /// Box-Muller normal g from 53-bit uniforms, plus a uniform integer below its float spacing
  /// (so that no low bit stays fixed), rounded. Drawn on the host from this sampler's stream.
  RnsPoly wide_gaussian(const RnsBasis& basis, Device device, double sigma);
  /// ternary() / gaussian() into caller memory on `be` (coefficient form), for batched draws.
  void ternary_into(u64* out, const RnsBasis& basis, backend::Backend& be, backend::Stream s,
                    double prob_nonzero = 2.0 / 3.0);
  void gaussian_into(u64* out, const RnsBasis& basis, backend::Backend& be, backend::Stream s,
                     double sigma = 3.2);
  /// The same draws on 32-bit words (primes below 2^30): the 64-bit draw of the same nonce,
  /// narrowed, so a 32-bit ring samples exactly what a 64-bit one over its primes would.
  void ternary_into(u32* out, const RnsBasis& basis, backend::Backend& be, backend::Stream s,
                    double prob_nonzero = 2.0 / 3.0);
  void gaussian_into(u32* out, const RnsBasis& basis, backend::Backend& be, backend::Stream s,
                     double sigma = 3.2);

  u64 next_nonce() { return nonce_.fetch_add(1); }
  /// A fresh key for public randomness (the uniform halves of public and evaluation keys, which
  /// are serialized as seeds): the first ChaCha20 block of a fresh nonce of this sampler's key.
  /// Publishing it reveals nothing about this sampler's key or its other draws.
  ChaChaKey derive_key();
  /// Reserves `count` consecutive nonces and returns the first.
  u64 reserve_nonces(u64 count) { return nonce_.fetch_add(count); }
  /// The uniform polynomial of draw `nonce` of this key (what uniform() returns for that nonce).
  static void uniform_into(u64* out, const ChaChaKey& key, u64 nonce, const RnsBasis& basis,
                           backend::Backend& be, backend::Stream s);
  static void uniform_into(u32* out, const ChaChaKey& key, u64 nonce, const RnsBasis& basis,
                           backend::Backend& be, backend::Stream s);
  /// The key of this process's stream (re-keyed first in a forked child; see the class comment).
  const ChaChaKey& key();
  /// True when the key came from the OS (and is replaced after a fork).
  bool keyed_from_os() const { return from_os_; }

 private:
  ChaChaKey key_;
  std::atomic<u64> nonce_;
  bool from_os_;
  std::atomic<u64> keyed_generation_;  // fork_generation() when key_ was drawn
  std::mutex rekey_mutex_;
};

/// CDT of the one-sided discrete Gaussian: entry k = P(|X| <= k) * 2^63 for k in [0, bound).
std::vector<u64> gaussian_cdt(double sigma, int& bound);

}  // namespace ember::ring
