// DivideRound: (a - delta) / T over Q with delta = a mod T chosen for rounding (or for BGV).
#include "ember/ring/divide_round.h"

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ring {

using backend::Buffer;

namespace {
/// The conversion T -> Q that yields delta from a's T residues in one pass. With h = floor(T/2):
/// delta = t ((a t^-1 + h) mod T - h), which is a mod T, centered (t = 1: the rounding remainder
/// of a + h) and a multiple of t.
ConversionMaps correction_maps(const RnsBasis& q, const RnsBasis& t, u64 plain) {
  if (plain == 0) throw ParameterError("DivideRound: the plaintext modulus must be >= 1");
  const auto ts = t.primes();
  ConversionMaps maps;
  for (u64 tj : ts) {
    if (plain != 1) maps.in_mul.push_back(inverse_mod(plain % tj, tj));
    maps.in_add.push_back(half_product_mod(ts, tj));
  }
  for (u64 qi : q.primes()) {
    const u64 plain_q = plain % qi;
    if (plain != 1) maps.out_mul.push_back(plain_q);
    maps.out_add.push_back(
        neg_mod(mul_mod(half_product_mod(ts, qi), plain_q, make_modulus(qi)), qi));
  }
  return maps;
}
}  // namespace

struct DivideRound::DeviceTables {
  Buffer zero, t_inv, t_inv_shoup;
};

DivideRound::DivideRound(RnsBasis q, RnsBasis t, u64 plain_modulus)
    : q_(std::move(q)),
      t_(std::move(t)),
      plain_(plain_modulus),
      t_to_q_(t_, q_, /*exact=*/true, correction_maps(q_, t_, plain_modulus)),
      tables_(std::make_shared<backend::PerDevice<DeviceTables>>()) {
  const auto ts = t_.primes();
  for (u64 qi : q_.primes()) {
    t_inv_mod_q_.push_back(inverse_mod(product_mod(ts, qi), qi));
    t_inv_shoup_.push_back(shoup_precompute(t_inv_mod_q_.back(), qi));
  }
}

const DivideRound::DeviceTables& DivideRound::tables_on(backend::Backend& be) const {
  return tables_->get(be, [&](backend::Backend& b) {
    DeviceTables t;
    t.zero = backend::upload(b, std::vector<u64>(q_.size(), 0));
    t.t_inv = backend::upload(b, t_inv_mod_q_);
    t.t_inv_shoup = backend::upload(b, t_inv_shoup_);
    return t;
  });
}

void DivideRound::apply_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                              backend::Stream s) const {
  const std::size_t words = t_.size() * q_.n();
  Buffer tmp_t(be, words * sizeof(u64), s);
  be.copy_async(tmp_t.as<u64>(), a_t, words * sizeof(u64), s);
  apply_many_async(&out, &a_q, tmp_t.as<u64>(), 1, be, s);
}

void DivideRound::apply_many_async(u64* const* out, const u64* const* a_q, u64* a_t,
                                   std::size_t count, backend::Backend& be,
                                   backend::Stream s) const {
  const auto& tab = tables_on(be);
  const std::size_t t_words = t_.size() * q_.n(), q_words = q_.size() * q_.n();
  be.ntt_inverse_async(a_t, t_.on(be), count, s);
  Buffer delta(be, count * q_words * sizeof(u64), s);
  for (std::size_t k = 0; k < count; ++k)
    t_to_q_.convert_async(delta.as<u64>() + k * q_words, a_t + k * t_words, be, s);
  const auto q_view = q_.on(be);
  be.ntt_forward_async(delta.as<u64>(), q_view, count, s);
  for (std::size_t k = 0; k < count; ++k)
    be.affine_sub_async(out[k], a_q[k], delta.as<u64>() + k * q_words, tab.zero.as<u64>(),
                        tab.t_inv.as<u64>(), tab.t_inv_shoup.as<u64>(), q_view, s);
}

void DivideRound::apply_coeff_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                                    backend::Stream s) const {
  const auto& tab = tables_on(be);
  Buffer delta(be, q_.size() * q_.n() * sizeof(u64), s);
  t_to_q_.convert_async(delta.as<u64>(), a_t, be, s);
  be.affine_sub_async(out, a_q, delta.as<u64>(), tab.zero.as<u64>(), tab.t_inv.as<u64>(),
                      tab.t_inv_shoup.as<u64>(), q_.on(be), s);
}

}  // namespace ember::ring
