// Tests of the CGGI building blocks (cggi_rows.h): gadget decomposition against recomposition
// and its digits' moments, limb splitting, monomial rotation and sample extraction.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ember/backend/cggi_rows.h"

namespace {

using ember::u32;
using ember::u64;
namespace bk = ember::backend::cggi;

template <class T>
void check_decompose(int base_log, int levels) {
  std::mt19937_64 rng(3);
  const int W = bk::kTorusBits<T>, kept = base_log * levels;
  for (int t = 0; t < 20000; ++t) {
    const T a = static_cast<T>(rng());
    std::int64_t d[64];
    bk::decompose(a, base_log, levels, d);
    T sum = 0;
    for (int j = 0; j < levels; ++j) {
      ASSERT_GE(d[j], -(std::int64_t{1} << (base_log - 1)));
      ASSERT_LE(d[j], std::int64_t{1} << (base_log - 1));
      sum = static_cast<T>(sum + (static_cast<T>(d[j]) << (W - (j + 1) * base_log)));
    }
    // The recomposition is a rounded to the kept bits: within half a unit of them.
    const T err = static_cast<T>(a - sum);
    const std::int64_t e =
        W == 64 ? static_cast<std::int64_t>(err) : static_cast<std::int32_t>(static_cast<u32>(err));
    if (kept < W) {
      const std::int64_t half = std::int64_t{1} << (W - kept - 1);
      ASSERT_LE(e, half);
      ASSERT_GE(e, -half);
    } else {
      ASSERT_EQ(e, 0);
    }
  }
}

TEST(CggiRows, DecompositionRecomposes) {
  check_decompose<u32>(10, 2);
  check_decompose<u32>(3, 5);
  check_decompose<u32>(8, 4);
  check_decompose<u64>(22, 1);
  check_decompose<u64>(16, 4);
  check_decompose<u64>(4, 3);
}

// For uniform torus values the digits of every level have mean 0 and second moment
// (B^2 + 2)/12, and the levels are uncorrelated: what docs/cggi.md's noise model assumes. (With a
// carry whenever a digit reaches B/2 they had mean -1/2, and a key switch's error had a fixed
// mean for each key: half the sum of its key-switching key's errors, CggiNoise's rare failure.)
// Exact: the digits depend only on a's bits from the rounding bit up and on its lowest `levels`
// bits (the tie bits), and every combination of those is enumerated.
template <class T>
void check_digit_moments(int base_log, int levels) {
  const int W = bk::kTorusBits<T>, kept = base_log * levels, rounding_bit = W - kept - 1;
  ASSERT_GE(rounding_bit, levels) << "the enumeration needs the tie bits below the rounding bit";
  const std::int64_t highs = std::int64_t{1} << (kept + 1), lows = std::int64_t{1} << levels;
  ASSERT_LE(levels, 8);
  std::int64_t sum[8] = {}, products[64] = {}, d[64];
  for (std::int64_t h = 0; h < highs; ++h)
    for (std::int64_t t = 0; t < lows; ++t) {
      bk::decompose(static_cast<T>((static_cast<T>(h) << rounding_bit) | static_cast<T>(t)),
                    base_log, levels, d);
      for (int j = 0; j < levels; ++j) {
        sum[j] += d[j];
        for (int k = 0; k < levels; ++k) products[j * levels + k] += d[j] * d[k];
      }
    }
  const std::int64_t count = highs * lows, base_squared = std::int64_t{1} << (2 * base_log);
  for (int j = 0; j < levels; ++j) {
    EXPECT_EQ(sum[j], 0) << "mean of level " << j << ": " << double(sum[j]) / count;
    for (int k = 0; k < levels; ++k)
      EXPECT_EQ(12 * products[j * levels + k], j == k ? count * (base_squared + 2) : 0)
          << "E[d_j d_k] of levels " << j << ", " << k << ": "
          << double(products[j * levels + k]) / count;
  }
}

// Presets' decompositions small enough to enumerate: bool_128's bootstrap and key switch (that
// of int4_128 too: the digits do not depend on the word's width), test_insecure's bootstrap and
// int2_128's key switch.
TEST(CggiRows, DecompositionDigitsHaveZeroMeanAndNoCorrelation) {
  check_digit_moments<u32>(10, 2);
  check_digit_moments<u32>(3, 5);
  check_digit_moments<u32>(8, 2);
  check_digit_moments<u64>(4, 3);
}

template <class T>
void check_limbs(int bits) {
  std::mt19937_64 rng(4);
  const int count = (bk::kTorusBits<T> + bits - 1) / bits;
  for (int t = 0; t < 20000; ++t) {
    const T w = static_cast<T>(rng());
    std::int64_t l[8];
    bk::split_limbs(w, bits, count, l);
    T sum = 0;
    for (int c = 0; c < count; ++c) {
      ASSERT_LE(l[c], std::int64_t{1} << (bits - 1));
      ASSERT_GE(l[c], -(std::int64_t{1} << (bits - 1)));
      sum = static_cast<T>(
          sum + (c * bits >= 64 ? 0 : static_cast<T>(static_cast<u64>(l[c]) << (c * bits))));
    }
    ASSERT_EQ(sum, w);
  }
}

TEST(CggiRows, LimbsRecompose) {
  check_limbs<u32>(32);
  check_limbs<u64>(30);
  check_limbs<u64>(29);
  check_limbs<u64>(37);
}

TEST(CggiRows, RotationAndExtraction) {
  const std::size_t n = 8;
  std::vector<u32> p(n), r(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<u32>(i + 1);
  for (std::size_t e = 0; e < 2 * n; ++e) {
    bk::rotate_monomial(r.data(), p.data(), n, e);
    // X^e p: coefficient (i + e) mod 2n of p_i, negated past n.
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t t = (i + e) % (2 * n);
      const u32 v = t < n ? p[i] : static_cast<u32>(0u - p[i]);
      ASSERT_EQ(r[t % n], v) << e << " " << i;
    }
  }
  // Extraction: <a', s> equals the constant coefficient of a s.
  std::mt19937_64 rng(5);
  std::vector<u32> glwe(2 * n + n), lwe(2 * n + 1);
  std::vector<int> s(2 * n);
  for (auto& v : glwe) v = static_cast<u32>(rng());
  for (auto& v : s) v = static_cast<int>(rng() & 1);
  bk::sample_extract(lwe.data(), glwe.data(), 2, n);
  u32 want = 0, got = 0;
  for (std::size_t q = 0; q < 2; ++q)
    for (std::size_t j = 0; j < n; ++j) {
      // constant coefficient of a_q s_q: a_q[0] s[0] - sum_{j>0} a_q[n-j] s[j]
      const u32 a = j == 0 ? glwe[q * n] : static_cast<u32>(0u - glwe[q * n + n - j]);
      want += a * static_cast<u32>(s[q * n + j]);
    }
  for (std::size_t i = 0; i < 2 * n; ++i) got += lwe[i] * static_cast<u32>(s[i]);
  EXPECT_EQ(got, want);
  EXPECT_EQ(lwe[2 * n], glwe[2 * n]);
}

}  // namespace
