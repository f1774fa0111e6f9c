// CGGI objects to and from host words (the serialization's payloads), with range checks.
#include <cmath>
#include <cstring>
#include <string>

#include "detail.h"
#include "ember/cggi/context.h"

namespace ember::cggi {

using backend::Buffer;
using backend::Stream;
using detail::with_torus;

namespace {
[[noreturn]] void bad(const std::string& m) { throw SerializationError("CGGI data: " + m); }

/// The words as T, refusing any that does not fit.
template <class T>
std::vector<T> narrow(const std::vector<std::uint64_t>& words, const char* what) {
  std::vector<T> out(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (sizeof(T) < 8 && (words[i] >> 32)) bad(std::string(what) + " word out of range");
    out[i] = static_cast<T>(words[i]);
  }
  return out;
}
}  // namespace

LweBatch Context::batch_from_host(const std::vector<std::uint64_t>& words, std::size_t count,
                                  int message_bits, std::uint64_t key_id) const {
  if (message_bits < 0 || message_bits > 4) bad("message bits must be in [0, 4]");
  if (words.size() / (shape_.big_dim() + 1) != count || words.size() % (shape_.big_dim() + 1))
    bad("the ciphertext words do not match their count");
  LweBatch c = empty_batch(count, message_bits, key_id);
  with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const auto host = narrow<T>(words, "ciphertext");
    be_->copy_from_host_async(c.words->as<T>(), host.data(), host.size() * sizeof(T), Stream{});
    be_->synchronize(Stream{});
  });
  return c;
}

ClientKey Context::client_key_from(std::vector<std::uint8_t> lwe, std::vector<std::uint8_t> glwe,
                                   std::uint64_t key_id) const {
  if (lwe.size() != params_.n || glwe.size() != params_.k * params_.N)
    bad("the secret key sizes do not match the parameters");
  for (auto v : lwe)
    if (v > 1) bad("a secret key bit is not 0 or 1");
  for (auto v : glwe)
    if (v > 1) bad("a secret key bit is not 0 or 1");
  if (key_id == 0) bad("key id 0 is reserved for trivial ciphertexts");
  ClientKey ck;
  ck.params_id = params_id_;
  ck.key_id = key_id;
  ck.lwe = std::move(lwe);
  ck.glwe = std::move(glwe);
  return ck;
}

ServerKey Context::server_key_from(const std::vector<std::uint64_t>& bsk,
                                   const std::vector<std::uint64_t>& ksk,
                                   std::uint64_t key_id) const {
  if (bsk.size() != params_.n * shape_.ggsw_ntt_words()) bad("bootstrapping key size mismatch");
  const std::size_t ksk_words = shape_.big_dim() * shape_.ks_levels * (params_.n + 1);
  if (ksk.size() != ksk_words) bad("key-switching key size mismatch");
  // Spectra of limbs below 2^(limb_bits-1) times 2 / N: at most 2^limb_bits in size.
  const double bound = std::ldexp(1.0, shape_.limb_bits + 1);
  for (auto v : bsk) {
    double x;
    std::memcpy(&x, &v, sizeof x);
    if (!(std::abs(x) <= bound)) bad("bootstrapping key value out of range");
  }
  if (key_id == 0) bad("key id 0 is reserved for trivial ciphertexts");
  ServerKey sk;
  sk.params_id = params_id_;
  sk.key_id = key_id;
  sk.bsk = Buffer::from_host(*be_, bsk.data(), bsk.size() * 8, Stream{});
  with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const auto host = narrow<T>(ksk, "key-switching key");
    sk.ksk = Buffer::from_host(*be_, host.data(), host.size() * sizeof(T), Stream{});
  });
  be_->synchronize(Stream{});
  return sk;
}

std::vector<std::uint64_t> Context::bsk_to_host(const ServerKey& sk) const {
  return detail::download<std::uint64_t>(*be_, sk.bsk.as<void>(), sk.bsk.bytes() / 8);
}

std::vector<std::uint64_t> Context::ksk_to_host(const ServerKey& sk) const {
  return with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const auto w = detail::download<T>(*be_, sk.ksk.as<void>(), sk.ksk.bytes() / sizeof(T));
    return std::vector<std::uint64_t>(w.begin(), w.end());
  });
}

}  // namespace ember::cggi
