// rlwe::Context: bases per level, keys, encryption, decryption, hybrid key switching, rescaling.
#include "ember/rlwe/context.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"
#include "ember/ring/crt.h"

namespace ember::rlwe {

using backend::Buffer;
using backend::Stream;
using ring::Form;

u64 fingerprint(const SchemeOptions& scheme, std::size_t n, const std::vector<u64>& q,
                const std::vector<u64>& p, std::size_t dnum) {
  u64 h = 1469598103934665603ull;
  auto mix = [&](u64 v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(scheme.tag);
  mix(n);
  mix(q.size());
  for (u64 x : q) mix(x);
  mix(p.size());
  for (u64 x : p) mix(x);
  mix(dnum);
  if (scheme.plain_modulus) {  // BFV/BGV only, so CKKS fingerprints are unchanged
    mix(scheme.plain_modulus);
    mix(scheme.errors_times_t);
    mix(scheme.aux_primes.size());
    for (u64 x : scheme.aux_primes) mix(x);
  }
  if (!scheme.level_primes.empty()) {  // grouped levels only, so other fingerprints are unchanged
    mix(scheme.level_primes.size());
    for (std::size_t g : scheme.level_primes) mix(g);
  }
  return h;
}

namespace {
std::vector<u32> iota_ids(u32 first, u32 count) {
  std::vector<u32> v(count);
  for (u32 i = 0; i < count; ++i) v[i] = first + i;
  return v;
}
u64 random_id() {
  const ChaChaKey k = chacha_key_from_os();
  return (static_cast<u64>(k.words[0]) << 32) | k.words[1];
}
}  // namespace

template <class W>
ContextT<W>::ContextT(std::size_t n, const std::vector<u64>& q_primes,
                      const std::vector<u64>& p_primes, std::size_t dnum, Device device,
                      const SchemeOptions& scheme,
                      std::shared_ptr<const ring::RingContext> shared_ring)
    : n_(n),
      q_count_(q_primes.size()),
      p_count_(p_primes.size()),
      dnum_(dnum),
      device_(device),
      scheme_(scheme) {
  if (q_primes.empty()) throw ParameterError("the ciphertext modulus Q needs at least one prime");
  if (p_primes.empty())
    throw ParameterError("hybrid key switching needs at least one special prime (P)");
  if (dnum < 1 || dnum > q_count_)
    throw ParameterError("dnum=" + std::to_string(dnum) + " must be in [1, " +
                         std::to_string(q_count_) + "] (the number of primes of Q)");
  alpha_ = (q_count_ + dnum - 1) / dnum;
  dnum_ = (q_count_ + alpha_ - 1) / alpha_;  // digits actually needed for this alpha
  // Levels: the primes each adds (one each by default); rows_[l] primes at level l.
  std::size_t total = 0;
  for (std::size_t g : scheme_.level_primes) {
    if (g < 1) throw ParameterError("level_primes: every level adds at least one prime of Q");
    rows_.push_back(total += g);
  }
  if (scheme_.level_primes.empty())
    for (std::size_t l = 1; l <= q_count_; ++l) rows_.push_back(l);
  if (total && total != q_count_)
    throw ParameterError("level_primes adds up to " + std::to_string(total) + " primes; Q has " +
                         std::to_string(q_count_));
  if (scheme_.errors_times_t && scheme_.plain_modulus < 2)
    throw ParameterError("errors_times_t needs a plaintext modulus t >= 2");
  // BFV and BGV: the message lives modulo t inside every level down to Q_0 = q_0, so t must be
  // below every prime of Q (BGV with q_0 < t decrypts garbage with no budget left).
  if (scheme_.plain_modulus)
    for (std::size_t i = 0; i < q_primes.size(); ++i)
      if (scheme_.plain_modulus < 2 || scheme_.plain_modulus >= q_primes[i])
        throw ParameterError("plain modulus t=" + std::to_string(scheme_.plain_modulus) +
                             " must be at least 2 and below every prime of Q (q_" +
                             std::to_string(i) + " = " + std::to_string(q_primes[i]) +
                             "); use larger primes or a smaller t");
  std::vector<u64> all = q_primes;
  all.insert(all.end(), p_primes.begin(), p_primes.end());
  all.insert(all.end(), scheme_.aux_primes.begin(), scheme_.aux_primes.end());
  if (shared_ring) {
    bool same = shared_ring->n() == n && shared_ring->prime_count() == all.size();
    for (std::size_t i = 0; same && i < all.size(); ++i) same = shared_ring->prime(i) == all[i];
    if (!same)
      throw ParameterError(
          "the shared ring has another degree or other primes than these parameters");
    ring_ = std::move(shared_ring);
  } else {
    ring_ = ring::RingContext::create(n, all);
  }
  if constexpr (sizeof(W) == 4)
    for (u64 prime : all)
      if (prime >> kMaxModulusBitsOf<u32>)
        throw ParameterError("32-bit words need every prime below 2^30; " + std::to_string(prime) +
                             " is not (use the 64-bit context)");
  // 32-bit parameters get their own fingerprint (the 64-bit ones are unchanged): their objects
  // hold other words and never mix with those of 64-bit words over the same primes.
  SchemeOptions tagged = scheme_;
  if constexpr (sizeof(W) == 4) tagged.tag ^= u64{32} << 56;
  params_id_ = fingerprint(tagged, n, q_primes, p_primes, dnum_);
  const u32 qc = static_cast<u32>(q_count_), pc = static_cast<u32>(p_count_);
  full_ = RnsBasis(ring_, iota_ids(0, qc + pc));
  p_ = RnsBasis(ring_, iota_ids(qc, pc));
  if (!scheme_.aux_primes.empty())
    aux_ = RnsBasis(ring_, iota_ids(qc + pc, static_cast<u32>(scheme_.aux_primes.size())));
  const u64 divide_t = error_factor();
  for (std::size_t level = 0; level < rows_.size(); ++level) {
    const u32 l = static_cast<u32>(rows_[level]);  // primes at this level
    const u32 below = level ? static_cast<u32>(rows_[level - 1]) : 0;
    Level lv;
    lv.q = RnsBasis(ring_, iota_ids(0, l));
    lv.qp = lv.q.concat(p_);
    std::vector<u32> ext_ids;
    const u32 digits = static_cast<u32>(digits_at(level));
    for (u32 j = 0; j < digits; ++j) {
      const u32 start = j * static_cast<u32>(alpha_);
      const u32 end = std::min<u32>(start + static_cast<u32>(alpha_), l);
      std::vector<u32> c_ids;
      for (u32 id : lv.qp.ids())
        if (id < start || id >= end) c_ids.push_back(id);
      lv.digit_conv.push_back(std::make_unique<ring::BaseConverter>(
          RnsBasis(ring_, iota_ids(start, end - start)), RnsBasis(ring_, c_ids)));
      ext_ids.insert(ext_ids.end(), c_ids.begin(), c_ids.end());
    }
    // The ext basis repeats primes across digits; it is only a row -> prime map for batched NTTs.
    lv.ext = RnsBasis::unchecked(ring_, ext_ids);
    const auto q_primes = lv.q.primes();
    lv.largest_q = *std::max_element(q_primes.begin(), q_primes.end());
    if (alpha_ == 1) {  // every digit lifted to all of Q_l u P: a ModUp of coefficient-form d
      std::vector<u32> all_ids;
      for (u32 j = 0; j < digits; ++j)
        all_ids.insert(all_ids.end(), lv.qp.ids().begin(), lv.qp.ids().end());
      lv.ext_all = RnsBasis::unchecked(ring_, all_ids);
    }
    lv.mod_down = std::make_unique<ring::DivideRound>(lv.q, p_, divide_t);
    if (level > 0) {  // the division by this level's own primes (and by them and P)
      std::vector<u32> t_ids = iota_ids(below, l - below);
      lv.rescale = std::make_unique<ring::DivideRound>(RnsBasis(ring_, iota_ids(0, below)),
                                                       RnsBasis(ring_, t_ids), divide_t);
      t_ids.insert(t_ids.end(), p_.ids().begin(), p_.ids().end());
      lv.mod_down_rescale = std::make_unique<ring::DivideRound>(RnsBasis(ring_, iota_ids(0, below)),
                                                                RnsBasis(ring_, t_ids), divide_t);
    }
    levels_.push_back(std::move(lv));
  }
  for (u64 q : q_primes) p_mod_q_.push_back(product_mod(p_primes, q));
  // Gadget: digit j of s' is scaled by P on its own primes and vanishes elsewhere.
  const std::size_t rows = q_count_ + p_count_;
  gadget_.assign(dnum_ * rows, 0);
  for (std::size_t j = 0; j < dnum_; ++j)
    for (std::size_t i = j * alpha_; i < std::min((j + 1) * alpha_, q_count_); ++i)
      gadget_[j * rows + i] = product_mod(p_primes, q_primes[i]);
}

template <class W>
void ContextT<W>::check_params(u64 params_id, const char* what) const {
  if (params_id != params_id_)
    throw MismatchError(std::string(what) +
                        " belongs to other parameters (its fingerprint differs from this "
                        "context's); use objects made by this context");
}

template <class W>
void ContextT<W>::check_device(Device d, const char* what) const {
  if (!(d == device_))
    throw MismatchError(std::string(what) + " is on " + d.str() + " and this context on " +
                        device_.str() + ": move it with to('" + device_.str() + "') first");
}

namespace {
void expect(bool ok, const std::string& what) {
  if (!ok) throw SerializationError("malformed " + what + ": it does not fit these parameters");
}
}  // namespace

template <class W>
typename ContextT<W>::Ciphertext ContextT<W>::make_ciphertext(std::vector<RnsPoly> polys,
                                                              std::size_t level, double scale,
                                                              u64 factor, u64 key_id) const {
  expect(level < rows_.size() && polys.size() >= 2 && polys.size() <= 3, "ciphertext");
  for (const auto& p : polys)
    expect(p.basis() == q_basis(level) && p.form() == Form::eval && p.device() == device_,
           "ciphertext polynomial");
  expect(scale > 0 && std::isfinite(scale), "ciphertext scale");
  expect(scheme_.plain_modulus ? factor > 0 && factor < scheme_.plain_modulus : factor == 1,
         "ciphertext plaintext factor");
  Ciphertext c;
  c.polys = std::move(polys);
  c.level = level;
  c.scale = scale;
  c.factor = factor;
  c.key_id = key_id;
  c.params_id = params_id_;
  return c;
}

template <class W>
typename ContextT<W>::SecretKey ContextT<W>::make_secret_key(RnsPoly s, u64 key_id) const {
  expect(s.basis() == full_ && s.form() == Form::eval && s.device() == device_, "secret key");
  return SecretKey{std::move(s), key_id, params_id_};
}

template <class W>
typename ContextT<W>::PublicKey ContextT<W>::make_public_key(RnsPoly b, const ChaChaKey& seed,
                                                             u64 nonce, u64 key_id) const {
  const RnsBasis& q = q_basis(max_level());
  expect(b.basis() == q && b.form() == Form::eval && b.device() == device_, "public key");
  auto& be = backend();
  PublicKey pk{std::move(b), RnsPoly(q, Form::eval, device_)};
  ring::Sampler::uniform_into(pk.a.data(), seed, nonce, q, be, Stream{});
  pk.seed = seed;
  pk.seed_nonce = nonce;
  pk.key_id = key_id;
  pk.params_id = params_id_;
  be.synchronize(Stream{});  // keys are complete when made (see SwitchKey)
  return pk;
}

template <class W>
typename ContextT<W>::SwitchKey ContextT<W>::make_switch_key(const std::vector<RnsPoly>& b,
                                                             const ChaChaKey& seed, u64 nonce,
                                                             u64 galois, u64 key_id) const {
  expect(b.size() == dnum_, "evaluation key");
  for (const auto& bj : b)
    expect(bj.basis() == full_ && bj.form() == Form::eval && bj.device() == device_,
           "evaluation key part");
  SwitchKey key = switch_key_with_uniform_parts(seed, nonce, galois, key_id);
  auto& be = backend();
  const std::size_t poly_words = key.rows * n_;
  for (std::size_t j = 0; j < dnum_; ++j)
    be.copy_async(key.data.template as<W>() + 2 * j * poly_words, b[j].data(),
                  poly_words * sizeof(W), Stream{});
  be.synchronize(Stream{});
  return key;
}

template <class W>
typename ContextT<W>::SwitchKey ContextT<W>::switch_key_with_uniform_parts(const ChaChaKey& seed,
                                                                           u64 nonce, u64 galois,
                                                                           u64 key_id) const {
  auto& be = backend();
  const Stream st = Stream{};
  const std::size_t rows = q_count_ + p_count_;
  const std::size_t poly_words = rows * n_;
  SwitchKey key;
  key.dnum = dnum_;
  key.rows = rows;
  key.data = Buffer(be, dnum_ * 2 * poly_words * sizeof(W), st);
  key.seed = seed;
  key.seed_nonce = nonce;
  key.galois = galois;
  key.key_id = key_id;
  key.params_id = params_id_;
  for (std::size_t j = 0; j < dnum_; ++j)
    ring::Sampler::uniform_into(key.data.template as<W>() + (2 * j + 1) * poly_words, seed,
                                nonce + j, full_, be, st);
  return key;
}

namespace {
/// Polynomial `index` of a switching key's [dnum][2][rows][N] layout (b_j: 2j, a_j: 2j + 1).
template <class W>
ring::RnsPolyT<W> copy_key_poly(const SwitchKeyT<W>& key, std::size_t index, const RnsBasis& full,
                                std::size_t n, backend::Backend& be, Device device) {
  ring::RnsPolyT<W> p(full, Form::eval, device);
  be.copy_async(p.data(), key.words() + index * key.rows * n, key.rows * n * sizeof(W), Stream{});
  be.synchronize(Stream{});
  return p;
}
}  // namespace

template <class W>
typename ContextT<W>::RnsPoly ContextT<W>::switch_key_part(const SwitchKey& key,
                                                           std::size_t j) const {
  if (j >= key.dnum) throw ParameterError("switch_key_part: digit out of range");
  return copy_key_poly(key, 2 * j, full_, n_, backend(), device_);
}

template <class W>
typename ContextT<W>::RnsPoly ContextT<W>::switch_key_uniform_part(const SwitchKey& key,
                                                                   std::size_t j) const {
  if (j >= key.dnum) throw ParameterError("switch_key_uniform_part: digit out of range");
  return copy_key_poly(key, 2 * j + 1, full_, n_, backend(), device_);
}

template <class W>
Buffer ContextT<W>::errors(const RnsBasis& basis, std::size_t count, ring::Sampler& sampler,
                           Stream s, Form form) const {
  auto& be = backend();
  const std::size_t words = basis.size() * n_;
  Buffer out(be, count * words * sizeof(W), s);
  for (std::size_t k = 0; k < count; ++k)
    sampler.gaussian_into(out.template as<W>() + k * words, basis, be, s);
  scale_errors(out.template as<W>(), basis, count, s, form);
  return out;
}

template <class W>
void ContextT<W>::scale_errors(W* e, const RnsBasis& basis, std::size_t count, Stream s,
                               Form form) const {
  auto& be = backend();
  const auto v = view(basis);
  if (form == Form::eval) be.ntt_forward_async(e, v, count, s);
  if (error_factor() == 1) return;
  const std::vector<u64> t(basis.size(), error_factor());
  for (std::size_t k = 0; k < count; ++k)
    be.multiply_scalar_async(e + k * basis.size() * n_, e + k * basis.size() * n_, t, v, s);
}

template <class W>
typename ContextT<W>::SecretKey ContextT<W>::keygen(ring::Sampler& sampler,
                                                    std::size_t hamming_weight) const {
  ring::RnsPoly drawn = hamming_weight ? sampler.ternary_hamming(full_, device_, hamming_weight)
                                       : sampler.ternary(full_, device_, 2.0 / 3.0);
  // The 64-bit draw as it is; on 32-bit words the same draw, narrowed.
  RnsPoly s = [&] {
    if constexpr (sizeof(W) == 8)
      return std::move(drawn);
    else
      return drawn.template to_words<W>();
  }();
  s.ntt_inplace();
  backend().synchronize(Stream{});  // keys are complete when made (see SwitchKey)
  return SecretKey{std::move(s), random_id(), params_id_};
}

template <class W>
typename ContextT<W>::PublicKey ContextT<W>::public_key(const SecretKey& sk,
                                                        ring::Sampler& sampler) const {
  check_params(sk.params_id, "the secret key");
  check_device(sk.s.device(), "the secret key");
  auto& be = backend();
  const Stream st = Stream{};
  const RnsBasis& q = q_basis(max_level());
  PublicKey pk{RnsPoly(q, Form::eval, device_), RnsPoly(q, Form::eval, device_)};
  // The uniform half comes from a derived key: it is published as the seed, the sampler's own
  // key (which also drew the secret) must never be.
  pk.seed = sampler.derive_key();
  pk.seed_nonce = 0;
  ring::Sampler::uniform_into(pk.a.data(), pk.seed, pk.seed_nonce, q, be, st);
  const Buffer e = errors(q, 1, sampler, st);
  const auto v = view(q);
  be.multiply_async(pk.b.data(), pk.a.data(), sk.s.data(), v, st);  // s: Q rows come first
  be.sub_async(pk.b.data(), e.template as<W>(), pk.b.data(), v, st);
  pk.key_id = sk.key_id;
  pk.params_id = params_id_;
  be.synchronize(st);  // keys are complete when made (see SwitchKey)
  return pk;
}

template <class W>
typename ContextT<W>::SwitchKey ContextT<W>::switch_key(const RnsPoly& s_from, const SecretKey& sk,
                                                        ring::Sampler& sampler, u64 galois) const {
  check_params(sk.params_id, "the secret key");
  check_device(sk.s.device(), "the secret key");
  // Seeded uniform halves from a derived key (published with the key), never the sampler's key.
  SwitchKey key = switch_key_with_uniform_parts(sampler.derive_key(), 0, galois, sk.key_id);
  auto& be = backend();
  const Stream st = Stream{};
  const std::size_t rows = key.rows;
  const std::size_t poly_words = rows * n_;
  const auto v = view(full_);
  RnsPoly scaled(full_, Form::eval, device_);
  const Buffer e = errors(full_, dnum_, sampler, st);  // all digits' errors, one batched NTT
  for (std::size_t j = 0; j < dnum_; ++j) {
    W* b = key.data.template as<W>() + (2 * j) * poly_words;
    const W* a = b + poly_words;
    const std::vector<u64> g(gadget_.begin() + j * rows, gadget_.begin() + (j + 1) * rows);
    be.multiply_scalar_async(scaled.data(), s_from.data(), g, v, st);
    be.multiply_async(b, a, sk.s.data(), v, st);
    be.sub_async(b, e.template as<W>() + j * poly_words, b, v, st);
    be.add_async(b, b, scaled.data(), v, st);
  }
  be.synchronize(st);  // keys are complete when made (see SwitchKey)
  return key;
}

template <class W>
typename ContextT<W>::SwitchKey ContextT<W>::switch_key_level0(const RnsPoly& s_from,
                                                               const SecretKey& sk,
                                                               ring::Sampler& sampler) const {
  if (rows_[0] > alpha_)
    throw ParameterError("a level-0 switching key needs level 0's " + std::to_string(rows_[0]) +
                         " primes in the first digit of " + std::to_string(alpha_) +
                         " primes; use fewer digits (dnum)");
  SwitchKey key = switch_key(s_from, sk, sampler, 0);
  auto& be = backend();
  const Stream st = Stream{};
  const std::size_t rows = key.rows;
  const RnsPoly zeros = RnsPoly::zeros(full_, Form::eval, device_);
  for (std::size_t j = 0; j < dnum_; ++j) {
    W* b = key.data.template as<W>() + (2 * j) * rows * n_;
    // Digit 0 keeps level 0's primes (rows below rows_[0]) and P (rows q_count_..); every other
    // b row is cleared.
    const std::size_t first = j == 0 ? rows_[0] : 0, last = j == 0 ? q_count_ : rows;
    if (last > first)
      be.copy_async(b + first * n_, zeros.data(), (last - first) * n_ * sizeof(W), st);
  }
  be.synchronize(st);  // keys are complete when made (see SwitchKey)
  return key;
}

template <class W>
typename ContextT<W>::SwitchKey ContextT<W>::relin_key(const SecretKey& sk,
                                                       ring::Sampler& sampler) const {
  const RnsPoly s2 = sk.s.multiply(sk.s);
  return switch_key(s2, sk, sampler, 0);
}

template <class W>
typename ContextT<W>::SwitchKey ContextT<W>::galois_key(const SecretKey& sk, u64 galois,
                                                        ring::Sampler& sampler) const {
  const RnsPoly sg = sk.s.automorphism(galois);
  return switch_key(sg, sk, sampler, galois);
}

template <class W>
std::size_t ContextT<W>::plaintext_level(const RnsPoly& m) const {
  const auto at = std::find(rows_.begin(), rows_.end(), m.limbs());
  const std::size_t level = static_cast<std::size_t>(at - rows_.begin());
  if (at == rows_.end() || m.basis() != q_basis(level) || m.device() != device_)
    throw MismatchError("encrypt: the plaintext must be over a level of this context");
  return level;
}

template <class W>
typename ContextT<W>::Ciphertext ContextT<W>::encrypt(const RnsPoly& m, const PublicKey& pk,
                                                      ring::Sampler& sampler) const {
  check_params(pk.params_id, "the public key");
  check_device(pk.b.device(), "the public key");
  const std::size_t level = plaintext_level(m);
  auto& be = backend();
  const Stream st = Stream{};
  const RnsBasis& q = q_basis(level);
  const auto v = view(q);
  // u, e0, e1 drawn into one buffer.
  const std::size_t words = q.size() * n_;
  Buffer noise(be, 3 * words * sizeof(W), st);
  W* u = noise.template as<W>();
  W* e = u + words;
  sampler.ternary_into(u, q, be, st, 2.0 / 3.0);
  sampler.gaussian_into(e, q, be, st);
  sampler.gaussian_into(e + words, q, be, st);
  // Eval form: u, e0 and e1 in one NTT launch. A coefficient-form plaintext gives a
  // coefficient-form ciphertext: the errors and m are added as they are drawn, after one INTT of
  // u pk (no transform of the errors or of m).
  const Form form = m.form();
  be.ntt_forward_async(u, v, form == Form::eval ? 3 : 1, st);
  scale_errors(e, q, 2, st, Form::coeff);  // the error factor only (transformed above)
  Ciphertext ct;
  ct.polys = RnsPoly::batch(q, form, device_, 2);
  be.multiply_async(ct.polys[0].data(), pk.b.data(), u, v, st);
  be.multiply_async(ct.polys[1].data(), pk.a.data(), u, v, st);
  if (form == Form::coeff) be.ntt_inverse_async(ct.polys[0].data(), v, 2, st);
  be.add_async(ct.polys[0].data(), ct.polys[0].data(), e, v, st);
  be.add_async(ct.polys[0].data(), ct.polys[0].data(), m.data(), v, st);
  be.add_async(ct.polys[1].data(), ct.polys[1].data(), e + words, v, st);
  ct.level = level;
  ct.key_id = pk.key_id;
  ct.params_id = params_id_;
  return ct;
}

template <class W>
typename ContextT<W>::Ciphertext ContextT<W>::encrypt_symmetric(const RnsPoly& m,
                                                                const SecretKey& sk,
                                                                ring::Sampler& sampler) const {
  check_params(sk.params_id, "the secret key");
  check_device(sk.s.device(), "the secret key");
  const std::size_t level = plaintext_level(m);
  auto& be = backend();
  const Stream st = Stream{};
  const RnsBasis& q = q_basis(level);
  const auto v = view(q);
  // a is drawn in eval form; for a coefficient-form plaintext, a s and a go to coefficient form
  // in one INTT and the error and m are added as they are.
  const Form form = m.form();
  Ciphertext ct;
  ct.polys = RnsPoly::batch(q, form, device_, 2);
  ring::Sampler::uniform_into(ct.polys[1].data(), sampler.key(), sampler.next_nonce(), q, be, st);
  const Buffer e = errors(q, 1, sampler, st, form);
  be.multiply_async(ct.polys[0].data(), ct.polys[1].data(), sk.s.data(), v, st);
  if (form == Form::coeff) be.ntt_inverse_async(ct.polys[0].data(), v, 2, st);
  be.sub_async(ct.polys[0].data(), e.template as<W>(), ct.polys[0].data(), v, st);
  be.add_async(ct.polys[0].data(), ct.polys[0].data(), m.data(), v, st);
  ct.level = level;
  ct.key_id = sk.key_id;
  ct.params_id = params_id_;
  return ct;
}

template <class W>
typename ContextT<W>::RnsPoly ContextT<W>::decrypt_core(const Ciphertext& ct, const SecretKey& sk,
                                                        std::size_t limbs) const {
  check_params(sk.params_id, "the secret key");
  check_params(ct.params_id, "the ciphertext");
  if (ct.key_id != sk.key_id)
    throw MismatchError(
        "decrypt: the ciphertext was encrypted under another key set; use the "
        "secret key it was made with");
  if (limbs == 0 || limbs > rows(ct.level)) throw ParameterError("decrypt: bad limb count");
  check_device(sk.s.device(), "the secret key");
  for (const auto& p : ct.polys) check_device(p.device(), "the ciphertext");
  auto& be = backend();
  const Stream st = ct.stream();  // the secret key is complete (keys are)
  const RnsBasis q(ring_, iota_ids(0, static_cast<u32>(limbs)));
  const auto v = view(q);
  RnsPoly out(q, Form::eval, device_, st);
  const bool coeff = ct.form() == Form::coeff;
  // Coefficient form: c1 (c2) transformed on their first `limbs` rows, c0 added at the end.
  Buffer c12;
  const W* c1 = ct.polys[1].data();
  const W* c2 = ct.polys.size() > 2 ? ct.polys[2].data() : nullptr;
  if (coeff) {
    const std::size_t count = ct.polys.size() - 1, words = limbs * n_;
    c12 = Buffer(be, count * words * sizeof(W), st);
    const W* in[2] = {c1, c2};
    if constexpr (sizeof(W) == 8) {
      be.ntt_forward_async(c12.as<W>(), in, v, count, st);
    } else {  // no gathering transform on 32-bit words: copy the rows, then transform in place
      for (std::size_t k = 0; k < count; ++k)
        be.copy_async(c12.as<W>() + k * words, in[k], words * sizeof(W), st);
      be.ntt_forward_async(c12.as<W>(), v, count, st);
    }
    c1 = c12.as<W>();
    c2 = c2 ? c1 + words : nullptr;
    be.multiply_async(out.data(), c1, sk.s.data(), v, st);
  } else {
    be.copy_async(out.data(), ct.polys[0].data(), limbs * n_ * sizeof(W), st);
    // s's first rows are those of Q: its powers are read in place (s^2 only for 3 polynomials).
    be.multiply_accumulate_async(out.data(), c1, sk.s.data(), v, st);
  }
  if (c2) {
    RnsPoly s2(q, Form::eval, device_, st);
    be.multiply_async(s2.data(), sk.s.data(), sk.s.data(), v, st);
    be.multiply_accumulate_async(out.data(), c2, s2.data(), v, st);
  }
  out.intt_inplace();
  if (coeff) be.add_async(out.data(), out.data(), ct.polys[0].data(), v, st);
  return out;
}

namespace {
/// Little-endian words of the product of the primes.
std::vector<u64> product_words(const std::vector<u64>& primes) {
  std::vector<u64> w{1};
  for (u64 q : primes) {
    u64 carry = 0;
    for (u64& x : w) {
      const unsigned __int128 v = static_cast<unsigned __int128>(x) * q + carry;
      x = static_cast<u64>(v);
      carry = static_cast<u64>(v >> 64);
    }
    if (carry) w.push_back(carry);
  }
  w.resize(primes.size(), 0);
  return w;
}
/// a > b for numbers of `k` words.
bool greater(const u64* a, const u64* b, std::size_t k) {
  for (std::size_t i = k; i-- > 0;)
    if (a[i] != b[i]) return a[i] > b[i];
  return false;
}
/// log2 of a k-word number (-infinity for 0), from its top two nonzero words.
double log2_words(const u64* a, std::size_t k) {
  std::size_t top = k;
  while (top > 0 && a[top - 1] == 0) --top;
  if (top == 0) return -INFINITY;
  double v = static_cast<double>(a[top - 1]);
  if (top >= 2) v += std::ldexp(static_cast<double>(a[top - 2]), -64);
  return std::log2(v) + 64.0 * static_cast<double>(top - 1);
}
}  // namespace

template <class W>
double ContextT<W>::noise_log2(const Ciphertext& ct, const SecretKey& sk, u64 multiplier) const {
  ring::RnsPoly v = decrypt_core(ct, sk, rows(ct.level)).template to_words<u64>();
  if (multiplier != 1) v = v.multiply_scalar(multiplier);
  const ring::CrtConverter crt(v.basis());
  const std::vector<u64> words = crt.from_rns(v);
  const std::size_t k = crt.output_words();
  const std::vector<u64> q = product_words(v.basis().primes());
  std::vector<u64> half(q), mag(k), best(k, 0);
  for (std::size_t i = 0; i < k; ++i)  // half = floor(Q / 2)
    half[i] = (q[i] >> 1) | (i + 1 < k ? q[i + 1] << 63 : 0);
  for (std::size_t c = 0; c < n_; ++c) {
    const u64* z = words.data() + c * k;
    if (greater(z, half.data(), k)) {  // |z - Q| = Q - z
      u64 borrow = 0;
      for (std::size_t i = 0; i < k; ++i) {
        const unsigned __int128 d = static_cast<unsigned __int128>(q[i]) - z[i] - borrow;
        mag[i] = static_cast<u64>(d);
        borrow = static_cast<u64>(d >> 64) & 1;
      }
    } else {
      std::copy(z, z + k, mag.begin());
    }
    if (greater(mag.data(), best.data(), k)) best = mag;
  }
  return log2_words(best.data(), k);
}

template <class W>
ModUp ContextT<W>::mod_up(const W* d, std::size_t level, Stream s, bool once) const {
  auto& be = backend();
  const Level& lv = levels_.at(level);
  Buffer coeff(be, rows(level) * n_ * sizeof(W), s);
  if constexpr (sizeof(W) == 8) {
    be.ntt_inverse_async(coeff.template as<W>(), &d, view(lv.q), 1, s);
  } else {
    be.copy_async(coeff.template as<W>(), d, rows(level) * n_ * sizeof(W), s);
    be.ntt_inverse_async(coeff.template as<W>(), view(lv.q), 1, s);
  }
  ModUp up = mod_up_coeff(coeff.template as<W>(), level, s, once);
  up.coeff = std::move(coeff);  // a pending lifted ModUp still reads it
  return up;
}

template <class W>
backend::LiftedRows ContextT<W>::lifted_digits(const W* coeff, std::size_t level,
                                               std::size_t rows_per_digit) const {
  if constexpr (sizeof(W) == 8)
    return {coeff, rows_per_digit, levels_.at(level).largest_q};
  else
    throw Error("lifted digits: 64-bit words only");
}

template <class W>
ModUp ContextT<W>::mod_up_coeff(const W* coeff, std::size_t level, Stream s, bool once,
                                bool own_rows) const {
  auto& be = backend();
  const Level& lv = levels_.at(level);
  ModUp up;
  const std::size_t rows = this->rows(level) + p_count_;
  if constexpr (sizeof(W) == 4) {
    // Every digit's conversion on 32-bit words, then one transform of all converted rows, or
    // for rows used once none: the key product transforms them (fused on the GPU).
    if (own_rows) throw ParameterError("mod_up_coeff: own rows need 64-bit words");
    up.ext = Buffer(be, lv.ext.size() * n_ * sizeof(W), s);
    std::vector<backend::ConvJob32> jobs;  // every digit's conversion in one pair of launches
    for (std::size_t j = 0; j < lv.digit_conv.size(); ++j)
      jobs.push_back(lv.digit_conv[j]->job(up.ext.template as<W>() + j * (rows - alpha_) * n_,
                                           coeff + j * alpha_ * n_, be));
    be.base_convert_many_async(jobs, s);
    up.pending = once;
    if (!once) be.ntt_forward_async(up.ext.template as<W>(), view(lv.ext), 1, s);
    return up;
  } else {
    if (own_rows) {
      if (alpha_ != 1) throw Error("mod_up_coeff: own rows need one-prime digits");
      // Each digit's own row is its residue itself (the lift's reduction leaves it unchanged), so
      // the one lifted transform also gives the rows an eval-form d would have supplied.
      up.ext = Buffer(be, lv.ext_all.size() * n_ * sizeof(W), s);
      up.pending = once;
      up.own_in_ext = true;
      up.lift = lifted_digits(coeff, level, rows);
      if (!once) be.ntt_forward_lifted_async(up.ext.template as<W>(), up.lift, view(lv.ext_all), s);
      return up;
    }
    up.ext = Buffer(be, lv.ext.size() * n_ * sizeof(W), s);
    up.pending = once;
    if (alpha_ == 1) {
      // One-prime digits: the conversion of digit j to prime p is its residue reduced mod p,
      // done by the NTT's first load (no converted rows written and read back).
      up.lift = lifted_digits(coeff, level, rows - 1);
      if (!once) be.ntt_forward_lifted_async(up.ext.template as<W>(), up.lift, view(lv.ext), s);
      return up;
    }
    std::vector<backend::ConvJob> jobs;  // every digit's conversion in one launch
    for (std::size_t j = 0; j < lv.digit_conv.size(); ++j) {
      const std::size_t offset = j * (rows - alpha_);
      jobs.push_back(lv.digit_conv[j]->job(up.ext.template as<W>() + offset * n_,
                                           coeff + j * alpha_ * n_, be));
    }
    be.base_convert_many_async(jobs, s);
    if (!once) be.ntt_forward_async(up.ext.template as<W>(), view(lv.ext), 1, s);
    return up;
  }
}

template <class W>
void ContextT<W>::divide_async(const ring::DivideRound& div, W* const* out, const W* const* in,
                               std::size_t t_row, std::size_t count, Stream s,
                               const W* const* addends, const W* coeff_addends) const {
  if constexpr (sizeof(W) == 8) {
    div.apply_many_async(out, in, t_row, count, backend(), s, addends, coeff_addends);
  } else {
    if (coeff_addends) throw ParameterError("coefficient-form addends need 64-bit words");
    div.apply_many_async(out, in, t_row, count, backend(), s, addends);
  }
}

template <class W>
void ContextT<W>::key_switch(const W* d, const ModUp& up, std::size_t level, const SwitchKey& key,
                             u64 galois, W* out0, W* out1, Stream s, const W* add0, const W* add1,
                             const W* rotated0, const W* p_coeff_adds) const {
  auto& be = backend();
  const std::size_t poly_words = (rows(level) + p_count_) * n_;
  // Each half's Q rows then P rows: the ModDown reads the P rows in place.
  Buffer acc(be, 2 * poly_words * sizeof(W), s);
  W* q0 = acc.template as<W>();
  W* q1 = q0 + poly_words;
  // rotated0 joins the key product as P g(rotated0): P is 0 modulo the P rows, so the ModDown's
  // correction is unchanged and divides it back to g(rotated0) exactly.
  key_product(d, up, level, key, galois, q0, q1, s, rotated0);
  W* const outs[2] = {out0, out1};
  const W* const ins[2] = {q0, q1};
  const W* const adds[2] = {add0, add1};
  // The ModDown's multiplier is P^-1: P e enters its NTT as e P (see DivideRound).
  divide_async(*levels_.at(level).mod_down, outs, ins, rows(level), 2, s, adds, p_coeff_adds);
}

template <class W>
void ContextT<W>::key_switch_coeff(const W* d, std::size_t level, const SwitchKey& key, u64 galois,
                                   W* out0, W* out1, Stream s, const W* add0, const W* add1,
                                   u64 add_galois) const {
  if constexpr (sizeof(W) == 4) {
    throw ParameterError("coefficient-form key switching (BFV) needs 64-bit words");
  } else {
    auto& be = backend();
    const Level& lv = levels_.at(level);
    const std::size_t q_words = rows(level) * n_, poly_words = q_words + p_count_ * n_;
    Buffer d_eval;
    ModUp up;
    if (alpha_ == 1) {
      up = mod_up_coeff(d, level, s, /*once=*/true, /*own_rows=*/true);
    } else {  // the digits' own rows from d's transform
      d_eval = Buffer(be, q_words * sizeof(W), s);
      be.ntt_forward_async(d_eval.template as<W>(), &d, view(lv.q), 1, s);
      up = mod_up_coeff(d, level, s, /*once=*/true);
    }
    Buffer acc(be, 2 * poly_words * sizeof(W), s);
    W* q0 = acc.template as<W>();
    W* q1 = q0 + poly_words;
    key_product(d_eval.template as<W>(), up, level, key, galois, q0, q1, s);
    // The whole products back to coefficient form in one launch; the division by P then needs
    // no transform of its own (the converted P rows are subtracted coefficient by coefficient).
    be.ntt_inverse_async(q0, view(lv.qp), 2, s);
    W* const outs[2] = {out0, out1};
    const W* const a_q[2] = {q0, q1};
    const W* const a_p[2] = {q0 + q_words, q1 + q_words};
    const W* const adds[2] = {add0, add1};
    lv.mod_down->apply_coeff_many_async(outs, a_q, a_p, 2, be, s, adds, add_galois);
  }
}

template <class W>
typename ContextT<W>::KeyProductView ContextT<W>::product_view(const W* d, const ModUp& up,
                                                               std::size_t level,
                                                               const SwitchKey& key,
                                                               u64 galois) const {
  KeyProductView kp;
  kp.d = d;
  kp.ext = up.ext.template as<const W>();
  kp.key = key.words();
  kp.digits = static_cast<u32>(digits_at(level));
  // alpha 0: no digit owns a row, every row of digit j is row j * rows + r of ext.
  kp.alpha = up.own_in_ext ? 0 : static_cast<u32>(alpha_);
  kp.rows = static_cast<u32>(rows(level) + p_count_);
  kp.q_rows = static_cast<u32>(rows(level));
  kp.key_rows = static_cast<u32>(key.rows);
  kp.key_q_rows = static_cast<u32>(q_count_);
  kp.galois = galois;
  return kp;
}

template <class W>
void ContextT<W>::key_product(const W* d, const ModUp& up, std::size_t level, const SwitchKey& key,
                              u64 galois, W* out0, W* out1, Stream s, const W* p_add) const {
  check_params(key.params_id, "the evaluation key");
  auto& be = backend();
  const std::size_t q_rows = rows(level), q_words = q_rows * n_;
  KeyProductView kp = product_view(d, up, level, key, galois);
  const bool fused = p_add && q_rows <= KeyProductView::kMaxAddRows;
  if (fused) {
    kp.add = p_add;
    for (std::size_t r = 0; r < q_rows; ++r) kp.add_scale[r] = static_cast<W>(p_mod_q_[r]);
  }
  const Level& lv = levels_.at(level);
  if (!up.pending) {
    be.key_inner_product_async(out0, out1, out0 + q_words, out1 + q_words, kp, view(lv.qp), s);
  } else if constexpr (sizeof(W) == 8) {  // lifted rows, or the digits' own rows in ext
    be.ntt_key_product_async(out0, out1, out0 + q_words, out1 + q_words, kp, up.lift,
                             view(up.own_in_ext ? lv.ext_all : lv.ext), view(lv.qp), s);
  } else {
    be.ntt_key_product_async(out0, out1, out0 + q_words, out1 + q_words, kp, view(lv.ext),
                             view(lv.qp), s);
  }
  if (p_add && !fused) {
    const std::vector<u64> p_mod(p_mod_q_.begin(), p_mod_q_.begin() + q_rows);
    be.automorphism_accumulate_async(out0, p_add, galois ? galois : 1, p_mod, view(q_basis(level)),
                                     s);
  }
}

template <class W>
void ContextT<W>::baby_giant_sums(const W* c0, const W* d, const ModUp& up, std::size_t level,
                                  const std::vector<const SwitchKey*>& babies,
                                  const std::vector<std::vector<const W*>>& plain,
                                  const std::vector<W*>& out, Stream s) const {
  if (!baby_giant_fits(level, babies.size(), out.size()) || plain.size() != out.size())
    throw ParameterError("baby_giant_sums: too many baby or giant steps for one pass");
  auto& be = backend();
  if (up.pending) throw Error("baby_giant_sums: the ModUp rows must be transformed");
  backend::BabyGiantViewT<W> v;
  v.product = product_view(d, up, level, *babies[0], 0);
  v.product.add = c0;  // P sigma_b(c0) on the Q rows of every baby
  for (std::size_t r = 0; r < rows(level); ++r)
    v.product.add_scale[r] = static_cast<W>(p_mod_q_[r]);
  v.babies = static_cast<u32>(babies.size());
  v.giants = static_cast<u32>(out.size());
  for (std::size_t b = 0; b < babies.size(); ++b) {
    check_params(babies[b]->params_id, "the evaluation key");
    v.key[b] = babies[b]->words();
    v.galois[b] = babies[b]->galois;
  }
  for (std::size_t g = 0; g < out.size(); ++g) {
    if (plain[g].size() != babies.size())
      throw ParameterError("baby_giant_sums: one plaintext (or null) per baby and giant");
    v.out[g] = out[g];
    for (std::size_t b = 0; b < babies.size(); ++b) v.plain[g][b] = plain[g][b];
  }
  be.baby_giant_sums_async(v, view(levels_.at(level).qp), s);
}

template <class W>
void ContextT<W>::mod_down_polys(W* const* out, const W* const* in, std::size_t count,
                                 std::size_t level, Stream s, const W* const* addends) const {
  // Each polynomial's P rows follow its Q rows.
  divide_async(*levels_.at(level).mod_down, out, in, rows(level), count, s, addends);
}

template <class W>
void ContextT<W>::divide_extended(W* const* out, const W* const* in, std::size_t count,
                                  std::size_t level, Stream s) const {
  if (level == 0) throw ParameterError("rescale: the ciphertext is at level 0, no prime to drop");
  // Each polynomial's rows of this level's primes and P rows are adjacent: the divisor T's rows.
  divide_async(*levels_.at(level).mod_down_rescale, out, in, rows(level - 1), count, s);
}

template <class W>
void ContextT<W>::key_switch_divide(const W* d, const ModUp& up, std::size_t level,
                                    const SwitchKey& key, u64 galois, W* out0, W* out1, Stream s,
                                    const W* add0, const W* add1, const W* sub0, const W* sub1,
                                    const std::vector<u64>& sub_scalars) const {
  if (level == 0) throw ParameterError("rescale: the ciphertext is at level 0, no prime to drop");
  if (!add0 || !add1) throw ParameterError("key_switch_divide: both addends are required");
  auto& be = backend();
  const Level& lv = levels_.at(level);
  const std::size_t q_rows = rows(level);
  const std::size_t poly_words = (q_rows + p_count_) * n_;  // Q rows, then P rows
  Buffer acc(be, 2 * poly_words * sizeof(W), s);
  W* q0 = acc.template as<W>();
  W* q1 = q0 + poly_words;
  key_product(d, up, level, key, galois, q0, q1, s);
  // The addends join before the division, times P (P vanishes modulo the primes of P).
  const std::vector<u64> p_mod(p_mod_q_.begin(), p_mod_q_.begin() + q_rows);
  std::vector<u64> minus;  // -k P mod q_i
  if (sub0 && sub1) {
    if (sub_scalars.size() != q_rows)
      throw ParameterError("key_switch_divide: one subtrahend scalar per prime of the level");
    minus.resize(q_rows);
    for (std::size_t i = 0; i < q_rows; ++i) {
      const Modulus m = make_modulus(ring_->prime(i));
      minus[i] = neg_mod(mul_mod(barrett_reduce_64(sub_scalars[i], m), p_mod[i], m), m.value);
    }
  }
  std::vector<const W*> a0{q0, add0}, a1{q1, add1};
  std::vector<std::vector<u64>> scalars{std::vector<u64>(q_rows, 1), p_mod};
  if (!minus.empty()) {
    a0.push_back(sub0);
    a1.push_back(sub1);
    scalars.push_back(std::move(minus));
  }
  be.linear_combination_async(q0, q1, a0, a1, scalars, std::vector<u64>(q_rows, 0), view(lv.q), s);
  // The divisor's rows, this level's primes then P, are adjacent in each polynomial.
  W* const outs[2] = {out0, out1};
  const W* const ins[2] = {q0, q1};
  divide_async(*lv.mod_down_rescale, outs, ins, rows(level - 1), 2, s);
}

template <class W>
void ContextT<W>::rescale_polys(W* const* out, const W* const* in, std::size_t count,
                                std::size_t level, Stream s) const {
  if (level == 0) throw ParameterError("rescale: the ciphertext is at level 0, no prime to drop");
  // The dropped rows of every polynomial, read in place by one batched division.
  divide_async(*levels_.at(level).rescale, out, in, rows(level - 1), count, s);
}

template class ContextT<u64>;
template class ContextT<u32>;

}  // namespace ember::rlwe
