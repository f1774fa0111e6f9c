// Host/device building blocks of CGGI: Goldilocks arithmetic and negacyclic NTT, torus rounding,
// gadget decomposition, monomial rotation, sample extraction and the key-switching row.
//
// Every CGGI result of both backends comes from these functions, so the CPU and GPU ciphertexts
// are bit-identical by construction (all arithmetic is exact integer arithmetic).
//
// Torus: integers mod 2^W in an unsigned word T (u32: W = 32, u64: W = 64). Polynomial products
// by a bootstrapping key run in Z_p, p = 2^64 - 2^32 + 1 (Goldilocks): the decomposition digits
// (signed, |d| <= 2^(B-1)) and the key's words, split into signed limbs of `limb_bits` bits, are
// lifted to Z_p; one product sums (k+1) l N terms, each below 2^(B-1) 2^(limb_bits-1) in size,
// and the parameters choose limb_bits so that the sum stays below 2^62 < p/2: the centered result
// is the exact integer, which is then reduced mod 2^W (see CggiShape::limb_bits).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/core/config.h"
#include "ember/core/modarith.h"

namespace ember::backend::cggi {

using i64 = std::int64_t;

/// p = 2^64 - 2^32 + 1 and 2^64 mod p.
inline constexpr u64 kGoldilocks = 0xFFFFFFFF00000001ull;
inline constexpr u64 kGoldilocksEps = 0xFFFFFFFFull;

// The reductions below are branch-free (masks instead of conditional jumps): on random data a
// branch per word is mispredicted half the time, which tripled the CPU transform's cost.

/// (hi 2^64 + lo) mod p, canonical: 2^64 = 2^32 - 1 and 2^96 = -1 mod p.
EMBER_HD u64 gl_reduce128(u64 hi, u64 lo) {
  const u64 hi_hi = hi >> 32, hi_lo = hi & kGoldilocksEps;
  u64 t0 = lo - hi_hi;
  t0 -= kGoldilocksEps & (u64{0} - static_cast<u64>(lo < hi_hi));  // borrow: + p
  const u64 t1 = hi_lo * kGoldilocksEps;
  u64 t2 = t0 + t1;
  t2 += kGoldilocksEps & (u64{0} - static_cast<u64>(t2 < t1));  // carry: 2^64 = eps
  return t2 - (kGoldilocks & (u64{0} - static_cast<u64>(t2 >= kGoldilocks)));
}

EMBER_HD u64 gl_add(u64 a, u64 b) {
  u64 s = a + b;
  s += kGoldilocksEps & (u64{0} - static_cast<u64>(s < a));
  return s - (kGoldilocks & (u64{0} - static_cast<u64>(s >= kGoldilocks)));
}

EMBER_HD u64 gl_sub(u64 a, u64 b) {
  return a - b + (kGoldilocks & (u64{0} - static_cast<u64>(a < b)));
}

EMBER_HD u64 gl_mul(u64 a, u64 b) {
  u64 hi, lo;
  mul_wide(a, b, hi, lo);
  return gl_reduce128(hi, lo);
}

/// A signed integer (|v| < p/2) as a residue mod p.
EMBER_HD u64 gl_from_signed(i64 v) {
  return static_cast<u64>(v) + (kGoldilocks & (u64{0} - static_cast<u64>(v < 0)));
}

/// The centered value of a residue: in (-p/2, p/2).
EMBER_HD i64 gl_centered(u64 x) {
  return static_cast<i64>(x - (kGoldilocks & (u64{0} - static_cast<u64>(x > kGoldilocks / 2))));
}

/// In-place negacyclic forward NTT of n residues (Cooley-Tukey, bit-reversed output);
/// psi_rev[i] = psi^bitrev(i) for a primitive 2n-th root psi.
EMBER_HD void gl_ntt_forward(u64* a, std::size_t n, const u64* psi_rev) {
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const u64 s = psi_rev[m + i];
      u64* x = a + 2 * i * t;
      for (std::size_t j = 0; j < t; ++j) {
        const u64 u = x[j], v = gl_mul(x[j + t], s);
        x[j] = gl_add(u, v);
        x[j + t] = gl_sub(u, v);
      }
    }
  }
}

/// A sum of products mod p reduced once: top 2^128 + hi 2^64 + lo.
struct GlAcc {
  u64 lo = 0, hi = 0, top = 0;
};

/// acc += x y (exact, 192 bits).
EMBER_HD void gl_mac(GlAcc& acc, u64 x, u64 y) {
  u64 h, l;
  mul_wide(x, y, h, l);
  acc.lo += l;
  h += acc.lo < l ? 1 : 0;  // h <= 2^64 - 2: no overflow
  acc.hi += h;
  acc.top += acc.hi < h ? 1 : 0;
}

/// The accumulated sum mod p (2^128 = -2^32 mod p); top < 2^32.
EMBER_HD u64 gl_acc_reduce(const GlAcc& acc) {
  return gl_sub(gl_reduce128(acc.hi, acc.lo), acc.top << 32);
}

/// The inverse transform without the final 1/n (callers fold n^-1 into a factor).
EMBER_HD void gl_ntt_inverse_unscaled(u64* a, std::size_t n, const u64* psi_inv_rev) {
  std::size_t t = 1;
  for (std::size_t m = n; m > 1; m >>= 1) {
    const std::size_t h = m >> 1;
    for (std::size_t i = 0; i < h; ++i) {
      const u64 s = psi_inv_rev[h + i];
      u64* x = a + 2 * i * t;
      for (std::size_t j = 0; j < t; ++j) {
        const u64 u = x[j], v = x[j + t];
        x[j] = gl_add(u, v);
        x[j + t] = gl_mul(gl_sub(u, v), s);
      }
    }
    t <<= 1;
  }
}

/// In-place inverse of gl_ntt_forward (Gentleman-Sande); psi_inv_rev[i] = psi^-bitrev(i),
/// n_inv = n^-1 mod p.
EMBER_HD void gl_ntt_inverse(u64* a, std::size_t n, const u64* psi_inv_rev, u64 n_inv) {
  gl_ntt_inverse_unscaled(a, n, psi_inv_rev);
  for (std::size_t j = 0; j < n; ++j) a[j] = gl_mul(a[j], n_inv);
}

/// Bits of the torus word T.
template <class T>
inline constexpr int kTorusBits = static_cast<int>(sizeof(T) * 8);

/// round(a 2N / 2^W) mod 2N, for 2N = 2^log2_2n: the modulus switch before a blind rotation.
template <class T>
EMBER_HD u32 mod_switch(T a, int log2_2n) {
  const int shift = kTorusBits<T> - log2_2n;
  const T rounded = static_cast<T>(a + (T{1} << (shift - 1)));
  return static_cast<u32>(rounded >> shift) & ((u32{1} << log2_2n) - 1);
}

/// The signed gadget digits of torus value a, base 2^base_log, `levels` levels: digits[j] has
/// weight 2^-(j+1) base_log, each in [-2^(base_log-1), 2^(base_log-1)); a is rounded to the
/// nearest multiple of 2^(W - base_log levels) first. base_log levels <= W.
/// (decompose_each hands each digit to emit(j, digit), from the last level to the first, without
/// an array: the GPU keeps them out of local memory.)
template <class T>
struct Decomposer {
  int base_log, levels;
  /// The state before the first (last-level) digit: a rounded to the kept bits.
  EMBER_HD T start(T a) const {
    const int drop = kTorusBits<T> - base_log * levels;
    return drop > 0 ? static_cast<T>(static_cast<T>(a + (T{1} << (drop - 1))) >> drop) : a;
  }
  /// The next digit (balanced: d - 2^base_log with a carry when d >= 2^(base_log-1)).
  EMBER_HD i64 next(T& state) const {
    const T mask = static_cast<T>((T{1} << base_log) - 1),
            half = static_cast<T>(T{1} << (base_log - 1));
    const T d = state & mask;
    const T carry = static_cast<T>(d >= half);
    state = static_cast<T>((state >> base_log) + carry);
    return static_cast<i64>(d) - (static_cast<i64>(carry) << base_log);
  }
};

template <class T, class Emit>
EMBER_HD void decompose_each(T a, int base_log, int levels, Emit&& emit) {
  const Decomposer<T> dec{base_log, levels};
  T state = dec.start(a);
  for (int j = levels - 1; j >= 0; --j) emit(j, dec.next(state));
}

/// decompose_each of two words in step: emit(j, digit of a, digit of b).
template <class T, class Emit>
EMBER_HD void decompose_pair_each(T a, T b, int base_log, int levels, Emit&& emit) {
  const Decomposer<T> dec{base_log, levels};
  T sa = dec.start(a), sb = dec.start(b);
  for (int j = levels - 1; j >= 0; --j) {
    const i64 da = dec.next(sa);
    emit(j, da, dec.next(sb));
  }
}

template <class T>
EMBER_HD void decompose(T a, int base_log, int levels, i64* digits) {
  decompose_each(a, base_log, levels, [&](int j, i64 d) { digits[j] = d; });
}

/// The signed limbs of word w, `limb_bits` each from the least significant, limbs in
/// [-2^(limb_bits-1), 2^(limb_bits-1)) except the top one, whose bits above the word's width do
/// not matter: sum_c limbs[c] 2^(c limb_bits) = w mod 2^W.
template <class T>
EMBER_HD void split_limbs(T w, int limb_bits, int count, i64* limbs) {
  T state = w;
  for (int c = 0; c < count; ++c) {
    if (c == count - 1 || limb_bits >= kTorusBits<T>) {
      // The top limb: the remaining bits as a signed value of their own width.
      const int width = kTorusBits<T> - c * limb_bits;
      const i64 v = static_cast<i64>(static_cast<u64>(state));
      if (width >= 64) {
        limbs[c] = v;
      } else {
        const i64 half = i64{1} << (width - 1);
        limbs[c] = v >= half ? v - (i64{1} << width) : v;
      }
      for (int r = c + 1; r < count; ++r) limbs[r] = 0;
      return;
    }
    const T low = state & static_cast<T>((T{1} << limb_bits) - 1);
    const i64 half = i64{1} << (limb_bits - 1);
    i64 v = static_cast<i64>(low);
    state = static_cast<T>(state >> limb_bits);
    if (v >= half) {
      v -= i64{1} << limb_bits;
      state = static_cast<T>(state + 1);
    }
    limbs[c] = v;
  }
}

/// A torus word from the exact integer value x of a product limb, times 2^shift, mod 2^W.
template <class T>
EMBER_HD T torus_from_limb(u64 x, int shift) {
  const u64 v = static_cast<u64>(gl_centered(x));
  return shift >= 64 ? T{0} : static_cast<T>(v << shift);
}

/// out = X^e in (negacyclic, n coefficients, e in [0, 2n)); out != in.
template <class T>
EMBER_HD void rotate_monomial(T* out, const T* in, std::size_t n, std::size_t e) {
  const bool flip = e >= n;
  const std::size_t s = flip ? e - n : e;
  for (std::size_t j = 0; j < n; ++j) {
    // Coefficient j of X^s in is in[j - s] (negated when j < s), once more negated when flip.
    const bool wrap = j < s;
    const T v = in[wrap ? j + n - s : j - s];
    out[j] = (wrap != flip) ? static_cast<T>(T{0} - v) : v;
  }
}

/// out[j] = (X^e in - in)[j] for j < n (the CMux's difference).
template <class T>
EMBER_HD void rotate_minus_self(T* out, const T* in, std::size_t n, std::size_t e) {
  rotate_monomial(out, in, n, e);
  for (std::size_t j = 0; j < n; ++j) out[j] = static_cast<T>(out[j] - in[j]);
}

/// The LWE ciphertext (k n mask words, then the body) of the constant coefficient of GLWE
/// (a_0 .. a_{k-1}, b), each polynomial n words: a'[i n + j] = a_i[0] for j = 0, -a_i[n - j]
/// otherwise; its key is the GLWE key's coefficients in order.
template <class T>
EMBER_HD void sample_extract(T* lwe, const T* glwe, std::size_t k, std::size_t n) {
  for (std::size_t i = 0; i < k; ++i) {
    const T* a = glwe + i * n;
    lwe[i * n] = a[0];
    for (std::size_t j = 1; j < n; ++j) lwe[i * n + j] = static_cast<T>(T{0} - a[n - j]);
  }
  lwe[k * n] = glwe[k * n];
}

/// One input word of an LWE key switch: out -= sum_j d_j ksk_row[j], the d_j the decomposition
/// of `a`, ksk_row `levels` LWE ciphertexts of out_dim + 1 words.
template <class T>
EMBER_HD void key_switch_row(T* out, T a, const T* ksk_row, std::size_t out_dim, int base_log,
                             int levels) {
  i64 digits[64];
  decompose(a, base_log, levels, digits);
  for (int j = 0; j < levels; ++j) {
    const T d = static_cast<T>(digits[j]);
    if (d == 0) continue;
    const T* row = ksk_row + static_cast<std::size_t>(j) * (out_dim + 1);
    for (std::size_t c = 0; c <= out_dim; ++c) out[c] = static_cast<T>(out[c] - d * row[c]);
  }
}

}  // namespace ember::backend::cggi
