// The BFV/BGV encoding family of backend operations: integer values <-> plaintext coefficients
// modulo t in backend memory (the arithmetic is integer_plain.h's, so both backends agree bit for
// bit). The transforms modulo t (the batch encoder's NTT) are the ring family's.
#pragma once

#include <cstddef>

#include "ember/backend/integer_plain.h"
#include "ember/backend/ring_ops.h"
#include "ember/backend/runtime.h"

namespace ember::backend {

/// Backend operations of integer encoding and decoding. Plaintext rows hold n words in [0, t);
/// `index` (n u32 words, a permutation of [0, n)) is the batch encoder's slot order, null for
/// the coefficient order. Every pointer is backend memory; every call is stream-ordered.
class IntegerEncodeOps {
 public:
  virtual ~IntegerEncodeOps() = default;

  /// out[index[i]] (out[i] without index) = value i reduced modulo t for i < count, 0 for
  /// count <= i < n (integer::load_reduced). A value outside (-t, t) sets flag[0] to 1 (the
  /// caller zeroes it and reads it back).
  virtual void load_plain_async(u64* out, const void* values, integer::IntType type,
                                std::size_t count, std::size_t n, u64 t, const u32* index,
                                u64* flag, Stream stream) = 0;

  /// out[i] = m[i] k mod t for n words (out may alias m); t.value is the plain modulus.
  virtual void multiply_plain_async(u64* out, const u64* m, u64 k, const Modulus& t, std::size_t n,
                                    Stream stream) = 0;

  /// out[limb][i] = integer::centered_residue(m[i], t, q_limb): the centered plaintext as an
  /// integer polynomial over basis b (coefficient form).
  virtual void lift_plain_async(u64* out, const u64* m, u64 t, const BasisView& b,
                                Stream stream) = 0;

  /// out[i] = integer::message_of(v[i], q, t, factor_inv) for n words: a decryption's message
  /// modulo t (q = 0: BFV's rounded values; else BGV's values modulo q = q_0).
  virtual void message_async(u64* out, const u64* v, u64 q, const Modulus& t, u64 factor_inv,
                             std::size_t n, Stream stream) = 0;

  /// out[i] = integer::centered(m[index[i]] (m[i] without index), t) as int64, for i < count.
  virtual void store_plain_async(std::int64_t* out, const u64* m, u64 t, const u32* index,
                                 std::size_t count, Stream stream) = 0;
};

}  // namespace ember::backend
