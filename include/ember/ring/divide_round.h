// DivideRound: rounding division by the product T of trailing primes, in evaluation form.
// ModDown of hybrid key switching (T = P) and CKKS rescaling (T = the last prime) are both this.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/ring/base_converter.h"

namespace ember::ring {

class DivideRound {
 public:
  /// Throws MismatchError for bases of different rings or sharing a prime.
  DivideRound(RnsBasis q, RnsBasis t);
  const RnsBasis& q() const { return q_; }
  const RnsBasis& t() const { return t_; }
  /// out (over Q, eval) = round(a / T) per coefficient (the T -> Q conversion is exact, so no
  /// overflow bias is left; the floating-point overflow estimate can be off by one only when
  /// a mod T is within 2^-50 T of 0 or T). a is given by its Q part a_q and its T part a_t,
  /// both in eval form. `out` may alias `a_q`.
  void apply_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                   backend::Stream s) const;

 private:
  struct DeviceTables;
  const DeviceTables& tables_on(backend::Backend& be) const;
  RnsBasis q_, t_;
  BaseConverter t_to_q_;
  std::vector<u64> half_t_mod_t_, neg_half_t_mod_q_, t_inv_mod_q_, t_inv_shoup_;
  std::shared_ptr<backend::PerDevice<DeviceTables>> tables_;
};

}  // namespace ember::ring
