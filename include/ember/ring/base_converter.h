// Fast RNS base conversion (Q -> P) and the ModUp / ModDown of hybrid key switching.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/backend/per_device.h"
#include "ember/ring/rns_poly.h"

namespace ember::ring {

/// Approximate base conversion of Bajard et al.: for x in [0, Q), returns x + u*Q over P with
/// 0 <= u < |Q| (no correction of the Q-overflow, as in every fast hybrid key switching).
class BaseConverter {
 public:
  /// Throws MismatchError when the bases belong to different rings or share a prime.
  /// exact=true gives x mod Q exactly (HPS: the overflow count estimated in floating point).
  BaseConverter(RnsBasis from, RnsBasis to, bool exact = false);
  const RnsBasis& from() const { return from_; }
  const RnsBasis& to() const { return to_; }
  /// `a` over `from`, coefficient form -> result over `to`, coefficient form.
  RnsPoly convert(const RnsPoly& a) const;
  /// Raw launch into caller memory (for fused scheme code).
  void convert_async(u64* out, const u64* a, backend::Backend& be, backend::Stream s) const;
  backend::BaseConvView view_on(backend::Backend& be) const;

 private:
  struct DeviceTables;
  RnsBasis from_, to_;
  bool exact_ = false;
  std::vector<u64> qhat_inv_, qhat_inv_shoup_, qhat_mod_p_, q_mod_p_;
  std::vector<double> inv_q_;
  std::shared_ptr<backend::PerDevice<DeviceTables>> tables_;
};

/// ModUp (Q -> Q u P) and ModDown with rounding (Q u P -> Q) for disjoint bases Q and P.
class BaseExtender {
 public:
  BaseExtender(RnsBasis q, RnsBasis p);
  const RnsBasis& q() const { return q_; }
  const RnsBasis& p() const { return p_; }
  const RnsBasis& qp() const { return qp_; }
  /// `a` over Q, coeff form -> over Q u P: the Q limbs unchanged, the P limbs x + uQ (0 <= u <
  /// |Q|).
  RnsPoly mod_up(const RnsPoly& a) const;
  /// `a` over Q u P, coeff form -> round(a / P) + e over Q with -|P| < e <= 0: the fast P -> Q
  /// conversion returns z mod P + u P (0 <= u < |P|), which lowers the quotient by u.
  RnsPoly mod_down(const RnsPoly& a) const;

 private:
  RnsBasis q_, p_, qp_;
  BaseConverter q_to_p_, p_to_q_;
  std::vector<u64> p_inv_mod_q_, half_p_mod_q_, half_p_mod_p_;
};

}  // namespace ember::ring
