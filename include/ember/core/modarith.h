// Modular arithmetic building blocks (Barrett, Shoup, lazy butterflies) on 64- or 32-bit words,
// host and device.
//
// Every function is a template on the word type W (u64 or u32) whose parameters do not deduce
// W: it defaults to u64, so `mul_mod(a, b, m)` is the 64-bit code every RNS kernel calls, and
// `mul_mod<u32>(a, b, m32)` the same code on 32-bit words (big-integer CKKS's residues, 32-bit
// RNS). Functions taking a ModulusT<W> deduce W from it. Moduli are below 2^61 on 64-bit words
// and below 2^30 on 32-bit ones (kMaxModulusBitsOf), so lazily reduced values in [0, 4q) (and
// [0, 8q) for the 64-bit GPU butterflies) never overflow a word. Every function is __host__
// __device__: the CPU backend and the CUDA kernels call the same code, which is what makes the
// two backends agree bit for bit.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/core/config.h"

namespace ember {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

/// A word type of the arithmetic: u64 or u32.
template <class W>
inline constexpr bool kIsWord = std::is_same_v<W, u64> || std::is_same_v<W, u32>;

/// Bits of a word.
template <class W>
inline constexpr int kWordBits = static_cast<int>(sizeof(W)) * 8;

/// Largest modulus bit size on words of type W: lazy reduction keeps values below 4q < 2^(bits-1)
/// on 64-bit words (8q for the GPU's ct_butterfly_8q) and below 4q <= 2^32 on 32-bit ones.
template <class W>
inline constexpr int kMaxModulusBitsOf = sizeof(W) == 8 ? 61 : 30;
inline constexpr int kMaxModulusBits = kMaxModulusBitsOf<u64>;

/// W itself, in a form that does not take part in template argument deduction (std::type_identity
/// is C++20; the CUDA sources build as C++17).
template <class W>
struct WordIdentity {
  using type = W;
};
/// A parameter of type W that does not take part in deducing W.
template <class W>
using Word = typename WordIdentity<W>::type;

/// floor(a * b / 2^bits).
template <class W = u64>
EMBER_HD W mul_hi(Word<W> a, Word<W> b) {
  static_assert(kIsWord<W>, "words are u64 or u32");
  if constexpr (sizeof(W) == 8) {
#if defined(__CUDA_ARCH__)
    return __umul64hi(a, b);
#else
    return static_cast<u64>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
  } else {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return static_cast<u32>((static_cast<u64>(a) * b) >> 32);
#endif
  }
}

/// Full double-word product as (hi, lo).
template <class W = u64>
EMBER_HD void mul_wide(Word<W> a, Word<W> b, Word<W>& hi, Word<W>& lo) {
  if constexpr (sizeof(W) == 8) {
#if defined(__CUDA_ARCH__)
    lo = a * b;
    hi = __umul64hi(a, b);
#else
    unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    lo = static_cast<u64>(p);
    hi = static_cast<u64>(p >> 64);
#endif
  } else {
    const u64 p = static_cast<u64>(a) * b;
    lo = static_cast<u32>(p);
    hi = static_cast<u32>(p >> 32);
  }
}

template <class W = u64>
EMBER_HD W add_mod(Word<W> a, Word<W> b, Word<W> q) {
  W s = a + b;
  return s >= q ? s - q : s;
}

template <class W = u64>
EMBER_HD W sub_mod(Word<W> a, Word<W> b, Word<W> q) {
  return a >= b ? a - b : a + q - b;
}

template <class W = u64>
EMBER_HD W neg_mod(Word<W> a, Word<W> q) {
  return a == 0 ? 0 : q - a;
}

/// Reduces x in [0, 2q) to [0, q).
template <class W = u64>
EMBER_HD W reduce_2q(Word<W> x, Word<W> q) {
  return x >= q ? x - q : x;
}

/// Reduces x in [0, 4q) to [0, q).
template <class W = u64>
EMBER_HD W reduce_4q(Word<W> x, Word<W> q) {
  x = x >= 2 * q ? x - 2 * q : x;
  return x >= q ? x - q : x;
}

/// Reduces x in [0, 8q) to [0, q) (8q must fit a word: q < 2^61 on 64-bit words, 2^29 on 32).
template <class W = u64>
EMBER_HD W reduce_8q(Word<W> x, Word<W> q) {
  x = x >= 4 * q ? x - 4 * q : x;
  return reduce_4q<W>(x, q);
}

/// A modulus with its Barrett constants: floor(2^(2 bits) / q) as two words, and
/// floor(2^(k + bits - 2) / q) for k = bit length of q (reduce_product's).
template <class W>
struct ModulusT {
  W value = 0;
  W ratio_hi = 0;       // floor(2^(2 bits) / q) >> bits
  W ratio_lo = 0;       // floor(2^(2 bits) / q) mod 2^bits
  W product_ratio = 0;  // floor(2^(k + bits - 2) / q) < 2^(bits - 1)
};
using Modulus = ModulusT<u64>;
using Modulus32 = ModulusT<u32>;

/// The number of bits of x > 0 (q < 2^bit_length(q)).
template <class W = u64>
EMBER_HD int bit_length(Word<W> x) {
  if constexpr (sizeof(W) == 8) {
#if defined(__CUDA_ARCH__)
    return 64 - __clzll(static_cast<long long>(x));
#else
    return 64 - __builtin_clzll(x);
#endif
  } else {
#if defined(__CUDA_ARCH__)
    return 32 - __clz(static_cast<int>(x));
#else
    return 32 - __builtin_clz(x);
#endif
  }
}

/// The low `bits` bits of x reversed (0 <= bits <= 32): one instruction on the GPU, where the
/// automorphisms and the NTT's bit-reversed order evaluate it for every slot.
EMBER_HD u32 bit_reverse(u32 x, int bits) {
  if (bits == 0) return 0;
#if defined(__CUDA_ARCH__)
  return __brev(x) >> (32 - bits);
#else
  u32 r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1u) << (bits - 1 - i);
  return r;
#endif
}

/// Barrett reduction of the double-word value (hi, lo) modulo m.value (requires hi < m.value).
template <class W>
EMBER_HD W barrett_reduce_128(Word<W> hi, Word<W> lo, const ModulusT<W>& m) {
  // q_hat = floor(x * ratio / 2^(2 bits)), computed from the four partial products; the error is
  // at most 2, so one final conditional subtraction after the wrapped difference suffices (SEAL's
  // argument: x - q_hat*q < 2q once the low-low carry is folded in).
  W carry = mul_hi<W>(lo, m.ratio_lo);
  W t_hi, t_lo;
  mul_wide<W>(lo, m.ratio_hi, t_hi, t_lo);
  W s = t_lo + carry;
  W c1 = s < t_lo;
  W mid_hi = t_hi + c1;
  mul_wide<W>(hi, m.ratio_lo, t_hi, t_lo);
  W s2 = s + t_lo;
  W c2 = s2 < s;
  W q_hat = t_hi + c2 + mid_hi + hi * m.ratio_hi;
  W r = lo - q_hat * m.value;
  return r >= m.value ? r - m.value : r;
}

/// Barrett reduction of one word.
template <class W>
EMBER_HD W barrett_reduce_64(Word<W> x, const ModulusT<W>& m) {
  W q_hat = mul_hi<W>(x, m.ratio_hi);
  W r = x - q_hat * m.value;
  return r >= m.value ? r - m.value : r;
}

/// x = (hi, lo) mod q for x < 2^(k + bits - 2), k the bit length of q (a product of two
/// residues for any q below kMaxModulusBitsOf, or the sum of two such products for q below 2^61
/// on 64-bit words and 2^29 on 32-bit ones): one high product instead of barrett_reduce_128's
/// four. With s = max(k - 2, 0) and mu = floor(2^(k + bits - 2) / q), the estimate
/// floor((x >> s) mu / 2^bits) lies in (x/q - 1.5 - x / 2^(k + bits - 2), x/q], so it is the
/// quotient less at most 2 and x - estimate q lies in [0, 3q).
template <class W>
EMBER_HD W reduce_product(Word<W> hi, Word<W> lo, const ModulusT<W>& m) {
  constexpr int kBits = kWordBits<W>;
  const int k = bit_length<W>(m.value);
  const int s = k > 2 ? k - 2 : 0;  // 0 only for q < 4, where x < 2^bits
  const W top = s ? (lo >> s) | (hi << (kBits - s)) : lo;
  const W r = lo - mul_hi<W>(top, m.product_ratio) * m.value;
  return reduce_4q<W>(r, m.value);
}

/// a * b mod q for a, b < q.
template <class W>
EMBER_HD W mul_mod(Word<W> a, Word<W> b, const ModulusT<W>& m) {
  W hi, lo;
  mul_wide<W>(a, b, hi, lo);
  return reduce_product<W>(hi, lo, m);
}

/// (a b + c d) mod q for a, b, c, d < q with one reduction (the sum is below 2 q^2; see
/// reduce_product for the moduli it allows).
template <class W>
EMBER_HD W mul_add_mul_mod(Word<W> a, Word<W> b, Word<W> c, Word<W> d, const ModulusT<W>& m) {
  W hi, lo, h2, l2;
  mul_wide<W>(a, b, hi, lo);
  mul_wide<W>(c, d, h2, l2);
  lo += l2;
  hi += h2 + (lo < l2);
  return reduce_product<W>(hi, lo, m);
}

/// Shoup companion of a fixed operand w < q: floor(w * 2^bits / q).
template <class W = u64>
EMBER_HD W shoup_precompute(Word<W> w, Word<W> q) {
#if defined(__CUDA_ARCH__)
  // Not used on the device: tables are built on the host.
  return 0;
#else
  if constexpr (sizeof(W) == 8)
    return static_cast<u64>((static_cast<unsigned __int128>(w) << 64) / q);
  else
    return static_cast<u32>((static_cast<u64>(w) << 32) / q);
#endif
}

/// a * w mod q in [0, 2q) for any word a, given w < q and its Shoup companion.
template <class W = u64>
EMBER_HD W mul_shoup_lazy(Word<W> a, Word<W> w, Word<W> w_shoup, Word<W> q) {
  return a * w - mul_hi<W>(a, w_shoup) * q;
}

/// a * w mod q in [0, q).
template <class W = u64>
EMBER_HD W mul_shoup(Word<W> a, Word<W> w, Word<W> w_shoup, Word<W> q) {
  return reduce_2q<W>(mul_shoup_lazy<W>(a, w, w_shoup, q), q);
}

/// floor(a * b / 2^bits) minus an error in {0, 1, 2}. On 64-bit words the low x low partial
/// product and the low halves of the two cross products are dropped: GPUs have no 64-bit
/// multiplier, so this is one wide and two high 32-bit multiplies instead of four wide ones plus
/// carry handling. On 32-bit words the exact high product is one instruction already.
template <class W = u64>
EMBER_HD W mul_hi_approx(Word<W> a, Word<W> b) {
  if constexpr (sizeof(W) == 4) {
    return mul_hi<W>(a, b);
  } else {
    const u32 al = static_cast<u32>(a), ah = static_cast<u32>(a >> 32);
    const u32 bl = static_cast<u32>(b), bh = static_cast<u32>(b >> 32);
#if defined(__CUDA_ARCH__)
    const u64 cross = static_cast<u64>(__umulhi(al, bh)) + __umulhi(ah, bl);
#else
    const u64 cross = ((static_cast<u64>(al) * bh) >> 32) + ((static_cast<u64>(ah) * bl) >> 32);
#endif
    return static_cast<u64>(ah) * bh + cross;
  }
}

/// a * w mod q in [0, 4q) for any word a: Shoup's product with the quotient from mul_hi_approx
/// (short by at most 2, on top of the exact product's [0, 2q)).
template <class W = u64>
EMBER_HD W mul_shoup_lazy_4q(Word<W> a, Word<W> w, Word<W> w_shoup, Word<W> q) {
  return a * w - mul_hi_approx<W>(a, w_shoup) * q;
}

template <class W>
EMBER_HD W pow_mod(Word<W> base, u64 exp, const ModulusT<W>& m) {
  W result = 1 % m.value;
  base = barrett_reduce_64<W>(base, m);
  while (exp) {
    if (exp & 1) result = mul_mod<W>(result, base, m);
    base = mul_mod<W>(base, base, m);
    exp >>= 1;
  }
  return result;
}

/// Cooley-Tukey butterfly (Harvey): X, Y in [0, 4q) -> X + wY, X - wY in [0, 4q).
template <class W = u64>
EMBER_HD void ct_butterfly(Word<W>& x, Word<W>& y, Word<W> w, Word<W> w_shoup, Word<W> q) {
  W two_q = 2 * q;
  W a = x >= two_q ? x - two_q : x;
  W t = mul_shoup_lazy<W>(y, w, w_shoup, q);
  x = a + t;
  y = a - t + two_q;
}

/// Gentleman-Sande butterfly (Harvey): X, Y in [0, 2q) -> X + Y, (X - Y) w in [0, 2q).
template <class W = u64>
EMBER_HD void gs_butterfly(Word<W>& x, Word<W>& y, Word<W> w, Word<W> w_shoup, Word<W> q) {
  W two_q = 2 * q;
  W s = x + y;
  W t = x - y + two_q;
  x = s >= two_q ? s - two_q : s;
  y = mul_shoup_lazy<W>(t, w, w_shoup, q);
}

/// Cooley-Tukey butterfly with the approximate Shoup product (the GPU NTT's): X, Y in [0, 8q) ->
/// X + wY, X - wY in [0, 8q), for 8q within a word (q < 2^61 on 64-bit words, 2^29 on 32). Same
/// instruction count outside the product as ct_butterfly: only the lazy bound doubles.
template <class W = u64>
EMBER_HD void ct_butterfly_8q(Word<W>& x, Word<W>& y, Word<W> w, Word<W> w_shoup, Word<W> q) {
  const W four_q = 4 * q;
  const W a = x >= four_q ? x - four_q : x;
  const W t = mul_shoup_lazy_4q<W>(y, w, w_shoup, q);
  x = a + t;
  y = a - t + four_q;
}

/// Forward transforms over primes below 2^kUnreducedCtMaxBits may use ct_butterfly_unreduced
/// at every stage: from inputs below 8q, s stages leave values below (8 + 4 s) q, and for the
/// 17 stages of N = 2^17 that is 76 q < 2^63.3 when q < 2^57 (64-bit words only).
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
/// (X - Y) w in [0, 4q), for 8q within a word (the sum X + Y; q < 2^29 on 32-bit words).
template <class W = u64>
EMBER_HD void gs_butterfly_4q(Word<W>& x, Word<W>& y, Word<W> w, Word<W> w_shoup, Word<W> q) {
  const W four_q = 4 * q;
  const W s = x + y;
  const W t = x - y + four_q;
  x = s >= four_q ? s - four_q : s;
  y = mul_shoup_lazy_4q<W>(t, w, w_shoup, q);
}

}  // namespace ember
