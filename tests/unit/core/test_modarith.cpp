// Tests of ember/core/modarith.h and ember/core/numtheory.h against unsigned __int128 references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "ember/core/errors.h"
#include "ember/core/modarith.h"
#include "ember/core/numtheory.h"

namespace {

using ember::Modulus;
using ember::u32;
using ember::u64;
using u128 = unsigned __int128;

u64 ref_mul(u64 a, u64 b, u64 q) { return static_cast<u64>(static_cast<u128>(a) * b % q); }

u64 ref_pow(u64 b, u64 e, u64 q) {
  u64 r = 1 % q;
  b %= q;
  while (e) {
    if (e & 1) r = ref_mul(r, b, q);
    b = ref_mul(b, b, q);
    e >>= 1;
  }
  return r;
}

/// Trial division: an independent primality check for small n (used up to ~2^32).
bool trial_prime(u64 n) {
  if (n < 2) return false;
  if (n % 2 == 0) return n == 2;
  for (u64 d = 3; d * d <= n; d += 2)
    if (n % d == 0) return false;
  return true;
}

/// Moduli of every bit size 20..61: random odd, random even, 2^(b-1), 2^b - 1, 2^(b-1) + 1, and an
/// NTT prime of that size.
std::vector<u64> test_moduli() {
  std::mt19937_64 rng(0x5eed0001);
  std::vector<u64> out;
  for (int bits = 20; bits <= 61; ++bits) {
    const u64 top = u64{1} << (bits - 1);
    const u64 mask = top - 1;
    out.push_back(top | (rng() & mask) | 1);
    out.push_back((top | (rng() & mask)) & ~u64{1});
    out.push_back(top);
    out.push_back(top | mask);
    out.push_back(top + 1);
    out.push_back(ember::generate_ntt_primes(bits, 16, 1)[0]);
  }
  return out;
}

/// Random values below `bound` with the edge values 0, 1, bound - 1 mixed in.
std::vector<u64> samples_below(std::mt19937_64& rng, u64 bound, int count) {
  std::vector<u64> v = {0, 1 % bound, bound - 1, bound / 2};
  std::uniform_int_distribution<u64> d(0, bound - 1);
  while (static_cast<int>(v.size()) < count) v.push_back(d(rng));
  return v;
}

TEST(ModArith, MakeModulusBarrettConstant) {
  for (u64 q : test_moduli()) {
    const Modulus m = ember::make_modulus(q);
    ASSERT_EQ(m.value, q);
    // ratio = floor(2^128 / q): ratio * q <= 2^128 < (ratio + 1) * q, checked without overflow as
    // 2^128 - ratio * q (mod 2^128) in [0, q).
    const u128 ratio = (static_cast<u128>(m.ratio_hi) << 64) | m.ratio_lo;
    const u128 rem = static_cast<u128>(0) - ratio * q;  // 2^128 - ratio*q mod 2^128
    EXPECT_LT(rem, static_cast<u128>(q)) << "q=" << q;
    EXPECT_TRUE(rem != 0 || (q & (q - 1)) == 0) << "q=" << q;  // only powers of two divide 2^128
  }
  EXPECT_THROW(ember::make_modulus(0), ember::ParameterError);
  EXPECT_THROW(ember::make_modulus(1), ember::ParameterError);
  EXPECT_THROW(ember::make_modulus(u64{1} << 61), ember::ParameterError);
  EXPECT_THROW(ember::make_modulus(~u64{0}), ember::ParameterError);
  EXPECT_NO_THROW(ember::make_modulus(2));
  EXPECT_NO_THROW(ember::make_modulus((u64{1} << 61) - 1));
}

TEST(ModArith, ReduceProductCoversItsWholeRange) {
  // reduce_product is exact for every x < 2^(k+62): products of residues, sums of two of them,
  // the top of the range and values just below multiples of q, for q of every size.
  std::mt19937_64 rng(23);
  std::vector<u64> moduli = test_moduli();
  for (u64 q : {u64{2}, u64{3}, u64{4}, u64{5}, u64{7}, u64{65537}}) moduli.push_back(q);
  for (u64 q : moduli) {
    const Modulus m = ember::make_modulus(q);
    const int k = ember::bit_length(q);
    EXPECT_EQ(m.product_ratio, static_cast<u64>((static_cast<u128>(1) << (k + 62)) / q));
    const u128 top = (static_cast<u128>(1) << (k + 62)) - 1;
    std::vector<u128> xs = {0,
                            1,
                            q - 1,
                            q,
                            static_cast<u128>(q - 1) * (q - 1),
                            2 * static_cast<u128>(q - 1) * (q - 1),
                            top,
                            top - q};
    for (u64 a : samples_below(rng, q, 60))
      for (u64 b : samples_below(rng, q, 8)) {
        xs.push_back(static_cast<u128>(a) * b);
        xs.push_back(static_cast<u128>(a) * b + static_cast<u128>(b) * (q - 1));
        ASSERT_EQ(ember::mul_mod(a, b, m), static_cast<u64>(static_cast<u128>(a) * b % q));
        ASSERT_EQ(ember::mul_add_mul_mod(a, b, b, a, m),
                  static_cast<u64>((2 * static_cast<u128>(a) * b) % q));
      }
    for (int i = 0; i < 200; ++i) {
      const u128 x = ((static_cast<u128>(rng()) << 64) | rng()) % (top + 1);
      xs.push_back(x);
      xs.push_back(x - x % q + (q - 1) <= top ? x - x % q + (q - 1) : x);
    }
    for (u128 x : xs)
      ASSERT_EQ(ember::reduce_product(static_cast<u64>(x >> 64), static_cast<u64>(x), m),
                static_cast<u64>(x % q))
          << "q=" << q;
  }
}

TEST(ModArith, MulWideAndMulHi) {
  std::mt19937_64 rng(11);
  std::vector<u64> v = {0, 1, 2, ~u64{0}, u64{1} << 63, (u64{1} << 32) - 1};
  for (int i = 0; i < 200; ++i) v.push_back(rng());
  for (u64 a : v)
    for (u64 b : v) {
      const u128 p = static_cast<u128>(a) * b;
      u64 hi, lo;
      ember::mul_wide(a, b, hi, lo);
      ASSERT_EQ(hi, static_cast<u64>(p >> 64));
      ASSERT_EQ(lo, static_cast<u64>(p));
      ASSERT_EQ(ember::mul_hi(a, b), static_cast<u64>(p >> 64));
    }
}

TEST(ModArith, AddSubNegMatchReference) {
  std::mt19937_64 rng(1);
  for (u64 q : test_moduli()) {
    const auto xs = samples_below(rng, q, 64);
    const auto ys = samples_below(rng, q, 64);
    for (u64 a : xs) {
      ASSERT_EQ(ember::neg_mod(a, q), static_cast<u64>((static_cast<u128>(q) - a) % q)) << q;
      for (u64 b : ys) {
        ASSERT_EQ(ember::add_mod(a, b, q), static_cast<u64>((static_cast<u128>(a) + b) % q))
            << "a=" << a << " b=" << b << " q=" << q;
        ASSERT_EQ(ember::sub_mod(a, b, q), static_cast<u64>((static_cast<u128>(a) + q - b) % q))
            << "a=" << a << " b=" << b << " q=" << q;
      }
    }
  }
}

TEST(ModArith, LazyReductions) {
  std::mt19937_64 rng(2);
  for (u64 q : test_moduli()) {
    for (u64 x : samples_below(rng, 2 * q, 200)) ASSERT_EQ(ember::reduce_2q(x, q), x % q);
    for (u64 x : samples_below(rng, 4 * q, 200)) ASSERT_EQ(ember::reduce_4q(x, q), x % q);
  }
}

TEST(ModArith, MulModBarrettMatchesReference) {
  std::mt19937_64 rng(3);
  for (u64 q : test_moduli()) {
    const Modulus m = ember::make_modulus(q);
    const auto xs = samples_below(rng, q, 100);
    const auto ys = samples_below(rng, q, 100);
    for (u64 a : xs)
      for (u64 b : ys)
        ASSERT_EQ(ember::mul_mod(a, b, m), ref_mul(a, b, q))
            << "a=" << a << " b=" << b << " q=" << q;
  }
}

TEST(ModArith, BarrettReduce128HiBelowQ) {
  std::mt19937_64 rng(4);
  for (u64 q : test_moduli()) {
    const Modulus m = ember::make_modulus(q);
    std::vector<std::pair<u64, u64>> cases = {{0, 0},     {0, ~u64{0}}, {q - 1, ~u64{0}},
                                              {q - 1, 0}, {0, q},       {0, q - 1}};
    std::uniform_int_distribution<u64> hd(0, q - 1);
    for (int i = 0; i < 2000; ++i) cases.push_back({hd(rng), rng()});
    for (auto [hi, lo] : cases) {
      const u128 x = (static_cast<u128>(hi) << 64) | lo;
      ASSERT_EQ(ember::barrett_reduce_128(hi, lo, m), static_cast<u64>(x % q))
          << "hi=" << hi << " lo=" << lo << " q=" << q;
    }
  }
}

TEST(ModArith, BarrettReduce128ArbitraryHi) {
  // The uniform sampler reduces full 128-bit draws, so hi >= q must reduce exactly too.
  std::mt19937_64 rng(5);
  for (u64 q : test_moduli()) {
    const Modulus m = ember::make_modulus(q);
    std::vector<std::pair<u64, u64>> cases = {{~u64{0}, ~u64{0}}, {~u64{0}, 0}, {q, 0},
                                              {q, ~u64{0}},       {2 * q, 1},   {~u64{0} - 1, 5}};
    for (int i = 0; i < 3000; ++i) cases.push_back({rng(), rng()});
    for (int i = 0; i < 200; ++i) cases.push_back({~u64{0} - (rng() & 0xffff), rng()});
    for (auto [hi, lo] : cases) {
      const u128 x = (static_cast<u128>(hi) << 64) | lo;
      ASSERT_EQ(ember::barrett_reduce_128(hi, lo, m), static_cast<u64>(x % q))
          << "hi=" << hi << " lo=" << lo << " q=" << q;
    }
  }
}

TEST(ModArith, BarrettReduce64) {
  std::mt19937_64 rng(6);
  for (u64 q : test_moduli()) {
    const Modulus m = ember::make_modulus(q);
    std::vector<u64> v = {0, 1, q - 1, q, q + 1, 2 * q, ~u64{0}, ~u64{0} - 1};
    for (int i = 0; i < 2000; ++i) v.push_back(rng());
    for (u64 x : v) ASSERT_EQ(ember::barrett_reduce_64(x, m), x % q) << "x=" << x << " q=" << q;
  }
}

TEST(ModArith, ShoupMultiplicationRanges) {
  std::mt19937_64 rng(7);
  for (u64 q : test_moduli()) {
    for (u64 w : samples_below(rng, q, 40)) {
      const u64 ws = ember::shoup_precompute(w, q);
      ASSERT_EQ(ws, static_cast<u64>((static_cast<u128>(w) << 64) / q));
      std::vector<u64> as = {0, 1, q - 1, q, 2 * q - 1, 4 * q - 1, ~u64{0}};
      for (int i = 0; i < 60; ++i) as.push_back(rng());
      for (int i = 0; i < 20; ++i) as.push_back(rng() % q);
      for (u64 a : as) {
        const u64 expect = ref_mul(a % q, w, q);
        const u64 lazy = ember::mul_shoup_lazy(a, w, ws, q);
        ASSERT_LT(lazy, 2 * q) << "a=" << a << " w=" << w << " q=" << q;
        ASSERT_EQ(lazy % q, expect) << "a=" << a << " w=" << w << " q=" << q;
        ASSERT_EQ(ember::mul_shoup(a, w, ws, q), expect) << "a=" << a << " w=" << w << " q=" << q;
      }
    }
  }
}

TEST(ModArith, MulHiApproxIsShortByAtMostTwo) {
  std::mt19937_64 rng(8);
  const u64 ones = ~u64{0};
  std::vector<u64> edge = {0, 1, ones, ones >> 32, ones << 32, u64{0xffffffff} << 16};
  int short_by_two = 0;
  for (int i = 0; i < 200000; ++i) {
    const u64 a = i < 36 ? edge[i % 6] : rng();
    const u64 b = i < 36 ? edge[i / 6] : rng();
    const u64 exact = ember::mul_hi(a, b), approx = ember::mul_hi_approx(a, b);
    ASSERT_LE(approx, exact) << "a=" << a << " b=" << b;
    ASSERT_LE(exact - approx, 2u) << "a=" << a << " b=" << b;
    short_by_two += exact - approx == 2;
  }
  // The bound is reached (both dropped cross halves and the low product carry), so the lazy
  // ranges below are tight, not loose.
  EXPECT_GT(short_by_two, 0);
}

TEST(ModArith, ApproximateShoupRange) {
  std::mt19937_64 rng(9);
  for (u64 q : test_moduli()) {
    for (u64 w : samples_below(rng, q, 40)) {
      const u64 ws = ember::shoup_precompute(w, q);
      std::vector<u64> as = {0, 1, q - 1, q, 4 * q - 1, 8 * q - 1, ~u64{0}};
      for (int i = 0; i < 60; ++i) as.push_back(rng());
      for (u64 a : as) {
        const u64 lazy = ember::mul_shoup_lazy_4q(a, w, ws, q);
        ASSERT_LT(lazy, 4 * q) << "a=" << a << " w=" << w << " q=" << q;
        ASSERT_EQ(lazy % q, ref_mul(a % q, w, q)) << "a=" << a << " w=" << w << " q=" << q;
      }
    }
  }
}

TEST(ModArith, PowMod) {
  std::mt19937_64 rng(8);
  for (u64 q : test_moduli()) {
    const Modulus m = ember::make_modulus(q);
    EXPECT_EQ(ember::pow_mod(0, 0, m), 1 % q);
    EXPECT_EQ(ember::pow_mod(12345, 0, m), 1 % q);
    EXPECT_EQ(ember::pow_mod(0, 5, m), 0u);
    for (int i = 0; i < 100; ++i) {
      const u64 b = (i % 3 == 0) ? rng() : rng() % q;  // bases above q are reduced first
      const u64 e = (i % 2 == 0) ? rng() : rng() % 1000;
      ASSERT_EQ(ember::pow_mod(b, e, m), ref_pow(b, e, q)) << "b=" << b << " e=" << e << " q=" << q;
    }
  }
  // Fermat on primes.
  for (u64 q : {u64{2305843009213693951ull}, ember::generate_ntt_primes(50, 1024, 1)[0]}) {
    const Modulus m = ember::make_modulus(q);
    for (u64 a = 2; a < 50; ++a) EXPECT_EQ(ember::pow_mod(a, q - 1, m), 1u);
  }
}

TEST(NumTheory, InverseMod) {
  std::mt19937_64 rng(9);
  for (u64 q : test_moduli()) {
    if (!ember::is_prime(q)) continue;
    for (u64 a : samples_below(rng, q, 200)) {
      if (a == 0) continue;
      const u64 inv = ember::inverse_mod(a, q);
      ASSERT_LT(inv, q);
      ASSERT_EQ(ref_mul(a, inv, q), 1u) << "a=" << a << " q=" << q;
    }
    // Inputs at or above q are reduced.
    const u64 a = q + 3;
    ASSERT_EQ(ref_mul(3, ember::inverse_mod(a, q), q), 1u);
    EXPECT_THROW(ember::inverse_mod(0, q), ember::ParameterError);
    EXPECT_THROW(ember::inverse_mod(q, q), ember::ParameterError);
  }
  // Composite moduli: invertible iff coprime.
  EXPECT_EQ(ember::inverse_mod(3, 10), 7u);
  EXPECT_EQ(ember::inverse_mod(7, u64{1} << 60) * 7 % (u64{1} << 60), 1u);
  EXPECT_THROW(ember::inverse_mod(4, 10), ember::ParameterError);
  EXPECT_THROW(ember::inverse_mod(6, u64{1} << 60), ember::ParameterError);
  // Every error is an ember::Error.
  EXPECT_THROW(ember::inverse_mod(2, 4), ember::Error);
}

TEST(NumTheory, IsPrimeSmallAgainstTrialDivision) {
  for (u64 n = 0; n < 20000; ++n) ASSERT_EQ(ember::is_prime(n), trial_prime(n)) << n;
  std::mt19937_64 rng(10);
  for (int i = 0; i < 3000; ++i) {
    const u64 n = rng() >> 34;  // < 2^30
    ASSERT_EQ(ember::is_prime(n), trial_prime(n)) << n;
  }
}

TEST(NumTheory, IsPrimeKnownPrimes) {
  const u64 primes[] = {2,
                        3,
                        37,
                        41,
                        65537,
                        2147483647ull,             // 2^31 - 1
                        4294967291ull,             // largest prime below 2^32
                        998244353ull,              // 119 * 2^23 + 1
                        786433ull,                 // 3 * 2^18 + 1
                        1152921504606584833ull,    // 2^60 - 2^18 + 1
                        1152921504606830593ull,    // 2^60 - 2^14 + 1
                        2305843009213693951ull,    // 2^61 - 1
                        18446744073709551557ull};  // largest prime below 2^64
  for (u64 p : primes) EXPECT_TRUE(ember::is_prime(p)) << p;
}

TEST(NumTheory, IsPrimeRejectsCompositesAndPseudoprimes) {
  const u64 composites[] = {
      0, 1, 4, 9, 1369 /* 37^2 */, 1681 /* 41^2 */,
      // Carmichael numbers (small factors caught by trial division).
      561, 1105, 1729, 2465, 2821, 6601, 8911, 41041, 825265,
      // Carmichael numbers with every factor above 37 (Chernick (6k+1)(12k+1)(18k+1)).
      252601ull /* 41*61*101 */, 56052361ull /* k=35 */, 118901521ull /* k=45 */,
      1350841920749497369ull /* k=101391, 61 bits */, 1364879502521149969ull /* k=101741 */,
      // Strong pseudoprimes to the first k prime bases (psi_k).
      1373653ull /* bases 2,3 */, 25326001ull /* 2,3,5 */, 3215031751ull /* 2..7 */,
      2152302898747ull /* 2..11 */, 3474749660383ull /* 2..13 */,
      341550071728321ull /* 2..17 (and 19) */,
      3825123056546413051ull /* strong pseudoprime to every prime base 2..31: only 37 catches it */,
      // Products of large primes.
      4294967297ull /* 2^32 + 1 = 641 * 6700417 */, 18446744030759878681ull /* 4294967291^2 */,
      18446743979220271189ull /* 4294967291 * 4294967279 */, 2305843009213693953ull /* 2^61 + 1 */,
      18446744073709551615ull /* 2^64 - 1 */};
  for (u64 n : composites) EXPECT_FALSE(ember::is_prime(n)) << n;
}

TEST(NumTheory, IsNttFriendly) {
  EXPECT_TRUE(ember::is_ntt_friendly(786433, 1u << 17));   // 3*2^18 + 1
  EXPECT_FALSE(ember::is_ntt_friendly(786433, 1u << 18));  // 786432 is not divisible by 2^19
  EXPECT_TRUE(ember::is_ntt_friendly(998244353, 1u << 22));
  EXPECT_FALSE(ember::is_ntt_friendly(998244353 + 2 * 16, 16));  // composite, = 1 mod 32
  EXPECT_FALSE(ember::is_ntt_friendly(2147483647, 16));          // prime, not 1 mod 32
  EXPECT_FALSE(ember::is_ntt_friendly(2, 1));
}

TEST(NumTheory, GenerateNttPrimesProperties) {
  for (int bits = 20; bits <= 61; ++bits) {
    for (std::size_t n : {std::size_t{16}, std::size_t{1024}, std::size_t{1} << 16}) {
      const std::size_t count = bits >= 30 ? 6 : 1;
      std::vector<u64> ps;
      try {
        ps = ember::generate_ntt_primes(bits, n, count);
      } catch (const ember::ParameterError&) {
        // Only small sizes with large N may run out of candidates.
        ASSERT_LT(bits, 30) << "bits=" << bits << " n=" << n;
        continue;
      }
      ASSERT_EQ(ps.size(), count);
      std::set<u64> distinct(ps.begin(), ps.end());
      EXPECT_EQ(distinct.size(), ps.size());
      for (std::size_t i = 0; i < ps.size(); ++i) {
        const u64 q = ps[i];
        EXPECT_EQ(64 - __builtin_clzll(q), bits) << q;
        EXPECT_EQ(q % (2 * n), 1u) << q;
        EXPECT_TRUE(ember::is_prime(q)) << q;
        if (i) EXPECT_GT(ps[i - 1], q) << "largest first";
      }
    }
  }
}

TEST(NumTheory, GenerateNttPrimesAreTheLargestCandidates) {
  // Independent enumeration by trial division for small sizes: the result must be exactly the
  // largest primes q = 1 mod 2n below 2^bits.
  for (int bits = 20; bits <= 30; ++bits) {
    for (std::size_t n : {std::size_t{16}, std::size_t{256}, std::size_t{4096}}) {
      const u64 step = 2 * n;
      std::vector<u64> expect;
      for (u64 q = ((u64{1} << bits) - 1) / step * step + 1;
           q > (u64{1} << (bits - 1)) && expect.size() < 4; q -= step)
        if (trial_prime(q)) expect.push_back(q);
      if (expect.size() < 4) {
        EXPECT_THROW(ember::generate_ntt_primes(bits, n, 4), ember::ParameterError);
        continue;
      }
      EXPECT_EQ(ember::generate_ntt_primes(bits, n, 4), expect) << "bits=" << bits << " n=" << n;
    }
  }
}

TEST(NumTheory, GenerateNttPrimesExclusion) {
  const std::size_t n = 1 << 12;
  const auto all = ember::generate_ntt_primes(50, n, 8);
  // Excluding the first three yields the next ones in order.
  const std::vector<u64> excl(all.begin(), all.begin() + 3);
  const auto rest = ember::generate_ntt_primes(50, n, 5, excl);
  EXPECT_EQ(rest, std::vector<u64>(all.begin() + 3, all.end()));
  // Excluding scattered primes (and unrelated values) skips exactly those.
  const std::vector<u64> excl2 = {all[1], all[4], 12345, all[6] + 2};
  const auto got = ember::generate_ntt_primes(50, n, 5, excl2);
  const std::vector<u64> expect = {all[0], all[2], all[3], all[5], all[6]};
  EXPECT_EQ(got, expect);
  for (u64 q : got) EXPECT_EQ(std::count(excl2.begin(), excl2.end(), q), 0);
}

TEST(NumTheory, GenerateNttPrimesErrors) {
  EXPECT_THROW(ember::generate_ntt_primes(62, 16, 1), ember::ParameterError);
  EXPECT_THROW(ember::generate_ntt_primes(1, 16, 1), ember::ParameterError);
  EXPECT_THROW(ember::generate_ntt_primes(50, 100, 1), ember::ParameterError);  // not 2^k
  EXPECT_THROW(ember::generate_ntt_primes(20, 1 << 17, 1000), ember::ParameterError);
  try {
    ember::generate_ntt_primes(20, 1 << 17, 1000);
  } catch (const ember::ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("NTT-friendly"), std::string::npos) << e.what();
  }
}

TEST(NumTheory, PrimitiveRoot2n) {
  for (int bits : {20, 30, 40, 50, 55, 60, 61}) {
    for (std::size_t n : {std::size_t{16}, std::size_t{256}, std::size_t{1} << 12}) {
      std::vector<u64> ps;
      try {
        ps = ember::generate_ntt_primes(bits, n, 2);
      } catch (const ember::ParameterError&) {
        continue;
      }
      for (u64 q : ps) {
        const u64 psi = ember::primitive_root_2n(q, n);
        ASSERT_LT(psi, q);
        EXPECT_EQ(ref_pow(psi, n, q), q - 1) << "q=" << q << " n=" << n;
        EXPECT_EQ(ref_pow(psi, 2 * n, q), 1u);
        // The documented choice: the smallest among psi^k, k odd (all primitive 2n-th roots).
        if (n <= 256) {
          const u64 psi2 = ref_mul(psi, psi, q);
          u64 cur = psi;
          for (std::size_t k = 1; k < 2 * n; k += 2) {
            EXPECT_GE(cur, psi) << "psi^" << k << " is a smaller primitive root";
            cur = ref_mul(cur, psi2, q);
          }
        }
      }
    }
  }
  // Small prime: brute force that psi is the smallest x with x^n = -1.
  const u64 q = 7681;  // 15 * 512 + 1
  const u64 psi = ember::primitive_root_2n(q, 256);
  for (u64 x = 2; x < psi; ++x) EXPECT_NE(ref_pow(x, 256, q), q - 1) << x;
  EXPECT_EQ(ref_pow(psi, 256, q), q - 1);

  EXPECT_THROW(ember::primitive_root_2n(7681, 1024), ember::ParameterError);  // 7680 % 2048 != 0
  EXPECT_THROW(ember::primitive_root_2n(7681 + 512, 256), ember::ParameterError);  // 8193 = 3*2731
  EXPECT_THROW(ember::primitive_root_2n(2147483647, 16), ember::ParameterError);
}

TEST(NumTheory, BitReverseAndLog2) {
  EXPECT_EQ(ember::bit_reverse(1, 4), 8u);
  EXPECT_EQ(ember::bit_reverse(6, 3), 3u);
  EXPECT_EQ(ember::bit_reverse(0, 17), 0u);
  for (int bits = 1; bits <= 17; ++bits)
    for (u32 x = 0; x < (1u << std::min(bits, 10)); ++x) {
      u32 r = ember::bit_reverse(x, bits);
      ASSERT_LT(r, 1u << bits);
      ASSERT_EQ(ember::bit_reverse(r, bits), x);
      u32 ref = 0;
      for (int i = 0; i < bits; ++i)
        if (x & (1u << i)) ref |= 1u << (bits - 1 - i);
      ASSERT_EQ(r, ref);
    }
  for (int l = 0; l < 40; ++l) EXPECT_EQ(ember::log2_exact(std::size_t{1} << l), l);
  EXPECT_THROW(ember::log2_exact(0), ember::ParameterError);
  EXPECT_THROW(ember::log2_exact(100), ember::ParameterError);
  EXPECT_THROW(ember::log2_exact(3), ember::ParameterError);
}

/// A Cooley-Tukey butterfly on words of type W maps X, Y < bound q to X + wY, X - wY, both <
/// bound q, for each modulus of `moduli`.
template <class W, class Butterfly>
void check_ct_butterfly(Butterfly butterfly, u64 bound, unsigned seed,
                        const std::vector<u64>& moduli) {
  std::mt19937_64 rng(seed);
  for (u64 q : moduli) {
    std::uniform_int_distribution<u64> din(0, bound * q - 1), dq(0, q - 1);
    for (int i = 0; i < 300; ++i) {
      const u64 w = i == 0 ? q - 1 : (i == 1 ? 0 : dq(rng));
      const W ws = ember::shoup_precompute<W>(static_cast<W>(w), static_cast<W>(q));
      u64 X = din(rng), Y = din(rng);
      if (i == 2) X = Y = bound * q - 1;
      if (i == 3) X = Y = 0;
      W x = static_cast<W>(X), y = static_cast<W>(Y);
      butterfly(x, y, static_cast<W>(w), ws, static_cast<W>(q));
      ASSERT_LT(x, bound * q) << "X=" << X << " Y=" << Y << " w=" << w << " q=" << q;
      ASSERT_LT(y, bound * q) << "X=" << X << " Y=" << Y << " w=" << w << " q=" << q;
      const u64 wy = ref_mul(Y % q, w, q);
      ASSERT_EQ(x % q, (X % q + wy) % q);
      ASSERT_EQ(y % q, (X % q + q - wy) % q);
    }
  }
}

/// A Gentleman-Sande butterfly on words of type W maps X, Y < bound q to X + Y, (X - Y) w, both
/// < bound q, for each modulus of `moduli`.
template <class W, class Butterfly>
void check_gs_butterfly(Butterfly butterfly, u64 bound, unsigned seed,
                        const std::vector<u64>& moduli) {
  std::mt19937_64 rng(seed);
  for (u64 q : moduli) {
    std::uniform_int_distribution<u64> din(0, bound * q - 1), dq(0, q - 1);
    for (int i = 0; i < 300; ++i) {
      const u64 w = i == 0 ? q - 1 : (i == 1 ? 0 : dq(rng));
      const W ws = ember::shoup_precompute<W>(static_cast<W>(w), static_cast<W>(q));
      u64 X = din(rng), Y = din(rng);
      if (i == 2) X = Y = bound * q - 1;
      if (i == 3) {
        X = 0;
        Y = bound * q - 1;
      }
      W x = static_cast<W>(X), y = static_cast<W>(Y);
      butterfly(x, y, static_cast<W>(w), ws, static_cast<W>(q));
      ASSERT_LT(x, bound * q) << "X=" << X << " Y=" << Y << " w=" << w << " q=" << q;
      ASSERT_LT(y, bound * q) << "X=" << X << " Y=" << Y << " w=" << w << " q=" << q;
      ASSERT_EQ(x % q, (X % q + Y % q) % q);
      ASSERT_EQ(y % q, ref_mul((X % q + q - Y % q) % q, w, q));
    }
  }
}

/// Moduli of 32-bit words below 2^max_bits: of every size 12..max_bits, random odd, 2^b - 1,
/// 2^(b-1) + 1 and an NTT prime.
std::vector<u64> test_moduli32(int max_bits = 30) {
  std::mt19937_64 rng(0x5eed0032);
  std::vector<u64> out;
  for (int bits = 12; bits <= max_bits; ++bits) {
    const u64 top = u64{1} << (bits - 1);
    const u64 mask = top - 1;
    out.push_back(top | (rng() & mask) | 1);
    out.push_back(top | mask);
    out.push_back(top + 1);
    out.push_back(ember::generate_ntt_primes(bits, 16, 1)[0]);
  }
  return out;
}

TEST(Butterflies, CooleyTukeyLazyRange) {
  check_ct_butterfly<u64>(ember::ct_butterfly<u64>, 4, 12, test_moduli());
}

TEST(Butterflies, GentlemanSandeLazyRange) {
  check_gs_butterfly<u64>(ember::gs_butterfly<u64>, 2, 13, test_moduli());
}

TEST(Butterflies, CooleyTukeyApproximateRange) {
  check_ct_butterfly<u64>(ember::ct_butterfly_8q<u64>, 8, 14, test_moduli());
}

TEST(Butterflies, GentlemanSandeApproximateRange) {
  check_gs_butterfly<u64>(ember::gs_butterfly_4q<u64>, 4, 15, test_moduli());
}

// The same code on 32-bit words: Harvey's ranges for moduli below 2^30, the approximate ones
// (exact on 32-bit words) below 2^29, where their sums below 8q fit a word.
TEST(Butterflies32, CooleyTukeyLazyRange) {
  check_ct_butterfly<u32>(ember::ct_butterfly<u32>, 4, 22, test_moduli32());
}

TEST(Butterflies32, GentlemanSandeLazyRange) {
  check_gs_butterfly<u32>(ember::gs_butterfly<u32>, 2, 23, test_moduli32());
}

TEST(Butterflies32, CooleyTukeyApproximateRange) {
  check_ct_butterfly<u32>(ember::ct_butterfly_8q<u32>, 8, 24, test_moduli32(29));
}

TEST(Butterflies32, GentlemanSandeApproximateRange) {
  check_gs_butterfly<u32>(ember::gs_butterfly_4q<u32>, 4, 25, test_moduli32(29));
}

TEST(ModArith32, MakeModulusRangeAndConstants) {
  EXPECT_THROW(ember::make_modulus32(1), ember::ParameterError);
  EXPECT_THROW(ember::make_modulus32(u64{1} << 30), ember::ParameterError);
  for (u64 q : test_moduli32()) {
    const ember::Modulus32 m = ember::make_modulus32(q);
    const u128 ratio = (u128{1} << 64) / q;
    ASSERT_EQ(m.value, q);
    ASSERT_EQ(m.ratio_hi, static_cast<u32>(ratio >> 32));
    ASSERT_EQ(m.ratio_lo, static_cast<u32>(ratio));
    const int k = 64 - __builtin_clzll(q);
    ASSERT_EQ(m.product_ratio, static_cast<u32>((u128{1} << (k + 30)) / q));
  }
}

TEST(ModArith32, ProductsReductionsAndPowersMatchReference) {
  std::mt19937_64 rng(32);
  for (u64 q : test_moduli32()) {
    const ember::Modulus32 m = ember::make_modulus32(q);
    const auto a = samples_below(rng, q, 60), b = samples_below(rng, q, 60);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const u32 x = static_cast<u32>(a[i]), y = static_cast<u32>(b[i]);
      ASSERT_EQ(ember::mul_mod<u32>(x, y, m), ref_mul(x, y, q)) << "q=" << q;
      ASSERT_EQ(ember::add_mod<u32>(x, y, static_cast<u32>(q)), (a[i] + b[i]) % q);
      ASSERT_EQ(ember::sub_mod<u32>(x, y, static_cast<u32>(q)), (a[i] + q - b[i]) % q);
      ASSERT_EQ(ember::barrett_reduce_64<u32>(static_cast<u32>(rng()), m) < q, true);
      const u64 wide = (static_cast<u64>(rng() % q) << 32) | static_cast<u32>(rng());
      ASSERT_EQ(
          ember::barrett_reduce_128<u32>(static_cast<u32>(wide >> 32), static_cast<u32>(wide), m),
          wide % q);
      const u32 ys = ember::shoup_precompute<u32>(y, static_cast<u32>(q));
      const u32 any = static_cast<u32>(rng());
      ASSERT_EQ(ember::mul_shoup<u32>(any, y, ys, static_cast<u32>(q)), ref_mul(any, y, q));
      if (q < (u64{1} << 29))
        ASSERT_EQ(ember::mul_add_mul_mod<u32>(x, y, y, x, m), (2 * ref_mul(x, y, q)) % q);
      ASSERT_EQ(ember::pow_mod<u32>(x, i + 3, m), ref_pow(x, i + 3, q));
    }
  }
}

/// The unreduced butterfly adds at most 4q to its inputs' bound at each stage: from inputs below
/// 8q, the 17 stages of N = 2^17 stay below 76q, which fits a word for every prime below
/// 2^kUnreducedCtMaxBits, and one Barrett reduction brings any such word to [0, q).
TEST(Butterflies, CooleyTukeyUnreducedGrowsByFourQ) {
  std::mt19937_64 rng(17);
  for (u64 q : test_moduli()) {
    if (q >> ember::kUnreducedCtMaxBits) continue;
    const Modulus m = ember::make_modulus(q);
    std::uniform_int_distribution<u64> dq(0, q - 1);
    for (int stage = 0; stage < 17; ++stage) {
      const u64 bound = (8 + 4 * static_cast<u64>(stage)) * q;  // inputs of this stage
      std::uniform_int_distribution<u64> din(0, bound - 1);
      for (int i = 0; i < 40; ++i) {
        const u64 w = i == 0 ? q - 1 : (i == 1 ? 0 : dq(rng));
        const u64 ws = ember::shoup_precompute(w, q);
        u64 X = din(rng), Y = din(rng);
        if (i == 2) X = Y = bound - 1;
        if (i == 3) X = 0, Y = bound - 1;
        u64 x = X, y = Y;
        ember::ct_butterfly_unreduced(x, y, w, ws, q);
        ASSERT_LT(x, bound + 4 * q) << "X=" << X << " Y=" << Y << " w=" << w << " q=" << q;
        ASSERT_LT(y, bound + 4 * q) << "X=" << X << " Y=" << Y << " w=" << w << " q=" << q;
        const u64 wy = ref_mul(Y % q, w, q);
        ASSERT_EQ(x % q, (X % q + wy) % q);
        ASSERT_EQ(y % q, (X % q + q - wy) % q);
        ASSERT_EQ(ember::barrett_reduce_64(x, m), x % q);
        ASSERT_EQ(ember::barrett_reduce_64(y, m), y % q);
      }
    }
    ASSERT_EQ(ember::barrett_reduce_64(76 * q - 1, m), (76 * q - 1) % q);
  }
}

TEST(Butterflies, Reduce8q) {
  std::mt19937_64 rng(16);
  for (u64 q : test_moduli()) {
    std::uniform_int_distribution<u64> d8(0, 8 * q - 1);
    for (u64 x : {u64{0}, q - 1, q, 4 * q - 1, 4 * q, 8 * q - 1})
      ASSERT_EQ(ember::reduce_8q(x, q), x % q);
    for (int i = 0; i < 100; ++i) {
      const u64 x = d8(rng);
      ASSERT_EQ(ember::reduce_8q(x, q), x % q) << "x=" << x << " q=" << q;
    }
  }
}

}  // namespace
