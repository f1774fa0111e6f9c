// heaan::Context: big-integer (non-RNS) CKKS as the original HEAAN: coefficients mod 2^bits, the
// relinearization key mod Q^2, HE Mul through CRT, NTT and the inverse CRT (Jung et al.).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ember/backend/ckks_fft.h"
#include "ember/ring/big_poly.h"
#include "ember/ring/sampler.h"

namespace ember::heaan {

using backend::Device;
using ring::BigPoly;
using ring::RnsPoly;
using ring::RnsPoly32;

/// The secret's coefficients in {-1, 0, 1}, on the host (the client's).
struct SecretKey {
  std::vector<std::int64_t> s;
};

/// An encryption of zero mod Q: b = -a s + e.
struct PublicKey {
  BigPoly b, a;
};

/// A key-switching key mod Q^2 (HEAAN's special modulus P is Q) from a secret s' to s:
/// b = -a s + e + Q s', both halves as residues over the relinearization primes in NTT form (the
/// transform every use reuses). galois 0: s' = s^2, the relinearization key; an odd galois:
/// s' = s(X^galois), the key of that rotation (5^k mod 2N) or of conjugation (2N - 1).
struct SwitchKey {
  RnsPoly32 b, a;
  u64 galois = 0;
};
using RelinKey = SwitchKey;

/// c0 + c1 s = m + e mod 2^bits (both polynomials of the same width).
struct Ciphertext {
  BigPoly c0, c1;
  int bits() const { return c0.bits(); }
};

/// Seconds of each phase of one HE Mul (Jung et al.'s Table 7), filled when asked for: each
/// phase then ends with a synchronization.
struct MulPhases {
  double crt = 0, ntt = 0, intt = 0, icrt = 0, other = 0;
};

class Context {
 public:
  using Cx = backend::ckks::Cx;

  /// N, log2 Q and the NTT-friendly primes of the products, enough for the relinearization
  /// product (N 2^(3 log Q) and a sign); ParameterError otherwise.
  Context(std::size_t n, int log_q, const std::vector<u64>& primes, Device device);

  std::size_t n() const { return n_; }
  int log_q() const { return log_q_; }
  Device device() const { return device_; }
  const ring::BigMultiplier& multiplier() const { return mult_; }
  /// The primes of the tensor products at `bits` and of the relinearization products.
  ring::RnsBasis tensor_basis(int bits) const { return mult_.basis_for(bits, bits); }
  const ring::RnsBasis& relin_basis() const { return relin_basis_; }

  /// CKKS's slot encoding (the special FFT of ckks::Context, on the host): the 2n = N
  /// coefficients before the scale of n = N/2 complex slots, and back.
  std::vector<double> slots_to_coeffs(const Cx* slots) const {
    return backend::ckks::slots_to_coeffs(slots, twiddles_);
  }
  std::vector<Cx> coeffs_to_slots(const double* coeffs) const {
    return backend::ckks::coeffs_to_slots(coeffs, twiddles_);
  }

  using SlotType = backend::ckks::SlotType;
  /// The message polynomial (log Q bits) of up to N/2 values of `type` (zero-padded), in host
  /// memory or (on_device) in this context's device memory, read in place: CKKS's special FFT, the
  /// scaling by 2^scale_bits, the rounding and the words, all on the device (the backend's
  /// ckks_encode and big_int families). ParameterError for NaN or infinite values, and for
  /// scaled coefficients of 2^62 or more.
  BigPoly encode_slots(const void* values, SlotType type, std::size_t count, bool on_device,
                       int scale_bits) const;
  /// The first `count` slots (f64: real parts; c128: complex) of m (read signed) divided by
  /// 2^scale_bits, written to `out` in host memory or (on_device) this device's memory.
  void decode_slots(const BigPoly& m, int scale_bits, void* out, SlotType type, std::size_t count,
                    bool on_device) const;

  /// Uniform ternary (hamming_weight 0) or exactly hamming_weight nonzero coefficients.
  SecretKey generate_secret(ring::Sampler& sampler, std::size_t hamming_weight = 0) const;
  PublicKey generate_public(const SecretKey& sk, ring::Sampler& sampler) const;
  RelinKey generate_relin(const SecretKey& sk, ring::Sampler& sampler) const;
  /// The key switching s(X^galois) to s, for an odd galois in (1, 2N) (ParameterError else).
  SwitchKey generate_rotation(const SecretKey& sk, u64 galois, ring::Sampler& sampler) const;
  /// A key's halves (b, a) as words mod Q^2, and back with its Galois element (serialization).
  std::pair<BigPoly, BigPoly> key_words(const SwitchKey& key) const;
  SwitchKey key_from_words(const BigPoly& b, const BigPoly& a, u64 galois = 0) const;

  /// m (log_q bits) under the secret key: c1 uniform, c0 = -c1 s + e + m.
  Ciphertext encrypt(const BigPoly& m, const SecretKey& sk, ring::Sampler& sampler) const;
  /// m (log_q bits) under the public key: v ternary (half nonzero), c0 = v b + e0 + m, c1 = v a +
  /// e1.
  Ciphertext encrypt(const BigPoly& m, const PublicKey& pk, ring::Sampler& sampler) const;
  /// c0 + c1 s mod 2^bits.
  BigPoly decrypt(const Ciphertext& ct, const SecretKey& sk) const;

  Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext negate(const Ciphertext& a) const;
  /// Divides by 2^bits (rounded): the modulus and the scale lose `bits` bits.
  Ciphertext rescale(const Ciphertext& a, int bits) const;
  /// The same message mod 2^bits (fewer bits): HEAAN's mod-down.
  Ciphertext mod_down(const Ciphertext& a, int bits) const;
  /// HE Mul with relinearization: the tensor product by three products (Karatsuba) and the
  /// relinearization by two against the key mod Q^2, then the division by Q. Not rescaled.
  Ciphertext multiply(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk,
                      MulPhases* phases = nullptr) const;
  /// Key switching of d (a polynomial mod 2^bits, bits <= log Q) by `key` (s' to s): (t0, t1) mod
  /// 2^bits with t0 + t1 s = d s' + a small error, as round(d (b, a) / Q) computed mod
  /// 2^(bits + log Q) over the relinearization primes. The relinearization and the rotations.
  std::pair<BigPoly, BigPoly> key_switch(const BigPoly& d, const SwitchKey& key,
                                         MulPhases* phases = nullptr) const;
  /// The ciphertext's message at X^key.galois: both halves through the automorphism, then c1
  /// switched back to s. A rotation of the slots (5^k) or their conjugation (2N - 1).
  Ciphertext apply_galois(const Ciphertext& a, const SwitchKey& key,
                          MulPhases* phases = nullptr) const;
  /// multiply with its four polynomial products placed on several devices (Jung et al.):
  /// devices[0] (this context's device, where a, b and the result live) takes a1 b1 and the
  /// relinearization by the key's b half; devices[1] a0 b0; devices[2] (else devices[1]) the
  /// Karatsuba sum's product; devices[3] (else devices[0]) the relinearization by the key's a
  /// half. keys[k]: the relinearization key on devices[k] (needed on 0 and 3). The devices
  /// synchronize only through the copies the data flow needs.
  Ciphertext multiply_spread(const Ciphertext& a, const Ciphertext& b,
                             const std::vector<const RelinKey*>& keys,
                             const std::vector<Device>& devices) const;
  /// A copy of a key on `device`.
  SwitchKey key_on(const SwitchKey& key, Device device) const;

 private:
  void check(const Ciphertext& a, const char* op) const;
  /// The secret over `basis`, eval form: its residues over the first prime lifted centered to a
  /// small big integer, whose CRT to the basis (two limbs) runs on the device.
  RnsPoly32 secret_over(const SecretKey& sk, const ring::RnsBasis& basis) const;
  /// A small polynomial given by its residues over the first prime (coeff form) over `basis`,
  /// eval form (the same centered lift and CRT).
  RnsPoly32 small_over(const RnsPoly& small, const ring::RnsBasis& basis) const;
  BigPoly small_error(ring::Sampler& sampler, int bits) const;
  /// b = -a s + e + Q target mod Q^2 (target: s' mod Q^2), both halves transformed.
  SwitchKey generate_switch(const SecretKey& sk, const BigPoly& target, u64 galois,
                            ring::Sampler& sampler) const;
  void check_key(const SwitchKey& key, const char* op) const;
  /// d's residues over the relinearization primes (coeff form) as a centered value,
  /// |d| <= 2^(bits - 1): the key switch's input.
  RnsPoly32 centered_residues(const BigPoly& d) const;

  std::size_t n_;
  int log_q_;
  Device device_;
  ring::BigMultiplier mult_;
  ring::RnsBasis relin_basis_;
  ring::RnsBasis small_basis_;  // the first prime: small polynomials before their lift
  std::vector<Cx> twiddles_;    // backend::ckks::ckks_slot_twiddles(N / 2)
  backend::Buffer
      device_twiddles_;  // twiddles_ in the device's memory (encode_slots, decode_slots)
};

}  // namespace ember::heaan
