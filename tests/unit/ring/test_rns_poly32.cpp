// Tests of RnsPoly32 (polynomials on 32-bit words) on the CPU backend: its transforms and pointwise
// arithmetic give the words RnsPoly's give over the same primes, from_signed reduces like
// RnsPoly's, and what 32-bit words cannot hold or do is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"
#include "ember/ring/rns_poly.h"

namespace {

using ember::u32;
using ember::u64;
using ember::ring::Form;
using ember::ring::RnsPoly;
using ember::ring::RnsPoly32;

struct Pair {
  RnsPoly32 narrow;
  RnsPoly wide;
};

Pair random_pair(const ember::ring::RnsBasis& basis, Form form, std::mt19937_64& rng) {
  std::vector<u64> w(basis.size() * basis.n());
  for (std::size_t l = 0; l < basis.size(); ++l)
    for (std::size_t i = 0; i < basis.n(); ++i) w[l * basis.n() + i] = rng() % basis.prime(l);
  const std::vector<u32> v(w.begin(), w.end());
  const auto cpu = ember::backend::parse_device("cpu");
  return {RnsPoly32::from_host(basis, form, cpu, v.data()),
          RnsPoly::from_host(basis, form, cpu, w.data())};
}

void expect_same(const RnsPoly32& a, const RnsPoly& b) {
  const auto x = a.to_host();
  EXPECT_EQ(std::vector<u64>(x.begin(), x.end()), b.to_host());
}

ember::ring::RnsBasis test_basis(std::size_t n) {
  std::vector<u64> primes;
  for (int bits : {30, 29, 26, 22}) primes.push_back(ember::generate_ntt_primes(bits, n, 1)[0]);
  return ember::ring::RnsBasis::all(ember::ring::RingContext::create(n, primes));
}

TEST(RnsPoly32, ArithmeticAndTransformsEqualRnsPolys) {
  const auto basis = test_basis(256);
  std::mt19937_64 rng(32);
  Pair a = random_pair(basis, Form::eval, rng), b = random_pair(basis, Form::eval, rng);
  Pair c = random_pair(basis, Form::eval, rng);
  expect_same(a.narrow.add(b.narrow), a.wide.add(b.wide));
  expect_same(a.narrow.sub(b.narrow), a.wide.sub(b.wide));
  expect_same(a.narrow.negate(), a.wide.negate());
  expect_same(a.narrow.multiply(b.narrow), a.wide.multiply(b.wide));
  c.narrow.multiply_accumulate_inplace(a.narrow, b.narrow);
  c.wide.multiply_accumulate_inplace(a.wide, b.wide);
  expect_same(c.narrow, c.wide);
  expect_same(a.narrow.intt(), a.wide.intt());
  expect_same(a.narrow.intt().ntt(), a.wide);
}

TEST(RnsPoly32, FromSignedReducesLikeRnsPoly) {
  const auto basis = test_basis(64);
  std::vector<std::int64_t> v(64);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = (i % 2 ? -1 : 1) * static_cast<std::int64_t>(i * 0x9e3779b97f4a7c1ULL % (1ULL << 62));
  const auto cpu = ember::backend::parse_device("cpu");
  expect_same(RnsPoly32::from_signed(basis, Form::eval, cpu, v.data()),
              RnsPoly::from_signed(basis, Form::eval, cpu, v.data()));
}

TEST(RnsPoly32, RefusesWidePrimes) {
  const std::size_t n = 64;
  const auto cpu = ember::backend::parse_device("cpu");
  const std::vector<u64> wide = {ember::generate_ntt_primes(31, n, 1)[0]};
  const auto wide_basis = ember::ring::RnsBasis::all(ember::ring::RingContext::create(n, wide));
  EXPECT_THROW(RnsPoly32(wide_basis, Form::coeff, cpu), ember::ParameterError);
}

TEST(RnsPoly32, AutomorphismEqualsTheWideWords) {
  std::mt19937_64 rng(1);
  for (const Form form : {Form::coeff, Form::eval}) {
    const Pair a = random_pair(test_basis(64), form, rng);
    for (const u64 k : {3ull, 5ull, 127ull})
      expect_same(a.narrow.automorphism(k), a.wide.automorphism(k));
  }
  const Pair a = random_pair(test_basis(64), Form::coeff, rng);
  EXPECT_THROW(a.narrow.automorphism(4), ember::ParameterError);
}

TEST(RnsPoly32, MultiplyScalarEqualsTheWideWords) {
  std::mt19937_64 rng(2);
  const Pair a = random_pair(test_basis(64), Form::eval, rng);
  expect_same(a.narrow.multiply_scalar(0xfedcba9876543210ull),
              a.wide.multiply_scalar(0xfedcba9876543210ull));
}

}  // namespace
