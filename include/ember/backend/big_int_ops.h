// The big-integer family of backend operations: polynomials with coefficients mod 2^bits as
// multi-word integers (big_int_rows.h has the layout and the per-coefficient arithmetic), for
// HEAAN's non-RNS CKKS. The CRT to and from residues is the ring family's (rns_from_words_async,
// words_from_rns_async).
#pragma once

#include <cstddef>

#include "ember/backend/big_int_rows.h"
#include "ember/backend/runtime.h"

namespace ember::backend {

class BigIntOps {
 public:
  virtual ~BigIntOps() = default;

  /// out = a + b (subtract: a - b) mod 2^s.bits.
  virtual void big_add_async(u64* out, const u64* a, const u64* b, const BigShape& s,
                             bool subtract, Stream stream) = 0;
  /// out = -a mod 2^s.bits.
  virtual void big_negate_async(u64* out, const u64* a, const BigShape& s, Stream stream) = 0;
  /// out (shape o) = a (shape i, signed) times 2^left, or divided by 2^right and rounded (one of
  /// the two is 0), mod 2^o.bits: big::shift for every coefficient.
  virtual void big_shift_async(u64* out, const BigShape& o, const u64* a, const BigShape& i,
                               int left, int right, Stream stream) = 0;
  /// out (shape o) = the centered value of each v in [0, P) (p_words words a coefficient, as
  /// words_from_rns_async writes them), mod 2^o.bits. p and half (= floor(P / 2)): p_words words
  /// in backend memory.
  virtual void big_centered_async(u64* out, const BigShape& o, const u64* v, const u64* p,
                                  const u64* half, std::size_t p_words, Stream stream) = 0;
  /// out (shape o) = the centered lift of one row of residues mod q (small polynomials: secrets,
  /// errors), mod 2^o.bits.
  virtual void big_from_residues_async(u64* out, const BigShape& o, const u64* residues, u64 q,
                                       Stream stream) = 0;
  /// out = a uniform polynomial mod 2^o.bits from ChaCha20 (key, nonce) (big::uniform).
  virtual void big_sample_uniform_async(u64* out, const BigShape& o, const ChaChaKey& key,
                                        u64 nonce, Stream stream) = 0;
};

}  // namespace ember::backend
