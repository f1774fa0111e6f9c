// The key inner product of hybrid key switching on 32-bit words (CPU backend): the same words as
// on 64-bit words over the same primes, with and without a fused automorphism and addend, and
// with more digits than a 32-bit sum takes between folds.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/core/numtheory.h"
#include "ember/ring/ring_context.h"

namespace {

using ember::u32;
using ember::u64;

struct Case {
  std::size_t q_rows, p_rows, alpha;
  u64 galois;
  bool add;
};

class KeyProduct32 : public testing::TestWithParam<Case> {};

TEST_P(KeyProduct32, EqualsTheWideWords) {
  const Case k = GetParam();
  const std::size_t n = 64, key_q_rows = k.q_rows + 1, rows = k.q_rows + k.p_rows;
  const std::size_t key_rows = key_q_rows + k.p_rows;
  const std::size_t digits = (k.q_rows + k.alpha - 1) / k.alpha;
  const auto primes = ember::generate_ntt_primes(30, n, key_rows);
  const auto ring = ember::ring::RingContext::create(n, primes);
  std::vector<u32> ids;  // Q_l, then P (the key's last p_rows primes)
  for (std::size_t r = 0; r < k.q_rows; ++r) ids.push_back(static_cast<u32>(r));
  for (std::size_t r = 0; r < k.p_rows; ++r) ids.push_back(static_cast<u32>(key_q_rows + r));
  const ember::ring::RnsBasis qlp(ring, ids);
  std::mt19937_64 rng(k.q_rows * 100 + k.alpha);
  const u64 bound = primes[0] < primes.back() ? primes[0] : primes.back();
  const auto random_words = [&](std::size_t count) {
    std::vector<u64> w(count);
    for (auto& x : w) x = rng() % (bound / 2);
    return w;
  };
  const std::vector<u64> d = random_words(k.q_rows * n), ext = random_words(digits * rows * n);
  const std::vector<u64> key = random_words(digits * 2 * key_rows * n);
  const std::vector<u64> add = random_words(k.q_rows * n);
  auto& be = ember::backend::backend_for(ember::backend::parse_device("cpu"));
  const auto run = [&](auto word) {
    using W = decltype(word);
    const std::vector<W> dw(d.begin(), d.end()), ew(ext.begin(), ext.end());
    const std::vector<W> kw(key.begin(), key.end()), aw(add.begin(), add.end());
    ember::backend::KeyProductViewT<W> kp;
    kp.d = dw.data();
    kp.ext = ew.data();
    kp.key = kw.data();
    kp.digits = static_cast<u32>(digits);
    kp.alpha = static_cast<u32>(k.alpha);
    kp.rows = static_cast<u32>(rows);
    kp.q_rows = static_cast<u32>(k.q_rows);
    kp.key_rows = static_cast<u32>(key_rows);
    kp.key_q_rows = static_cast<u32>(key_q_rows);
    kp.galois = k.galois;
    if (k.add) {
      kp.add = aw.data();
      for (std::size_t r = 0; r < k.q_rows; ++r)
        kp.add_scale[r] = static_cast<W>(primes[r] - 1 - r);
    }
    std::vector<W> q0(k.q_rows * n), q1(k.q_rows * n), p0(k.p_rows * n), p1(k.p_rows * n);
    be.key_inner_product_async(q0.data(), q1.data(), p0.data(), p1.data(), kp,
                               qlp.template view_on<W>(be), be.default_stream());
    be.synchronize(be.default_stream());
    std::vector<u64> out;
    for (const auto* v : {&q0, &q1, &p0, &p1}) out.insert(out.end(), v->begin(), v->end());
    return out;
  };
  EXPECT_EQ(run(u32{}), run(u64{}));
}

INSTANTIATE_TEST_SUITE_P(Digits, KeyProduct32,
                         testing::Values(Case{5, 2, 2, 0, false}, Case{6, 3, 1, 0, true},
                                         Case{12, 2, 1, 5, true}, Case{20, 1, 1, 0, false}));

}  // namespace
