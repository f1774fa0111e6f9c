// ckks::Context32: CKKS on 32-bit words (every prime below 2^30): the shared ciphertext
// operations of rlwe::EvaluatorT<u32>, with the encodings of the 64-bit context over the same
// ring, whose polynomials cross word widths at the edges.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/ckks/context.h"

namespace ember::ckks {

/// Same parameters, same values, half the bytes: a ciphertext of this context decrypts to what
/// the 64-bit context's would, and every operation gives the words the 64-bit one gives (the
/// draws, conversions and divisions are the same functions). Encoding and decoding run in the
/// 64-bit context (they are not the hot path) and are narrowed or widened here. Levels of two
/// primes (level_primes) keep scales of 2^50 - 2^60 with 25-30-bit primes.
class Context32 : public rlwe::EvaluatorT<u32> {
 public:
  using Poly = ring::RnsPoly32;
  Context32(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
            std::size_t dnum, backend::Device device,
            std::shared_ptr<const ring::RingContext> shared_ring = nullptr,
            const std::vector<std::size_t>& level_primes = {});

  /// The 64-bit context over the same ring (its encodings, tables and slot FFT).
  const ckks::Context& wide() const { return wide_; }
  Poly encode_coeffs(const double* coeffs, std::size_t level, double scale,
                     bool extended = false) const;
  long double coefficient_bound(std::size_t level) const { return wide_.coefficient_bound(level); }
  std::vector<double> decode_coeffs(const Poly& m, double scale, bool check = true) const;
  struct EncodedSlots {
    Poly poly;
    bool is_complex = false;
    double magnitude = 0;
  };
  /// Context::encode_slots, narrowed.
  EncodedSlots encode_slots(const void* values, ckks::Context::SlotType type, std::size_t count,
                            ckks::Context::Memory where, std::size_t level, double scale,
                            bool repeat, bool extended = false) const;
  /// Context::decode_slots of the widened polynomial.
  void decode_slots(const Poly& m, double scale, bool check, void* out,
                    ckks::Context::SlotType type, std::size_t count,
                    ckks::Context::Memory where) const;
  using Cx = ckks::Context::Cx;
  std::vector<double> slots_to_coeffs(const Cx* slots) const {
    return wide_.slots_to_coeffs(slots);
  }
  std::vector<Cx> coeffs_to_slots(const double* coeffs) const {
    return wide_.coeffs_to_slots(coeffs);
  }
  Ciphertext square(const Ciphertext& a, const SwitchKey& relin) const;
  /// Divides by the primes of the last level: level - 1, scale divided by their product.
  Ciphertext rescale(const Ciphertext& a) const;
  /// Context::mod_raise on 32-bit words.
  Ciphertext mod_raise(const Ciphertext& a, std::size_t level) const;

 private:
  ckks::Context wide_;
};

}  // namespace ember::ckks
