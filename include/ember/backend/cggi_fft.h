// Host/device building blocks of CGGI's blind rotation: complex doubles with a fixed rounding
// sequence, the folded negacyclic FFT, and the conversions between torus words and spectra.
//
// Products by the bootstrapping key run in doubles (the TFHE library's, cuFHE's and tfhe-rs's
// choice; about five times fewer operations than a 64-bit integer NTT). They are exact: the key's
// words are split into signed limbs of CggiShape::limb_bits bits, chosen so that a product's
// coefficients, at most (k+1) l N 2^(B-1) 2^(limb_bits-1) in size, stay below 2^52, where the
// FFT's rounding errors (about 2^-9 at bool_128's sizes, tests/unit/cggi/test_cggi_fft.cpp)
// leave the nearest integer exact (a 32-bit torus needs one limb at every preset, a 64-bit one
// four). Both backends call these functions in the same order, each operation correctly
// rounded and no multiply-add contracted except the explicit fma() (nvcc's intrinsics on the
// device, the host built with -ffp-contract=off), so CPU and GPU results are bit-identical.
//
// A real polynomial a of N coefficients mod X^N + 1 is folded into n = N/2 complex values
// c_j = a_j + i a_{j+n}: a mod (X^n - i) (since X^N + 1 = (X^n - i)(X^n + i), and a is real, the
// other half of the evaluations are the conjugates). The forward transform evaluates c at the n
// roots of X^n = i (Cooley-Tukey, the RNS NTT's loop structure, output in tree order); a
// product of two such spectra, inverse-transformed, is the fold of the negacyclic product.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ember/backend/cggi_rows.h"
#include "ember/core/config.h"
#include "ember/core/modarith.h"

namespace ember::backend::cggi {

/// A complex double; 16-byte aligned so the GPU moves it in one access.
struct alignas(16) Cx {
  double re, im;
};

// Correctly rounded operations; the device's intrinsics forbid nvcc's contraction into FMAs.
#if defined(__CUDA_ARCH__)
EMBER_HD double f_add(double a, double b) { return __dadd_rn(a, b); }
EMBER_HD double f_sub(double a, double b) { return __dsub_rn(a, b); }
EMBER_HD double f_mul(double a, double b) { return __dmul_rn(a, b); }
EMBER_HD double f_fma(double a, double b, double c) { return __fma_rn(a, b, c); }
#else
EMBER_HD double f_add(double a, double b) { return a + b; }
EMBER_HD double f_sub(double a, double b) { return a - b; }
EMBER_HD double f_mul(double a, double b) { return a * b; }
EMBER_HD double f_fma(double a, double b, double c) { return std::fma(a, b, c); }
#endif

EMBER_HD Cx cx_add(Cx a, Cx b) { return {f_add(a.re, b.re), f_add(a.im, b.im)}; }
EMBER_HD Cx cx_sub(Cx a, Cx b) { return {f_sub(a.re, b.re), f_sub(a.im, b.im)}; }

/// a b: re = a.re b.re - a.im b.im, im = a.re b.im + a.im b.re, one product rounded first.
EMBER_HD Cx cx_mul(Cx a, Cx b) {
  return {f_fma(a.re, b.re, -f_mul(a.im, b.im)), f_fma(a.re, b.im, f_mul(a.im, b.re))};
}

/// acc + a b, four fused multiply-adds in this order.
EMBER_HD Cx cx_mac(Cx acc, Cx a, Cx b) {
  return {f_fma(-a.im, b.im, f_fma(a.re, b.re, acc.re)),
          f_fma(a.im, b.re, f_fma(a.re, b.im, acc.im))};
}

/// Cooley-Tukey butterfly of the forward transform: (u + w v, u - w v).
EMBER_HD void cx_ct(Cx& u, Cx& v, Cx w) {
  const Cx t = cx_mul(v, w);
  const Cx x = u;
  u = cx_add(x, t);
  v = cx_sub(x, t);
}

/// Gentleman-Sande butterfly of the inverse: (u + v, (u - v) conj(w)); iw = conj(w) is tabled.
EMBER_HD void cx_gs(Cx& u, Cx& v, Cx iw) {
  const Cx x = u;
  u = cx_add(x, v);
  v = cx_mul(cx_sub(x, v), iw);
}

/// In-place forward transform of n complex values (the fold of a real polynomial of 2n
/// coefficients): tw[m + i] is the twiddle of node i at depth log2 m (tables from
/// fourier_tables), output in tree order.
EMBER_HD void fft_forward(Cx* a, std::size_t n, const Cx* tw) {
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const Cx w = tw[m + i];
      Cx* x = a + 2 * i * t;
      for (std::size_t j = 0; j < t; ++j) cx_ct(x[j], x[j + t], w);
    }
  }
}

/// The inverse without the final 1/n (callers fold it into the key): Gentleman-Sande, the
/// forward's stages in reverse, itw[m + i] = conj(tw[m + i]).
EMBER_HD void fft_inverse_unscaled(Cx* a, std::size_t n, const Cx* itw) {
  std::size_t t = 1;
  for (std::size_t m = n; m > 1; m >>= 1) {
    const std::size_t h = m >> 1;
    for (std::size_t i = 0; i < h; ++i) {
      const Cx w = itw[h + i];
      Cx* x = a + 2 * i * t;
      for (std::size_t j = 0; j < t; ++j) cx_gs(x[j], x[j + t], w);
    }
    t <<= 1;
  }
}

/// The nearest integer of x (ties to even; |x| < 2^63) as a torus word mod 2^W.
template <class T>
EMBER_HD T torus_from_double(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<T>(static_cast<u64>(__double2ll_rn(x)));
#else
  return static_cast<T>(static_cast<u64>(static_cast<std::int64_t>(std::nearbyint(x))));
#endif
}

/// Most limbs a key word splits into (CggiShape::limbs).
inline constexpr int kMaxKeyLimbs = 8;

/// One polynomial of the bootstrapping key (2 half torus words) to the Fourier domain, `limbs`
/// spectra of half values in `out`: each word split into signed limbs of `limb_bits` bits
/// (split_limbs), each limb polynomial folded, forward transformed and multiplied by 1 / half
/// (exact: a power of two), the inverse transform's scale folded in.
template <class T>
EMBER_HD void fourier_key_polynomial(Cx* out, const T* in, std::size_t half, const Cx* tw,
                                     int limb_bits, int limbs) {
  for (std::size_t j = 0; j < half; ++j) {
    std::int64_t lo[kMaxKeyLimbs], hi[kMaxKeyLimbs];
    split_limbs(in[j], limb_bits, limbs, lo);
    split_limbs(in[j + half], limb_bits, limbs, hi);
    for (int c = 0; c < limbs; ++c)
      out[c * half + j] = {static_cast<double>(lo[c]), static_cast<double>(hi[c])};
  }
  const double scale = 1.0 / static_cast<double>(half);
  for (int c = 0; c < limbs; ++c) {
    Cx* x = out + c * half;
    fft_forward(x, half, tw);
    for (std::size_t j = 0; j < half; ++j) x[j] = {f_mul(x[j].re, scale), f_mul(x[j].im, scale)};
  }
}

/// A product limb's nearest integer times 2^shift, as a torus word (mod 2^W).
template <class T>
EMBER_HD T limb_to_torus(double x, int shift) {
  return static_cast<T>(torus_from_double<T>(x) << shift);
}

/// The twiddles of the transform of n values (host; n a power of two, at least 2): node i at
/// depth d (index 2^d + i) splits X^t - c into X^(t/2) -+ sqrt(c), starting from c = i; tw holds
/// sqrt(c), itw its conjugate. Angles are exact integers of pi / (2n) until the final cos/sin in
/// long double, so both backends read the same correctly rounded table.
inline void fourier_tables(std::size_t n, Cx* tw, Cx* itw) {
  const std::size_t full = 4 * n;  // 2 pi in units of pi / (2n)
  std::vector<std::size_t> angle(n, 0);
  if (n > 1) angle[1] = n;  // c = i at the root: pi / 2
  for (std::size_t m = 1; 2 * m < n; m <<= 1)
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t half = angle[m + i] / 2;  // even at every node with children
      angle[2 * m + 2 * i] = half;
      angle[2 * m + 2 * i + 1] = (half + full / 2) % full;
    }
  const long double unit = 3.14159265358979323846264338327950288L / static_cast<long double>(2 * n);
  tw[0] = itw[0] = Cx{1.0, 0.0};
  for (std::size_t x = 1; x < n; ++x) {
    const long double a = static_cast<long double>(angle[x]) / 2 * unit;
    const double c = static_cast<double>(std::cos(a)), s = static_cast<double>(std::sin(a));
    tw[x] = Cx{c, s};
    itw[x] = Cx{c, -s};
  }
}

}  // namespace ember::backend::cggi
