// Host/device building blocks of CGGI on torus words: modulus switch, gadget decomposition, limb
// splitting, monomial rotation, sample extraction and the key-switching row (the polynomial
// products are in cggi_fft.h).
//
// Every CGGI result of both backends comes from these functions, so the CPU and GPU ciphertexts
// are bit-identical by construction (exact integer arithmetic). Torus: integers mod 2^W in an
// unsigned word T (u32: W = 32, u64: W = 64).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/core/config.h"
#include "ember/core/modarith.h"

namespace ember::backend::cggi {

using i64 = std::int64_t;

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
/// weight 2^-(j+1) base_log, each in [-2^(base_log-1), 2^(base_log-1)]; a is rounded to the
/// nearest multiple of 2^(W - base_log levels) first. base_log levels <= W.
/// (decompose_each hands each digit to emit(j, digit), from the last level to the first, without
/// an array: the GPU keeps them out of local memory.)
///
/// Balanced digits: a level whose value is exactly half the base (2^(base_log-1)) keeps it or
/// becomes its negative with a carry, chosen by one of a's lowest bits (the tie bit: bit t of a
/// for the t-th digit made, the last level's first). For uniform a each digit then has mean 0 and
/// second moment (B^2 + 2)/12, and the levels are uncorrelated: what docs/cggi.md's noise model
/// assumes. Exactly so when base_log levels + levels <= W (the tie bits are bits the rounding
/// drops; every preset); otherwise some tie bits are kept bits, and the moments are only near
/// those. (Always carrying at half the base gives digits of mean -1/2: a key
/// switch's error then has a fixed mean per key, half the sum of its key-switching key's errors,
/// which the model's variance misses; tests/unit/cggi/test_cggi_rows.cpp checks the moments.)
template <class T>
struct Decomposer {
  int base_log, levels;
  /// The state before the first (last-level) digit: a rounded to the kept bits.
  EMBER_HD T start(T a) const {
    const int drop = kTorusBits<T> - base_log * levels;
    return drop > 0 ? static_cast<T>(static_cast<T>(a + (T{1} << (drop - 1))) >> drop) : a;
  }
  /// The next digit: d, or d - 2^base_log with a carry when d > 2^(base_log-1) or when
  /// d = 2^(base_log-1) and the tie bit (0 or 1) is 1.
  EMBER_HD i64 next(T& state, T tie) const {
    const T mask = static_cast<T>((T{1} << base_log) - 1),
            half = static_cast<T>(T{1} << (base_log - 1));
    const T d = state & mask;
    const T carry = static_cast<T>((d > half) | ((d == half) & tie));
    state = static_cast<T>((state >> base_log) + carry);
    return static_cast<i64>(d) - (static_cast<i64>(carry) << base_log);
  }
  /// The tie bit of the digit of level j of a.
  EMBER_HD T tie(T a, int j) const { return static_cast<T>((a >> (levels - 1 - j)) & 1); }
};

template <class T, class Emit>
EMBER_HD void decompose_each(T a, int base_log, int levels, Emit&& emit) {
  const Decomposer<T> dec{base_log, levels};
  T state = dec.start(a);
  for (int j = levels - 1; j >= 0; --j) emit(j, dec.next(state, dec.tie(a, j)));
}

/// decompose_each of two words in step: emit(j, digit of a, digit of b).
template <class T, class Emit>
EMBER_HD void decompose_pair_each(T a, T b, int base_log, int levels, Emit&& emit) {
  const Decomposer<T> dec{base_log, levels};
  T sa = dec.start(a), sb = dec.start(b);
  for (int j = levels - 1; j >= 0; --j) {
    const i64 da = dec.next(sa, dec.tie(a, j));
    emit(j, da, dec.next(sb, dec.tie(b, j)));
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

/// The phase b - <a, s> of one LWE ciphertext (dim mask words, then b) under a binary key.
template <class T>
EMBER_HD T lwe_phase(const T* ct, const std::uint8_t* key, std::size_t dim) {
  T b = ct[dim];
  for (std::size_t i = 0; i < dim; ++i)
    if (key[i]) b = static_cast<T>(b - ct[i]);
  return b;
}

/// An encryption of zero's body plus the message value * scale + offset: Booleans take scale
/// 2 mu and offset -mu (1 -> mu, 0 -> -mu), integers scale delta and offset 0.
template <class T>
EMBER_HD T plus_message(T body, std::uint8_t value, T scale, T offset) {
  return static_cast<T>(body + static_cast<T>(value) * scale + offset);
}

/// The message of a phase: for message_bits 0 a Boolean ciphertext's bit (1 in [0, 1/2), 0 in
/// [1/2, 1)); else the integer of its top message_bits bits below the padding bit, rounded.
template <class T>
EMBER_HD std::uint8_t message_of_phase(T phase, int message_bits) {
  if (message_bits == 0) return (phase >> (kTorusBits<T> - 1)) == 0 ? 1 : 0;
  const int shift = kTorusBits<T> - message_bits - 1;
  const T rounded = static_cast<T>(phase + (T{1} << (shift - 1)));
  return static_cast<std::uint8_t>((rounded >> shift) & ((T{1} << message_bits) - 1));
}

}  // namespace ember::backend::cggi
