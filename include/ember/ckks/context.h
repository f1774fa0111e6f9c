// ckks::Context: the CKKS mechanics on the RLWE core: encoding of coefficient vectors, the
// product and rescaling; the shared operations come from rlwe::Evaluator. Scale policy and slot
// encoding (the special FFT) live in the Python layer, which calls these.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/rlwe/evaluator.h"

namespace ember::ckks {

using ring::RnsPoly;
using rlwe::Ciphertext;
using rlwe::SwitchKey;

class Context : public rlwe::Evaluator {
 public:
  Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
          std::size_t dnum, backend::Device device);

  /// round(coeffs[k] * scale) in every prime of Q_level, evaluation form. Throws ParameterError
  /// when a value does not fit in 126 bits or is not finite.
  RnsPoly encode_coeffs(const double* coeffs, std::size_t level, double scale) const;
  /// Centered value / scale of each coefficient of m (coefficient form, 1 or 2 primes).
  std::vector<double> decode_coeffs(const RnsPoly& m, double scale) const;

  /// multiply() (from rlwe::Evaluator) gives scale a.scale * b.scale; rescale() divides it.
  Ciphertext square(const Ciphertext& a, const SwitchKey& relin) const;
  /// Divides by the last prime (level - 1, scale / q_level), rounding.
  Ciphertext rescale(const Ciphertext& a) const;
};

}  // namespace ember::ckks
