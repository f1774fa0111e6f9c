// Exact big-integer <-> RNS conversion: the matrix form of CRT and Garner's algorithm.
#include "ember/ring/crt.h"

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ring {

using backend::Buffer;

struct CrtConverter::DeviceTables {
  Buffer pow2_64k, garner_inv;
  backend::CrtView view;
};

namespace {
/// prod q_i as `count` little-endian words (schoolbook: one word times a big integer per prime).
std::vector<u64> product_words(const std::vector<u64>& primes, std::size_t count) {
  std::vector<u64> w(count, 0);
  w[0] = 1;
  for (u64 q : primes) {
    unsigned __int128 carry = 0;
    for (auto& word : w) {
      carry += static_cast<unsigned __int128>(word) * q;
      word = static_cast<u64>(carry);
      carry >>= 64;
    }
  }
  return w;
}

/// a > b for little-endian words of the same length.
bool words_greater(const u64* a, const u64* b, std::size_t count) {
  for (std::size_t k = count; k-- > 0;)
    if (a[k] != b[k]) return a[k] > b[k];
  return false;
}

long double words_to_long_double(const u64* w, std::size_t count) {
  long double v = 0;
  for (std::size_t k = count; k-- > 0;)
    v = v * 18446744073709551616.0L + static_cast<long double>(w[k]);
  return v;
}
}  // namespace

CrtConverter::CrtConverter(RnsBasis basis)
    : basis_(std::move(basis)), q_words_(product_words(basis_.primes(), basis_.size())) {}

CrtConverter::DeviceTables& CrtConverter::tables_on(backend::Backend& be, std::size_t words) const {
  std::lock_guard lock(mutex_);
  auto dev = be.device();
  auto key = std::make_tuple(static_cast<int>(dev.kind), dev.index, words);
  auto it = cache_.find(key);
  if (it != cache_.end()) return *it->second;
  const auto q = basis_.primes();
  const std::size_t L = q.size();
  std::vector<u64> pow2(L * std::max<std::size_t>(words, 1)), ginv(L * L, 0);
  for (std::size_t i = 0; i < L; ++i) {
    const Modulus m = make_modulus(q[i]);
    const u64 two64 = mul_mod(pow_mod(2, 32, m), pow_mod(2, 32, m), m);
    u64 cur = 1 % q[i];
    for (std::size_t k = 0; k < words; ++k) {
      pow2[i * words + k] = cur;
      cur = mul_mod(cur, two64, m);
    }
    for (std::size_t j = 0; j < i; ++j) ginv[i * L + j] = inverse_mod(q[j] % q[i], q[i]);
  }
  auto t = std::make_shared<DeviceTables>();
  auto s = backend::Stream{};
  t->pow2_64k = Buffer::from_host(be, pow2.data(), pow2.size() * sizeof(u64), s);
  t->garner_inv = Buffer::from_host(be, ginv.data(), ginv.size() * sizeof(u64), s);
  be.synchronize(s);
  t->view.words = words;
  t->view.pow2_64k = t->pow2_64k.as<const u64>();
  t->view.garner_inv = t->garner_inv.as<const u64>();
  return *cache_.emplace(key, t).first->second;
}

RnsPoly CrtConverter::to_rns(const u64* words, std::size_t words_per_value, Device device) const {
  if (words_per_value == 0) throw ParameterError("to_rns: each value needs at least one word");
  RnsPoly out(basis_, Form::coeff, device);
  auto& be = out.backend();
  auto s = backend::Stream{};
  const std::size_t total = basis_.n() * words_per_value;
  Buffer in = Buffer::from_host(be, words, total * sizeof(u64), s);
  be.rns_from_words_async(out.data(), in.as<const u64>(), tables_on(be, words_per_value).view,
                          out.view(), s);
  be.synchronize(s);
  return out;
}

std::vector<u64> CrtConverter::from_rns(const RnsPoly& a) const {
  if (a.basis() != basis_) throw MismatchError("from_rns: the polynomial is over another basis");
  if (a.form() != Form::coeff) throw MismatchError("from_rns needs coeff form; call intt() first");
  auto& be = a.backend();
  auto s = a.stream();
  const std::size_t total = basis_.n() * output_words();
  Buffer out(be, total * sizeof(u64), s);
  be.words_from_rns_async(out.as<u64>(), a.data(), tables_on(be, 0).view, a.view(), s);
  std::vector<u64> host(total);
  be.copy_to_host_async(host.data(), out.as<const u64>(), total * sizeof(u64), s);
  be.synchronize(s);
  return host;
}

std::vector<long double> CrtConverter::centered(const RnsPoly& a) const {
  const std::vector<u64> words = from_rns(a);
  const std::size_t w = output_words(), n = basis_.n();
  std::vector<u64> half(w);  // floor(Q / 2)
  for (std::size_t k = 0; k < w; ++k)
    half[k] = (q_words_[k] >> 1) | (k + 1 < w ? q_words_[k + 1] << 63 : 0);
  std::vector<long double> out(n);
  std::vector<u64> magnitude(w);
  for (std::size_t c = 0; c < n; ++c) {
    const u64* v = words.data() + c * w;
    if (!words_greater(v, half.data(), w)) {
      out[c] = words_to_long_double(v, w);
      continue;
    }
    u64 borrow = 0;  // Q - v, exactly
    for (std::size_t k = 0; k < w; ++k) {
      const unsigned __int128 d = static_cast<unsigned __int128>(q_words_[k]) - v[k] - borrow;
      magnitude[k] = static_cast<u64>(d);
      borrow = static_cast<u64>(d >> 64) & 1;
    }
    out[c] = -words_to_long_double(magnitude.data(), w);
  }
  return out;
}

}  // namespace ember::ring
