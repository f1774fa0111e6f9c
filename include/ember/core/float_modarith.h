// Modular arithmetic on integers held in doubles, for primes below 2^50: the GPU NTT's FP64 path.
//
// Why: a 64-bit Shoup product costs about 12 slots of the integer multiply pipe on an H100/H200,
// while the FP64 pipe (as many lanes as the integer one) computes a product mod p in six
// operations: h = y w, l = fma(y, w, -h) (so y w = h + l exactly), q = rint(y w') with w' ~ w / p,
// and t = fma(-q, p, h) + l = y w - q p exactly. Values are signed and never reduced to [0, p)
// until they leave the transform; `recenter` brings one back to about [-p/2, p/2].
//
// Exactness rests on three bounds (proved in the comments below, checked by
// tests/unit/core/test_float_modarith.cpp): every factor y of a product has |y| < 2^51, every sum
// stays below 2^53, and p < 2^50. The transforms keep them by recentering every
// `float_ct_period` (forward) or `float_gs_period` (inverse) stages. Results leave as canonical
// integers, so the integer and FP64 paths give bit-identical transforms.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ember/core/config.h"
#include "ember/core/modarith.h"

namespace ember {

/// Moduli below 2^kMaxFloatModulusBits take the FP64 path.
inline constexpr int kMaxFloatModulusBits = 50;

/// 1.5 * 2^52: x + M - M rounds |x| < 2^51 to the nearest integer (ties to even).
inline constexpr double kRoundMagic = 6755399441055744.0;
/// 2^52: the double 2^52 + x has the integer x < 2^52 as its 52 fraction bits.
inline constexpr double kTwo52 = 4503599627370496.0;
inline constexpr u64 kTwo52Bits = 0x4330000000000000ull;

// Rounded double operations that a compiler may not fuse into a multiply-add (a fused y * w in
// place of h would break the exact split y w = h + l).
EMBER_HD double fp_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
EMBER_HD double fp_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
EMBER_HD double fp_fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

EMBER_HD double bits_to_double(u64 b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
#endif
}
EMBER_HD u64 double_to_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<u64>(__double_as_longlong(d));
#else
  u64 b;
  std::memcpy(&b, &d, sizeof b);
  return b;
#endif
}

/// The integer x < 2^52 as a double (exact): one OR and one subtraction.
EMBER_HD double u64_to_float(u64 x) { return fp_add(bits_to_double(x | kTwo52Bits), -kTwo52); }

/// The integer x in [0, 2^52) held in a double, back as a word.
EMBER_HD u64 float_to_u64(double x) {
  return double_to_bits(fp_add(x, kTwo52)) & ((u64{1} << 52) - 1);
}

/// rint(x) for |x| < 2^51.
EMBER_HD double round_int(double x) { return fp_add(fp_add(x, kRoundMagic), -kRoundMagic); }

/// A prime p < 2^50 as the FP64 path uses it.
struct FloatModulus {
  double p = 0;
  double inv = 0;  // 1 / p, rounded
};

EMBER_HD FloatModulus float_modulus(u64 q) {
  FloatModulus m;
  m.p = u64_to_float(q);
  m.inv = 1.0 / m.p;
  return m;
}

/// v - p rint(v / p) for |v| < 2^53: the result r has |r| <= p/2 + |v| 2^-52 + 1 (the quotient is
/// rint of v * inv, which is within |v / p| 2^-52 of v / p), and the fma is exact because r is an
/// integer below 2^53.
EMBER_HD double recenter(double v, const FloatModulus& m) {
  const double q = fp_add(fp_fma(v, m.inv, kRoundMagic), -kRoundMagic);
  return fp_fma(-q, m.p, v);
}

/// w' = w / p (rounded twice, |w' - w/p| < 2^-52 for w < p): the companion of a twiddle w.
EMBER_HD double float_companion(double w, const FloatModulus& m) { return fp_mul(w, m.inv); }

/// y w - p q with q = rint(y w'), exactly, for |y| < 2^51, 0 <= w < p < 2^50: the result t has
/// |t| <= p (1/2 + |y| 2^-52) (the quotient misses y w / p by at most 1/2 from rounding and
/// |y| |w' - w/p| < |y| 2^-52). fma(y, w', M) rounds the exact y w' + M to an integer since
/// |y w'| < 2^51; fma(-q, p, h) is exact since h - q p = t - l is an integer below 2^53.
EMBER_HD double mul_mod_float(double y, double w, double w_companion, const FloatModulus& m) {
  const double h = fp_mul(y, w);
  const double l = fp_fma(y, w, -h);
  const double q = fp_add(fp_fma(y, w_companion, kRoundMagic), -kRoundMagic);
  return fp_add(fp_fma(-q, m.p, h), l);
}

/// Cooley-Tukey butterfly: X, Y -> X + wY, X - wY (signed; no reduction).
EMBER_HD void ct_butterfly_float(double& x, double& y, double w, double w_companion,
                                 const FloatModulus& m) {
  const double t = mul_mod_float(y, w, w_companion, m);
  const double a = x;
  x = fp_add(a, t);
  y = fp_add(a, -t);
}

/// Gentleman-Sande butterfly: X, Y -> X + Y, (X - Y) w (signed; no reduction).
EMBER_HD void gs_butterfly_float(double& x, double& y, double w, double w_companion,
                                 const FloatModulus& m) {
  const double d = fp_add(x, -y);
  x = fp_add(x, y);
  y = mul_mod_float(d, w, w_companion, m);
}

/// A signed value |v| < 2^53 as a word in [0, 2p): what a transform's first kernel hands the next.
EMBER_HD u64 float_to_lazy(double v, const FloatModulus& m) {
  return float_to_u64(fp_add(recenter(v, m), m.p));
}

/// The canonical word in [0, p) of a signed value |v| < 2^53.
EMBER_HD u64 float_to_canonical(double v, const FloatModulus& m, u64 q) {
  return reduce_2q(float_to_lazy(v, m), q);
}

/// Stages a forward transform may run between recenterings for a prime of `bits` bits.
/// Starting from |v| <= p/2 (+3), a stage adds at most p (1/2 + B 2^-52) to the bound B of its
/// inputs: B_k = B_{k-1} (1 + c) + p/2 with c = p 2^-52 < 2^(bits-52). A product's factor needs
/// B < 2^51, so k stages are safe while B_{k-1} < 2^51: 3 stages at 50 bits, 5 at 49, 11 at 48,
/// and more than any transform has (17 stages for N = 2^17) at 47 bits and below.
EMBER_HD int float_ct_period(int bits) {
  return bits >= 50 ? 3 : bits == 49 ? 5 : bits == 48 ? 11 : 64;
}

/// Whether a forward transform may take words in [0, 8q) as they are (no recentering on load):
/// from the bound 8p the recursion above stays below 2^51 for 18 stages at 46 bits and below.
EMBER_HD bool float_ct_takes_lazy_input(int bits) { return bits <= 46; }

/// Stages an inverse transform may run between recenterings: the sum X + Y doubles the bound at
/// each stage, so after k stages from p/2 the difference entering the product is at most
/// 2^(k-1) p < 2^51 (and sums 2^(k-1) p < 2^53): 52 - bits stages.
EMBER_HD int float_gs_period(int bits) { return bits >= 50 ? 2 : 52 - bits; }

/// Terms mul_mod_float (each |t| < p for factors below 2^51) a sum may take after a recentering
/// (|s| <= p/2 + 3) while it stays below 2^53: 2^(53 - bits) - 1, and more than any sum has for
/// primes below 2^22. The fused key product's FP64 sums recenter at this period.
EMBER_HD u32 float_sum_period(int bits) {
  return bits < 22 ? 0x7fffffffu : (1u << (53 - bits)) - 1;
}

}  // namespace ember
