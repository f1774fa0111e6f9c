// DivideRound: (a - delta) / T over Q with delta = a mod T chosen for rounding (or for BGV).
#include "ember/ring/divide_round.h"

#include <algorithm>

#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ring {

using backend::Buffer;

namespace {
/// The conversion T -> Q that yields delta / m from the T residues of a in one pass. With
/// h = floor(T/2) and x = m a: delta = t ((x t^-1 + h) mod T - h), which is x mod T, centered
/// (t = 1: the rounding remainder of x + h) and a multiple of t; the output is delta m^-1 so
/// that (a - delta m^-1) (m T^-1) = (x - delta) / T.
ConversionMaps correction_maps(const RnsBasis& q, const RnsBasis& t, u64 plain, u64 mult) {
  if (plain == 0 || mult == 0)
    throw ParameterError("DivideRound: the plaintext modulus and the multiplier must be >= 1");
  const auto ts = t.primes();
  ConversionMaps maps;
  for (u64 tj : ts) {
    const Modulus m = make_modulus(tj);
    if (plain != 1 || mult != 1)
      maps.in_mul.push_back(mul_mod(mult % tj, inverse_mod(plain % tj, tj), m));
    maps.in_add.push_back(half_product_mod(ts, tj));
  }
  for (u64 qi : q.primes()) {
    const Modulus m = make_modulus(qi);
    const u64 scale = mul_mod(plain % qi, inverse_mod(mult % qi, qi), m);  // t / m
    if (plain != 1 || mult != 1) maps.out_mul.push_back(scale);
    maps.out_add.push_back(neg_mod(mul_mod(half_product_mod(ts, qi), scale, m), qi));
  }
  return maps;
}
}  // namespace

struct DivideRound::DeviceTables {
  Buffer t_inv, t_inv_shoup;
  Buffer t_inv32, t_inv_shoup32;  // the same on 32-bit words (every prime below 2^30)
};

DivideRound::DivideRound(RnsBasis q, RnsBasis t, u64 plain_modulus, u64 multiplier)
    : q_(std::move(q)),
      t_(std::move(t)),
      t_to_q_(t_, q_, /*exact=*/true, correction_maps(q_, t_, plain_modulus, multiplier)),
      tables_(std::make_shared<backend::PerDevice<DeviceTables>>()) {
  const auto ts = t_.primes();
  for (u64 qi : q_.primes()) {
    t_inv_mod_q_.push_back(
        mul_mod(multiplier % qi, inverse_mod(product_mod(ts, qi), qi), make_modulus(qi)));
    t_inv_shoup_.push_back(shoup_precompute(t_inv_mod_q_.back(), qi));
  }
}

const DivideRound::DeviceTables& DivideRound::tables_on(backend::Backend& be) const {
  return tables_->get(be, [&](backend::Backend& b) {
    DeviceTables t;
    t.t_inv = backend::upload(b, t_inv_mod_q_);
    t.t_inv_shoup = backend::upload(b, t_inv_shoup_);
    const auto primes = q_.primes();
    if (std::all_of(primes.begin(), primes.end(),
                    [](u64 q) { return q >> kMaxModulusBitsOf<u32> == 0; })) {
      std::vector<u32> inv, shoup;
      for (std::size_t i = 0; i < t_inv_mod_q_.size(); ++i) {
        inv.push_back(static_cast<u32>(t_inv_mod_q_[i]));
        shoup.push_back(shoup_precompute<u32>(inv.back(), static_cast<u32>(q_.prime(i))));
      }
      t.t_inv32 = backend::upload(b, inv);
      t.t_inv_shoup32 = backend::upload(b, shoup);
    }
    return t;
  });
}

void DivideRound::apply_many_async(u64* const* out, const u64* const* a, std::size_t t_row,
                                   std::size_t count, backend::Backend& be, backend::Stream s,
                                   const u64* const* addends, const u64* coeff_addends) const {
  const auto& tab = tables_on(be);
  const std::size_t t_words = t_.size() * q_.n(), q_words = q_.size() * q_.n();
  // The T parts' INTT reads them where they are (no copies) into one buffer.
  std::vector<const u64*> a_t(count);
  for (std::size_t k = 0; k < count; ++k) a_t[k] = a[k] + t_row * q_.n();
  Buffer t(be, count * t_words * sizeof(u64), s);
  be.ntt_inverse_async(t.as<u64>(), a_t.data(), t_.on(be), count, s);
  for (std::size_t k = 0; k < count; ++k) a_t[k] = t.as<u64>() + k * t_words;  // now coefficients
  Buffer delta(be, count * q_words * sizeof(u64), s);
  be.convert_ntt_affine_sub_async(remainder_jobs(delta.as<u64>(), a_t.data(), count, be), out, a,
                                  delta.as<u64>(), tab.t_inv.as<u64>(), tab.t_inv_shoup.as<u64>(),
                                  addends, q_.on(be), s, coeff_addends);
}

void DivideRound::apply_many_async(u32* const* out, const u32* const* a, std::size_t t_row,
                                   std::size_t count, backend::Backend& be, backend::Stream s,
                                   const u32* const* addends) const {
  const std::size_t n = q_.n(), t_words = t_.size() * n, q_words = q_.size() * n;
  const auto vq = q_.on32(be), vt = t_.on32(be);
  Buffer t(be, count * t_words * sizeof(u32), s), delta(be, count * q_words * sizeof(u32), s);
  for (std::size_t k = 0; k < count; ++k)
    be.copy_async(t.as<u32>() + k * t_words, a[k] + t_row * n, t_words * sizeof(u32), s);
  be.ntt_inverse_async(t.as<u32>(), vt, count, s);
  std::vector<backend::ConvJob32> jobs;
  for (std::size_t k = 0; k < count; ++k)
    jobs.push_back(t_to_q_.job(delta.as<u32>() + k * q_words, t.as<u32>() + k * t_words, be));
  be.base_convert_many_async(jobs, s);
  // (a - NTT(delta)) m T^-1 (+ addend), every polynomial in one pass (fused on the GPU).
  const auto& tab = tables_on(be);
  be.ntt_forward_affine_sub_async(out, a, delta.as<u32>(), tab.t_inv32.as<const u32>(),
                                  tab.t_inv_shoup32.as<const u32>(), addends, count, vq, s);
}

std::vector<backend::ConvJob> DivideRound::remainder_jobs(u64* delta, const u64* const* a_t,
                                                          std::size_t count,
                                                          backend::Backend& be) const {
  const std::size_t q_words = q_.size() * q_.n();
  std::vector<backend::ConvJob> jobs;
  for (std::size_t k = 0; k < count; ++k)
    jobs.push_back(t_to_q_.job(delta + k * q_words, a_t[k], be));
  return jobs;
}

void DivideRound::apply_coeff_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                                    backend::Stream s) const {
  apply_coeff_many_async(&out, &a_q, &a_t, 1, be, s);
}

void DivideRound::apply_coeff_many_async(u64* const* out, const u64* const* a_q,
                                         const u64* const* a_t, std::size_t count,
                                         backend::Backend& be, backend::Stream s,
                                         const u64* const* addends, u64 addend_galois) const {
  const auto& tab = tables_on(be);
  Buffer delta(be, count * q_.size() * q_.n() * sizeof(u64), s);
  be.convert_affine_sub_async(remainder_jobs(delta.as<u64>(), a_t, count, be), out, a_q,
                              delta.as<u64>(), tab.t_inv.as<u64>(), tab.t_inv_shoup.as<u64>(),
                              addends, addend_galois, q_.on(be), s);
}

template <class W>
RnsPolyT<W> DivideRound::divide(const RnsPolyT<W>& a_q, const RnsPolyT<W>& a_t) const {
  if (a_q.basis() != q_ || a_t.basis() != t_)
    throw MismatchError("DivideRound: give the polynomial's part over Q and its part over T");
  if (a_q.form() != Form::coeff || a_t.form() != Form::coeff)
    throw MismatchError("DivideRound: both parts must be in coeff form; call intt() first");
  if (a_q.device() != a_t.device())
    throw MismatchError("DivideRound: both parts must be on the same device");
  if constexpr (sizeof(W) == 4) {
    // delta m^-1 over Q by the 32-bit conversion, then (a_q - delta m^-1) (m T^-1).
    return a_q.sub(t_to_q_.convert(a_t)).multiply_scalar(t_inv_mod_q_);
  } else {
    RnsPoly out(q_, Form::coeff, a_q.device(), a_q.stream());
    auto& be = a_q.backend();
    const backend::StreamJoin join(be, a_q.stream(), {a_t.stream()});
    apply_coeff_async(out.data(), a_q.data(), a_t.data(), be, a_q.stream());
    return out;
  }
}

template RnsPoly DivideRound::divide<u64>(const RnsPoly&, const RnsPoly&) const;
template RnsPoly32 DivideRound::divide<u32>(const RnsPoly32&, const RnsPoly32&) const;

}  // namespace ember::ring
