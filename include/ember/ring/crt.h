// Exact conversion between big integers (little-endian 64-bit words) and RNS limbs (CRT / Garner).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/ring/rns_poly.h"

namespace ember::ring {

class CrtConverter {
 public:
  explicit CrtConverter(RnsBasis basis);
  const RnsBasis& basis() const { return basis_; }
  /// Words per value of from_rns output: enough for any value below Q = prod q_i.
  std::size_t output_words() const { return basis_.size(); }
  /// N values of `words_per_value` words each (value i at words[i*w .. i*w+w)) -> RNS, coeff form.
  /// The matrix form: x mod q_i = sum_k w_k (2^(64k) mod q_i).
  RnsPoly to_rns(const u64* words, std::size_t words_per_value, Device device) const;
  /// RNS (coeff form) -> N values in [0, Q), output_words() words each (Garner's mixed radix).
  std::vector<u64> from_rns(const RnsPoly& a) const;
  /// The centered value of each coefficient (in (-Q/2, Q/2], exact until the final rounding to
  /// long double): from_rns, then Q subtracted from values above Q/2 in integers.
  std::vector<long double> centered(const RnsPoly& a) const;
  /// Q as little-endian words (output_words() of them).
  const std::vector<u64>& modulus_words() const { return q_words_; }

 private:
  struct DeviceTables;
  DeviceTables& tables_on(backend::Backend& be, std::size_t words) const;
  RnsBasis basis_;
  std::vector<u64> q_words_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int, int, std::size_t>, std::shared_ptr<DeviceTables>> cache_;
};

}  // namespace ember::ring
