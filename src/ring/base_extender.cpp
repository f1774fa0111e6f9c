// BaseExtender: ModUp by fast base conversion, ModDown by DivideRound.
#include "ember/ring/base_extender.h"

#include "ember/core/errors.h"

namespace ember::ring {

BaseExtender::BaseExtender(RnsBasis q, RnsBasis p)
    : q_(std::move(q)), p_(std::move(p)), qp_(q_.concat(p_)), q_to_p_(q_, p_), down_(q_, p_) {}

RnsPoly BaseExtender::mod_up(const RnsPoly& a) const {
  if (a.basis() != q_) throw MismatchError("mod_up: the input is not over the extender's basis Q");
  if (a.form() != Form::coeff) throw MismatchError("mod_up needs coeff form; call intt() first");
  RnsPoly out(qp_, Form::coeff, a.device(), a.stream());
  auto& be = a.backend();
  auto s = a.stream();
  be.copy_async(out.data(), a.data(), a.words() * sizeof(u64), s);
  q_to_p_.convert_async(out.data() + a.words(), a.data(), be, s);
  return out;
}

RnsPoly BaseExtender::mod_down(const RnsPoly& a) const {
  if (a.basis() != qp_)
    throw MismatchError("mod_down: the input is not over the extended basis Q u P");
  if (a.form() != Form::coeff) throw MismatchError("mod_down needs coeff form; call intt() first");
  RnsPoly out(q_, Form::coeff, a.device(), a.stream());
  down_.apply_coeff_async(out.data(), a.data(), a.data() + q_.size() * q_.n(), a.backend(),
                          a.stream());
  return out;
}

}  // namespace ember::ring
