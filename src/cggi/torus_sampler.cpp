// Torus samplers: words of one ChaCha20 draw, Box-Muller normals, Gaussian and TUniform noise.
#include "ember/cggi/torus_sampler.h"

#include <cmath>

namespace ember::cggi {

std::uint64_t TorusDraw::word() {
  if (used_ == 8) {
    chacha20_words(key_, counter_++, nonce_, buf_);
    used_ = 0;
  }
  return buf_[used_++];
}

double TorusDraw::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1;
  do u1 = unit();
  while (u1 == 0.0);
  const double u2 = unit();
  const double r = std::sqrt(-2.0 * std::log(u1)), t = 2.0 * M_PI * u2;
  spare_ = r * std::sin(t);
  has_spare_ = true;
  return r * std::cos(t);
}

std::int64_t TorusDraw::noise(const Noise& e, int torus_bits) {
  if (e.kind == Noise::gaussian)
    return static_cast<std::int64_t>(
        std::llround(normal() * e.value * std::ldexp(1.0, torus_bits)));
  // TUniform(b): x uniform below 2^(b+2); (x >> 1) + (x & 1) - 2^b lies in [-2^b, 2^b], the two
  // ends half as likely as the others.
  const int b = static_cast<int>(e.value);
  const std::uint64_t x = word() & ((std::uint64_t{1} << (b + 2)) - 1);
  return static_cast<std::int64_t>((x >> 1) + (x & 1)) - (std::int64_t{1} << b);
}

std::vector<std::uint8_t> binary_key(ring::Sampler& s, std::size_t n) {
  TorusDraw d(s);
  std::vector<std::uint8_t> key(n);
  for (std::size_t i = 0; i < n; ++i) key[i] = d.bit();
  return key;
}

}  // namespace ember::cggi
