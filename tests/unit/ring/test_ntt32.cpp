// Tests of the NTT on 32-bit words on the CPU backend (the reference the GPU suite compares
// against): the same code as the 64-bit transforms instantiated for u32, so over primes below 2^30
// both give the same words; the inverse undoes the forward transform; larger primes are refused.
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

TEST(Ntt32, EqualsThe64BitTransformAndRoundTrips) {
  for (std::size_t n : {std::size_t{16}, std::size_t{1024}, std::size_t{4096}}) {
    std::vector<u64> primes;
    for (int bits : {30, 29, 28, 24, 20})
      primes.push_back(ember::generate_ntt_primes(bits, n, 1)[0]);
    auto ring = ember::ring::RingContext::create(n, primes);
    auto& be = ember::backend::backend_for(ember::backend::parse_device("cpu"));
    const auto basis = ember::ring::RnsBasis::all(ring);
    std::mt19937_64 rng(n);
    std::vector<u64> wide(primes.size() * n);
    for (std::size_t r = 0; r < primes.size(); ++r)
      for (std::size_t c = 0; c < n; ++c) wide[r * n + c] = rng() % primes[r];
    wide[0] = primes[0] - 1;  // the largest residue
    std::vector<u32> narrow(wide.begin(), wide.end());
    const std::vector<u32> input = narrow;
    const auto s = be.default_stream();
    be.ntt_forward_async(wide.data(), basis.on(be), 1, s);
    be.ntt_forward_async(narrow.data(), basis.on32(be), 1, s);
    be.synchronize(s);
    ASSERT_EQ(std::vector<u64>(narrow.begin(), narrow.end()), wide) << "n=" << n;
    be.ntt_inverse_async(narrow.data(), basis.on32(be), 1, s);
    be.synchronize(s);
    EXPECT_EQ(narrow, input) << "n=" << n;
  }
}

TEST(Ntt32, RefusesPrimesOf30BitsOrMore) {
  const std::size_t n = 64;
  const std::vector<u64> primes = {ember::generate_ntt_primes(29, n, 1)[0],
                                   ember::generate_ntt_primes(31, n, 1)[0]};
  auto ring = ember::ring::RingContext::create(n, primes);
  auto& be = ember::backend::backend_for(ember::backend::parse_device("cpu"));
  EXPECT_NO_THROW(ember::ring::RnsBasis(ring, {0}).on32(be));
  EXPECT_THROW(ember::ring::RnsBasis(ring, {1}).on32(be), ember::ParameterError);
  EXPECT_THROW(ember::ring::RnsBasis::all(ring).on32(be), ember::ParameterError);
}

}  // namespace
