// DivideRound: (a - delta) / T over Q with delta = a mod T chosen for rounding (or for BGV).
#include "ember/ring/divide_round.h"

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ring {

using backend::Buffer;

struct DivideRound::DeviceTables {
  Buffer zero, half_t_mod_t, neg_half_t_mod_q, t_inv, t_inv_shoup;
};

DivideRound::DivideRound(RnsBasis q, RnsBasis t, u64 plain_modulus)
    : q_(std::move(q)),
      t_(std::move(t)),
      plain_(plain_modulus),
      t_to_q_(t_, q_, /*exact=*/true),
      tables_(std::make_shared<backend::PerDevice<DeviceTables>>()) {
  if (plain_ == 0) throw ParameterError("DivideRound: the plaintext modulus must be >= 1");
  const auto ts = t_.primes();
  // With h = floor(T/2): delta = t ((a t^-1 + h) mod T - h) is a mod T, centered (t = 1: the
  // rounding remainder of a + h) and a multiple of t.
  for (u64 tj : ts) {
    half_t_mod_t_.push_back(half_product_mod(ts, tj));
    plain_inv_mod_t_.push_back(plain_ == 1 ? 1 : inverse_mod(plain_ % tj, tj));
  }
  for (u64 qi : q_.primes()) {
    const u64 plain_q = plain_ % qi;
    plain_mod_q_.push_back(plain_q);
    neg_half_t_mod_q_.push_back(
        neg_mod(mul_mod(half_product_mod(ts, qi), plain_q, make_modulus(qi)), qi));
    t_inv_mod_q_.push_back(inverse_mod(product_mod(ts, qi), qi));
    t_inv_shoup_.push_back(shoup_precompute(t_inv_mod_q_.back(), qi));
  }
}

const DivideRound::DeviceTables& DivideRound::tables_on(backend::Backend& be) const {
  return tables_->get(be, [&](backend::Backend& b) {
    DeviceTables t;
    t.zero = backend::upload(b, std::vector<u64>(q_.size(), 0));
    t.half_t_mod_t = backend::upload(b, half_t_mod_t_);
    t.neg_half_t_mod_q = backend::upload(b, neg_half_t_mod_q_);
    t.t_inv = backend::upload(b, t_inv_mod_q_);
    t.t_inv_shoup = backend::upload(b, t_inv_shoup_);
    return t;
  });
}

Buffer DivideRound::correction(u64* a_t, backend::Backend& be, backend::Stream s) const {
  const auto& tab = tables_on(be);
  const auto t_view = t_.on(be);
  const auto q_view = q_.on(be);
  // Adding h to every coefficient of the Q part would need a full polynomial per prime in eval
  // form; instead h is added to the T part's coefficients and t h subtracted again from the
  // converted value's coefficients.
  if (plain_ != 1) be.multiply_scalar_async(a_t, a_t, plain_inv_mod_t_, t_view, s);
  be.add_constant_async(a_t, a_t, tab.half_t_mod_t.as<u64>(), t_view, s);
  Buffer conv(be, q_.size() * q_.n() * sizeof(u64), s);
  t_to_q_.convert_async(conv.as<u64>(), a_t, be, s);
  if (plain_ != 1)
    be.multiply_scalar_async(conv.as<u64>(), conv.as<u64>(), plain_mod_q_, q_view, s);
  be.add_constant_async(conv.as<u64>(), conv.as<u64>(), tab.neg_half_t_mod_q.as<u64>(), q_view, s);
  return conv;
}

void DivideRound::apply_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                              backend::Stream s) const {
  const auto& tab = tables_on(be);
  const std::size_t words = t_.size() * q_.n();
  Buffer tmp_t(be, words * sizeof(u64), s);
  be.copy_async(tmp_t.as<u64>(), a_t, words * sizeof(u64), s);
  be.ntt_inverse_async(tmp_t.as<u64>(), t_.on(be), 1, s);
  Buffer conv = correction(tmp_t.as<u64>(), be, s);
  const auto q_view = q_.on(be);
  be.ntt_forward_async(conv.as<u64>(), q_view, 1, s);
  be.affine_sub_async(out, a_q, conv.as<u64>(), tab.zero.as<u64>(), tab.t_inv.as<u64>(),
                      tab.t_inv_shoup.as<u64>(), q_view, s);
}

void DivideRound::apply_coeff_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                                    backend::Stream s) const {
  const auto& tab = tables_on(be);
  const std::size_t words = t_.size() * q_.n();
  Buffer tmp_t(be, words * sizeof(u64), s);
  be.copy_async(tmp_t.as<u64>(), a_t, words * sizeof(u64), s);
  Buffer conv = correction(tmp_t.as<u64>(), be, s);
  be.affine_sub_async(out, a_q, conv.as<u64>(), tab.zero.as<u64>(), tab.t_inv.as<u64>(),
                      tab.t_inv_shoup.as<u64>(), q_.on(be), s);
}

}  // namespace ember::ring
