// Per-coefficient building blocks of the ring primitives (host and device code), shared by the
// CPU backend, the CUDA kernels and the ring layer (which sits above the backend: no cycle).
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/backend/backend.h"
#include "ember/core/chacha20.h"
#include "ember/core/modarith.h"

namespace ember::backend::rows {

/// Words per ChaCha20 block; samplers assign whole blocks to one thread.
inline constexpr int kWordsPerBlock = 8;

/// Uniform residue from a 128-bit draw (hi, lo).
EMBER_HD u64 uniform_residue(u64 hi, u64 lo, const Modulus& m) {
  return barrett_reduce_128(hi, lo, m);
}

/// A small signed value from one 64-bit word, per the distribution.
EMBER_HD std::int64_t small_from_word(u64 w, const backend::SmallSampler& d) {
  const bool negative = (w & 1u) != 0;
  const u64 u = w >> 1;  // 63 uniform bits
  std::int64_t mag = 0;
  if (d.kind == backend::SmallSampler::ternary) {
    mag = u < d.ternary_threshold ? 1 : 0;
  } else {
    // CDT: magnitude = number of entries k with u >= cdt[k] (constant-time scan of the table).
    for (int k = 0; k < d.gaussian_bound; ++k) mag += (u >= d.gaussian_cdt[k]) ? 1 : 0;
  }
  return negative ? -mag : mag;
}

/// A signed value reduced into [0, q).
EMBER_HD u64 signed_to_residue(std::int64_t v, u64 q) {
  // The division only for |v| >= q: small samples (the common case) take the fast path.
  if (v >= 0) {
    const u64 u = static_cast<u64>(v);
    return u < q ? u : u % q;
  }
  const u64 m = static_cast<u64>(-(v + 1));  // |v| - 1, no overflow at INT64_MIN
  return q - 1 - (m < q ? m : m % q);
}

/// Whether coefficient c of `a` (coefficient form, `limbs` >= 2 rows of n words, row l over prime
/// moduli[ids[l]]) is decoded exactly by its first two residues: its centered value v from rows
/// 0 and 1 (t q0 + r0 with t = (r1 - r0) q0^-1 mod q1, less q0 q1 above half of it) has
/// |v| < q0 q1 / 4 and agrees with every other row. Then v is the coefficient's centered value
/// over the whole basis: two values in (-Q/2, Q/2] that agree modulo every prime are equal.
/// q0_inv: q0^-1 mod q1.
EMBER_HD bool two_prime_value_holds(const u64* a, std::size_t n, std::size_t c,
                                    const Modulus* moduli, const u32* ids, std::size_t limbs,
                                    u64 q0_inv) {
  const Modulus& m1 = moduli[ids[1]];
  const u64 q0 = moduli[ids[0]].value, q1 = m1.value;
  const u64 r0 = a[c];
  const u64 t = mul_mod(sub_mod(a[n + c], barrett_reduce_64(r0, m1), q1), q0_inv, m1);
  u64 hi, lo, big_hi, big_lo;  // v = t q0 + r0 in [0, q0 q1) and q0 q1, as 128-bit pairs
  mul_wide(t, q0, hi, lo);
  lo += r0;
  hi += lo < r0 ? 1 : 0;
  mul_wide(q0, q1, big_hi, big_lo);
  auto below = [](u64 xh, u64 xl, u64 yh, u64 yl) { return xh < yh || (xh == yh && xl < yl); };
  // Negative when 2 v > q0 q1 (q0 q1 < 2^122, so 4 |v| fits in 128 bits).
  const bool negative = below(big_hi, big_lo, (hi << 1) | (lo >> 63), lo << 1);
  u64 mag_hi = hi, mag_lo = lo;
  if (negative) {
    mag_lo = big_lo - lo;
    mag_hi = big_hi - hi - (big_lo < lo ? 1 : 0);
  }
  if (!below((mag_hi << 2) | (mag_lo >> 62), mag_lo << 2, big_hi, big_lo)) return false;
  for (std::size_t l = 2; l < limbs; ++l) {
    const Modulus& m = moduli[ids[l]];
    const u64 q0_mod = barrett_reduce_64(q0, m);
    u64 r = add_mod(mul_mod(barrett_reduce_64(t, m), q0_mod, m), barrett_reduce_64(r0, m), m.value);
    if (negative) r = sub_mod(r, mul_mod(q0_mod, barrett_reduce_64(q1, m), m), m.value);
    if (r != a[l * n + c]) return false;
  }
  return true;
}

/// floor((hi 2^64 + lo) / d) for hi < d (schoolbook, one bit per step; exact for any d > 0).
EMBER_HD u64 divide_128_by_64(u64 hi, u64 lo, u64 d) {
  u64 q = 0, r = hi;
  for (int i = 63; i >= 0; --i) {
    const bool top = (r >> 63) != 0;
    r = (r << 1) | ((lo >> i) & 1u);
    q <<= 1;
    if (top || r >= d) {
      r -= d;
      q |= 1u;
    }
  }
  return q;
}

/// round((Q mod t) m / t) for a plaintext coefficient m in [0, t): the part of round(Q m / t)
/// beyond floor(Q/t) m (independent of the prime, computed once per coefficient).
EMBER_HD u64 scale_plain_remainder(u64 m, u64 t, u64 q_mod_t) {
  u64 hi, lo;
  mul_wide(q_mod_t, m, hi, lo);
  const u64 half = t >> 1;
  lo += half;
  hi += lo < half;
  return divide_128_by_64(hi, lo, t);  // < t
}

/// round(Q m / t) mod q = floor(Q/t) m + remainder, with q_div_t = floor(Q/t) mod q (the BFV
/// scaling Delta m done exactly).
EMBER_HD u64 scale_plain_value(u64 m, u64 remainder, u64 q_div_t, const Modulus& mod) {
  return add_mod(mul_mod(q_div_t, barrett_reduce_64(m, mod), mod),
                 barrett_reduce_64(remainder, mod), mod.value);
}

/// Source index of output slot `j` for X -> X^k in evaluation form (bit-reversed order):
/// slot j holds a(psi^(2 brv(j) + 1)), so b(X) = a(X^k) takes slot brv(((2 brv(j)+1) k mod 2N -
/// 1)/2).
EMBER_HD u32 automorphism_eval_source(u32 j, u64 k, int log_n) {
  const u32 r = bit_reverse(j, log_n);
  const u64 two_n_mask = (u64{2} << log_n) - 1;
  const u64 e = ((2 * static_cast<u64>(r) + 1) * k) & two_n_mask;
  return bit_reverse(static_cast<u32>((e - 1) >> 1), log_n);
}

/// Destination of coefficient i for X -> X^k in coefficient form, with its sign.
EMBER_HD u32 automorphism_coeff_dest(u32 i, u64 k, int log_n, bool& negate) {
  const u64 n = u64{1} << log_n;
  u64 e = (static_cast<u64>(i) * k) & (2 * n - 1);
  negate = e >= n;
  return static_cast<u32>(negate ? e - n : e);
}

/// A 128-bit sum of products of residues below 2^61: exact for up to 32 terms, then reduce().
struct Wide {
  u64 hi = 0, lo = 0;
  EMBER_HD void add_product(u64 a, u64 b) {
    u64 h, l;
    mul_wide(a, b, h, l);
    lo += l;
    hi += h + (lo < l);
  }
  EMBER_HD u64 reduce(const Modulus& m) const { return barrett_reduce_128(hi, lo, m); }
  /// The sum replaced by its reduction (room for 32 more terms).
  EMBER_HD void fold(const Modulus& m) {
    lo = reduce(m);
    hi = 0;
  }
};

/// A 64-bit sum of products of residues below 2^30 (32-bit words, each product below 2^60):
/// exact for up to 15 terms, then reduce().
struct Wide32 {
  u64 sum = 0;
  EMBER_HD void add_product(u32 a, u32 b) { sum += u64{a} * b; }
  /// sum mod p: the high word first (any 32-bit value), then the two words.
  EMBER_HD u32 reduce(const Modulus32& m) const {
    const u32 high = barrett_reduce_64<u32>(static_cast<u32>(sum >> 32), m);
    return barrett_reduce_128<u32>(high, static_cast<u32>(sum), m);
  }
  EMBER_HD void fold(const Modulus32& m) { sum = reduce(m); }
};

/// The sum of products on words W, and how many terms it takes between folds (one more term may
/// follow the last fold).
template <class W>
using WideOf = std::conditional_t<sizeof(W) == 4, Wide32, Wide>;
template <class W>
inline constexpr u32 kWideTerms = sizeof(W) == 4 ? 8 : 32;

/// After term `t` (from 0) of sums of products, folds the sums when kWideTerms<W> terms have
/// joined them since the last fold (never for 64-bit sums of at most 32 terms).
template <class W, class... Sums>
EMBER_HD void fold_every(std::size_t t, const ModulusT<W>& m, Sums&... sums) {
  if (t % kWideTerms<W> == kWideTerms<W> - 1) (sums.fold(m), ...);
}

/// a b + c d mod p (64-bit words: mul_add_mul_mod; 32-bit: one 64-bit sum).
template <class W>
EMBER_HD W mul_add_mul(W a, W b, W c, W d, const ModulusT<W>& m) {
  if constexpr (sizeof(W) == 8) {
    return mul_add_mul_mod(a, b, c, d, m);
  } else {
    Wide32 s;
    s.add_product(a, b);
    s.add_product(c, d);
    return s.reduce(m);
  }
}

/// Partial sums of a byte-matrix conversion (BaseConvView::byte_planes): the products of planes
/// 2p and 2p + 1 (each < 2^23: 128 byte products) join in 32 bits (c_2p + c_2p+1 2^8 < 2^32) and
/// enter low (p < 2) or high (p >= 2) at offset 16 (p % 2), so the value is low + high 2^32
/// (see join_byte_planes).
EMBER_HD void add_byte_plane_pair(u64& low, u64& high, u32 even, u32 odd, int pair) {
  const u64 e = even + (odd << 8);
  u64& half = pair < 2 ? low : high;
  half += (pair & 1) ? e << 16 : e;
}

/// low + high 2^32 (< 2^81) as a 128-bit (hi, lo).
EMBER_HD void join_byte_planes(u64 low, u64 high, u64& hi, u64& lo) {
  lo = low + (high << 32);
  hi = (high >> 32) + (lo < low);
}

/// Where word w (bytes k = 4w .. 4w + 3) of a byte-plane column of `blocks` 32-byte blocks is
/// stored: lane t of an mma.m16n8k32 B fragment reads words t and 4 + t of each block kb, so
/// lane t's words sit together at 2 blocks t + 2 kb + (0, 1) (16-byte loads of two blocks).
EMBER_HD constexpr u32 byte_plane_slot(u32 w, u32 blocks) {
  const u32 kb = w / 8, r = w % 8;
  return 2 * blocks * (r % 4) + 2 * kb + r / 4;
}

/// (hi 2^64 + lo) mod p for a value below 2^15 p (a byte-matrix product: up to 128 bytes times
/// residues): the quotient (< 2^15) estimated in double precision is off by at most one, so the
/// remainder, computed modulo 2^64, needs at most one correction either way.
EMBER_HD u64 reduce_small_quotient(u64 hi, u64 lo, u64 p, double inv_p) {
  const double x = static_cast<double>(hi) * 18446744073709551616.0 + static_cast<double>(lo);
  const u64 q = static_cast<u64>(x * inv_p);
  const std::int64_t r = static_cast<std::int64_t>(lo - q * p);
  const std::int64_t sp = static_cast<std::int64_t>(p);
  return static_cast<u64>(r < 0 ? r + sp : (r >= sp ? r - sp : r));
}

/// Accumulates sum_i y_i * c_i mod p over `count` terms (y_i < 2^61, c_i < p on 64-bit words; both
/// below p < 2^30 on 32-bit words) without overflow for any count (WideOf<W>, folded every
/// kWideTerms<W> terms).
template <class W>
EMBER_HD W dot_mod(const W* y, std::size_t y_stride, const W* c, std::size_t c_stride,
                   std::size_t count, const ModulusT<W>& m) {
  WideOf<W> acc;
  for (std::size_t i = 0; i < count; ++i) {
    acc.add_product(y[i * y_stride], c[i * c_stride]);
    if (i % kWideTerms<W> == kWideTerms<W> - 1) acc.fold(m);
  }
  return acc.reduce(m);
}

/// The overflow u = floor(sum_i y_i / q_i) of a fast base conversion, in double precision with
/// a fixed order of correctly rounded operations (no fused multiply-add), so that every backend
/// computes the same u.
template <class W>
EMBER_HD W conversion_overflow(const W* y, std::size_t stride, std::size_t count,
                               const double* inv_q) {
  double sum = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
#if defined(__CUDA_ARCH__)
    sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(y[i * stride]), inv_q[i]));
#else
    sum += static_cast<double>(y[i * stride]) * inv_q[i];
#endif
  }
  return static_cast<W>(sum);  // sum >= 0: truncation is floor (below count)
}

/// The source residue word `at` of a conversion: a's, less sub's when the job subtracts one
/// (ConvJob::in_sub; both in [0, q)).
template <class W>
EMBER_HD W conversion_word(const W* a, const W* sub, std::size_t at, Word<W> q) {
  return sub ? sub_mod<W>(a[at], sub[at], q) : a[at];
}

/// The scaled source residue y_i = x qhat_inv_i (+ y_add_i) of a base conversion.
template <class W>
EMBER_HD W conversion_input(Word<W> x, std::size_t i, const BaseConvViewT<W>& conv, Word<W> q) {
  const W y = mul_shoup<W>(x, conv.qhat_inv[i], conv.qhat_inv_shoup[i], q);
  return conv.y_add ? add_mod<W>(y, conv.y_add[i], q) : y;
}

/// The output map of a base conversion (identity unless out_mul / out_add are set).
template <class W>
EMBER_HD W conversion_output(Word<W> v, std::size_t j, const BaseConvViewT<W>& conv, Word<W> p) {
  if (conv.out_mul) v = mul_shoup<W>(v, conv.out_mul[j], conv.out_mul_shoup[j], p);
  return conv.out_add ? add_mod<W>(v, conv.out_add[j], p) : v;
}

/// Converted value of one coefficient into target prime j (fast, or exact when conv.inv_q),
/// output map applied.
template <class W>
EMBER_HD W convert_row(const W* y, std::size_t stride, const BaseConvViewT<W>& conv, std::size_t j,
                       Word<W> overflow, const ModulusT<W>& m) {
  W v = dot_mod<W>(y, stride, conv.qhat_mod_p + j, conv.to_limbs, conv.from_limbs, m);
  if (conv.inv_q)
    v = sub_mod<W>(v, mul_mod<W>(barrett_reduce_64<W>(overflow, m), conv.q_mod_p[j], m), m.value);
  return conversion_output<W>(v, j, conv, m.value);
}

/// Where digit j's value at row r of Q_l u P lives: row r of kp.d when r is one of the digit's
/// own primes (`own`), else its converted row of kp.ext (the digit's rows - alpha converted rows
/// in order, skipping its own).
template <class W>
EMBER_HD u32 digit_row(const backend::KeyProductViewT<W>& kp, u32 j, u32 r, bool& own) {
  const u32 start = j * kp.alpha;
  const u32 end = start + kp.alpha < kp.q_rows ? start + kp.alpha : kp.q_rows;
  own = r >= start && r < end;
  return own ? r : j * (kp.rows - kp.alpha) + (r < start ? r : r - (end - start));
}

/// sum over the digits of digit_j[r] * key_j.{0,1}[prime of r] at coefficient c (reading slot
/// src of the digits when an automorphism is fused), accumulated in WideOf<W> (folded every
/// kWideTerms<W> digits), reduced once. `keys` replaces kp.key when not null (the babies of a
/// BabyGiantView).
template <class W>
EMBER_HD void key_product_row(const backend::KeyProductViewT<W>& kp, std::size_t n, u32 r,
                              std::size_t c, std::size_t src, const ModulusT<W>& m, W& out0,
                              W& out1, const W* keys = nullptr) {
  const u32 key_row = r < kp.q_rows ? r : kp.key_q_rows + (r - kp.q_rows);
  WideOf<W> s0, s1;
  EMBER_UNROLL4
  for (u32 j = 0; j < kp.digits; ++j) {
    bool own;
    const u32 row = digit_row(kp, j, r, own);
    // Two loads, not one through a selected pointer: measured 4-5 % faster key switching
    // (CKKS N15, BGV N14 on an H200).
    const W x = own ? kp.d[static_cast<std::size_t>(r) * n + src]
                    : kp.ext[static_cast<std::size_t>(row) * n + src];
    const W* key = (keys ? keys : kp.key) + static_cast<std::size_t>(j) * 2 * kp.key_rows * n;
    s0.add_product(x, key[static_cast<std::size_t>(key_row) * n + c]);
    s1.add_product(x, key[(static_cast<std::size_t>(kp.key_rows) + key_row) * n + c]);
    if (j % kWideTerms<W> == kWideTerms<W> - 1) {
      s0.fold(m);
      s1.fold(m);
    }
  }
  if (kp.add && r < kp.q_rows)  // one more term (room for it after the last fold)
    s0.add_product(kp.add[static_cast<std::size_t>(r) * n + src], kp.add_scale[r]);
  out0 = s0.reduce(m);
  out1 = s1.reduce(m);
}

/// The giant-step sums of a BabyGiantView at row r, coefficient c: every baby's key product (its
/// digits and c0 read through its automorphism) joins each giant's 128-bit sums with that
/// giant's plaintext (at most kMaxBabies terms: no overflow), reduced once per giant. The values
/// equal the babies' key products reduced and then summed by dot_plain.
/// kGiants (>= v.giants) sizes the sums (registers on the GPU).
template <u32 kGiants = backend::BabyGiantView::kMaxGiants, class W = u64>
EMBER_HD void baby_giant_row(const backend::BabyGiantViewT<W>& v, std::size_t n, u32 log_n, u32 r,
                             std::size_t c, const ModulusT<W>& m) {
  WideOf<W> s0[kGiants], s1[kGiants];
  const std::size_t i = static_cast<std::size_t>(r) * n + c;
  for (u32 b = 0; b < v.babies; ++b) {
    const std::size_t src = automorphism_eval_source(static_cast<u32>(c), v.galois[b], log_n);
    W x0, x1;
    key_product_row<W>(v.product, n, r, c, src, m, x0, x1, v.key[b]);
    EMBER_UNROLL
    for (u32 g = 0; g < kGiants; ++g) {
      const W* p = g < v.giants ? v.plain[g][b] : nullptr;
      if (!p) continue;
      const W w = p[i];
      s0[g].add_product(x0, w);
      s1[g].add_product(x1, w);
    }
    if constexpr (sizeof(W) == 4) {
      if (b % kWideTerms<W> == kWideTerms<W> - 1) {
        EMBER_UNROLL
        for (u32 g = 0; g < kGiants; ++g) {
          s0[g].fold(m);
          s1[g].fold(m);
        }
      }
    }
  }
  const std::size_t words = static_cast<std::size_t>(v.product.rows) * n;
  EMBER_UNROLL
  for (u32 g = 0; g < kGiants; ++g) {
    if (g >= v.giants) break;
    v.out[g][i] = s0[g].reduce(m);
    v.out[g][words + i] = s1[g].reduce(m);
  }
}

/// Garner's mixed-radix digits of one coefficient, then the big integer
/// X = v0 + v1 q0 + v2 q0 q1 + ... written as `limbs` little-endian words to `out`.
/// `residue(l)` gives the coefficient's residue in limb l; `digits` is scratch of `limbs` words.
template <class Residue>
EMBER_HD void garner_row(Residue residue, const backend::RingTablesView& ring, const u32* ids,
                         std::size_t limbs, const u64* garner_inv, u64* digits, u64* out,
                         std::size_t out_stride) {
  for (std::size_t i = 0; i < limbs; ++i) {
    const Modulus& m = ring.moduli[ids[i]];
    u64 t = residue(i);
    for (std::size_t j = 0; j < i; ++j) {
      u64 vj = barrett_reduce_64(digits[j], m);
      t = mul_mod(sub_mod(t, vj, m.value), garner_inv[i * limbs + j], m);
    }
    digits[i] = t;
  }
  // Horner from the top digit: X = ((v_{L-1}) q_{L-2} + v_{L-2}) q_{L-3} + ...
  for (std::size_t w = 0; w < limbs; ++w) out[w * out_stride] = 0;
  out[0] = digits[limbs - 1];
  for (std::size_t ii = limbs - 1; ii-- > 0;) {
    const u64 q = ring.moduli[ids[ii]].value;
    u64 carry = digits[ii];
    for (std::size_t w = 0; w < limbs; ++w) {
      u64 hi, lo;
      mul_wide(out[w * out_stride], q, hi, lo);
      u64 s = lo + carry;
      hi += (s < lo);
      out[w * out_stride] = s;
      carry = hi;
    }
  }
}

}  // namespace ember::backend::rows
