// ckks::Context: the CKKS mechanics on the RLWE core: encoding of coefficient vectors, the
// homomorphic operations, rescaling and rotations. Scale policy and slot encoding (the special
// FFT) live in the Python layer, which calls these.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/rlwe/context.h"

namespace ember::ckks {

using ring::RnsPoly;
using rlwe::Ciphertext;
using rlwe::SwitchKey;

class Context {
 public:
  Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
          std::size_t dnum, backend::Device device);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  rlwe::Context& rlwe() { return rlwe_; }
  const rlwe::Context& rlwe() const { return rlwe_; }
  std::size_t n() const { return rlwe_.n(); }
  std::size_t max_level() const { return rlwe_.max_level(); }
  u64 prime(std::size_t i) const { return rlwe_.ring()->prime(i); }

  /// round(coeffs[k] * scale) in every prime of Q_level, evaluation form. Throws ParameterError
  /// when a value does not fit in 126 bits or is not finite.
  RnsPoly encode_coeffs(const double* coeffs, std::size_t level, double scale) const;
  /// Centered value / scale of each coefficient of m (coefficient form, 1 or 2 primes).
  std::vector<double> decode_coeffs(const RnsPoly& m, double scale) const;

  // Arithmetic (operands at the same level; the Python layer matches levels and scales).
  Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext negate(const Ciphertext& a) const;
  Ciphertext add_plain(const Ciphertext& a, const RnsPoly& p) const;
  Ciphertext sub_plain(const Ciphertext& a, const RnsPoly& p) const;
  Ciphertext multiply_plain(const Ciphertext& a, const RnsPoly& p) const;
  /// Multiplies by one integer per prime of the level (an exact constant's residues).
  Ciphertext multiply_scalar(const Ciphertext& a, const std::vector<u64>& residues) const;
  /// Adds the constant whose residues are given to every slot's numerator (c0 only).
  Ciphertext add_scalar(const Ciphertext& a, const std::vector<u64>& residues) const;
  /// Tensor product (3 polynomials); relinearize() brings it back to 2.
  Ciphertext multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext relinearize(const Ciphertext& a, const SwitchKey& relin) const;
  Ciphertext multiply(const Ciphertext& a, const Ciphertext& b, const SwitchKey& relin) const;
  Ciphertext square(const Ciphertext& a, const SwitchKey& relin) const;
  /// Divides by the last prime (level - 1, scale / q_level).
  Ciphertext rescale(const Ciphertext& a) const;
  /// Drops primes down to `level` (scale unchanged).
  Ciphertext drop_level(const Ciphertext& a, std::size_t level) const;
  /// X -> X^galois with its key (galois = 5^r mod 2N rotates by r; 2N - 1 conjugates).
  Ciphertext apply_galois(const Ciphertext& a, const SwitchKey& key) const;
  /// Several automorphisms of one ciphertext sharing one ModUp (hoisting).
  std::vector<Ciphertext> apply_galois_hoisted(const Ciphertext& a,
                                               const std::vector<const SwitchKey*>& keys) const;

 private:
  void check_pair(const Ciphertext& a, const Ciphertext& b, const char* op) const;
  void check_one(const Ciphertext& a, const char* op) const;
  Ciphertext like(const Ciphertext& a, std::size_t polys) const;
  rlwe::Context rlwe_;
};

}  // namespace ember::ckks
