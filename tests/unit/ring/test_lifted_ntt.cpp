// Tests of Backend::ntt_forward_lifted_async on the CPU backend (the reference the GPU suite
// compares against): each row is the NTT of its source row reduced modulo the row's prime, for
// sources and targets of different sizes, and bad row counts are refused. Also the out-of-place
// transform whose sources hold only their polynomials' first rows (source_rows).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/core/errors.h"
#include "ember/core/modarith.h"
#include "ember/core/numtheory.h"
#include "ember/ring/ring_context.h"

namespace {

using ember::u32;
using ember::u64;

TEST(LiftedNtt, RowsAreTheTransformsOfTheReducedSources) {
  const std::size_t n = 1024;
  std::vector<u64> primes;
  for (int bits : {60, 40, 50, 55}) primes.push_back(ember::generate_ntt_primes(bits, n, 1)[0]);
  auto ring = ember::ring::RingContext::create(n, primes);
  auto& be = ember::backend::backend_for(ember::backend::parse_device("cpu"));
  // Two sources (rows of words below the 60-bit prime: the lift must reduce them for the smaller
  // primes), each lifted to three primes.
  const std::vector<u32> targets = {1, 2, 3, 0, 2, 3};
  const auto ext = ember::ring::RnsBasis::unchecked(ring, targets);
  std::mt19937_64 rng(7);
  std::vector<u64> src(2 * n);
  for (auto& w : src) w = rng() % primes[0];
  src[0] = primes[0] - 1;
  std::vector<u64> got(targets.size() * n), want(targets.size() * n);
  for (std::size_t r = 0; r < targets.size(); ++r) {
    const auto& m = ring->prime_tables(targets[r]).modulus;
    for (std::size_t c = 0; c < n; ++c) want[r * n + c] = src[(r / 3) * n + c] % m.value;
  }
  const auto view = ext.on(be);
  const auto s = be.default_stream();
  be.ntt_forward_lifted_async(got.data(), {src.data(), 3, primes[0]}, view, s);
  be.ntt_forward_async(want.data(), view, 1, s);
  be.synchronize(s);
  EXPECT_EQ(got, want);
  EXPECT_THROW(be.ntt_forward_lifted_async(got.data(), {src.data(), 0, primes[0]}, view, s),
               ember::ParameterError);
  EXPECT_THROW(be.ntt_forward_lifted_async(got.data(), {src.data(), 7, primes[0]}, view, s),
               ember::ParameterError);
}

TEST(OutOfPlaceNtt, SourceRowsTakeTheRestInPlace) {
  // Two polynomials of four rows: rows 0-1 of each from its own source, rows 2-3 already in the
  // output. The result equals the in-place transform of the assembled polynomials.
  const std::size_t n = 512;
  auto ring = ember::ring::RingContext::create(n, ember::generate_ntt_primes(50, n, 4));
  auto& be = ember::backend::backend_for(ember::backend::parse_device("cpu"));
  const auto basis = ember::ring::RnsBasis::unchecked(ring, {0, 1, 2, 3});
  const auto view = basis.on(be);
  std::mt19937_64 rng(11);
  std::vector<u64> src0(2 * n), src1(2 * n), out(8 * n), want(8 * n);
  for (std::size_t r = 0; r < 8; ++r) {
    const u64 q = ring->prime_tables(static_cast<u32>(r % 4)).modulus.value;
    for (std::size_t c = 0; c < n; ++c) {
      const u64 w = rng() % q;
      want[r * n + c] = w;
      if (r % 4 >= 2)
        out[r * n + c] = w;
      else
        (r < 4 ? src0 : src1)[(r % 4) * n + c] = w;
    }
  }
  const u64* in[2] = {src0.data(), src1.data()};
  const auto s = be.default_stream();
  be.ntt_forward_async(out.data(), in, view, 2, s, 2);
  be.ntt_forward_async(want.data(), view, 2, s);
  be.synchronize(s);
  EXPECT_EQ(out, want);
}

}  // namespace
