// BaseExtender: ModUp (Q -> Q u P) and ModDown (Q u P -> Q) in coefficient form.
#pragma once

#include "ember/ring/base_converter.h"
#include "ember/ring/divide_round.h"

namespace ember::ring {

/// For disjoint bases Q and P. ModDown is DivideRound (the one mechanism key switching uses),
/// wrapped in the transforms to and from evaluation form.
class BaseExtender {
 public:
  BaseExtender(RnsBasis q, RnsBasis p);
  const RnsBasis& q() const { return q_; }
  const RnsBasis& p() const { return p_; }
  const RnsBasis& qp() const { return qp_; }
  /// `a` over Q, coeff form -> over Q u P: the Q limbs unchanged, the P limbs x + uQ
  /// (0 <= u < |Q|, the fast conversion's overflow).
  RnsPoly mod_up(const RnsPoly& a) const;
  /// `a` over Q u P, coeff form -> round(a / P) over Q, coeff form.
  RnsPoly mod_down(const RnsPoly& a) const;

 private:
  RnsBasis q_, p_, qp_;
  BaseConverter q_to_p_;
  DivideRound down_;
};

}  // namespace ember::ring
