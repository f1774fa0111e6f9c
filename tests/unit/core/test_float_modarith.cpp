// Tests of ember/core/float_modarith.h (the GPU NTT's FP64 arithmetic) on the host, against
// unsigned __int128 references: exact products, recentering bounds, the recentering periods, and
// whole transforms run with them equal to the integer NTT.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ember/core/float_modarith.h"
#include "ember/core/modarith.h"
#include "ember/core/numtheory.h"
#include "ember/ring/ring_context.h"

namespace {

using ember::FloatModulus;
using ember::u64;
using i128 = __int128;

/// (a mod p) in [0, p) for a signed integer a.
u64 mod_of(i128 a, u64 p) {
  i128 r = a % static_cast<i128>(p);
  return static_cast<u64>(r < 0 ? r + p : r);
}

bool is_integer(double x) { return std::nearbyint(x) == x; }

/// Primes of 50, 49, 48, 47, 40 and 30 bits (the largest of each size that the NTT of 2^12 takes).
std::vector<u64> test_primes() {
  std::vector<u64> out;
  for (int bits : {50, 49, 48, 47, 40, 30})
    out.push_back(ember::generate_ntt_primes(bits, 4096, 1)[0]);
  return out;
}

TEST(FloatModArith, ConversionsAreExact) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const u64 x = rng() >> 12;  // < 2^52
    const double d = ember::u64_to_float(x);
    EXPECT_EQ(d, static_cast<double>(x));
    EXPECT_EQ(ember::float_to_u64(d), x);
  }
}

TEST(FloatModArith, ProductIsExactAndBounded) {
  std::mt19937_64 rng(2);
  for (u64 q : test_primes()) {
    const FloatModulus m = ember::float_modulus(q);
    const double limit = std::ldexp(1.0, 51) - 1;
    for (int i = 0; i < 200000; ++i) {
      // Factors across the whole allowed range, extremes included.
      double y;
      switch (i % 4) {
        case 0:
          y = limit;
          break;
        case 1:
          y = -limit;
          break;
        default:
          y = static_cast<double>(static_cast<std::int64_t>(rng() >> 12) - (1ll << 51));
      }
      if (std::fabs(y) > limit) y = limit;
      const u64 wi = i % 3 == 0 ? q - 1 : rng() % q;
      const double w = ember::u64_to_float(wi);
      const double t = ember::mul_mod_float(y, w, ember::float_companion(w, m), m);
      ASSERT_TRUE(is_integer(t));
      const i128 yi = static_cast<i128>(y);
      ASSERT_EQ(mod_of(static_cast<i128>(t), q), mod_of(yi * static_cast<i128>(wi), q));
      ASSERT_LE(std::fabs(t), static_cast<double>(q) * (0.5 + std::fabs(y) * std::ldexp(1.0, -52)));
    }
  }
}

TEST(FloatModArith, RecenterAndCanonical) {
  std::mt19937_64 rng(3);
  for (u64 q : test_primes()) {
    const FloatModulus m = ember::float_modulus(q);
    for (int i = 0; i < 200000; ++i) {
      const double v = static_cast<double>(static_cast<std::int64_t>(rng() >> 10) - (1ll << 53));
      const double r = ember::recenter(v, m);
      ASSERT_TRUE(is_integer(r));
      ASSERT_EQ(mod_of(static_cast<i128>(r), q), mod_of(static_cast<i128>(v), q));
      ASSERT_LE(std::fabs(r), static_cast<double>(q) / 2 + 3);
      ASSERT_EQ(ember::float_to_canonical(v, m, q), mod_of(static_cast<i128>(v), q));
      ASSERT_LT(ember::float_to_lazy(v, m), 2 * q);
      ASSERT_EQ(ember::float_to_lazy(v, m) % q, mod_of(static_cast<i128>(v), q));
    }
  }
}

/// The worst-case bound recursions behind the periods: every factor of a product below 2^51 and
/// every value below 2^52, for the largest prime of each size (q = 1 mod 2N with N >= 16, so
/// q <= 2^bits - 31).
TEST(FloatModArith, PeriodsKeepTheBounds) {
  for (int bits = 20; bits <= ember::kMaxFloatModulusBits; ++bits) {
    const double p = std::ldexp(1.0, bits) - 31;
    const double factor_limit = std::ldexp(1.0, 51), value_limit = std::ldexp(1.0, 52);
    // Forward: stage inputs bounded by b, outputs by b + p (1/2 + b 2^-52).
    double b = p / 2 + 3;
    const int ct = ember::float_ct_period(bits);
    for (int k = 1; k <= std::min(ct, 18); ++k) {
      ASSERT_LT(b, factor_limit) << bits << " bits, forward stage " << k;
      b += p * (0.5 + b * std::ldexp(1.0, -52));
      ASSERT_LT(b, value_limit);
    }
    if (ct < 18) EXPECT_GE(b, factor_limit) << "the forward period at " << bits << " is not tight";
    if (ember::float_ct_takes_lazy_input(bits)) {  // from words in [0, 8q), never recentered
      b = 8 * p;
      for (int k = 1; k <= 18; ++k) {
        ASSERT_LT(b, factor_limit) << bits << " bits, lazy input, forward stage " << k;
        b += p * (0.5 + b * std::ldexp(1.0, -52));
      }
    }
    // Inverse: sums double the bound; the difference entering the product is at most 2 b.
    b = p / 2 + 3;
    const int gs = ember::float_gs_period(bits);
    for (int k = 1; k <= gs; ++k) {
      ASSERT_LT(2 * b, factor_limit) << bits << " bits, inverse stage " << k;
      b = 2 * b;
      ASSERT_LT(b, value_limit);
    }
  }
}

/// A sum of float_sum_period terms below p each, after a recentering, stays below 2^53.
TEST(FloatModArith, SumPeriodKeepsSumsExact) {
  for (int bits = 22; bits <= ember::kMaxFloatModulusBits; ++bits) {
    const double p = std::ldexp(1.0, bits) - 1, limit = std::ldexp(1.0, 53);
    const double terms = ember::float_sum_period(bits);
    EXPECT_LT(p / 2 + 3 + terms * p, limit) << bits << " bits";
  }
  EXPECT_GE(ember::float_sum_period(21), 1u << 30);
}

/// The forward and inverse transforms of N = 2^12 computed with the FP64 butterflies, recentering
/// every period, equal the integer transforms, on random inputs and on inputs of all p - 1.
TEST(FloatModArith, TransformsMatchTheIntegerNtt) {
  const std::size_t n = 4096;
  const auto primes = test_primes();
  auto ring = ember::ring::RingContext::create(n, primes);
  std::mt19937_64 rng(4);
  for (std::size_t id = 0; id < primes.size(); ++id) {
    const u64 q = primes[id];
    const auto& tab = ring->prime_tables(id);
    const FloatModulus m = ember::float_modulus(q);
    const int bits = ember::bit_length(q);
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<u64> a(n);
      for (auto& v : a) v = trial == 0 ? q - 1 : rng() % q;
      // Forward, Cooley-Tukey, in the CPU backend's stage order.
      std::vector<double> x(n);
      for (std::size_t j = 0; j < n; ++j) x[j] = ember::recenter(ember::u64_to_float(a[j]), m);
      int stage = 0;
      for (std::size_t mm = 1, t = n; mm < n; mm <<= 1, ++stage) {
        t >>= 1;
        if (stage > 0 && stage % ember::float_ct_period(bits) == 0)
          for (auto& v : x) v = ember::recenter(v, m);
        for (std::size_t i = 0; i < mm; ++i) {
          const double w = ember::u64_to_float(tab.psi_rev[mm + i]);
          const double wc = ember::float_companion(w, m);
          for (std::size_t j = 0; j < t; ++j)
            ember::ct_butterfly_float(x[2 * i * t + j], x[2 * i * t + j + t], w, wc, m);
        }
      }
      std::vector<u64> want = a;
      u64* wp = want.data();
      // The integer reference: stage by stage, as cpu_ntt.cpp.
      {
        std::size_t t = n;
        for (std::size_t mm = 1; mm < n; mm <<= 1) {
          t >>= 1;
          for (std::size_t i = 0; i < mm; ++i)
            for (std::size_t j = 0; j < t; ++j)
              ember::ct_butterfly(wp[2 * i * t + j], wp[2 * i * t + j + t], tab.psi_rev[mm + i],
                                  tab.psi_rev_shoup[mm + i], q);
        }
        for (auto& v : want) v = ember::reduce_4q(v, q);
      }
      for (std::size_t j = 0; j < n; ++j)
        ASSERT_EQ(ember::float_to_canonical(x[j], m, q), want[j]) << bits << " bits, index " << j;

      // Inverse, Gentleman-Sande, back to a.
      for (std::size_t j = 0; j < n; ++j) x[j] = ember::u64_to_float(want[j]);
      for (auto& v : x) v = ember::recenter(v, m);
      stage = 0;
      for (std::size_t mm = n, t = 1; mm > 1; mm >>= 1, t <<= 1, ++stage) {
        if (stage > 0 && stage % ember::float_gs_period(bits) == 0)
          for (auto& v : x) v = ember::recenter(v, m);
        const std::size_t h = mm >> 1;
        for (std::size_t i = 0; i < h; ++i) {
          const double w = ember::u64_to_float(tab.psi_inv_rev[h + i]);
          const double wc = ember::float_companion(w, m);
          for (std::size_t j = 0; j < t; ++j)
            ember::gs_butterfly_float(x[2 * i * t + j], x[2 * i * t + j + t], w, wc, m);
        }
      }
      const double ninv = ember::u64_to_float(tab.n_inv);
      const double ninv_c = ember::float_companion(ninv, m);
      for (auto& v : x) v = ember::recenter(v, m);
      for (std::size_t j = 0; j < n; ++j) {
        const double r = ember::mul_mod_float(x[j], ninv, ninv_c, m);
        ASSERT_EQ(ember::float_to_canonical(r, m, q), a[j]) << bits << " bits, index " << j;
      }
    }
  }
}

}  // namespace
