// bgv::Context: the BGV scheme (exact arithmetic modulo t, message in the low digits: c0 + c1 s =
// f m + t e) on the RLWE core: errors are multiples of t, modulus switching keeps the message
// modulo t and multiplies it by q^-1 (the ciphertext's `factor` f records it), operands with
// different factors or levels are matched, decryption switches down to q_0 first.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/rlwe/evaluator.h"

namespace ember::bgv {

using ring::RnsPoly;
using rlwe::Ciphertext;
using rlwe::PublicKey;
using rlwe::SecretKey;
using rlwe::SwitchKey;

class Context : public rlwe::Evaluator {
 public:
  /// Throws ParameterError for t outside [2, 2^61) or not coprime to a prime of Q or P.
  Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
          std::size_t dnum, u64 plain_modulus, backend::Device device,
          std::shared_ptr<const ring::RingContext> shared_ring = nullptr);
  u64 plain_modulus() const { return rlwe_.plain_modulus(); }

  /// Brings a and b to one level (switching the higher one down) and one factor (multiplying
  /// b by a.factor / b.factor mod t).
  std::vector<Ciphertext> match(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
  /// Tensor product after matching levels (factor fa fb); multiply() adds relinearization, no
  /// modulus switch (the Python layer's policy switches after every product by default).
  Ciphertext multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const override;
  /// The device part of decryption: v = c0 + c1 s (+ c2 s^2) switched to q_0 in one division
  /// (coefficient form, one row) and the factor it carries.
  RnsPoly decrypt_low(const Ciphertext& ct, const SecretKey& sk, u64& factor) const;
  /// The message coefficients modulo t ([v]_q0 / factor, centered).
  std::vector<u64> decrypt(const Ciphertext& ct, const SecretKey& sk) const;
  /// Bits of noise budget left: log2(Q) - log2 |[c0 + c1 s]_Q| - 1.
  double noise_budget(const Ciphertext& ct, const SecretKey& sk) const;

 private:
  std::vector<u64> residues(u64 value_mod_t, std::size_t level) const;
  /// [l]: division of Q_l by q_1...q_l keeping the message mod t (null for l = 0).
  std::vector<std::unique_ptr<ring::DivideRound>> to_q0_;
};

}  // namespace ember::bgv
