// Samplers over the counter-based ChaCha20 stream: uniform, ternary, exact-weight ternary,
// Gaussian.
#include "ember/ring/sampler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "ember/core/errors.h"
#include "ember/core/process.h"

namespace ember::ring {

using backend::Buffer;

namespace {
/// The 64-bit words of one draw (key, nonce) in order, for the host-side samplers.
class WordStream {
 public:
  WordStream(const ChaChaKey& key, u64 nonce) : key_(key), nonce_(nonce) {}
  u64 next() {
    if (used_ == 8) {
      chacha20_words(key_, counter_++, nonce_, buf_);
      used_ = 0;
    }
    return buf_[used_++];
  }

 private:
  const ChaChaKey& key_;
  u64 nonce_, counter_ = 0;
  u64 buf_[8];
  int used_ = 8;
};
}  // namespace

Sampler::Sampler()
    : key_(chacha_key_from_os()), nonce_(0), from_os_(true), keyed_generation_(fork_generation()) {}
Sampler::Sampler(const ChaChaKey& key, u64 first_nonce)
    : key_(key), nonce_(first_nonce), from_os_(false), keyed_generation_(fork_generation()) {}

const ChaChaKey& Sampler::key() {
  // A forked child starts with one thread, so the first draw after the fork re-keys before any
  // other thread of the child can read key_; later draws see the new generation and skip this.
  const u64 now = fork_generation();
  if (from_os_ && keyed_generation_.load(std::memory_order_acquire) != now) {
    std::lock_guard lock(rekey_mutex_);
    if (keyed_generation_.load(std::memory_order_relaxed) != now) {
      key_ = chacha_key_from_os();
      keyed_generation_.store(now, std::memory_order_release);
    }
  }
  return key_;
}

RnsPoly Sampler::uniform(const RnsBasis& basis, Device device, Form form) {
  RnsPoly p(basis, form, device);
  auto& be = p.backend();
  be.sample_uniform_async(p.data(), key(), next_nonce(), p.view(), backend::Stream{});
  return p;
}

ChaChaKey Sampler::derive_key() {
  std::uint32_t block[16];
  chacha20_block(key(), 0, next_nonce(), block);
  ChaChaKey k;
  for (int i = 0; i < 8; ++i) k.words[i] = block[i];
  return k;
}

void Sampler::uniform_into(u64* out, const ChaChaKey& key, u64 nonce, const RnsBasis& basis,
                           backend::Backend& be, backend::Stream s) {
  be.sample_uniform_async(out, key, nonce, basis.on(be), s);
}

RnsPoly Sampler::ternary(const RnsBasis& basis, Device device, double prob_nonzero) {
  RnsPoly p(basis, Form::coeff, device);
  auto& be = p.backend();
  ternary_into(p.data(), basis, be, backend::Stream{}, prob_nonzero);
  return p;
}

void Sampler::ternary_into(u64* out, const RnsBasis& basis, backend::Backend& be, backend::Stream s,
                           double prob_nonzero) {
  if (!(prob_nonzero > 0.0 && prob_nonzero <= 1.0))
    throw ParameterError("ternary: prob_nonzero must be in (0, 1], got " +
                         std::to_string(prob_nonzero));
  backend::SmallSampler d;
  d.kind = backend::SmallSampler::ternary;
  d.ternary_threshold = static_cast<u64>(std::ldexp(prob_nonzero, 63));
  if (prob_nonzero == 1.0) d.ternary_threshold = ~u64{0};
  be.sample_small_async(out, key(), next_nonce(), d, basis.on(be), s);
}

std::vector<std::int64_t> Sampler::ternary_hamming_values(std::size_t n, std::size_t h) {
  if (h == 0 || h > n)
    throw ParameterError("ternary_hamming: weight " + std::to_string(h) +
                         " must be in [1, N=" + std::to_string(n) + "]");
  // Partial Fisher-Yates: positions 0..h-1 of a random permutation get the nonzero values.
  // Each swap index is drawn by rejection from 64-bit words (no modulo bias).
  WordStream words(key(), next_nonce());
  std::vector<u32> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = static_cast<u32>(i);
  std::vector<std::int64_t> values(n, 0);
  for (std::size_t i = 0; i < h; ++i) {
    const u64 range = n - i;
    const u64 limit = ~u64{0} - (~u64{0} % range);
    u64 w;
    do w = words.next();
    while (w >= limit);
    std::swap(perm[i], perm[i + w % range]);
    values[perm[i]] = (words.next() & 1) ? -1 : 1;
  }
  return values;
}

RnsPoly Sampler::ternary_hamming(const RnsBasis& basis, Device device, std::size_t h) {
  auto values = ternary_hamming_values(basis.n(), h);
  return RnsPoly::from_signed(basis, Form::coeff, device, values.data());
}

std::vector<u64> gaussian_cdt(double sigma, int& bound) {
  if (!(sigma > 0.0 && sigma < 1e3))
    throw ParameterError("gaussian: sigma must be in (0, 1000), got " + std::to_string(sigma));
  bound = static_cast<int>(std::ceil(6.0 * sigma));
  // Folded distribution of |X|: P(0) = rho(0)/S, P(k) = 2 rho(k)/S, rho(k) = exp(-k^2 / 2 sigma^2).
  std::vector<long double> w(bound + 1);
  long double total = 0;
  for (int k = 0; k <= bound; ++k) {
    w[k] = std::exp(-static_cast<long double>(k) * k / (2.0L * sigma * sigma)) * (k ? 2 : 1);
    total += w[k];
  }
  // Entry k: P(|X| <= k) in 63-bit fixed point; magnitude = #entries with u >= entry.
  std::vector<u64> cdt(bound);
  long double acc = 0;
  for (int k = 0; k < bound; ++k) {
    acc += w[k];
    cdt[k] = static_cast<u64>(std::ldexp(acc / total, 63));
  }
  return cdt;
}

namespace {
/// The CDT of sigma on a backend's device, uploaded once (and kept for the process's life): the
/// sampler then launches without a host-to-device copy or a synchronization.
const u64* device_cdt(backend::Backend& be, double sigma, int& bound) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, double>, std::pair<Buffer*, int>> cache;
  std::lock_guard lock(mutex);
  auto& entry = cache[{be.device().str(), sigma}];
  if (!entry.first) {
    const auto cdt = gaussian_cdt(sigma, entry.second);
    auto s = backend::Stream{};
    entry.first = new Buffer(Buffer::from_host(be, cdt.data(), cdt.size() * sizeof(u64), s));
    be.synchronize(s);
  }
  bound = entry.second;
  return entry.first->as<const u64>();
}
}  // namespace

RnsPoly Sampler::wide_gaussian(const RnsBasis& basis, Device device, double sigma) {
  if (!(sigma >= 1.0 && sigma <= std::ldexp(1.0, 100)))
    throw ParameterError("wide_gaussian: sigma must be in [1, 2^100], got " +
                         std::to_string(sigma));
  const std::size_t n = basis.n();
  WordStream stream(key(), next_nonce());
  // (0, 1]: never 0, so the logarithm is finite.
  auto unit = [&]() { return (static_cast<double>(stream.next() >> 11) + 1.0) * 0x1p-53; };
  std::vector<__int128> values(n);
  for (std::size_t k = 0; k < n; k += 2) {
    const double radius = sigma * std::sqrt(-2.0 * std::log(unit()));
    const double angle = 2.0 * M_PI * unit();
    for (std::size_t j = 0; j < 2 && k + j < n; ++j) {
      const double x = radius * (j ? std::sin(angle) : std::cos(angle));
      int exp = 0;
      std::frexp(x, &exp);
      const int spacing_bits = std::max(0, exp - 53);  // the float's spacing is 2^spacing_bits
      const __int128 whole = spacing_bits ? static_cast<__int128>(std::ldexp(x, -spacing_bits))
                                                << spacing_bits
                                          : static_cast<__int128>(std::nearbyint(x));
      const __int128 fill =
          spacing_bits ? static_cast<__int128>(stream.next() & ((u64{1} << spacing_bits) - 1)) : 0;
      values[k + j] = whole + fill;
    }
  }
  std::vector<u64> words(basis.size() * n);
  for (std::size_t l = 0; l < basis.size(); ++l) {
    const __int128 q = basis.prime(l);
    for (std::size_t k = 0; k < n; ++k) {
      __int128 r = values[k] % q;
      words[l * n + k] = static_cast<u64>(r < 0 ? r + q : r);
    }
  }
  return RnsPoly::from_host(basis, Form::coeff, device, words.data());
}

RnsPoly Sampler::gaussian(const RnsBasis& basis, Device device, double sigma) {
  RnsPoly p(basis, Form::coeff, device);
  auto& be = p.backend();
  gaussian_into(p.data(), basis, be, backend::Stream{}, sigma);
  return p;
}

void Sampler::gaussian_into(u64* out, const RnsBasis& basis, backend::Backend& be,
                            backend::Stream s, double sigma) {
  backend::SmallSampler d;
  d.kind = backend::SmallSampler::gaussian;
  d.gaussian_cdt = device_cdt(be, sigma, d.gaussian_bound);
  be.sample_small_async(out, key(), next_nonce(), d, basis.on(be), s);
}

namespace {
/// `draw` into 64-bit scratch, then narrowed into out (basis' words).
template <class Draw>
void narrowed(u32* out, const RnsBasis& basis, backend::Backend& be, backend::Stream s,
              Draw&& draw) {
  const std::size_t words = basis.size() * basis.n();
  backend::Buffer wide(be, words * sizeof(u64), s);
  draw(wide.as<u64>());
  be.narrow_words_async(out, wide.as<const u64>(), words, s);
}
}  // namespace

void Sampler::ternary_into(u32* out, const RnsBasis& basis, backend::Backend& be, backend::Stream s,
                           double prob_nonzero) {
  (void)basis.on32(be);  // refuses primes of 30 bits or more
  narrowed(out, basis, be, s, [&](u64* w) { ternary_into(w, basis, be, s, prob_nonzero); });
}

void Sampler::gaussian_into(u32* out, const RnsBasis& basis, backend::Backend& be,
                            backend::Stream s, double sigma) {
  (void)basis.on32(be);
  narrowed(out, basis, be, s, [&](u64* w) { gaussian_into(w, basis, be, s, sigma); });
}

void Sampler::uniform_into(u32* out, const ChaChaKey& key, u64 nonce, const RnsBasis& basis,
                           backend::Backend& be, backend::Stream s) {
  (void)basis.on32(be);
  narrowed(out, basis, be, s, [&](u64* w) { uniform_into(w, key, nonce, basis, be, s); });
}

}  // namespace ember::ring
