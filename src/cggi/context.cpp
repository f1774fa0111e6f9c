// CGGI context: transform tables, key generation (secret keys, bootstrapping and key-switching
// keys), encryption and decryption of bits and small integers.
#include "ember/cggi/context.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "detail.h"
#include "ember/backend/cggi_fft.h"
#include "ember/cggi/torus_sampler.h"

namespace ember::cggi {

namespace bk = backend::cggi;
using backend::Buffer;
using backend::Stream;
using detail::with_torus;

namespace {

/// Negacyclic products by binary polynomials on the host (key generation): the key's
/// polynomials once in the Fourier domain (times 2 / N), then a += sum_q u_q s_q for uniform
/// torus polynomials u_q, their words split into 32-bit limbs: each exact sum has at most k N
/// terms below 2^31 (2^44 at every preset), exact in the FFT's doubles (cggi_fft.h).
class BinaryKeyProducts {
 public:
  BinaryKeyProducts(const std::vector<std::uint8_t>& key, std::size_t k, std::size_t n,
                    const bk::Cx* tw, const bk::Cx* itw)
      : k_(k), half_(n / 2), tw_(tw), itw_(itw), key_(k * half_), buf_(half_), sum_(half_) {
    for (std::size_t q = 0; q < k; ++q) {
      const std::uint8_t* s = key.data() + q * n;
      bk::Cx* x = key_.data() + q * half_;
      for (std::size_t j = 0; j < half_; ++j) x[j] = {double(s[j]), double(s[j + half_])};
      bk::fft_forward(x, half_, tw);
      const double scale = 1.0 / static_cast<double>(half_);
      for (std::size_t j = 0; j < half_; ++j) x[j] = {x[j].re * scale, x[j].im * scale};
    }
  }
  /// out += sum_q u[q] s_q (negacyclic, mod 2^W).
  template <class T>
  void add_products(T* out, const T* u) {
    const int limbs = sizeof(T) / 4;
    const std::size_t n = 2 * half_;
    for (int c = 0; c < limbs; ++c) {
      std::fill(sum_.begin(), sum_.end(), bk::Cx{0.0, 0.0});
      for (std::size_t q = 0; q < k_; ++q) {
        for (std::size_t j = 0; j < half_; ++j) {
          std::int64_t lo[2], hi[2];
          bk::split_limbs(u[q * n + j], 32, limbs, lo);
          bk::split_limbs(u[q * n + j + half_], 32, limbs, hi);
          buf_[j] = {static_cast<double>(lo[c]), static_cast<double>(hi[c])};
        }
        bk::fft_forward(buf_.data(), half_, tw_);
        const bk::Cx* kq = key_.data() + q * half_;
        for (std::size_t j = 0; j < half_; ++j) sum_[j] = bk::cx_mac(sum_[j], buf_[j], kq[j]);
      }
      bk::fft_inverse_unscaled(sum_.data(), half_, itw_);
      for (std::size_t j = 0; j < half_; ++j) {
        out[j] = static_cast<T>(out[j] + bk::limb_to_torus<T>(sum_[j].re, 32 * c));
        out[j + half_] = static_cast<T>(out[j + half_] + bk::limb_to_torus<T>(sum_[j].im, 32 * c));
      }
    }
  }

 private:
  std::size_t k_, half_;
  const bk::Cx *tw_, *itw_;
  std::vector<bk::Cx> key_, buf_, sum_;
};

/// b = <a, s> + e + m for a uniform mask: one LWE encryption of dimension `dim` into ct.
template <class T>
void lwe_encrypt(T* ct, const std::uint8_t* key, std::size_t dim, T m, const Noise& e,
                 int torus_bits, TorusDraw& d) {
  T b = static_cast<T>(static_cast<u64>(d.noise(e, torus_bits)) + m);
  for (std::size_t i = 0; i < dim; ++i) {
    ct[i] = static_cast<T>(d.word());
    if (key[i]) b = static_cast<T>(b + ct[i]);
  }
  ct[dim] = b;
}

}  // namespace

std::vector<std::uint64_t> LweBatch::to_host() const {
  return with_torus(torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const auto w = detail::download<T>(*words->backend(), words->as<T>(), count * (dim + 1));
    return std::vector<std::uint64_t>(w.begin(), w.end());
  });
}

Context::Context(const Params& params, backend::Device device) : params_(params), device_(device) {
  params_.validate();
  shape_ = params_.shape();
  params_id_ = params_.fingerprint();
  be_ = &backend::backend_for(device);
  const std::size_t N = params_.N;
  host_tw_.resize(N / 2);
  host_itw_.resize(N / 2);
  bk::fourier_tables(N / 2, host_tw_.data(), host_itw_.data());
  forward_table_ = Buffer::from_host(*be_, host_tw_.data(), N * 8, Stream{});
  inverse_table_ = Buffer::from_host(*be_, host_itw_.data(), N * 8, Stream{});
  sampler_ = std::make_unique<ring::Sampler>();
}

ClientKey Context::keygen() {
  ClientKey ck;
  ck.params_id = params_id_;
  TorusDraw d(*sampler_);
  do ck.key_id = d.word();
  while (ck.key_id == 0);
  ck.lwe = binary_key(*sampler_, params_.n);
  ck.glwe = binary_key(*sampler_, params_.k * params_.N);
  return ck;
}

ServerKey Context::server_key(const ClientKey& ck,
                              const std::function<void(std::size_t, std::size_t)>& progress) {
  if (ck.params_id != params_id_)
    throw MismatchError("server_key: the client key belongs to other parameters");
  ServerKey sk;
  sk.params_id = params_id_;
  sk.key_id = ck.key_id;
  const std::size_t n = params_.n, k = params_.k, N = params_.N, L = shape_.bk_levels;
  const std::size_t rows = shape_.rows(), ggsw_words = rows * (k + 1) * N;
  const int W = params_.torus_bits;
  sk.bsk = Buffer(*be_, n * shape_.ggsw_ntt_words() * 8, Stream{});
  with_torus(W, [&](auto zero) {
    using T = decltype(zero);
    BinaryKeyProducts products(ck.glwe, k, N, host_tw_.data(), host_itw_.data());
    // GGSWs in chunks: made on the host, transformed by the backend.
    const std::size_t chunk = 16;
    std::vector<T> host(chunk * ggsw_words);
    Buffer staging(*be_, chunk * ggsw_words * sizeof(T), Stream{});
    for (std::size_t i0 = 0; i0 < n; i0 += chunk) {
      const std::size_t cnt = std::min(chunk, n - i0);
      for (std::size_t g = 0; g < cnt; ++g) {
        TorusDraw d(*sampler_);
        const T m = static_cast<T>(ck.lwe[i0 + g]);
        for (std::size_t r = 0; r < rows; ++r) {
          T* row = host.data() + (g * rows + r) * (k + 1) * N;
          for (std::size_t j = 0; j < k * N; ++j) row[j] = static_cast<T>(d.word());
          T* body = row + k * N;
          for (std::size_t j = 0; j < N; ++j)
            body[j] = static_cast<T>(d.noise(params_.glwe_noise, W));
          products.add_products(body, row);
          // + m 2^-(level+1) B on polynomial r / L's constant coefficient.
          const int shift = W - static_cast<int>((r % L) + 1) * shape_.bk_base_log;
          T* target = row + (r / L) * N;
          target[0] = static_cast<T>(target[0] + (m << shift));
        }
      }
      be_->copy_from_host_async(staging.as<T>(), host.data(), cnt * ggsw_words * sizeof(T),
                                Stream{});
      be_->cggi().bootstrap_key_transform_async(sk.bsk.as<u64>() + i0 * shape_.ggsw_ntt_words(),
                                                staging.as<T>(), cnt, shape_,
                                                forward_table_.as<void>(), Stream{});
      be_->synchronize(Stream{});
      if (progress) progress(i0 + cnt, n + 1);
    }
    // The key-switching key: LWE_small(s'_i 2^-(j+1) B) for every big-key bit i and level j.
    const std::size_t big = k * N, levels = shape_.ks_levels;
    std::vector<T> ksk(big * levels * (n + 1));
    TorusDraw d(*sampler_);
    for (std::size_t i = 0; i < big; ++i)
      for (std::size_t j = 0; j < levels; ++j) {
        const int shift = W - static_cast<int>(j + 1) * shape_.ks_base_log;
        const T m = static_cast<T>(static_cast<T>(ck.glwe[i]) << shift);
        lwe_encrypt(ksk.data() + (i * levels + j) * (n + 1), ck.lwe.data(), n, m, params_.lwe_noise,
                    W, d);
      }
    sk.ksk = Buffer::from_host(*be_, ksk.data(), ksk.size() * sizeof(T), Stream{});
    be_->synchronize(Stream{});
  });
  if (progress) progress(n + 1, n + 1);
  return sk;
}

LweBatch Context::empty_batch(std::size_t count, int message_bits, std::uint64_t key_id,
                              Stream stream) const {
  LweBatch c;
  c.params_id = params_id_;
  c.key_id = key_id;
  c.torus_bits = params_.torus_bits;
  c.message_bits = message_bits;
  c.dim = shape_.big_dim();
  c.count = count;
  c.stream = stream;
  c.words = std::make_shared<Buffer>(*be_, count * (c.dim + 1) * shape_.word_bytes(), stream);
  return c;
}

namespace {
void check_key(const ClientKey& ck, std::uint64_t params_id, const char* what) {
  if (ck.params_id != params_id)
    throw MismatchError(std::string(what) + ": the client key belongs to other parameters");
}
}  // namespace

LweBatch Context::encrypt_bits(const std::vector<std::uint8_t>& bits, const ClientKey& ck) {
  std::vector<std::uint8_t> ones(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) ones[i] = bits[i] != 0;
  return encrypt_messages(ones.data(), ones.size(), 0, false, ck);
}

LweBatch Context::encrypt_bits_in_place(const std::uint8_t* bits, std::size_t count,
                                        const ClientKey& ck) {
  return encrypt_messages(bits, count, 0, true, ck);
}

void Context::check_int_bits(int bits) const {
  if (bits < 1 || bits > 4) throw ParameterError("encrypt_int: bits must be in [1, 4]");
  if ((shape_.N >> bits) < 2)
    throw ParameterError("encrypt_int: N = " + std::to_string(shape_.N) + " is too small for " +
                         std::to_string(bits) + "-bit lookups");
}

LweBatch Context::encrypt_ints(const std::vector<std::uint64_t>& values, int bits,
                               const ClientKey& ck) {
  check_key(ck, params_id_, "encrypt_int");
  check_int_bits(bits);
  std::vector<std::uint8_t> small(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] >> bits)
      throw ParameterError("encrypt_int: value " + std::to_string(values[i]) + " does not fit " +
                           std::to_string(bits) + " bits");
    small[i] = static_cast<std::uint8_t>(values[i]);
  }
  return encrypt_messages(small.data(), small.size(), bits, false, ck);
}

LweBatch Context::encrypt_ints_in_place(const std::uint8_t* values, std::size_t count, int bits,
                                        const ClientKey& ck) {
  check_int_bits(bits);
  return encrypt_messages(values, count, bits, true, ck);
}

LweBatch Context::encrypt_messages(const std::uint8_t* values, std::size_t count, int message_bits,
                                   bool in_backend, const ClientKey& ck) {
  check_key(ck, params_id_, message_bits ? "encrypt_int" : "encrypt");
  LweBatch c = empty_batch(count, message_bits, ck.key_id);
  with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const int W = params_.torus_bits;
    // Booleans: 1 -> mu, 0 -> -mu; integers: value * delta.
    const T scale =
        static_cast<T>(message_bits ? detail::delta(W, message_bits) : detail::mu(W) << 1);
    const T offset = static_cast<T>(message_bits ? T{0} : T{0} - static_cast<T>(detail::mu(W)));
    const std::size_t w = c.dim + 1;
    std::vector<T> host(count * w);
    TorusDraw d(*sampler_);
    // The host path puts each message in the body; values in backend memory are added there, to
    // the same encryptions of zero (the draws do not depend on the messages).
    for (std::size_t i = 0; i < count; ++i)
      lwe_encrypt(host.data() + i * w, ck.glwe.data(), c.dim,
                  in_backend ? T{0} : backend::cggi::plus_message(T{0}, values[i], scale, offset),
                  params_.glwe_noise, params_.torus_bits, d);
    be_->copy_from_host_async(c.words->as<T>(), host.data(), host.size() * sizeof(T), Stream{});
    if (in_backend) {
      const std::uint32_t clear = 0;
      Buffer bad = Buffer::from_host(*be_, &clear, sizeof clear, Stream{});
      const auto limit = static_cast<std::uint8_t>(1u << (message_bits ? message_bits : 1));
      be_->cggi().add_messages_async(c.words->as<T>(), values, scale, offset, limit,
                                     bad.as<std::uint32_t>(), c.dim, count, shape_, Stream{});
      std::uint32_t flag = 0;
      be_->copy_to_host_async(&flag, bad.as<const void>(), sizeof flag, Stream{});
      be_->synchronize(Stream{});
      if (flag)
        throw ParameterError(message_bits ? "encrypt_int: values must be in [0, " +
                                                std::to_string(1u << message_bits) + ")"
                                          : std::string("encrypt: bits must be 0 or 1"));
    }
    be_->synchronize(Stream{});
  });
  return c;
}

namespace {
/// Each ciphertext's phase as a T word, after the context and key checks.
template <class T>
std::vector<T> phases(const LweBatch& c, const ClientKey& ck) {
  if (c.key_id != 0 && c.key_id != ck.key_id)
    throw MismatchError("decrypt: the ciphertexts were encrypted under another key");
  const auto w = detail::download<T>(*c.words->backend(), c.words->as<T>(), c.count * (c.dim + 1));
  std::vector<T> out(c.count);
  for (std::size_t i = 0; i < c.count; ++i)
    out[i] = backend::cggi::lwe_phase(w.data() + i * (c.dim + 1), ck.glwe.data(), c.dim);
  return out;
}
}  // namespace

std::vector<std::uint8_t> Context::decrypt_bits(const LweBatch& c, const ClientKey& ck) const {
  check(c, "decrypt");
  check_key(ck, params_id_, "decrypt");
  if (c.message_bits != 0) throw MismatchError("decrypt: these are integers: use decrypt_int");
  return with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    std::vector<std::uint8_t> out;
    for (T p : phases<T>(c, ck)) out.push_back(backend::cggi::message_of_phase(p, 0));
    return out;
  });
}

void Context::decrypt_in_place(const LweBatch& c, const ClientKey& ck, std::uint8_t* out) const {
  check(c, "decrypt");
  check_key(ck, params_id_, "decrypt");
  if (c.key_id != 0 && c.key_id != ck.key_id)
    throw MismatchError("decrypt: the ciphertexts were encrypted under another key");
  const Buffer key = Buffer::from_host(*be_, ck.glwe.data(), c.dim, c.stream);
  be_->cggi().decode_messages_async(out, c.words->as<void>(), key.as<std::uint8_t>(), c.dim,
                                    c.count, c.message_bits, shape_, c.stream);
  be_->synchronize(c.stream);
}

std::vector<std::uint64_t> Context::decrypt_ints(const LweBatch& c, const ClientKey& ck) const {
  check(c, "decrypt_int");
  check_key(ck, params_id_, "decrypt_int");
  if (c.message_bits == 0) throw MismatchError("decrypt_int: these are bits: use decrypt");
  return with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    std::vector<std::uint64_t> out;
    for (T p : phases<T>(c, ck)) out.push_back(backend::cggi::message_of_phase(p, c.message_bits));
    return out;
  });
}

std::vector<double> Context::phase_errors(const LweBatch& c, const ClientKey& ck) const {
  check(c, "phase_errors");
  check_key(ck, params_id_, "phase_errors");
  return with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const int W = params_.torus_bits;
    // Encodings: +-1/8 for bits (offset by 1/8 from the multiples of 1/4), multiples of delta.
    const T step =
        static_cast<T>(c.message_bits ? detail::delta(W, c.message_bits) : detail::mu(W) << 1);
    const T offset = static_cast<T>(c.message_bits ? 0 : detail::mu(W));
    std::vector<double> out;
    for (T p : phases<T>(c, ck)) {
      const T x = static_cast<T>(p - offset);
      const T r = static_cast<T>(x % step);
      const double v =
          r >= step / 2 ? -static_cast<double>(static_cast<T>(step - r)) : static_cast<double>(r);
      out.push_back(std::ldexp(v, -W));
    }
    return out;
  });
}

}  // namespace ember::cggi
