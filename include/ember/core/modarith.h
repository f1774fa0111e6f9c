// 64-bit modular arithmetic building blocks (Barrett, Shoup, lazy butterflies), host and device.
//
// Moduli are below 2^61, so lazily reduced values in [0, 8q) never overflow a 64-bit word.
// Every function here is __host__ __device__: the CPU backend and the CUDA kernels call the same
// code, which is what makes the two backends agree bit for bit.
#pragma once

#include <cstdint>

#include "ember/core/config.h"

namespace ember {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

/// Largest modulus bit size supported (lazy reduction keeps values below 4q < 2^63).
inline constexpr int kMaxModulusBits = 61;

EMBER_HD u64 mul_hi(u64 a, u64 b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<u64>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

/// Full 128-bit product as (hi, lo).
EMBER_HD void mul_wide(u64 a, u64 b, u64& hi, u64& lo) {
#if defined(__CUDA_ARCH__)
  lo = a * b;
  hi = __umul64hi(a, b);
#else
  unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  lo = static_cast<u64>(p);
  hi = static_cast<u64>(p >> 64);
#endif
}

EMBER_HD u64 add_mod(u64 a, u64 b, u64 q) {
  u64 s = a + b;
  return s >= q ? s - q : s;
}

EMBER_HD u64 sub_mod(u64 a, u64 b, u64 q) { return a >= b ? a - b : a + q - b; }

EMBER_HD u64 neg_mod(u64 a, u64 q) { return a == 0 ? 0 : q - a; }

/// Reduces x in [0, 2q) to [0, q).
EMBER_HD u64 reduce_2q(u64 x, u64 q) { return x >= q ? x - q : x; }

/// Reduces x in [0, 4q) to [0, q).
EMBER_HD u64 reduce_4q(u64 x, u64 q) {
  x = x >= 2 * q ? x - 2 * q : x;
  return x >= q ? x - q : x;
}

/// Reduces x in [0, 8q) to [0, q) (q < 2^61).
EMBER_HD u64 reduce_8q(u64 x, u64 q) {
  x = x >= 4 * q ? x - 4 * q : x;
  return reduce_4q(x, q);
}

/// A modulus with its Barrett constants: floor(2^128 / q) as two words, and floor(2^(k+62) / q)
/// for k = bit length of q (reduce_product's).
struct Modulus {
  u64 value = 0;
  u64 ratio_hi = 0;       // floor(2^128 / q) >> 64
  u64 ratio_lo = 0;       // floor(2^128 / q) mod 2^64
  u64 product_ratio = 0;  // floor(2^(k+62) / q) < 2^63
};

/// The number of bits of x > 0 (q < 2^bit_length(q)).
EMBER_HD int bit_length(u64 x) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(x));
#else
  return 64 - __builtin_clzll(x);
#endif
}

/// Barrett reduction of the 128-bit value (hi, lo) modulo m.value (requires hi < m.value).
EMBER_HD u64 barrett_reduce_128(u64 hi, u64 lo, const Modulus& m) {
  // q_hat = floor(x * ratio / 2^128), computed from the four partial products; the error is at
  // most 2, so one final conditional subtraction after the wrapped difference suffices (SEAL's
  // argument: x - q_hat*q < 2q once the low-low carry is folded in).
  u64 carry = mul_hi(lo, m.ratio_lo);
  u64 t_hi, t_lo;
  mul_wide(lo, m.ratio_hi, t_hi, t_lo);
  u64 s = t_lo + carry;
  u64 c1 = s < t_lo;
  u64 mid_hi = t_hi + c1;
  mul_wide(hi, m.ratio_lo, t_hi, t_lo);
  u64 s2 = s + t_lo;
  u64 c2 = s2 < s;
  u64 q_hat = t_hi + c2 + mid_hi + hi * m.ratio_hi;
  u64 r = lo - q_hat * m.value;
  return r >= m.value ? r - m.value : r;
}

/// Barrett reduction of one word.
EMBER_HD u64 barrett_reduce_64(u64 x, const Modulus& m) {
  u64 q_hat = mul_hi(x, m.ratio_hi);
  u64 r = x - q_hat * m.value;
  return r >= m.value ? r - m.value : r;
}

/// x = (hi, lo) mod q for x < 2^(k+62), k the bit length of q (a product of two residues, or the
/// sum of two such products, for any q < 2^61): one 64-bit high product instead of
/// barrett_reduce_128's four. With s = max(k - 2, 0) and mu = floor(2^(k+62) / q), the estimate
/// floor((x >> s) mu / 2^64) lies in (x/q - 1.5 - x / 2^(k+62), x/q], so it is the quotient less
/// at most 2 and x - estimate q lies in [0, 3q).
EMBER_HD u64 reduce_product(u64 hi, u64 lo, const Modulus& m) {
  const int k = bit_length(m.value);
  const int s = k > 2 ? k - 2 : 0;  // 0 only for q < 4, where x < 2^64
  const u64 top = s ? (lo >> s) | (hi << (64 - s)) : lo;
  const u64 r = lo - mul_hi(top, m.product_ratio) * m.value;
  return reduce_4q(r, m.value);
}

/// a * b mod q for a, b < q.
EMBER_HD u64 mul_mod(u64 a, u64 b, const Modulus& m) {
  u64 hi, lo;
  mul_wide(a, b, hi, lo);
  return reduce_product(hi, lo, m);
}

/// (a b + c d) mod q for a, b, c, d < q with one reduction (the sum is below 2 q^2).
EMBER_HD u64 mul_add_mul_mod(u64 a, u64 b, u64 c, u64 d, const Modulus& m) {
  u64 hi, lo, h2, l2;
  mul_wide(a, b, hi, lo);
  mul_wide(c, d, h2, l2);
  lo += l2;
  hi += h2 + (lo < l2);
  return reduce_product(hi, lo, m);
}

/// Shoup companion of a fixed operand w < q: floor(w * 2^64 / q).
EMBER_HD u64 shoup_precompute(u64 w, u64 q) {
#if defined(__CUDA_ARCH__)
  // Not used on the device: tables are built on the host.
  return 0;
#else
  return static_cast<u64>((static_cast<unsigned __int128>(w) << 64) / q);
#endif
}

/// a * w mod q in [0, 2q) for any 64-bit a, given w < q and its Shoup companion.
EMBER_HD u64 mul_shoup_lazy(u64 a, u64 w, u64 w_shoup, u64 q) {
  return a * w - mul_hi(a, w_shoup) * q;
}

/// a * w mod q in [0, q).
EMBER_HD u64 mul_shoup(u64 a, u64 w, u64 w_shoup, u64 q) {
  return reduce_2q(mul_shoup_lazy(a, w, w_shoup, q), q);
}

/// floor(a * b / 2^64) minus an error in {0, 1, 2}: the low x low partial product and the low
/// halves of the two cross products are dropped. GPUs have no 64-bit multiplier: this is one wide
/// and two high 32-bit multiplies instead of four wide ones plus carry handling.
EMBER_HD u64 mul_hi_approx(u64 a, u64 b) {
  const u32 al = static_cast<u32>(a), ah = static_cast<u32>(a >> 32);
  const u32 bl = static_cast<u32>(b), bh = static_cast<u32>(b >> 32);
#if defined(__CUDA_ARCH__)
  const u64 cross = static_cast<u64>(__umulhi(al, bh)) + __umulhi(ah, bl);
#else
  const u64 cross = ((static_cast<u64>(al) * bh) >> 32) + ((static_cast<u64>(ah) * bl) >> 32);
#endif
  return static_cast<u64>(ah) * bh + cross;
}

/// a * w mod q in [0, 4q) for any 64-bit a: Shoup's product with the quotient from mul_hi_approx
/// (short by at most 2, on top of the exact product's [0, 2q)).
EMBER_HD u64 mul_shoup_lazy_4q(u64 a, u64 w, u64 w_shoup, u64 q) {
  return a * w - mul_hi_approx(a, w_shoup) * q;
}

EMBER_HD u64 pow_mod(u64 base, u64 exp, const Modulus& m) {
  u64 result = 1 % m.value;
  base = barrett_reduce_64(base, m);
  while (exp) {
    if (exp & 1) result = mul_mod(result, base, m);
    base = mul_mod(base, base, m);
    exp >>= 1;
  }
  return result;
}

/// Cooley-Tukey butterfly (Harvey): X, Y in [0, 4q) -> X + wY, X - wY in [0, 4q).
EMBER_HD void ct_butterfly(u64& x, u64& y, u64 w, u64 w_shoup, u64 q) {
  u64 two_q = 2 * q;
  u64 a = x >= two_q ? x - two_q : x;
  u64 t = mul_shoup_lazy(y, w, w_shoup, q);
  x = a + t;
  y = a - t + two_q;
}

/// Gentleman-Sande butterfly (Harvey): X, Y in [0, 2q) -> X + Y, (X - Y) w in [0, 2q).
EMBER_HD void gs_butterfly(u64& x, u64& y, u64 w, u64 w_shoup, u64 q) {
  u64 two_q = 2 * q;
  u64 s = x + y;
  u64 t = x - y + two_q;
  x = s >= two_q ? s - two_q : s;
  y = mul_shoup_lazy(t, w, w_shoup, q);
}

/// Cooley-Tukey butterfly with the approximate Shoup product (the GPU NTT's): X, Y in [0, 8q) ->
/// X + wY, X - wY in [0, 8q), for q < 2^61. Same instruction count outside the product as
/// ct_butterfly: only the lazy bound doubles.
EMBER_HD void ct_butterfly_8q(u64& x, u64& y, u64 w, u64 w_shoup, u64 q) {
  const u64 four_q = 4 * q;
  const u64 a = x >= four_q ? x - four_q : x;
  const u64 t = mul_shoup_lazy_4q(y, w, w_shoup, q);
  x = a + t;
  y = a - t + four_q;
}

/// Forward transforms over primes below 2^kUnreducedCtMaxBits may use ct_butterfly_unreduced
/// at every stage: from inputs below 8q, s stages leave values below (8 + 4 s) q, and for the
/// 17 stages of N = 2^17 that is 76 q < 2^63.3 when q < 2^57.
inline constexpr int kUnreducedCtMaxBits = 57;

/// Cooley-Tukey butterfly without the reduction of X (approximate Shoup product, which takes any
/// 64-bit Y): X, Y < B -> X + wY, X - wY < B + 4q. It saves ct_butterfly_8q's 64-bit compare,
/// subtraction and select, a quarter of the butterfly's instructions; the caller keeps the bound
/// (see kUnreducedCtMaxBits) and reduces the words once, when they leave the transform.
EMBER_HD void ct_butterfly_unreduced(u64& x, u64& y, u64 w, u64 w_shoup, u64 q) {
  const u64 a = x;
  const u64 t = mul_shoup_lazy_4q(y, w, w_shoup, q);
  x = a + t;
  y = a - t + 4 * q;
}

/// Gentleman-Sande butterfly with the approximate Shoup product: X, Y in [0, 4q) -> X + Y,
/// (X - Y) w in [0, 4q).
EMBER_HD void gs_butterfly_4q(u64& x, u64& y, u64 w, u64 w_shoup, u64 q) {
  const u64 four_q = 4 * q;
  const u64 s = x + y;
  const u64 t = x - y + four_q;
  x = s >= four_q ? s - four_q : s;
  y = mul_shoup_lazy_4q(t, w, w_shoup, q);
}

}  // namespace ember
