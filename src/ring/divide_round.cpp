// DivideRound: round(a / T) over Q for a in evaluation form (ModDown and rescale).
#include "ember/ring/divide_round.h"

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ring {

using backend::Buffer;

struct DivideRound::DeviceTables {
  Buffer zero, half_t_mod_t, neg_half_t_mod_q, t_inv, t_inv_shoup;
};

DivideRound::DivideRound(RnsBasis q, RnsBasis t)
    : q_(std::move(q)),
      t_(std::move(t)),
      t_to_q_(t_, q_, /*exact=*/true),
      tables_(std::make_shared<backend::PerDevice<DeviceTables>>()) {
  const auto ts = t_.primes();
  for (u64 tj : ts) half_t_mod_t_.push_back(half_product_mod(ts, tj));
  for (u64 qi : q_.primes()) {
    neg_half_t_mod_q_.push_back(neg_mod(half_product_mod(ts, qi), qi));
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

void DivideRound::apply_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                              backend::Stream s) const {
  const auto& tab = tables_on(be);
  const std::size_t n = q_.n();
  const auto t_view = t_.on(be);
  const auto q_view = q_.on(be);
  // Rounding: round(a / T) = (a + h - ((a + h) mod T)) / T with h = floor(T/2) added to every
  // coefficient. Adding h to every coefficient of the Q part would need a full polynomial per
  // prime in eval form; instead h is added to the T part's coefficients and subtracted again
  // from the converted value's coefficients before its NTT: (a - (conv - h)) / T.
  Buffer tmp_t(be, t_.size() * n * sizeof(u64), s);
  be.copy_async(tmp_t.as<u64>(), a_t, t_.size() * n * sizeof(u64), s);
  be.ntt_inverse_async(tmp_t.as<u64>(), t_view, 1, s);
  be.add_constant_async(tmp_t.as<u64>(), tmp_t.as<u64>(), tab.half_t_mod_t.as<u64>(), t_view, s);
  Buffer conv(be, q_.size() * n * sizeof(u64), s);
  t_to_q_.convert_async(conv.as<u64>(), tmp_t.as<u64>(), be, s);
  be.add_constant_async(conv.as<u64>(), conv.as<u64>(), tab.neg_half_t_mod_q.as<u64>(), q_view, s);
  be.ntt_forward_async(conv.as<u64>(), q_view, 1, s);
  be.affine_sub_async(out, a_q, conv.as<u64>(), tab.zero.as<u64>(), tab.t_inv.as<u64>(),
                      tab.t_inv_shoup.as<u64>(), q_view, s);
}

}  // namespace ember::ring
