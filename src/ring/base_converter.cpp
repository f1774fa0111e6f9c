// Fast and exact base conversion tables and launches.
#include "ember/ring/base_converter.h"

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ring {

using backend::Buffer;

struct BaseConverter::DeviceTables {
  Buffer qhat_inv, qhat_inv_shoup, qhat_mod_p, inv_q, q_mod_p;
  backend::BaseConvView view;
};

BaseConverter::BaseConverter(RnsBasis from, RnsBasis to, bool exact)
    : from_(std::move(from)),
      to_(std::move(to)),
      exact_(exact),
      tables_(std::make_shared<backend::PerDevice<DeviceTables>>()) {
  from_.concat(to_);  // throws MismatchError for other rings or shared primes
  const auto q = from_.primes();
  const auto p = to_.primes();
  qhat_inv_.resize(q.size());
  qhat_inv_shoup_.resize(q.size());
  qhat_mod_p_.resize(q.size() * p.size());
  for (std::size_t i = 0; i < q.size(); ++i) {
    qhat_inv_[i] = inverse_mod(product_mod(q, q[i], i), q[i]);
    qhat_inv_shoup_[i] = shoup_precompute(qhat_inv_[i], q[i]);
    for (std::size_t j = 0; j < p.size(); ++j)
      qhat_mod_p_[i * p.size() + j] = product_mod(q, p[j], i);
    inv_q_.push_back(1.0 / static_cast<double>(q[i]));
  }
  for (u64 pj : p) q_mod_p_.push_back(product_mod(q, pj));
}

backend::BaseConvView BaseConverter::view_on(backend::Backend& be) const {
  return tables_
      ->get(be,
            [&](backend::Backend& b) {
              DeviceTables t;
              t.qhat_inv = backend::upload(b, qhat_inv_);
              t.qhat_inv_shoup = backend::upload(b, qhat_inv_shoup_);
              t.qhat_mod_p = backend::upload(b, qhat_mod_p_);
              t.inv_q = backend::upload(b, inv_q_);
              t.q_mod_p = backend::upload(b, q_mod_p_);
              t.view.from_limbs = from_.size();
              t.view.to_limbs = to_.size();
              t.view.qhat_inv = t.qhat_inv.as<const u64>();
              t.view.qhat_inv_shoup = t.qhat_inv_shoup.as<const u64>();
              t.view.qhat_mod_p = t.qhat_mod_p.as<const u64>();
              if (exact_) {
                t.view.inv_q = t.inv_q.as<const double>();
                t.view.q_mod_p = t.q_mod_p.as<const u64>();
              }
              return t;
            })
      .view;
}

void BaseConverter::convert_async(u64* out, const u64* a, backend::Backend& be,
                                  backend::Stream s) const {
  be.base_convert_async(out, a, view_on(be), from_.on(be), to_.on(be), s);
}

RnsPoly BaseConverter::convert(const RnsPoly& a) const {
  if (a.basis() != from_)
    throw MismatchError("base conversion: the input's basis is not the converter's source basis");
  if (a.form() != Form::coeff)
    throw MismatchError("base conversion needs coeff form; call intt() first");
  RnsPoly out(to_, Form::coeff, a.device());
  auto& be = a.backend();
  convert_async(out.data(), a.data(), be, be.default_stream());
  return out;
}

}  // namespace ember::ring
