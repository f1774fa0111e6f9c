// Tests of the per-coefficient building blocks shared by the CPU backend and the CUDA kernels
// (ember/backend/rows.h) against unsigned __int128 references.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "ember/backend/rows.h"
#include "ember/core/numtheory.h"
#include "ember/ring/sampler.h"

namespace {

using ember::Modulus;
using ember::u32;
using ember::u64;
using u128 = unsigned __int128;
namespace rows = ember::backend::rows;

TEST(Rows, DotModAnyLengthMatchesReference) {
  // The 128-bit accumulator is folded every 32 terms; lengths around and far past 32 must be exact
  // with the largest operands (y_i < 2^61, c_i < p).
  std::mt19937_64 rng(21);
  for (u64 p : {(u64{1} << 61) - 1, ember::generate_ntt_primes(61, 16, 1)[0],
                ember::generate_ntt_primes(30, 16, 1)[0], u64{3}}) {
    const Modulus m = ember::make_modulus(p);
    for (std::size_t count : {0u, 1u, 31u, 32u, 33u, 63u, 64u, 65u, 100u, 257u}) {
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<u64> y(count), c(2 * count + 1);
        for (std::size_t i = 0; i < count; ++i) {
          y[i] = trial == 0 ? (u64{1} << 61) - 1 : rng() >> 3;
          c[2 * i] = trial == 0 ? p - 1 : rng() % p;
        }
        u128 ref = 0;
        for (std::size_t i = 0; i < count; ++i)
          ref = (ref + static_cast<u128>(y[i]) * c[2 * i] % p) % p;
        ASSERT_EQ(rows::dot_mod(y.data(), 1, c.data(), 2, count, m), static_cast<u64>(ref))
            << "p=" << p << " count=" << count << " trial=" << trial;
      }
    }
  }
}

TEST(Rows, SignedToResidue) {
  const std::int64_t vals[] = {0,
                               1,
                               -1,
                               2,
                               -2,
                               12345,
                               -12345,
                               std::numeric_limits<std::int64_t>::max(),
                               std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::min() + 1};
  for (u64 q :
       {u64{2}, u64{3}, u64{97}, (u64{1} << 61) - 1, ember::generate_ntt_primes(50, 16, 1)[0]}) {
    for (std::int64_t v : vals) {
      // Reference with 128-bit signed arithmetic.
      __int128 r = static_cast<__int128>(v) % static_cast<__int128>(q);
      if (r < 0) r += q;
      ASSERT_EQ(rows::signed_to_residue(v, q), static_cast<u64>(r)) << "v=" << v << " q=" << q;
    }
  }
}

TEST(Rows, UniformResidueIsTheFull128BitDrawModQ) {
  std::mt19937_64 rng(22);
  for (u64 q :
       {ember::generate_ntt_primes(61, 1024, 1)[0], ember::generate_ntt_primes(30, 1024, 1)[0]}) {
    const Modulus m = ember::make_modulus(q);
    for (int i = 0; i < 5000; ++i) {
      const u64 hi = rng(), lo = rng();
      const u128 x = (static_cast<u128>(hi) << 64) | lo;
      ASSERT_EQ(rows::uniform_residue(hi, lo, m), static_cast<u64>(x % q));
    }
  }
}

TEST(Rows, SmallFromWordTernary) {
  ember::backend::SmallSampler d;
  d.kind = ember::backend::SmallSampler::ternary;
  d.ternary_threshold = u64{1} << 62;                                 // probability 1/2
  EXPECT_EQ(rows::small_from_word(0, d), 1);                          // u = 0 < t, sign +
  EXPECT_EQ(rows::small_from_word(1, d), -1);                         // sign bit set
  EXPECT_EQ(rows::small_from_word(u64{1} << 63, d), 0);               // u = 2^62 = t
  EXPECT_EQ(rows::small_from_word(((u64{1} << 62) - 1) << 1, d), 1);  // u = t - 1
  EXPECT_EQ(rows::small_from_word(~u64{0}, d), 0);
}

TEST(Rows, SmallFromWordGaussianCdt) {
  int bound = 0;
  const auto cdt = ember::ring::gaussian_cdt(3.2, bound);
  ASSERT_EQ(bound, 20);
  ASSERT_EQ(cdt.size(), 20u);
  for (std::size_t k = 1; k < cdt.size(); ++k) ASSERT_LT(cdt[k - 1], cdt[k]);
  ember::backend::SmallSampler d;
  d.kind = ember::backend::SmallSampler::gaussian;
  d.gaussian_cdt = cdt.data();
  d.gaussian_bound = bound;
  // u just below / at each table entry gives magnitude k / k + 1.
  for (int k = 0; k < bound; ++k) {
    const u64 below = cdt[k] - 1, at = cdt[k];
    EXPECT_EQ(rows::small_from_word(below << 1, d), k) << k;
    EXPECT_EQ(rows::small_from_word(at << 1, d), k + 1) << k;
    EXPECT_EQ(rows::small_from_word((at << 1) | 1, d), -(k + 1)) << k;
  }
  EXPECT_EQ(rows::small_from_word(~u64{0}, d), -bound);
}

TEST(Rows, AutomorphismIndexMaps) {
  for (int log_n : {4, 5, 10, 13}) {
    const u64 n = u64{1} << log_n;
    for (u64 k : {u64{1}, u64{3}, u64{5}, 2 * n - 1, n + 1, (2 * n / 3) | 1}) {
      // Coefficient form: a bijection onto [0, N) with sign from i*k mod 2N >= N.
      std::set<u32> dests;
      for (u32 i = 0; i < n; ++i) {
        bool neg = false;
        const u32 d = rows::automorphism_coeff_dest(i, k, log_n, neg);
        const u64 e = static_cast<u64>(i) * k % (2 * n);
        ASSERT_EQ(d, e % n);
        ASSERT_EQ(neg, e >= n);
        dests.insert(d);
      }
      ASSERT_EQ(dests.size(), n);
      // Evaluation form: slot j reads slot s with 2 brv(s) + 1 = (2 brv(j) + 1) k mod 2N.
      std::set<u32> sources;
      for (u32 j = 0; j < n; ++j) {
        const u32 s = rows::automorphism_eval_source(j, k, log_n);
        ASSERT_LT(s, n);
        const u64 lhs = 2 * static_cast<u64>(ember::bit_reverse(s, log_n)) + 1;
        const u64 rhs = (2 * static_cast<u64>(ember::bit_reverse(j, log_n)) + 1) * k % (2 * n);
        ASSERT_EQ(lhs, rhs) << "j=" << j << " k=" << k;
        sources.insert(s);
      }
      ASSERT_EQ(sources.size(), n);
    }
  }
}

}  // namespace

namespace {

TEST(Rows, TwoPrimeValueHoldsExactlyWhenTheValueFits) {
  // Coefficients of known signed values over four primes of 61, 50, 40 and 55 bits: the two-prime
  // value holds for |v| < q0 q1 / 4 whatever the sign, not past it, and not when any other row
  // disagrees.
  using i128 = __int128;
  std::vector<u64> q = {
      ember::generate_ntt_primes(61, 16, 1)[0], ember::generate_ntt_primes(50, 16, 1)[0],
      ember::generate_ntt_primes(40, 16, 1)[0], ember::generate_ntt_primes(55, 16, 1)[0]};
  std::vector<Modulus> moduli;
  for (u64 p : q) moduli.push_back(ember::make_modulus(p));
  const std::vector<u32> ids = {0, 1, 2, 3};
  const u64 q0_inv = ember::inverse_mod(q[0] % q[1], q[1]);
  const i128 quarter = static_cast<i128>(q[0]) * q[1] / 4;
  std::mt19937_64 rng(5);
  std::vector<i128> values = {0,
                              1,
                              -1,
                              quarter - 1,
                              -(quarter - 1),
                              quarter,
                              -quarter,
                              quarter + 1,
                              static_cast<i128>(q[0]) * q[1] / 2};
  for (int i = 0; i < 200; ++i) values.push_back(static_cast<i128>(rng() >> 2) * (i % 2 ? 1 : -1));
  for (int i = 0; i < 200; ++i)  // values needing a third prime: q0 q1 < |v| < q0 q1 q2 / 2
    values.push_back(static_cast<i128>(rng() >> 30) * q[0] * 64 * (i % 2 ? 1 : -1));
  const std::size_t n = values.size();
  std::vector<u64> a(4 * n);
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t l = 0; l < 4; ++l) {
      const i128 r = values[c] % static_cast<i128>(q[l]);
      a[l * n + c] = static_cast<u64>(r < 0 ? r + q[l] : r);
    }
  for (std::size_t c = 0; c < n; ++c) {
    const i128 v = values[c];
    const i128 big = static_cast<i128>(q[0]) * q[1];
    const bool fits = 4 * v < big && -4 * v < big;  // |v| < q0 q1 / 4
    EXPECT_EQ(rows::two_prime_value_holds(a.data(), n, c, moduli.data(), ids.data(), 4, q0_inv),
              fits)
        << "coefficient " << c;
    if (fits) {  // one disagreeing row above the first two makes it fail
      a[3 * n + c] = (a[3 * n + c] + 1) % q[3];
      EXPECT_FALSE(
          rows::two_prime_value_holds(a.data(), n, c, moduli.data(), ids.data(), 4, q0_inv));
    }
  }
}

}  // namespace
