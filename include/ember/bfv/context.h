// bfv::Context: the BFV scheme (exact arithmetic modulo t, message scaled by Q/t) on the RLWE
// core: plaintext scaling, encryption, decryption, the HPS-style multiplication in Q u R, modulus
// switching and the noise measure. Encoders (batching and coefficients) live in the Python layer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/rlwe/evaluator.h"

namespace ember::bfv {

using ring::RnsPoly;
using rlwe::Ciphertext;
using rlwe::PublicKey;
using rlwe::SecretKey;
using rlwe::SwitchKey;

/// The primes R of the multiplication's extended basis Q u R for ring degree n, ciphertext primes
/// q, special primes p and plaintext modulus t: log2 R >= log2(t N Q) + 2 (the centered tensor
/// times t, with margin), as few primes as 60-bit ones take, and among the sizes that keep that
/// count the smallest, because the GPU transforms of primes below 2^50 run on the FP64 pipe and
/// the forward ones below 2^57 without reductions (both faster than at 60 bits). R is never
/// part of a key or a ciphertext, so its sizes do not touch security, and the product is exact
/// for any R this large. aux_bits 50, 57 or 60 forces one size (comparisons), 0 chooses;
/// throws ParameterError for other values.
std::vector<u64> choose_aux_primes(std::size_t n, const std::vector<u64>& q,
                                   const std::vector<u64>& p, u64 t, int aux_bits = 0);

class Context : public rlwe::Evaluator {
 public:
  /// aux_primes: the primes R of the multiplication's extended basis; their product must exceed
  /// t N Q (checked). Throws ParameterError for t outside [2, min prime of Q).
  Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
          std::size_t dnum, u64 plain_modulus, const std::vector<u64>& aux_primes,
          backend::Device device, std::shared_ptr<const ring::RingContext> shared_ring = nullptr);
  /// The same with R = choose_aux_primes(n, q_primes, p_primes, plain_modulus, aux_bits): 0
  /// chooses the primes' size, 50, 57 or 60 forces it (ParameterError otherwise). The product
  /// is the same for every size: R only has to exceed t N Q.
  Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
          std::size_t dnum, u64 plain_modulus, int aux_bits, backend::Device device,
          std::shared_ptr<const ring::RingContext> shared_ring = nullptr);
  ~Context();
  u64 plain_modulus() const { return rlwe_.plain_modulus(); }

  /// round(Q_level m / t) over Q_level, coefficient form, for one row m of N values in [0, t)
  /// in backend memory (the scaled message of encryption and plaintext addition).
  RnsPoly scale_plain(const u64* m, std::size_t level) const;
  /// The same from host values (checked to be below t).
  RnsPoly scale_plain_host(const u64* m, std::size_t level) const;
  /// Encryption of a scaled plaintext (scale_plain, scale_plain_host): a coefficient-form
  /// ciphertext, as every later product, relinearization and rotation keeps it.
  Ciphertext encrypt(const RnsPoly& scaled, const PublicKey& pk, ring::Sampler& sampler) const;
  Ciphertext encrypt_symmetric(const RnsPoly& scaled, const SecretKey& sk,
                               ring::Sampler& sampler) const;
  /// round(t (c0 + c1 s) / Q) as one row in backend memory, values in [0, t] (t means 0): the
  /// device part of decryption.
  backend::Buffer decrypt_rounded(const Ciphertext& ct, const SecretKey& sk) const;
  /// The message coefficients modulo t, on the host.
  std::vector<u64> decrypt(const Ciphertext& ct, const SecretKey& sk) const;

  /// BFV product: both operands lifted exactly (centered) to Q u R, tensored, scaled by t / Q
  /// with exact rounding, and brought back to Q (3 polynomials).
  Ciphertext multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const override;
  /// multiply_no_relin, then relinearize, sharing their transforms: the product's third
  /// polynomial enters key switching in the coefficient form it is computed in (no NTT and INTT
  /// of it in between), and the three polynomials go to eval form in one batched NTT.
  Ciphertext multiply(const Ciphertext& a, const Ciphertext& b,
                      const SwitchKey& relin) const override;
  /// Bits of noise budget left: log2(Q) - log2 |[t (c0 + c1 s)]_Q| - 1 (decryption is correct
  /// while it is positive).
  double noise_budget(const Ciphertext& ct, const SecretKey& sk) const;

 private:
  struct Level;
  const Level& level(std::size_t l) const { return *levels_.at(l); }
  /// The product's three polynomials over Q_level in coefficient form, written to out[0..3)
  /// (a and b both in eval form or both in coefficient form, checked by the caller);
  /// p_scaled: the first two times P (the key switch's special primes), as its ModDown adds them.
  void product_coeff(const Ciphertext& a, const Ciphertext& b, u64* const (&out)[3],
                     backend::Stream s, bool p_scaled = false) const;
  std::vector<std::unique_ptr<Level>> levels_;
};

}  // namespace ember::bfv
