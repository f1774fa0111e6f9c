// Tests of CGGI's Fourier path (cggi_fft.h): the folded transform's round trip, and products of
// gadget digits by 32-bit key words against the exact negacyclic product, with the margin to the
// nearest integer that makes the rounding exact.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ember/backend/cggi_fft.h"

namespace {

using ember::u32;
namespace bk = ember::backend::cggi;

/// The exact negacyclic product mod 2^32 of digit and key polynomials of N coefficients.
std::vector<u32> schoolbook(const std::vector<std::int64_t>& d, const std::vector<u32>& key) {
  const std::size_t N = d.size();
  std::vector<u32> out(N, 0);
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      const u32 p = static_cast<u32>(d[i]) * key[j];
      if (i + j < N)
        out[i + j] += p;
      else
        out[i + j - N] -= p;
    }
  return out;
}

struct Tables {
  std::vector<bk::Cx> tw, itw;
  explicit Tables(std::size_t n) : tw(n), itw(n) { bk::fourier_tables(n, tw.data(), itw.data()); }
};

std::vector<bk::Cx> fold(const std::vector<double>& a) {
  const std::size_t n = a.size() / 2;
  std::vector<bk::Cx> c(n);
  for (std::size_t j = 0; j < n; ++j) c[j] = {a[j], a[j + n]};
  return c;
}

TEST(CggiFft, RoundTripScalesByN) {
  for (std::size_t N : {4u, 256u, 512u, 2048u}) {
    const std::size_t n = N / 2;
    Tables t(n);
    std::mt19937_64 rng(N);
    std::vector<double> a(N);
    for (auto& v : a) v = static_cast<double>(static_cast<std::int32_t>(rng()));
    auto c = fold(a);
    bk::fft_forward(c.data(), n, t.tw.data());
    bk::fft_inverse_unscaled(c.data(), n, t.itw.data());
    for (std::size_t j = 0; j < n; ++j) {
      EXPECT_NEAR(c[j].re / n, a[j], 1e-3) << N << " " << j;
      EXPECT_NEAR(c[j].im / n, a[j + n], 1e-3) << N << " " << j;
    }
  }
}

/// Sums of (k+1) l products, as one CMux of bool_128 (k 3, l 2, N 512, base 2^10) forms them:
/// the rounded result equals the exact product mod 2^32, and every coefficient lies within
/// 0.05 of an integer (the rounding's margin, measured: about 2^-9 at these sizes).
TEST(CggiFft, KeyProductsAreExactAtBool128Sizes) {
  const std::size_t N = 512, n = N / 2, rows = 8;
  Tables t(n);
  std::mt19937_64 rng(7);
  std::vector<u32> expect(N, 0);
  std::vector<bk::Cx> sum(n, bk::Cx{0, 0});
  std::vector<std::vector<bk::Cx>> digit_spec(rows), key_spec(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<std::int64_t> d(N);
    std::vector<u32> key(N);
    std::vector<double> dd(N), kd(N);
    for (std::size_t j = 0; j < N; ++j) {
      d[j] = static_cast<std::int64_t>(rng() % 1024) - 512;
      key[j] = static_cast<u32>(rng());
      dd[j] = static_cast<double>(d[j]);
      kd[j] = static_cast<double>(static_cast<std::int32_t>(key[j]));
    }
    const auto part = schoolbook(d, key);
    for (std::size_t j = 0; j < N; ++j) expect[j] += part[j];
    digit_spec[r] = fold(dd);
    key_spec[r] = fold(kd);
    bk::fft_forward(digit_spec[r].data(), n, t.tw.data());
    bk::fft_forward(key_spec[r].data(), n, t.tw.data());
    for (auto& v : key_spec[r]) v = {v.re / n, v.im / n};  // the 1/n folded into the key
  }
  for (std::size_t f = 0; f < n; ++f)
    for (std::size_t r = 0; r < rows; ++r)
      sum[f] = bk::cx_mac(sum[f], digit_spec[r][f], key_spec[r][f]);
  bk::fft_inverse_unscaled(sum.data(), n, t.itw.data());
  double worst = 0;
  for (std::size_t j = 0; j < n; ++j) {
    worst = std::max({worst, std::abs(sum[j].re - std::nearbyint(sum[j].re)),
                      std::abs(sum[j].im - std::nearbyint(sum[j].im))});
    EXPECT_EQ(bk::torus_from_double<u32>(sum[j].re), expect[j]) << j;
    EXPECT_EQ(bk::torus_from_double<u32>(sum[j].im), expect[j + n]) << j;
  }
  EXPECT_LT(worst, 0.05);
}

}  // namespace
