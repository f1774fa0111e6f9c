// Host/device building blocks of CKKS encoding: the special FFT between slots and coefficients,
// rounding to RNS residues, and the two-prime CRT value of a decoded coefficient.
//
// A real polynomial m of N coefficients is folded into n = N/2 complex values
// w_k = m_k + i m_{k+n}; slot j is m(zeta^(5^j)) = sum_k w_k zeta^(k 5^j) with zeta = e^(i pi / N)
// (zeta^(n 5^j) = i since 5^j = 1 mod 4). The forward transform (decoding) evaluates w at the
// slots' roots: bit reversal, then log2 n Cooley-Tukey stages whose twiddles at stage `len`
// are zeta^((5^j mod 4 len) N / (2 len)) for j < len / 2 (the HEAAN/SEAL special FFT). The
// inverse (encoding) runs the stages backwards with conjugate twiddles (Gentleman-Sande), then
// the bit reversal and 1 / n.
//
// Both backends run exactly these operations in this order, each correctly rounded and none
// contracted into a multiply-add (nvcc's _rn intrinsics on the device, cggi_fft.h's f_add etc.;
// the host is built with -ffp-contract=off), on one twiddle table built on the host
// (ckks_slot_twiddles): CPU and GPU encodings and decodings are bit-identical.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/backend/cggi_fft.h"
#include "ember/core/config.h"
#include "ember/core/modarith.h"

namespace ember::backend::ckks {

using Cx = cggi::Cx;
using cggi::f_add;
using cggi::f_mul;
using cggi::f_sub;

// The C math functions by their global names on the device, std:: on the host.
#if defined(__CUDA_ARCH__)
EMBER_HD bool m_isfinite(double x) { return isfinite(x); }
EMBER_HD double m_fabs(double x) { return fabs(x); }
EMBER_HD double m_frexp(double x, int* e) { return frexp(x, e); }
EMBER_HD double m_ldexp(double x, int e) { return ldexp(x, e); }
EMBER_HD double m_fmax(double a, double b) { return fmax(a, b); }
EMBER_HD double round_even(double x) { return rint(x); }
#else
EMBER_HD bool m_isfinite(double x) { return std::isfinite(x); }
EMBER_HD double m_fabs(double x) { return std::fabs(x); }
EMBER_HD double m_frexp(double x, int* e) { return std::frexp(x, e); }
EMBER_HD double m_ldexp(double x, int e) { return std::ldexp(x, e); }
EMBER_HD double m_fmax(double a, double b) { return std::fmax(a, b); }
/// Nearest integer, ties to even (std::nearbyint in the default rounding mode).
EMBER_HD double round_even(double x) { return std::nearbyint(x); }
#endif

/// a b rounded to double as a value of its own. On the host an empty asm makes the product
/// opaque: GCC 12's vectorizer recognizes the complex product and emits vfmaddsub with -mfma even
/// under -ffp-contract=off, which would change the results against the GPU's.
EMBER_HD double product(double a, double b) {
  double r = f_mul(a, b);
#if !defined(__CUDA_ARCH__) && defined(__GNUC__) && defined(__x86_64__)
  asm("" : "+x"(r));
#elif !defined(__CUDA_ARCH__) && defined(__GNUC__) && defined(__aarch64__)
  asm("" : "+w"(r));
#endif
  return r;
}

/// a b with each product rounded, then the sum/difference (no fused multiply-add).
EMBER_HD Cx cx_mul_rounded(Cx a, Cx b) {
  return {f_sub(product(a.re, b.re), product(a.im, b.im)),
          f_add(product(a.re, b.im), product(a.im, b.re))};
}

/// bit-reversal of i (< 2^log_n) over log_n bits.
EMBER_HD std::size_t bit_reverse(std::size_t i, int log_n) {
  return ember::bit_reverse(static_cast<u32>(i), log_n);
}

/// Butterfly `t` (< n/2) of the stage of length `len` (2 .. n): the pair (a[p], a[p + len/2]).
/// forward: (u + w v, u - w v); inverse: (u + v, (u - v) conj(w)). tw[len/2 + j] is the twiddle
/// of butterfly j within a block.
EMBER_HD void special_butterfly(Cx* a, std::size_t len, std::size_t t, const Cx* tw, bool inverse) {
  const std::size_t h = len >> 1, j = t % h, p = (t / h) * len + j;
  const Cx w = tw[h + j];
  const Cx u = a[p], v = a[p + h];
  if (!inverse) {
    const Cx x = cx_mul_rounded(v, w);
    a[p] = cggi::cx_add(u, x);
    a[p + h] = cggi::cx_sub(u, x);
  } else {
    a[p] = cggi::cx_add(u, v);
    a[p + h] = cx_mul_rounded(cggi::cx_sub(u, v), Cx{w.re, -w.im});
  }
}

/// The stages of the forward transform on bit-reversed input (output in slot order), or of the
/// inverse on slot-order input (output bit-reversed, without 1/n): one thread's loop on the host.
inline void special_fft_stages(Cx* a, std::size_t n, const Cx* tw, bool inverse) {
  if (!inverse) {
    for (std::size_t len = 2; len <= n; len <<= 1)
      for (std::size_t t = 0; t < n / 2; ++t) special_butterfly(a, len, t, tw, false);
  } else {
    for (std::size_t len = n; len >= 2; len >>= 1)
      for (std::size_t t = 0; t < n / 2; ++t) special_butterfly(a, len, t, tw, true);
  }
}

/// The twiddles of n = N/2 slots (host): tw[len/2 + j] = zeta^((5^j mod 4 len) N / (2 len)),
/// zeta = e^(i pi / N); tw[0] unused. Exponents are exact integers; the final cos/sin in long
/// double, rounded once to double.
inline std::vector<Cx> ckks_slot_twiddles(std::size_t n) {
  const std::size_t m = 4 * n;  // 2N: zeta^m = 1
  std::vector<Cx> tw(n, Cx{1.0, 0.0});
  const long double two_pi = 6.28318530717958647692528676655900577L;
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t h = len / 2, lenq = 4 * len;
    std::size_t five = 1;  // 5^j mod 4 len
    for (std::size_t j = 0; j < h; ++j) {
      const std::size_t e = five * (m / lenq);
      const long double a = two_pi * static_cast<long double>(e) / static_cast<long double>(m);
      tw[h + j] = Cx{static_cast<double>(std::cos(a)), static_cast<double>(std::sin(a))};
      five = five * 5 % lenq;
    }
  }
  return tw;
}

/// Flags of the encoding and decoding kernels (ORed into flags[0]; flags[1] holds the bits of an
/// offending double, flags[2] the bits of the largest |value| loaded, flags[3] unused).
enum SlotFlag : u64 {
  kNotFinite = 1,  // a value is NaN or infinite
  kTooLarge = 2,   // a coefficient times the scale is above the level's bound
  kComplex = 4,    // a value has a nonzero imaginary part
  kWrapped = 8,    // a decoded coefficient reaches a quarter of q0 q1 (one or two primes)
};
inline constexpr std::size_t kSlotFlagWords = 4;

/// The element types values come in (DLPack float32/float64/complex64/complex128).
enum class SlotType : int { f32 = 0, f64 = 1, c64 = 2, c128 = 3 };

/// Bytes of one value of `type`.
inline std::size_t slot_bytes(SlotType type) {
  switch (type) {
    case SlotType::f32:
      return 4;
    case SlotType::f64:
    case SlotType::c64:
      return 8;
    default:
      return 16;
  }
}

/// Value i of `values` (of `type`) as a complex double.
EMBER_HD Cx load_value(const void* values, SlotType type, std::size_t i) {
  switch (type) {
    case SlotType::f32:
      return {static_cast<double>(static_cast<const float*>(values)[i]), 0.0};
    case SlotType::f64:
      return {static_cast<const double*>(values)[i], 0.0};
    case SlotType::c64: {
      const float* f = static_cast<const float*>(values) + 2 * i;
      return {static_cast<double>(f[0]), static_cast<double>(f[1])};
    }
    default: {
      const double* d = static_cast<const double*>(values) + 2 * i;
      return {d[0], d[1]};
    }
  }
}

/// Slot s's value: values[s] for s < count, zero after (padding), or values[s mod count] when
/// repeating (sparse packing).
EMBER_HD Cx slot_value(const void* values, SlotType type, std::size_t count, bool repeat,
                       std::size_t s) {
  if (repeat) return load_value(values, type, s % count);
  return s < count ? load_value(values, type, s) : Cx{0.0, 0.0};
}

/// The flags one slot value raises.
EMBER_HD u64 value_flags(Cx z) {
  u64 f = 0;
  if (!(m_isfinite(z.re) && m_isfinite(z.im))) f |= kNotFinite;
  if (z.im != 0.0) f |= kComplex;
  return f;
}

/// The bits of a non-negative double (ordered as the doubles: for a maximum by integer compare).
EMBER_HD u64 double_bits(double x) {
  union {
    double d;
    u64 u;
  } c{x};
  return c.u;
}

/// |z| bound for the value-magnitude tracking: max(|re|, |im|) (exact; ckks_error takes abs()).
EMBER_HD double value_magnitude(Cx z) { return m_fmax(m_fabs(z.re), m_fabs(z.im)); }

/// x mod q for a double x that is an integer with |x| >= 2^62: x = mant 2^exp exactly
/// (ckks::Context's residue_of_integral_double, on either side).
EMBER_HD u64 residue_of_wide_integer(double x, const Modulus& m) {
  int exp = 0;
  const double mant = m_frexp(x, &exp);
  const long long m53 = static_cast<long long>(m_ldexp(mant, 53));
  const u64 magnitude = static_cast<u64>(m53 < 0 ? -m53 : m53) % m.value;
  const u64 r = mul_mod(magnitude, pow_mod(2, static_cast<u64>(exp - 53), m), m);
  return m53 < 0 ? neg_mod(r, m.value) : r;
}

/// The residue of the integer-valued double v (|v| below the coefficient bound).
EMBER_HD u64 residue_of_rounded(double v, const Modulus& m) {
  if (m_fabs(v) < 4611686018427387904.0) {  // 2^62
    const long long s = static_cast<long long>(v);
    // Barrett instead of a 64-bit division (N residues a prime); the residue is exact either way.
    return s < 0 ? neg_mod(barrett_reduce_64(static_cast<u64>(-s), m), m.value)
                 : barrett_reduce_64(static_cast<u64>(s), m);
  }
  return residue_of_wide_integer(v, m);
}

/// Coefficient k (< 2n) of the encoding, before the scale: the inverse stages' bit-reversed
/// output w, Re or Im of w[brv(k mod n)] divided by n (exact: a power of two).
EMBER_HD double encoded_coefficient(const Cx* w, std::size_t n, int log_n, std::size_t k) {
  const Cx z = w[bit_reverse(k < n ? k : k - n, log_n)];
  return (k < n ? z.re : z.im) / static_cast<double>(n);
}

/// hi 2^64 + lo as the nearest double (ties to even): the top 64 bits with a sticky bit for the
/// rest, then an exact power-of-two scaling.
EMBER_HD double u128_to_double(u64 hi, u64 lo) {
  if (hi == 0) return static_cast<double>(lo);
  const int shift = bit_length(hi);  // 1 .. 63 (values here stay below 2^124)
  const u64 top = (hi << (64 - shift)) | (lo >> shift);
  const u64 sticky = (lo << (64 - shift)) != 0 ? 1 : 0;
  return m_ldexp(static_cast<double>(top | sticky), shift);
}

/// Coefficient c's centered value from its first two residues (rows 0 and 1 of a, n words
/// each; one row when q1 is 1), divided by `scale`; sets *wrapped when |v| >= floor(q0 q1 / 4).
/// q0_inv: q0^-1 mod q1 (ignored for one row).
EMBER_HD double two_prime_coefficient(const u64* a, std::size_t n, std::size_t c, const Modulus& m0,
                                      const Modulus& m1, bool two_rows, u64 q0_inv, double scale,
                                      bool& wrapped) {
  const u64 q0 = m0.value, q1 = two_rows ? m1.value : 1;
  const u64 r0 = a[c];
  const u64 t =
      two_rows ? mul_mod(sub_mod(a[n + c], barrett_reduce_64(r0, m1), q1), q0_inv, m1) : 0;
  u64 hi, lo, big_hi, big_lo;  // v = t q0 + r0 in [0, q0 q1), and q0 q1
  mul_wide(t, q0, hi, lo);
  lo += r0;
  hi += lo < r0 ? 1 : 0;
  mul_wide(q0, q1, big_hi, big_lo);
  auto below = [](u64 xh, u64 xl, u64 yh, u64 yl) { return xh < yh || (xh == yh && xl < yl); };
  const bool negative = below(big_hi, big_lo, (hi << 1) | (lo >> 63), lo << 1);  // 2 v > q0 q1
  u64 mag_hi = hi, mag_lo = lo;
  if (negative) {
    mag_lo = big_lo - lo;
    mag_hi = big_hi - hi - (big_lo < lo ? 1 : 0);
  }
  const u64 quarter_hi = big_hi >> 2, quarter_lo = (big_lo >> 2) | (big_hi << 62);
  wrapped = !below(mag_hi, mag_lo, quarter_hi, quarter_lo);
  const double mag = u128_to_double(mag_hi, mag_lo);
  return (negative ? -mag : mag) / scale;
}

/// The encoding's coefficients before the scale (2n doubles) of n = N/2 complex slot values, on
/// the host: the special FFT as the encoding kernels run it (tw: ckks_slot_twiddles(n)).
inline std::vector<double> slots_to_coeffs(const Cx* slots, const std::vector<Cx>& tw) {
  const std::size_t n = tw.size();
  int log_n = 0;
  while ((std::size_t{1} << log_n) < n) ++log_n;
  std::vector<Cx> w(slots, slots + n);
  special_fft_stages(w.data(), n, tw.data(), true);
  std::vector<double> coeffs(2 * n);
  for (std::size_t k = 0; k < 2 * n; ++k) coeffs[k] = encoded_coefficient(w.data(), n, log_n, k);
  return coeffs;
}

/// The n slots (complex) of 2n coefficients, on the host: the decoding's special FFT.
inline std::vector<Cx> coeffs_to_slots(const double* coeffs, const std::vector<Cx>& tw) {
  const std::size_t n = tw.size();
  int log_n = 0;
  while ((std::size_t{1} << log_n) < n) ++log_n;
  std::vector<Cx> z(n);
  for (std::size_t k = 0; k < n; ++k) z[bit_reverse(k, log_n)] = Cx{coeffs[k], coeffs[k + n]};
  special_fft_stages(z.data(), n, tw.data(), false);
  return z;
}

}  // namespace ember::backend::ckks
