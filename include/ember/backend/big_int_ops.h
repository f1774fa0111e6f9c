// The big-integer family of backend operations: polynomials with coefficients mod 2^bits as
// multi-word integers (big_int_rows.h has the layout and the per-coefficient arithmetic), for
// HEAAN's non-RNS CKKS, with their CRT to residues and back.
#pragma once

#include <cstddef>

#include "ember/backend/big_int_rows.h"
#include "ember/backend/runtime.h"

namespace ember::backend {

class BigIntOps {
 public:
  virtual ~BigIntOps() = default;

  /// out = a + b (subtract: a - b) mod 2^s.bits.
  virtual void big_add_async(u64* out, const u64* a, const u64* b, const BigShape& s, bool subtract,
                             Stream stream) = 0;
  /// out = -a mod 2^s.bits.
  virtual void big_negate_async(u64* out, const u64* a, const BigShape& s, Stream stream) = 0;
  /// out (shape o) = a (shape i, signed) times 2^left, or divided by 2^right and rounded (one of
  /// the two is 0), mod 2^o.bits: big::shift for every coefficient.
  virtual void big_shift_async(u64* out, const BigShape& o, const u64* a, const BigShape& i,
                               int left, int right, Stream stream) = 0;
  /// out = a(X^galois) mod (X^n + 1, 2^s.bits) for an odd galois (s.n a power of two; out and a
  /// distinct): the automorphism of rotations and conjugation (big::automorphism).
  virtual void big_automorphism_async(u64* out, const u64* a, const BigShape& s, u64 galois,
                                      Stream stream) = 0;
  /// out (shape o) = coefficient k of the CKKS encoding of the n = o.n / 2 slots (after the
  /// inverse special FFT, bit-reversed) times scale, rounded, for every k
  /// (big::encode_coefficient). A coefficient whose rounded value is not <= bound sets
  /// ckks::kTooLarge in flags[0] and its product's bits in flags[1]; its words are left unwritten.
  virtual void big_encode_slots_async(u64* out, const BigShape& o, const void* slots, double scale,
                                      double bound, u64* flags, Stream stream) = 0;
  /// out[c] = coefficient c of a (read signed) divided by 2^scale_bits, the nearest double
  /// (big::to_double).
  virtual void big_to_doubles_async(double* out, const u64* a, const BigShape& s, int scale_bits,
                                    Stream stream) = 0;
  /// The CRT: out[i][c] = coefficient c of `words` (shape i; read signed when v.wrap is set) mod
  /// prime i of v (v.limbs32 = 2 i.words), coeff form, as 32-bit words (primes below 2^30).
  virtual void big_to_rns_async(u32* out, const u64* words, const BigShape& in, const BigRnsView& v,
                                Stream stream) = 0;
  /// out (shape o) = each coefficient's centered value (|x| < P / 4) from its residues
  /// (v.primes rows of o.n 32-bit words, coeff form), mod 2^o.bits: the inverse CRT
  /// (big::crt_combine).
  virtual void big_from_rns_async(u64* out, const BigShape& o, const u32* residues,
                                  const BigCrtView& v, Stream stream) = 0;
  /// out (shape o) = the centered lift of one row of residues mod q (small polynomials: secrets,
  /// errors), mod 2^o.bits.
  virtual void big_from_residues_async(u64* out, const BigShape& o, const u64* residues, u64 q,
                                       Stream stream) = 0;
  /// out = a uniform polynomial mod 2^o.bits from ChaCha20 (key, nonce) (big::uniform).
  virtual void big_sample_uniform_async(u64* out, const BigShape& o, const ChaChaKey& key,
                                        u64 nonce, Stream stream) = 0;
};

}  // namespace ember::backend
