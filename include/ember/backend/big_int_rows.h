// Per-coefficient big-integer arithmetic mod 2^bits (little-endian 64-bit words), shared by the CPU
// and CUDA backends so that both give the same words: HEAAN's coefficients.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/backend/ckks_fft.h"
#include "ember/core/chacha20.h"
#include "ember/core/config.h"
#include "ember/core/modarith.h"

namespace ember::backend {

/// A polynomial of `n` big-integer coefficients mod 2^bits, `words` 64-bit words each
/// (coefficient-major: coefficient c at words [c words, (c + 1) words)), bits in
/// (64 (words - 1), 64 words]. Words above `bits` are zero: every operation masks its top word.
struct BigShape {
  std::size_t n = 0;
  std::size_t words = 0;
  int bits = 0;

  EMBER_HD u64 top_mask() const {
    const int r = bits - 64 * static_cast<int>(words - 1);
    return r >= 64 ? ~u64{0} : (u64{1} << r) - 1;
  }
  EMBER_HD std::size_t total_words() const { return n * words; }
};

/// Tables of the reconstruction of a big integer mod 2^bits from its residues mod m primes of
/// product P (the centered value, read mod 2^bits): x = sum_i y_i (P / p_i) - k P with
/// y_i = r_i (P / p_i)^-1 mod p_i and k = round(sum_i y_i / p_i). The rounding is exact for values
/// |x| < P / 4 (the products' bound, ring::BigMultiplier): the sum's fraction is then within a
/// quarter of an integer, far from any double rounding error.
struct BigCrtView {
  std::size_t primes = 0;
  std::size_t limbs32 = 0;             // 32-bit limbs of the output: 2 words
  std::size_t stride = 0;              // limbs32 rounded up to 8: a row of cofactor
  const u64* prime = nullptr;          // [primes]
  const u64* inverse = nullptr;        // [primes]: (P / p_i)^-1 mod p_i
  const u64* inverse_shoup = nullptr;  // [primes]
  const double* reciprocal = nullptr;  // [primes]: 1 / p_i
  const u32* cofactor = nullptr;       // [primes][stride]: (P / p_i) mod 2^(32 limbs32), 0-padded
  const u32* minus_p = nullptr;        // [stride]: -P mod 2^(32 limbs32), 0-padded
  // The combination as one byte matrix for integer tensor cores (the CUDA backend's form): row
  // k = 4 i + a takes byte a of digit y_i (i = primes: the multiple k, below 2^8), column u is
  // byte u of the output (u < 4 limbs32), W[k][u] = byte u - a of cofactor_i (of minus_p for
  // i = primes), 0 for u < a. One byte plane in fragment order (ring::fragment_tiles_of) over
  // byte_blocks blocks of 32 rows; sum_k bytes_k W[k][u] 2^(8u) with the carries between columns is
  // then the output.
  const u32* byte_matrix = nullptr;
  u32 byte_blocks = 0;
};

/// Tables of the CRT of big integers (limbs32 32-bit limbs) into residues mod primes below 2^30,
/// written as 32-bit words.
struct BigRnsView {
  std::size_t primes = 0;
  std::size_t limbs32 = 0;          // 32-bit limbs of the input: 2 words
  std::size_t stride = 0;           // primes rounded up to 8: a row of pow32
  const Modulus* moduli = nullptr;  // [primes]
  const u32* pow32 = nullptr;       // [limbs32][stride]: 2^(32 j) mod p_i, 0-padded
  // Centered reading (the input as a signed `bits`-bit integer): [stride] 2^bits mod p_i, taken
  // off the residues of negative inputs; nullptr reads the input unsigned, in [0, 2^bits).
  const u32* wrap = nullptr;
  int bits = 0;  // the input's width when wrap is set
  // The CRT as byte matrices for integer tensor cores (the CUDA backend's form): row k is byte k
  // of the input (k < 4 limbs32), W[k][i] = 2^(8k) mod p_i, stored as its four byte planes
  // in fragment order (ring::fragment_tiles_of) over byte_blocks blocks of 32 rows; sum_b 2^(8b)
  // sum_k bytes_k plane_b[k][i] (below 2^51 for up to 160 limbs) is then congruent to the input mod
  // p_i.
  const u32* byte_planes = nullptr;
  u32 byte_blocks = 0;
};

namespace big {

/// Four consecutive 32-bit table entries in one 16-byte load (the tables' rows are 16-byte
/// aligned: strides of multiples of 8 from aligned buffers).
struct alignas(16) Four {
  u32 v[4];
};
EMBER_HD Four load_four(const u32* p) { return *reinterpret_cast<const Four*>(p); }

/// (lo, hi) += a b, for a b < 2^64.
EMBER_HD void accumulate(u64& lo, u64& hi, u64 a, u64 b) {
  const u64 p = a * b;
  lo += p;
  hi += lo < p;
}

/// Residues and limbs a pass of the CRT rows below computes: eight accumulators a thread, each
/// table entry and input read once for eight multiply-accumulates.
inline constexpr std::size_t kBigBlock = 8;

/// Whether x, given by its 32-bit limbs (limb(j)), is negative read as a signed v.bits-bit integer
/// (always false for an unsigned reading, v.wrap == nullptr).
template <class Limb>
EMBER_HD bool reads_negative(Limb limb, const BigRnsView& v) {
  if (!v.wrap) return false;
  const int top = v.bits - 1;
  return (limb(static_cast<std::size_t>(top / 32)) >> (top % 32)) & 1u;
}

/// out[r] = x mod p_(i0 + r), r < kBigBlock, for x given by its 32-bit limbs (limb(j)): sum_j
/// limb_j (2^(32 j) mod p) in 128 bits (below 2^70 for up to 64 words), one reduction at the end;
/// `negative` (reads_negative) takes 2^bits off, for the centered value. Entries past v.primes are
/// left alone.
template <class Limb>
EMBER_HD void rns_residues(Limb limb, const BigRnsView& v, std::size_t i0, bool negative,
                           u32 out[kBigBlock]) {
  u64 lo[kBigBlock] = {}, hi[kBigBlock] = {};
  for (std::size_t j = 0; j < v.limbs32; ++j) {
    const u64 x = limb(j);
    const Four c0 = load_four(v.pow32 + j * v.stride + i0);
    const Four c1 = load_four(v.pow32 + j * v.stride + i0 + 4);
    for (int r = 0; r < 4; ++r) {
      accumulate(lo[r], hi[r], x, c0.v[r]);
      accumulate(lo[r + 4], hi[r + 4], x, c1.v[r]);
    }
  }
  for (std::size_t r = 0; r < kBigBlock; ++r) {
    if (i0 + r >= v.primes) continue;
    const Modulus& m = v.moduli[i0 + r];
    const u64 x = reduce_product(hi[r], lo[r], m);
    out[r] = static_cast<u32>(negative ? sub_mod(x, u64{v.wrap[i0 + r]}, m.value) : x);
  }
}

/// y_i = r_i (P / p_i)^-1 mod p_i, for a residue r of prime i.
EMBER_HD u64 crt_digit(u64 r, const BigCrtView& v, std::size_t i) {
  return mul_shoup(r, v.inverse[i], v.inverse_shoup[i], v.prime[i]);
}

/// k = round(sum_i y_i / p_i): the multiple of P the centered value subtracts.
template <class Digit>
EMBER_HD u64 crt_multiple(Digit y, const BigCrtView& v) {
  double f = 0;
  for (std::size_t i = 0; i < v.primes; ++i) f += static_cast<double>(y(i)) * v.reciprocal[i];
  return static_cast<u64>(f + 0.5);
}

/// out = sum_i y_i (P / p_i) + k (-P) mod 2^o.bits, kBigBlock limbs at a time with the carries
/// between them (each limb's sum is below 2^70: primes < 2^31, at most a few hundred terms).
template <class Digit>
EMBER_HD void crt_combine(u64* out, const BigShape& o, Digit y, u64 k, const BigCrtView& v) {
  u64 carry = 0;
  for (std::size_t t0 = 0; t0 < v.limbs32; t0 += kBigBlock) {
    u64 lo[kBigBlock] = {}, hi[kBigBlock] = {};
    for (std::size_t i = 0; i < v.primes; ++i) {
      const u64 yi = y(i);
      const Four c0 = load_four(v.cofactor + i * v.stride + t0);
      const Four c1 = load_four(v.cofactor + i * v.stride + t0 + 4);
      for (int r = 0; r < 4; ++r) {
        accumulate(lo[r], hi[r], yi, c0.v[r]);
        accumulate(lo[r + 4], hi[r + 4], yi, c1.v[r]);
      }
    }
    const Four m0 = load_four(v.minus_p + t0), m1 = load_four(v.minus_p + t0 + 4);
    for (std::size_t r = 0; r < kBigBlock && t0 + r < v.limbs32; ++r) {
      accumulate(lo[r], hi[r], k, r < 4 ? m0.v[r] : m1.v[r - 4]);
      const u64 low = lo[r] + carry;
      hi[r] += low < carry;
      const u64 limb = low & 0xffffffffu;
      carry = (low >> 32) | (hi[r] << 32);
      const std::size_t t = t0 + r;
      if (t % 2 == 0)
        out[t / 2] = limb;
      else
        out[t / 2] |= limb << 32;
    }
  }
  out[o.words - 1] &= o.top_mask();
}

/// Word t (any t >= 0) of x read as a signed `bits`-bit integer, sign-extended to infinity.
EMBER_HD u64 signed_word(const u64* x, const BigShape& s, std::size_t t) {
  const std::size_t top = static_cast<std::size_t>(s.bits - 1) / 64;
  const int sign_pos = (s.bits - 1) % 64;
  const bool negative = (x[top] >> sign_pos) & 1;
  if (t < top) return x[t];
  if (t == top) {
    const u64 low = sign_pos == 63 ? ~u64{0} : (u64{2} << sign_pos) - 1;  // bits 0..sign_pos
    return negative ? (x[top] | ~low) : (x[top] & low);
  }
  return negative ? ~u64{0} : 0;
}

/// out = a + b mod 2^bits (negate_b: a - b).
EMBER_HD void add(u64* out, const u64* a, const u64* b, const BigShape& s, bool negate_b) {
  u64 carry = negate_b ? 1 : 0;  // a + ~b + 1 = a - b
  for (std::size_t w = 0; w < s.words; ++w) {
    const u64 bw = negate_b ? ~b[w] : b[w];
    const u64 t = a[w] + bw;
    const u64 c1 = t < a[w];
    out[w] = t + carry;
    carry = c1 | (out[w] < t);
  }
  out[s.words - 1] &= s.top_mask();
}

/// out = -a mod 2^bits.
EMBER_HD void negate(u64* out, const u64* a, const BigShape& s) {
  u64 carry = 1;  // ~a + 1
  for (std::size_t w = 0; w < s.words; ++w) {
    const u64 t = ~a[w] + carry;
    carry = carry && t == 0;
    out[w] = t;
  }
  out[s.words - 1] &= s.top_mask();
}

/// out (shape o) = x 2^left mod 2^o.bits (right == 0), or round(x / 2^right) mod 2^o.bits
/// (left == 0; rounding half up: floor((x + 2^(right - 1)) / 2^right)), for x = a read as a signed
/// i.bits-bit integer. left = right = 0 re-reads x at another width (sign extension or truncation).
EMBER_HD void shift(u64* out, const BigShape& o, const u64* a, const BigShape& i, int left,
                    int right) {
  if (right == 0) {
    const std::size_t ws = static_cast<std::size_t>(left) / 64;
    const int bs = left % 64;
    for (std::size_t j = 0; j < o.words; ++j) {
      const u64 hi = j >= ws ? signed_word(a, i, j - ws) : 0;
      const u64 lo = (bs && j >= ws + 1) ? signed_word(a, i, j - ws - 1) : 0;
      out[j] = bs ? (hi << bs) | (lo >> (64 - bs)) : hi;
    }
  } else {
    // y = x + 2^(right - 1), word by word from the bottom; output word j takes y's bits from
    // 64 j + right: words ws + j and ws + j + 1.
    const std::size_t ws = static_cast<std::size_t>(right) / 64;
    const int bs = right % 64;
    const std::size_t add_word = static_cast<std::size_t>(right - 1) / 64;
    const u64 add_bit = u64{1} << ((right - 1) % 64);
    u64 carry = 0, prev = 0;
    const std::size_t last = ws + o.words;  // the highest y word any output word reads
    for (std::size_t t = 0; t <= last; ++t) {
      const u64 xw = signed_word(a, i, t);
      const u64 addend = t == add_word ? add_bit : 0;
      const u64 s1 = xw + addend;
      const u64 c1 = s1 < xw;
      const u64 y = s1 + carry;
      carry = c1 | (y < s1);
      // y word t completes output word t - ws - 1 (bs > 0) or t - ws (bs == 0).
      if (bs == 0) {
        if (t >= ws && t - ws < o.words) out[t - ws] = y;
      } else if (t >= ws + 1 && t - ws - 1 < o.words) {
        out[t - ws - 1] = (prev >> bs) | (y << (64 - bs));
      }
      prev = y;
    }
  }
  out[o.words - 1] &= o.top_mask();
}

/// out = r read as a centered residue mod q (r - q when r > q / 2), mod 2^o.bits.
EMBER_HD void from_residue(u64* out, const BigShape& o, u64 r, u64 q) {
  const bool negative = r > q / 2;
  const u64 low = negative ? r - q : r;  // two's complement of r - q when negative
  for (std::size_t t = 0; t < o.words; ++t) out[t] = t == 0 ? low : (negative ? ~u64{0} : 0);
  out[o.words - 1] &= o.top_mask();
}

/// The inverse of an odd g mod 2^64 (Newton's iteration x <- x (2 - g x): g is its own inverse
/// mod 8, and each step doubles the correct low bits, 3 -> 96 in five steps).
EMBER_HD u64 odd_inverse(u64 g) {
  u64 x = g;
  for (int step = 0; step < 5; ++step) x *= 2 - g * x;
  return x;
}

/// Output coefficient j of a(X^g) in Z[X]/(X^n + 1), for an odd g with galois_inverse = g^-1 mod
/// 2n (odd_inverse): X^i goes to X^(i g) = -X^(i g - n), so coefficient j is a's coefficient
/// i = j g^-1 mod 2n when i < n, else the negation mod 2^bits of coefficient i - n. `a` is the
/// whole polynomial (shape s), `out` coefficient j's words.
EMBER_HD void automorphism(u64* out, const u64* a, const BigShape& s, std::size_t j,
                           u64 galois_inverse) {
  const u64 i = (static_cast<u64>(j) * galois_inverse) & (2 * static_cast<u64>(s.n) - 1);
  if (i < s.n) {
    for (std::size_t w = 0; w < s.words; ++w) out[w] = a[i * s.words + w];
  } else {
    negate(out, a + (i - s.n) * s.words, s);
  }
}

/// Coefficient k of the encoding of n = N/2 slots (w: after the inverse special FFT, bit-reversed,
/// as CKKS encodes) times scale, rounded half to even (x: before the rounding), as two's complement
/// words mod 2^o.bits. False, with out untouched, when the rounded value is not <= bound
/// (bound < 2^63; NaN and infinities fail too).
EMBER_HD bool encode_coefficient(u64* out, const BigShape& o, const ckks::Cx* w, std::size_t n,
                                 int log_n, std::size_t k, double scale, double bound, double& x) {
  x = ckks::f_mul(ckks::encoded_coefficient(w, n, log_n, k), scale);
  const double v = ckks::round_even(x);
  if (!(ckks::m_fabs(v) <= bound)) return false;
  const auto value = static_cast<std::int64_t>(v);
  for (std::size_t t = 0; t < o.words; ++t)
    out[t] = t == 0 ? static_cast<u64>(value) : (value < 0 ? ~u64{0} : 0);
  out[o.words - 1] &= o.top_mask();
  return true;
}

/// a read as a signed s.bits-bit integer, divided by 2^scale_bits, as the nearest double (ties to
/// even, as Python's int / int): the top 64 bits of |a| from its highest nonzero word, the bits
/// below folded into the lowest (a sticky bit far below double's 53), converted and scaled by
/// ldexp (exact unless the result leaves double's normal range).
EMBER_HD double to_double(const u64* a, const BigShape& s, int scale_bits) {
  const bool negative = signed_word(a, s, s.words) != 0;
  u64 carry = negative ? 1 : 0;  // |a| = ~a + 1 when negative, word by word
  u64 top = 0, below = 0, lower = 0;
  std::size_t top_index = 0;
  bool found = false;
  u64 previous = 0, older = 0;  // magnitude words t - 1 and OR of those below t - 1
  for (std::size_t t = 0; t < s.words; ++t) {
    u64 m = signed_word(a, s, t);
    if (negative) {
      m = ~m + carry;
      carry = carry && m == 0;
    }
    if (m) {
      top = m;
      below = previous;
      lower = older;
      top_index = t;
      found = true;
    }
    older |= previous;
    previous = m;
  }
  if (!found) return 0.0;
  int lz = 0;
  while (!(top >> 63)) {
    top <<= 1;
    ++lz;
  }
  const u64 head = lz ? top | (below >> (64 - lz)) : top;
  const u64 rest = (lz ? below << lz : below) | lower;
  const double magnitude = ldexp(static_cast<double>(head | (rest ? 1 : 0)),
                                 64 * static_cast<int>(top_index) - lz - scale_bits);
  return negative ? -magnitude : magnitude;
}

/// Coefficient c of a uniform polynomial mod 2^bits: stream words c words .. c words + words - 1
/// of ChaCha20 (key, nonce).
EMBER_HD void uniform(u64* out, const BigShape& o, std::size_t c, const ChaChaKey& key, u64 nonce) {
  u64 block[8];
  u64 loaded = ~u64{0};
  for (std::size_t t = 0; t < o.words; ++t) {
    const u64 index = static_cast<u64>(c * o.words + t);
    if (index / 8 != loaded) {
      loaded = index / 8;
      chacha20_words(key, loaded, nonce, block);
    }
    out[t] = block[index % 8];
  }
  out[o.words - 1] &= o.top_mask();
}

}  // namespace big
}  // namespace ember::backend
