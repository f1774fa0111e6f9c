// Tests of a base conversion's byte planes (BaseConvView::byte_planes, the matrix the CUDA backend
// multiplies on integer tensor cores): the host emulation of that product, with the same joining
// and reduction as the kernel, equals the CPU backend's conversion for fast, exact and centered
// conversions of 1..8 source primes, and the packed source table (BaseConvView::byte_sources)
// gives the same inputs. The same for the 32-bit conversions' four planes
// (BaseConvView32::byte_planes): 1..24 source primes below 2^30, with input and output maps.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/backend/rows.h"
#include "ember/core/numtheory.h"
#include "ember/ring/base_converter.h"
#include "ember/ring/ring_context.h"

namespace {

using ember::Modulus;
using ember::u32;
using ember::u64;
using namespace ember::ring;
namespace rows = ember::backend::rows;

/// Byte k of the row of one coefficient: the bytes of y_i, then the overflow's.
std::vector<u32> input_bytes(const std::vector<u64>& y, u64 overflow, bool exact,
                             std::size_t blocks) {
  std::vector<u32> bytes(32 * blocks, 0);
  for (std::size_t i = 0; i < y.size(); ++i)
    for (std::size_t a = 0; a < 8; ++a) bytes[8 * i + a] = (y[i] >> (8 * a)) & 0xff;
  if (exact) bytes[8 * y.size()] = static_cast<u32>(overflow);
  return bytes;
}

/// The conversion of every coefficient of x (host words, from-major) through the byte planes.
std::vector<u64> convert_by_planes(const BaseConverter& conv, const std::vector<u64>& x,
                                   std::size_t n, bool exact, const std::vector<u64>& in_mul,
                                   const std::vector<u64>& in_add) {
  const auto q = conv.from().primes();
  const auto p = conv.to().primes();
  const std::size_t to_pad = (p.size() + 7) / 8 * 8, blocks = conv.byte_blocks();
  EXPECT_EQ(blocks, (8 * q.size() + (exact ? 1 : 0) + 31) / 32);
  const std::vector<u32>& planes = conv.byte_planes();
  std::vector<u64> out(p.size() * n);
  for (std::size_t c = 0; c < n; ++c) {
    std::vector<u64> y(q.size());
    double sum = 0.0;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const Modulus m = ember::make_modulus(q[i]);
      const u64 qhat_inv = ember::inverse_mod(ember::product_mod(q, q[i], i), q[i]);
      const u64 a = in_mul.empty() ? 1 : in_mul[i] % q[i];
      const u64 b = in_add.empty() ? 0 : in_add[i] % q[i];
      y[i] =
          ember::mul_mod(ember::add_mod(ember::mul_mod(x[i * n + c], a, m), b, q[i]), qhat_inv, m);
      sum += static_cast<double>(y[i]) * (1.0 / static_cast<double>(q[i]));
      // The kernel's packed source table gives the same input and overflow term.
      const ember::backend::ByteSource& src = conv.byte_sources()[i];
      EXPECT_EQ(src.prime, q[i]);
      const u64 packed = ember::add_mod(
          ember::mul_shoup(x[i * n + c], src.qhat_inv, src.qhat_inv_shoup, q[i]), src.y_add, q[i]);
      EXPECT_EQ(packed, y[i]);
      // (From one prime a conversion is never exact: BaseConverter drops the overflow.)
      EXPECT_EQ(src.inv_q, exact && q.size() > 1 ? 1.0 / static_cast<double>(q[i]) : 0.0);
    }
    const std::vector<u32> bytes = input_bytes(y, static_cast<u64>(sum), exact, blocks);
    for (std::size_t j = 0; j < p.size(); ++j) {
      u32 dot[8] = {};
      for (int b = 0; b < 8; ++b)
        for (std::size_t k = 0; k < bytes.size(); ++k) {
          const u32 word =
              planes[(b * to_pad + j) * 8 * blocks +
                     rows::byte_plane_slot(static_cast<u32>(k / 4), static_cast<u32>(blocks))];
          dot[b] += bytes[k] * ((word >> (8 * (k % 4))) & 0xff);
        }
      u64 low = 0, high = 0;
      for (int pair = 0; pair < 4; ++pair)
        rows::add_byte_plane_pair(low, high, dot[2 * pair], dot[2 * pair + 1], pair);
      u64 hi, lo;
      rows::join_byte_planes(low, high, hi, lo);
      const ember::backend::ByteTarget& target = conv.byte_targets()[j];
      EXPECT_EQ(target.prime, p[j]);
      const u64 v = rows::reduce_small_quotient(hi, lo, target.prime, target.inv_prime);
      out[j * n + c] = ember::add_mod(v, target.out_add, p[j]);
    }
  }
  return out;
}

TEST(BytePlanes, SmallQuotientReductionIsExact) {
  // Values below 2^15 p, near multiples of p and at the ends of the range.
  using u128 = unsigned __int128;
  std::mt19937_64 rng(9);
  for (u64 p : {u64{3}, u64{65537}, ember::generate_ntt_primes(30, 16, 1)[0],
                ember::generate_ntt_primes(50, 16, 1)[0], ember::generate_ntt_primes(61, 16, 1)[0],
                (u64{1} << 61) - 1}) {
    const double inv = 1.0 / static_cast<double>(p);
    std::vector<u128> xs{0, 1, static_cast<u128>(p) - 1, p, (static_cast<u128>(p) << 15) - 1};
    for (int i = 0; i < 2000; ++i) {
      const u128 q = rng() % (1 << 15);
      const u128 off = rng() % 5;
      xs.push_back(q * p + off);
      if (q * p >= off + 1) xs.push_back(q * p - off - 1);
      xs.push_back(q * p + rng() % p);
    }
    for (u128 x : xs) {
      if (x >= (static_cast<u128>(p) << 15)) continue;
      ASSERT_EQ(rows::reduce_small_quotient(static_cast<u64>(x >> 64), static_cast<u64>(x), p, inv),
                static_cast<u64>(x % p))
          << "p " << p;
    }
  }
}

TEST(BytePlanes, HostEmulationMatchesTheConversion) {
  const std::size_t n = 64;
  const auto primes = ember::generate_ntt_primes(61, n, 16);
  auto more = ember::generate_ntt_primes(50, n, 10);
  std::vector<u64> all = primes;
  all.insert(all.end(), more.begin(), more.end());
  const auto ring = RingContext::create(n, all);
  std::mt19937_64 rng(5);
  const ember::backend::Device cpu{};
  for (std::size_t from = 1; from <= 16; ++from) {
    for (int kind = 0; kind < 3; ++kind) {  // fast, exact, centered (exact with both maps)
      const bool exact = kind > 0;
      if (exact && from == 16) continue;  // 16 sources and the overflow exceed 4 blocks
      std::vector<u32> qi, pi;
      for (u32 i = 0; i < from; ++i) qi.push_back(i);
      for (u32 j = 0; j < 9; ++j) pi.push_back(16 + j);
      const RnsBasis qb(ring, qi), pb(ring, pi);
      const BaseConverter conv =
          kind == 2 ? BaseConverter::centered(qb, pb) : BaseConverter(qb, pb, exact);
      ASSERT_FALSE(conv.byte_planes().empty());
      std::vector<u64> x(from * n);
      for (std::size_t i = 0; i < from; ++i)
        for (std::size_t c = 0; c < n; ++c)
          x[i * n + c] = c < 2 ? (c == 0 ? 0 : all[i] - 1) : rng() % all[i];
      const RnsPoly in = RnsPoly::from_host(qb, Form::coeff, cpu, x.data());
      const std::vector<u64> want = conv.convert(in).to_host();
      std::vector<u64> in_add;
      if (kind == 2)
        for (u64 q : qb.primes()) in_add.push_back(ember::half_product_mod(qb.primes(), q));
      EXPECT_EQ(convert_by_planes(conv, x, n, exact, {}, in_add), want)
          << "from " << from << " kind " << kind;
    }
  }
  // Too many inputs: no planes (the kernels take the 128-bit dot product instead).
  std::vector<u32> sixteen, seventeen;
  for (u32 i = 0; i < 17; ++i) {
    seventeen.push_back(i);
    if (i < 16) sixteen.push_back(i);
  }
  EXPECT_TRUE(
      BaseConverter(RnsBasis(ring, seventeen), RnsBasis(ring, {17}), false).byte_planes().empty());
  EXPECT_TRUE(
      BaseConverter(RnsBasis(ring, sixteen), RnsBasis(ring, {17}), true).byte_planes().empty());
}

/// The 32-bit conversion of every coefficient of x (host words, from-major) as
/// bconv_bytes32_kernel computes it: y_i from the 32-bit tables, the overflow as input
/// 4 from_limbs, four plane products joined at their byte offsets and reduced once.
std::vector<u32> convert_by_planes32(const BaseConverter& conv, const std::vector<u32>& x,
                                     std::size_t n) {
  const ember::backend::BaseConvView32 v =
      conv.view32_on(ember::backend::backend_for(ember::backend::Device{}));
  const auto q = conv.from().primes();
  const auto p = conv.to().primes();
  const std::size_t to_pad = (p.size() + 7) / 8 * 8, blocks = v.byte_blocks;
  const bool exact = v.inv_q != nullptr;
  EXPECT_EQ(blocks, (4 * q.size() + (exact ? 1 : 0) + 31) / 32);
  const std::vector<u32> planes = conv.byte_planes32();
  EXPECT_EQ(std::vector<u32>(v.byte_planes, v.byte_planes + planes.size()), planes);
  std::vector<u32> out(p.size() * n);
  for (std::size_t c = 0; c < n; ++c) {
    std::vector<u32> bytes(32 * blocks, 0);
    double sum = 0.0;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const u32 qi = static_cast<u32>(q[i]);
      u32 y = ember::mul_shoup<u32>(x[i * n + c], v.qhat_inv[i], v.qhat_inv_shoup[i], qi);
      if (v.y_add) y = ember::add_mod<u32>(y, v.y_add[i], qi);
      if (exact) sum += static_cast<double>(y) * v.inv_q[i];
      for (std::size_t a = 0; a < 4; ++a) bytes[4 * i + a] = (y >> (8 * a)) & 0xff;
    }
    if (exact) bytes[4 * q.size()] = static_cast<u32>(sum);
    for (std::size_t j = 0; j < p.size(); ++j) {
      u64 joined = 0;
      for (int b = 0; b < 4; ++b) {
        u32 dot = 0;
        for (std::size_t k = 0; k < bytes.size(); ++k) {
          const u32 word =
              planes[(b * to_pad + j) * 8 * blocks +
                     rows::byte_plane_slot(static_cast<u32>(k / 4), static_cast<u32>(blocks))];
          dot += bytes[k] * ((word >> (8 * (k % 4))) & 0xff);
        }
        joined += static_cast<u64>(dot) << (8 * b);
      }
      EXPECT_LT(joined, u64{1} << 47);
      const ember::Modulus32 m = ember::make_modulus32(p[j]);
      u32 r =
          ember::reduce_product<u32>(static_cast<u32>(joined >> 32), static_cast<u32>(joined), m);
      if (v.out_add) r = ember::add_mod<u32>(r, v.out_add[j], m.value);
      out[j * n + c] = r;
    }
  }
  return out;
}

TEST(BytePlanes32, HostEmulationMatchesTheConversion) {
  const std::size_t n = 64;
  const auto all = ember::generate_ntt_primes(30, n, 34);
  const auto ring = RingContext::create(n, all);
  std::mt19937_64 rng(7);
  const ember::backend::Device cpu{};
  for (std::size_t from = 1; from <= 24; ++from) {
    for (int kind = 0; kind < 3; ++kind) {  // fast, exact, centered with input and output maps
      const bool exact = kind > 0;
      if (exact && from == 24) continue;  // 24 sources and the overflow exceed 3 blocks
      std::vector<u32> qi, pi;
      for (u32 i = 0; i < from; ++i) qi.push_back(i);
      for (u32 j = 0; j < 9; ++j) pi.push_back(25 + j);
      const RnsBasis qb(ring, qi), pb(ring, pi);
      std::vector<u64> in_mul, out_mul;
      for (std::size_t i = 0; i < from; ++i) in_mul.push_back(1 + rng() % (1 << 20));
      for (std::size_t j = 0; j < 9; ++j) out_mul.push_back(1 + rng() % (1 << 20));
      const BaseConverter conv = kind == 2 ? BaseConverter::centered(qb, pb, in_mul, out_mul)
                                           : BaseConverter(qb, pb, exact);
      ASSERT_FALSE(conv.byte_planes32().empty()) << "from " << from;
      std::vector<u32> x(from * n);
      for (std::size_t i = 0; i < from; ++i)
        for (std::size_t c = 0; c < n; ++c)
          x[i * n + c] = static_cast<u32>(c < 2 ? (c == 0 ? 0 : all[i] - 1) : rng() % all[i]);
      const RnsPoly32 in = RnsPoly32::from_host(qb, Form::coeff, cpu, x.data());
      const std::vector<u32> want = conv.convert(in).to_host();
      EXPECT_EQ(convert_by_planes32(conv, x, n), want) << "from " << from << " kind " << kind;
    }
  }
  // Too many inputs: no planes (the GPU takes the two CUDA-core passes instead).
  std::vector<u32> q24, q25;
  for (u32 i = 0; i < 25; ++i) {
    q25.push_back(i);
    if (i < 24) q24.push_back(i);
  }
  EXPECT_TRUE(
      BaseConverter(RnsBasis(ring, q25), RnsBasis(ring, {25}), false).byte_planes32().empty());
  EXPECT_TRUE(
      BaseConverter(RnsBasis(ring, q24), RnsBasis(ring, {25}), true).byte_planes32().empty());
}

}  // namespace
