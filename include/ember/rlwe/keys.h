// Key and ciphertext types of the RLWE core shared by CKKS, BFV and BGV.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/backend/buffer.h"
#include "ember/core/chacha20.h"
#include "ember/ring/rns_poly.h"

namespace ember::rlwe {

using ring::RnsPoly;

// Every type is a template over the word type W of its polynomials (u64; u32 for parameters whose
// primes are all below 2^30), with the 64-bit names (SecretKey, ...) as aliases.

/// The secret s (ternary), in evaluation form over every prime of Q and P.
template <class W>
struct SecretKeyT {
  ring::RnsPolyT<W> s;
  u64 key_id = 0;     // random id of this key set, carried by everything derived from it
  u64 params_id = 0;  // fingerprint of the parameters
  /// A copy on `device` (any device; the same words).
  SecretKeyT to(backend::Device device) const;
};

/// (b, a) = (-a s + e, a) over Q (all levels), evaluation form; a is expanded from `seed`.
template <class W>
struct PublicKeyT {
  ring::RnsPolyT<W> b, a;
  ChaChaKey seed{};
  u64 seed_nonce = 0;
  u64 key_id = 0;
  u64 params_id = 0;
  PublicKeyT to(backend::Device device) const;
};

/// A hybrid key-switching key from s' to s: for each digit j, (b_j, a_j) over Q u P with
/// b_j = -a_j s + e_j + P [Q/Q_j]_{...} s' (the CRT gadget), in evaluation form.
/// Layout [dnum][2][L + 1 + k][N]. a_j is expanded from (seed, seed_nonce + j).
/// Keys are written on their device's default stream and complete when made or moved (their
/// constructors synchronize), so operations on any stream may read them.
template <class W>
struct SwitchKeyT {
  backend::Buffer data;
  std::size_t dnum = 0;
  std::size_t rows = 0;  // L + 1 + k
  ChaChaKey seed{};
  u64 seed_nonce = 0;
  u64 galois = 0;  // 0 for relinearization, else the Galois element g (s' = s(X^g))
  u64 key_id = 0;
  u64 params_id = 0;
  const W* words() const { return data.as<const W>(); }
  backend::Device device() const { return data.backend()->device(); }
  SwitchKeyT to(backend::Device device) const;
};

/// Polynomials in evaluation form over Q_level (2 after relinearization, 3 before).
template <class W>
struct CiphertextT {
  using Poly = ring::RnsPolyT<W>;
  CiphertextT() = default;
  CiphertextT(CiphertextT&&) noexcept = default;
  CiphertextT& operator=(CiphertextT&&) noexcept = default;
  CiphertextT(const CiphertextT&) = delete;  // copies are explicit: copy()
  CiphertextT& operator=(const CiphertextT&) = delete;
  std::vector<Poly> polys;
  std::size_t level = 0;
  double scale = 1.0;  // CKKS: the scale of the encoded values
  u64 factor = 1;      // BGV: decryption gives factor * m mod t (modulus switching multiplies it)
  u64 key_id = 0;
  u64 params_id = 0;
  /// Every polynomial's form: eval, or coefficient for BFV's products, relinearizations and
  /// rotations of coefficient-form ciphertexts (as SEAL and Phantom keep them).
  ring::Form form() const { return polys.empty() ? ring::Form::eval : polys[0].form(); }
  /// A copy on `device` (GPU to GPU peer to peer where the GPUs allow it), on its default
  /// stream.
  CiphertextT to(backend::Device device) const;
  /// The stream its operations run on (its polynomials'; see RnsPoly::stream).
  backend::Stream stream() const { return polys.empty() ? backend::Stream{} : polys[0].stream(); }
  /// A copy whose operations run on `stream` (same device), ordered after this one's writes.
  CiphertextT on_stream(backend::Stream stream) const;
  CiphertextT copy() const {
    std::vector<Poly> copies;
    for (const auto& p : polys) copies.push_back(p.copy());
    return with_polys(std::move(copies));
  }
  /// A ciphertext of `new_polys` with this one's level, scale, factor, key set and parameters.
  CiphertextT with_polys(std::vector<Poly> new_polys) const {
    CiphertextT c;
    c.polys = std::move(new_polys);
    c.level = level;
    c.scale = scale;
    c.factor = factor;
    c.key_id = key_id;
    c.params_id = params_id;
    return c;
  }
};

using SecretKey = SecretKeyT<u64>;
using PublicKey = PublicKeyT<u64>;
using SwitchKey = SwitchKeyT<u64>;
using Ciphertext = CiphertextT<u64>;
using SecretKey32 = SecretKeyT<u32>;
using PublicKey32 = PublicKeyT<u32>;
using SwitchKey32 = SwitchKeyT<u32>;
using Ciphertext32 = CiphertextT<u32>;
extern template struct SecretKeyT<u64>;
extern template struct SecretKeyT<u32>;
extern template struct PublicKeyT<u64>;
extern template struct PublicKeyT<u32>;
extern template struct SwitchKeyT<u64>;
extern template struct SwitchKeyT<u32>;
extern template struct CiphertextT<u64>;
extern template struct CiphertextT<u32>;

}  // namespace ember::rlwe
