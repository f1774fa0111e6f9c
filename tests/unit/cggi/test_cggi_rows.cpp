// Tests of the CGGI building blocks (cggi_rows.h): Goldilocks reduction against 128-bit
// arithmetic, the negacyclic NTT product against the schoolbook product, gadget decomposition
// and limb splitting against recomposition, monomial rotation and sample extraction.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ember/backend/cggi_rows.h"

namespace {

using ember::u32;
using ember::u64;
namespace bk = ember::backend::cggi;
using u128 = unsigned __int128;

u64 gl_pow(u64 b, u64 e) {
  u64 r = 1;
  for (; e; e >>= 1, b = bk::gl_mul(b, b))
    if (e & 1) r = bk::gl_mul(r, b);
  return r;
}

TEST(CggiRows, GoldilocksReduceMatches128BitRemainder) {
  std::mt19937_64 rng(1);
  const u64 edge[] = {
      0, 1, bk::kGoldilocks - 1, bk::kGoldilocks, ~u64{0}, u64{1} << 32, (u64{1} << 32) - 1};
  for (int t = 0; t < 200000; ++t) {
    const u64 hi = t < 49 ? edge[t % 7] : rng(), lo = t < 49 ? edge[t / 7] : rng();
    const u128 x = (u128(hi) << 64) | lo;
    ASSERT_EQ(bk::gl_reduce128(hi, lo), static_cast<u64>(x % bk::kGoldilocks)) << t;
  }
  for (int t = 0; t < 100000; ++t) {
    const u64 a = rng() % bk::kGoldilocks, b = rng() % bk::kGoldilocks;
    ASSERT_EQ(bk::gl_add(a, b), static_cast<u64>((u128(a) + b) % bk::kGoldilocks));
    ASSERT_EQ(bk::gl_sub(a, b),
              static_cast<u64>((u128(a) + bk::kGoldilocks - b) % bk::kGoldilocks));
    ASSERT_EQ(bk::gl_mul(a, b), static_cast<u64>((u128(a) * b) % bk::kGoldilocks));
  }
  // Lazy sums of products (up to 600 terms of p - 1 squared: the carries into the top word).
  for (int t = 0; t < 200; ++t) {
    bk::GlAcc acc;
    u64 want = 0;
    const int terms = 1 + t * 3;
    for (int i = 0; i < terms; ++i) {
      const u64 a = t % 2 ? bk::kGoldilocks - 1 : rng() % bk::kGoldilocks;
      const u64 b = t % 2 ? bk::kGoldilocks - 1 - i : rng() % bk::kGoldilocks;
      bk::gl_mac(acc, a, b);
      want = static_cast<u64>((u128(want) + u128(a) * b % bk::kGoldilocks) % bk::kGoldilocks);
    }
    ASSERT_EQ(bk::gl_acc_reduce(acc), want) << t;
  }
  EXPECT_EQ(bk::gl_centered(bk::gl_from_signed(-5)), -5);
  EXPECT_EQ(bk::gl_centered(bk::gl_from_signed(1ll << 62)), 1ll << 62);
}

/// psi_rev / psi_inv_rev tables as the context makes them.
void tables(std::size_t n, std::vector<u64>& fwd, std::vector<u64>& inv, u64& n_inv) {
  int log_n = 0;
  while ((std::size_t{1} << log_n) < n) ++log_n;
  const u64 psi = gl_pow(7, (bk::kGoldilocks - 1) / (2 * n)), psi_inv = gl_pow(psi, 2 * n - 1);
  fwd.resize(n);
  inv.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t r = 0;
    for (int b = 0; b < log_n; ++b) r |= ((i >> b) & 1) << (log_n - 1 - b);
    fwd[i] = gl_pow(psi, r);
    inv[i] = gl_pow(psi_inv, r);
  }
  n_inv = gl_pow(n, bk::kGoldilocks - 2);
}

TEST(CggiRows, NttProductEqualsSchoolbookNegacyclic) {
  std::mt19937_64 rng(2);
  for (std::size_t n : {32u, 256u, 512u, 1024u}) {
    std::vector<u64> fwd, inv;
    u64 n_inv;
    tables(n, fwd, inv, n_inv);
    std::vector<std::int64_t> a(n), b(n);
    for (auto& v : a) v = static_cast<std::int64_t>(rng() % (1u << 20)) - (1 << 19);
    for (auto& v : b) v = static_cast<std::int64_t>(rng() >> 33) - (1ll << 30);  // 31-bit
    std::vector<std::int64_t> want(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::int64_t p = a[i] * b[j];
        if (i + j < n)
          want[i + j] += p;
        else
          want[i + j - n] -= p;
      }
    std::vector<u64> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = bk::gl_from_signed(a[i]);
      y[i] = bk::gl_from_signed(b[i]);
    }
    bk::gl_ntt_forward(x.data(), n, fwd.data());
    bk::gl_ntt_forward(y.data(), n, fwd.data());
    for (std::size_t i = 0; i < n; ++i) x[i] = bk::gl_mul(x[i], y[i]);
    bk::gl_ntt_inverse(x.data(), n, inv.data(), n_inv);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(bk::gl_centered(x[i]), want[i]) << n << " " << i;
  }
}

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
      ASSERT_LT(d[j], std::int64_t{1} << (base_log - 1));
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
