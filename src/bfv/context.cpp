// bfv::Context: scaling, encryption, decryption, multiplication in Q u R, modulus switching.
#include "ember/bfv/context.h"

#include <cmath>
#include <string>

#include "ember/backend/per_device.h"
#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::bfv {

using backend::Buffer;
using backend::Stream;
using ring::BaseConverter;
using ring::DivideRound;
using ring::Form;
using ring::RnsBasis;

namespace {
constexpr u64 kBfvTag = 0x424656;  // "BFV"

rlwe::SchemeOptions bfv_options(u64 t, const std::vector<u64>& aux) {
  rlwe::SchemeOptions o;
  o.tag = kBfvTag;
  o.plain_modulus = t;
  o.aux_primes = aux;
  return o;
}

}  // namespace

/// Everything the operations at one level of Q need, on the context's device.
struct Context::Level {
  RnsBasis q, qr, r0;
  std::unique_ptr<BaseConverter> q_to_r;         // centered, exact
  std::unique_ptr<BaseConverter> scaled_r_to_q;  // centered, exact, of x * scale_down's multiplier
  std::unique_ptr<BaseConverter> scaled_r_to_q_p;  // the same, times P (the key switch's primes)
  std::unique_ptr<BaseConverter> q_to_r0;          // exact
  std::unique_ptr<DivideRound> scale_down;         // (Q_l u R) -> R: round(x / Q_l)
  std::unique_ptr<DivideRound> decrypt_div;        // (Q_l u r0) -> r0: round(t x / Q_l)
  u64 q_mod_t = 0;
  Buffer q_div_t;
};

std::vector<u64> choose_aux_primes(std::size_t n, const std::vector<u64>& q,
                                   const std::vector<u64>& p, u64 t, int aux_bits) {
  if (aux_bits != 0 && aux_bits != 50 && aux_bits != 57 && aux_bits != 60)
    throw ParameterError("aux_bits must be 0 (automatic), 50, 57 or 60, got " +
                         std::to_string(aux_bits));
  double need = std::log2(static_cast<double>(t)) + std::log2(static_cast<double>(n)) + 2;
  for (u64 x : q) need += std::log2(static_cast<double>(x));
  std::vector<u64> taken = q;
  taken.insert(taken.end(), p.begin(), p.end());
  const auto of_size = [&](int bits) {
    std::vector<u64> r, used = taken;
    for (double have = 0; have < need;) {
      r.push_back(generate_ntt_primes(bits, n, 1, used)[0]);
      used.push_back(r.back());
      have += std::log2(static_cast<double>(r.back()));
    }
    return r;
  };
  if (aux_bits != 0) return of_size(aux_bits);
  std::vector<u64> wide = of_size(60);
  for (int bits : {50, 57})
    if (std::vector<u64> r = of_size(bits); r.size() <= wide.size()) return r;
  return wide;
}

Context::Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
                 std::size_t dnum, u64 t, const std::vector<u64>& aux_primes,
                 backend::Device device, std::shared_ptr<const ring::RingContext> shared_ring)
    : rlwe::Evaluator(n, q_primes, p_primes, dnum, device, bfv_options(t, aux_primes),
                      std::move(shared_ring)) {
  // Below every prime of Q: checked by rlwe::Context for every scheme with a t.
  if (t < 2) throw ParameterError("plain modulus t=" + std::to_string(t) + " must be at least 2");
  double log_q = 0, log_r = 0;
  for (u64 q : q_primes) log_q += std::log2(static_cast<double>(q));
  for (u64 r : aux_primes) log_r += std::log2(static_cast<double>(r));
  // The centered tensor product times t stays below Q R / 2: |t x| <= t N Q^2 / 2.
  if (aux_primes.empty() ||
      log_r < log_q + std::log2(static_cast<double>(t)) + std::log2(static_cast<double>(n)) + 1.0)
    throw ParameterError(
        "the auxiliary primes R must exceed t N Q (log2 R = " + std::to_string(log_r) + ")");
  auto& be = rlwe_.backend();
  const RnsBasis& r = rlwe_.aux_basis();
  for (std::size_t l = 0; l <= max_level(); ++l) {
    auto lv = std::make_unique<Level>();
    lv->q = rlwe_.q_basis(l);
    lv->qr = lv->q.concat(r);
    lv->r0 = RnsBasis(r.context(), {r.ids()[0]});
    lv->q_to_r = std::make_unique<BaseConverter>(BaseConverter::centered(lv->q, r));
    lv->q_to_r0 = std::make_unique<BaseConverter>(lv->q, lv->r0, /*exact=*/true);
    lv->scale_down = std::make_unique<DivideRound>(r, lv->q, 1, t);  // round(t x / Q_l)
    lv->scaled_r_to_q = std::make_unique<BaseConverter>(
        BaseConverter::centered(r, lv->q, lv->scale_down->multiplier()));
    const auto& p_mod_q = rlwe_.p_mod_q();
    lv->scaled_r_to_q_p = std::make_unique<BaseConverter>(
        BaseConverter::centered(r, lv->q, lv->scale_down->multiplier(),
                                std::vector<u64>(p_mod_q.begin(), p_mod_q.begin() + lv->q.size())));
    lv->decrypt_div = std::make_unique<DivideRound>(lv->r0, lv->q, 1, t);  // round(t v / Q_l)
    const auto qs = lv->q.primes();
    lv->q_mod_t = product_mod(qs, t);
    // floor(Q/t) = (Q - (Q mod t)) / t, and Q = 0 mod q_i.
    std::vector<u64> q_div_t;
    for (u64 qi : qs)
      q_div_t.push_back(
          mul_mod(neg_mod(lv->q_mod_t % qi, qi), inverse_mod(t % qi, qi), make_modulus(qi)));
    lv->q_div_t = backend::upload(be, q_div_t);
    levels_.push_back(std::move(lv));
  }
  be.synchronize(Stream{});
}

Context::Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
                 std::size_t dnum, u64 t, int aux_bits, backend::Device device,
                 std::shared_ptr<const ring::RingContext> shared_ring)
    : Context(n, q_primes, p_primes, dnum, t, choose_aux_primes(n, q_primes, p_primes, t, aux_bits),
              device, std::move(shared_ring)) {}

Context::~Context() = default;

RnsPoly Context::scale_plain(const u64* m, std::size_t l) const {
  const Level& lv = level(l);
  auto& be = rlwe_.backend();
  const Stream s{};  // a fresh plaintext: the default stream
  RnsPoly out(lv.q, Form::coeff, rlwe_.device());
  be.scale_plain_async(out.data(), m, plain_modulus(), lv.q_mod_t, lv.q_div_t.as<u64>(),
                       lv.q.on(be), s);
  return out;
}

RnsPoly Context::scale_plain_host(const u64* m, std::size_t l) const {
  if (l > max_level()) throw ParameterError("level out of range");
  const u64 t = plain_modulus();
  for (std::size_t i = 0; i < n(); ++i)
    if (m[i] >= t)
      throw ParameterError("plaintext coefficient " + std::to_string(m[i]) +
                           " is not reduced modulo t=" + std::to_string(t));
  auto& be = rlwe_.backend();
  const Buffer dev = Buffer::from_host(be, m, n() * sizeof(u64), Stream{});
  return scale_plain(dev.as<u64>(), l);
}

// Fresh ciphertexts in coefficient form: multiplication lifts coefficients and key switching
// starts from them, so every later product, relinearization and rotation skips a transform.
Ciphertext Context::encrypt(const RnsPoly& scaled, const PublicKey& pk,
                            ring::Sampler& sampler) const {
  return rlwe_.encrypt(scaled, pk, sampler);
}

Ciphertext Context::encrypt_symmetric(const RnsPoly& scaled, const SecretKey& sk,
                                      ring::Sampler& sampler) const {
  return rlwe_.encrypt_symmetric(scaled, sk, sampler);
}

Buffer Context::decrypt_rounded(const Ciphertext& ct, const SecretKey& sk) const {
  check_one(ct, "decrypt");
  const Level& lv = level(ct.level);
  auto& be = rlwe_.backend();
  const Stream s = ct.stream();
  // v = c0 + c1 s in [0, Q) needs its r0 residue (exact conversion); the division by Q/t
  // multiplies by t itself.
  const RnsPoly v = rlwe_.decrypt_core(ct, sk, ct.level + 1);
  Buffer v_r0(be, n() * sizeof(u64), s);
  lv.q_to_r0->convert_async(v_r0.as<u64>(), v.data(), be, s);
  Buffer out(be, n() * sizeof(u64), s);
  lv.decrypt_div->apply_coeff_async(out.as<u64>(), v_r0.as<u64>(), v.data(), be, s);
  return out;
}

std::vector<u64> Context::decrypt(const Ciphertext& ct, const SecretKey& sk) const {
  auto& be = rlwe_.backend();
  const Stream s = ct.stream();
  const Buffer rounded = decrypt_rounded(ct, sk);
  std::vector<u64> m(n());
  be.copy_to_host_async(m.data(), rounded.as<u64>(), n() * sizeof(u64), s);
  be.synchronize(s);
  const u64 t = plain_modulus();
  for (u64& x : m) x = x == t ? 0 : x;  // round(t v / Q) in [0, t]
  return m;
}

void Context::product_coeff(const Ciphertext& a, const Ciphertext& b, u64* const (&out)[3],
                            Stream s, bool p_scaled) const {
  const Level& lv = level(a.level);
  auto& be = rlwe_.backend();
  const std::size_t nn = n(), qn = lv.q.size() * nn, rn = rlwe_.aux_basis().size() * nn;
  const std::size_t ext_words = qn + rn;
  const auto q_view = lv.q.on(be);
  const auto r_view = rlwe_.aux_basis().on(be);
  const u64* in[4] = {a.polys[0].data(), a.polys[1].data(), b.polys[0].data(), b.polys[1].data()};
  // Lift a0, a1, b0, b1 to R: the exact centered value of each coefficient, then eval form over
  // Q u R. Coefficient-form operands: the conversion writes their R rows where the transform
  // puts them, and one transform takes all 4 (|Q| + |R|) rows, the Q rows read where they are
  // (one launch fills the GPU better than two of half the rows). Eval-form operands: the tensor
  // reads their Q rows as they are, after an inverse transform for the conversion, and only the
  // R rows are transformed.
  const bool operands_coeff = a.form() == Form::coeff;
  const auto qr_view = lv.qr.on(be);
  Buffer lifted(be, 4 * ext_words * sizeof(u64), s);
  std::vector<backend::ConvJob> jobs;
  Buffer prod(be, 3 * ext_words * sizeof(u64), s);
  u64* d = prod.as<u64>();
  if (operands_coeff) {
    u64* e = lifted.as<u64>();
    for (int k = 0; k < 4; ++k) jobs.push_back(lv.q_to_r->job(e + k * ext_words + qn, in[k], be));
    be.base_convert_many_async(jobs, s);
    be.ntt_forward_tensor_async(d, d + ext_words, d + 2 * ext_words, e, in, qr_view, s,
                                lv.q.size());
  } else {
    u64* coeff = lifted.as<u64>();  // 4 |Q| rows, then 4 |R| rows
    u64* r[4];
    be.ntt_inverse_async(coeff, in, q_view, 4, s);
    for (int k = 0; k < 4; ++k) {
      r[k] = coeff + 4 * qn + k * rn;
      jobs.push_back(lv.q_to_r->job(r[k], coeff + k * qn, be));
    }
    be.base_convert_many_async(jobs, s);
    be.ntt_forward_async(r[0], r_view, 4, s);
    // a ⊗ b over Q u R into the layout [3][Q | R], the Q limbs read from the operands and the R
    // limbs from their extensions, in one pass (the factor t is folded into the division below).
    const backend::Backend::TensorUpper r_part{r[0], r[1], r[2], r[3], lv.q.size()};
    be.tensor_async(d, d + ext_words, d + 2 * ext_words, in[0], in[1], in[2], in[3], qr_view, s,
                    &r_part);
  }
  be.ntt_inverse_async(d, qr_view, 3, s);
  // round(t x / Q) = (x_R - delta) t Q^-1 over R, then its centered value over Q: the
  // difference and the multiplier are folded into the second conversion (never written).
  u64* delta = lifted.as<u64>();  // reuse
  const u64* dropped[3] = {d, d + ext_words, d + 2 * ext_words};
  be.base_convert_many_async(lv.scale_down->remainder_jobs(delta, dropped, 3, be), s);
  jobs.clear();
  for (int k = 0; k < 3; ++k) {
    const BaseConverter& conv = p_scaled && k < 2 ? *lv.scaled_r_to_q_p : *lv.scaled_r_to_q;
    jobs.push_back(conv.job(out[k], d + k * ext_words + qn, be));
    jobs.back().in_sub = delta + k * rn;
  }
  be.base_convert_many_async(jobs, s);
}

Ciphertext Context::multiply_no_relin(const Ciphertext& a_in, const Ciphertext& b_in) const {
  check_product(a_in, b_in);
  const Stream s = a_in.stream();
  const backend::StreamJoin join(rlwe_.backend(), s, {b_in.stream()});
  const RnsBasis& q = level(a_in.level).q;
  Ciphertext c = like(a_in, 0);
  if (a_in.form() == Form::coeff || b_in.form() == Form::coeff) {
    // Coefficient-form operands (one in eval form is brought over): the product stays there.
    Ciphertext ha, hb;
    const Ciphertext& a = a_in.form() == Form::coeff ? a_in : (ha = to_form(a_in, Form::coeff));
    const Ciphertext& b = b_in.form() == Form::coeff ? b_in : (hb = to_form(b_in, Form::coeff));
    c.polys = RnsPoly::batch(q, Form::coeff, rlwe_.device(), 3, s);
    product_coeff(a, b, {c.polys[0].data(), c.polys[1].data(), c.polys[2].data()}, s);
    return c;
  }
  const Ciphertext& a = a_in;
  const Ciphertext& b = b_in;
  // Back to back, so that one NTT launch transforms all three (three launches cost each
  // transform's latency three times over at small N).
  c.polys = RnsPoly::batch(q, Form::coeff, rlwe_.device(), 3, s);
  product_coeff(a, b, {c.polys[0].data(), c.polys[1].data(), c.polys[2].data()}, s);
  auto& be = rlwe_.backend();
  be.ntt_forward_async(c.polys[0].data(), q.on(be), 3, s);
  for (auto& p : c.polys) p.set_form(Form::eval);
  return c;
}

Ciphertext Context::multiply(const Ciphertext& a, const Ciphertext& b,
                             const SwitchKey& relin) const {
  check_product(a, b);
  if (relin.key_id != a.key_id || relin.galois != 0)
    throw MismatchError("relinearize: the key is not this key set's relinearization key");
  rlwe_.check_device(relin.device(), "relinearize: the key");
  auto& be = rlwe_.backend();
  const Stream s = a.stream();
  const backend::StreamJoin join(be, s, {b.stream()});
  const RnsBasis& q = level(a.level).q;
  const std::size_t qn = q.size() * n();
  if (a.form() == Form::coeff || b.form() == Form::coeff) {
    // In coefficient form: the product's c2 is key switched from its coefficients and c0, c1
    // join the ModDown's last pass.
    const Ciphertext p = multiply_no_relin(a, b);
    Ciphertext c = like(p, 2);
    rlwe_.key_switch_coeff(p.polys[2].data(), a.level, relin, 0, c.polys[0].data(),
                           c.polys[1].data(), s, p.polys[0].data(), p.polys[1].data());
    return c;
  }
  // P p0 and P p1 side by side, in coefficient form: the key switch's ModDown adds p0 and p1
  // through its own NTT. Only p2 is transformed (its own rows in the key product), out of place:
  // a lifted ModUp reads its coefficients during the key product.
  Buffer prod(be, 3 * qn * sizeof(u64), s);
  u64* const p[3] = {prod.as<u64>(), prod.as<u64>() + qn, prod.as<u64>() + 2 * qn};
  product_coeff(a, b, p, s, /*p_scaled=*/true);
  const rlwe::ModUp ext = rlwe_.mod_up_coeff(p[2], a.level, s, /*once=*/true);
  RnsPoly p2(q, Form::eval, rlwe_.device());
  const u64* const in[1] = {p[2]};
  be.ntt_forward_async(p2.data(), in, q.on(be), 1, s);
  Ciphertext c = like(a, 2);
  rlwe_.key_switch(p2.data(), ext, a.level, relin, 0, c.polys[0].data(), c.polys[1].data(), s,
                   nullptr, nullptr, nullptr, p[0]);
  return c;
}

double Context::noise_budget(const Ciphertext& ct, const SecretKey& sk) const {
  double log_q = 0;
  for (u64 q : rlwe_.q_basis(ct.level).primes()) log_q += std::log2(static_cast<double>(q));
  return log_q - rlwe_.noise_log2(ct, sk, plain_modulus()) - 1.0;
}

}  // namespace ember::bfv
