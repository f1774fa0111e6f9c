// The CKKS special FFT (backend/ckks_fft.h) against the canonical embedding evaluated directly in
// long double, its inverse, the 128-bit to double conversion of decoding, and the CPU backend's
// CkksEncodeOps against the header's host loop.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/backend/buffer.h"
#include "ember/backend/ckks_fft.h"

namespace {

using ember::u64;
using ember::backend::ckks::Cx;
namespace fft = ember::backend::ckks;

std::vector<Cx> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Cx> z(n);
  for (auto& v : z) v = Cx{u(rng), u(rng)};
  return z;
}

/// Slot j of w: sum_k w_k zeta^(k 5^j), zeta = e^(i pi / N), N = 2n, in long double.
std::complex<long double> embedding(const std::vector<Cx>& w, std::size_t j) {
  const std::size_t n = w.size(), m = 4 * n;
  std::size_t five = 1;
  for (std::size_t t = 0; t < j; ++t) five = five * 5 % m;
  const long double pi = 3.14159265358979323846264338327950288L;
  std::complex<long double> sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const long double a = 2 * pi * static_cast<long double>(k * five % m) / m;
    sum += std::complex<long double>(w[k].re, w[k].im) *
           std::complex<long double>(std::cos(a), std::sin(a));
  }
  return sum;
}

int log2_of(std::size_t n) {
  int l = 0;
  while ((std::size_t{1} << l) < n) ++l;
  return l;
}

TEST(CkksFft, ForwardIsTheCanonicalEmbedding) {
  for (std::size_t n : {8u, 64u, 512u}) {
    const auto tw = fft::ckks_slot_twiddles(n);
    const auto w = random_values(n, static_cast<unsigned>(n));
    std::vector<Cx> a(n);
    for (std::size_t k = 0; k < n; ++k) a[fft::bit_reverse(k, log2_of(n))] = w[k];
    fft::special_fft_stages(a.data(), n, tw.data(), false);
    for (std::size_t j = 0; j < n; ++j) {
      const auto want = embedding(w, j);
      EXPECT_NEAR(a[j].re, static_cast<double>(want.real()), 1e-13 * n) << n << " " << j;
      EXPECT_NEAR(a[j].im, static_cast<double>(want.imag()), 1e-13 * n) << n << " " << j;
    }
  }
}

TEST(CkksFft, InverseUndoesForward) {
  const std::size_t n = 1 << 12;
  const int log_n = log2_of(n);
  const auto tw = fft::ckks_slot_twiddles(n);
  const auto z = random_values(n, 7);
  std::vector<Cx> w = z;
  fft::special_fft_stages(w.data(), n, tw.data(), true);  // bit-reversed, times n
  std::vector<Cx> a(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double re = fft::encoded_coefficient(w.data(), n, log_n, k);
    const double im = fft::encoded_coefficient(w.data(), n, log_n, k + n);
    a[fft::bit_reverse(k, log_n)] = Cx{re, im};
  }
  fft::special_fft_stages(a.data(), n, tw.data(), false);
  for (std::size_t j = 0; j < n; ++j) {
    EXPECT_NEAR(a[j].re, z[j].re, 1e-13);
    EXPECT_NEAR(a[j].im, z[j].im, 1e-13);
  }
}

TEST(CkksFft, U128ToDoubleRoundsToNearestEven) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const int bits = 1 + static_cast<int>(rng() % 123);
    unsigned __int128 v = (static_cast<unsigned __int128>(rng()) << 64) | rng();
    v >>= 128 - bits;
    const u64 hi = static_cast<u64>(v >> 64), lo = static_cast<u64>(v);
    ASSERT_EQ(fft::u128_to_double(hi, lo), static_cast<double>(v)) << bits;
  }
  // Ties: 2^53 + 1 (times 2^20) rounds to even, 2^53 + 3 up.
  const unsigned __int128 tie = (static_cast<unsigned __int128>((u64{1} << 53) + 1)) << 20;
  EXPECT_EQ(fft::u128_to_double(static_cast<u64>(tie >> 64), static_cast<u64>(tie)),
            static_cast<double>(tie));
}

TEST(CkksFft, CpuBackendRunsTheHostLoop) {
  auto& be = ember::backend::backend_for(ember::backend::Device{});
  const std::size_t n = 256;
  const auto tw = fft::ckks_slot_twiddles(n);
  const auto z = random_values(n, 11);
  std::vector<Cx> host = z;
  fft::special_fft_stages(host.data(), n, tw.data(), true);
  const ember::backend::Stream s{};
  auto buf = ember::backend::Buffer::from_host(be, z.data(), n * sizeof(Cx), s);
  auto twb = ember::backend::Buffer::from_host(be, tw.data(), n * sizeof(Cx), s);
  be.ckks_encode().special_fft_async(buf.as<void>(), n, twb.as<const void>(), true, s);
  std::vector<Cx> got(n);
  be.copy_to_host_async(got.data(), buf.as<const void>(), n * sizeof(Cx), s);
  be.synchronize(s);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i].re, host[i].re);
    EXPECT_EQ(got[i].im, host[i].im);
  }
}

}  // namespace
