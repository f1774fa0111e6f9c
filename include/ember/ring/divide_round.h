// DivideRound: division by the product T of trailing primes with rounding (ModDown of hybrid key
// switching, CKKS rescaling, BFV scaling and modulus switching) or, for BGV, with the correction
// that keeps the message modulo t (BGV modulus switching and ModDown).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/ring/base_converter.h"

namespace ember::ring {

class DivideRound {
 public:
  /// plain_modulus = 1: out = round(a / T). plain_modulus = t > 1 (coprime to T): out =
  /// (a - delta) / T with delta = t [a t^-1]_T centered, so delta = a mod T, delta = 0 mod t and
  /// out = a T^-1 mod t: the BGV rule. With a multiplier m (invertible modulo every prime), a is
  /// replaced by m a at no extra cost: round(m a / T) is BFV's scaling by t / Q. Throws
  /// MismatchError for bases of different rings or sharing a prime.
  DivideRound(RnsBasis q, RnsBasis t, u64 plain_modulus = 1, u64 multiplier = 1);
  const RnsBasis& q() const { return q_; }
  const RnsBasis& t() const { return t_; }
  /// out[k] (over Q) for `count` polynomials a[k], all in evaluation form: a[k]'s first |Q| rows
  /// are its Q part and its T part is the |T| rows from row `t_row` of the same buffer (only
  /// read; T's rows may overlap Q's last one, as for a rescale's q_l). The T -> Q conversion is
  /// exact (its floating-point overflow estimate can be off by one only when the value is within
  /// 2^-50 T of a rounding boundary). out[k] may alias a[k].
  /// With `addends`, out[k] = result + addends[k] (null entries: none), fused into the last pass.
  /// With `coeff_addends` (the count polynomials back to back over Q, coefficient form, each
  /// already divided by the multiplier: e[k] T m^-1 for an addend e[k]), out[k] gains e[k]
  /// through the division's own NTT (see Backend::convert_ntt_affine_sub_async).
  void apply_many_async(u64* const* out, const u64* const* a, std::size_t t_row, std::size_t count,
                        backend::Backend& be, backend::Stream s,
                        const u64* const* addends = nullptr,
                        const u64* coeff_addends = nullptr) const;
  /// The same on 32-bit words (every prime below 2^30): the T rows' INTT, the 32-bit conversion,
  /// its NTT and the pointwise steps, unfused (the same words as the 64-bit division).
  void apply_many_async(u32* const* out, const u32* const* a, std::size_t t_row, std::size_t count,
                        backend::Backend& be, backend::Stream s,
                        const u32* const* addends = nullptr) const;
  /// The division of one polynomial given as its Q part and its T part, coefficient form, into a
  /// new one over Q: on 64-bit words apply_coeff_async; on 32-bit words (every prime below 2^30)
  /// the same words from the T -> Q conversion and the pointwise steps on u32.
  template <class W>
  RnsPolyT<W> divide(const RnsPolyT<W>& a_q, const RnsPolyT<W>& a_t) const;
  /// One polynomial with a_q, a_t and out in coefficient form (a_t is only read).
  void apply_coeff_async(u64* out, const u64* a_q, const u64* a_t, backend::Backend& be,
                         backend::Stream s) const;
  /// The conversions apply_coeff_many_async starts with: job k writes delta[k] (over Q,
  /// coefficient form, the polynomials back to back) from a_t[k]; the division is then
  /// (a_q - delta) * multiplier(). A caller that only converts the quotient further folds that
  /// map into its next conversion (ConvJob::in_sub, BaseConverter::centered's in_mul).
  std::vector<backend::ConvJob> remainder_jobs(u64* delta, const u64* const* a_t, std::size_t count,
                                               backend::Backend& be) const;
  /// m T^-1 mod q_i for each prime of Q (see remainder_jobs).
  const std::vector<u64>& multiplier() const { return t_inv_mod_q_; }
  /// apply_coeff_async for `count` polynomials, the conversions in one launch. With `addends`
  /// (coefficient form over Q, null entries: none), out[k] gains addends[k](X^addend_galois)
  /// (0 or 1: as it is) in the same pass: a ModDown in coefficient form with a rotation's
  /// sigma(c0) folded in.
  void apply_coeff_many_async(u64* const* out, const u64* const* a_q, const u64* const* a_t,
                              std::size_t count, backend::Backend& be, backend::Stream s,
                              const u64* const* addends = nullptr, u64 addend_galois = 0) const;

 private:
  struct DeviceTables;
  const DeviceTables& tables_on(backend::Backend& be) const;
  RnsBasis q_, t_;
  BaseConverter t_to_q_;  // T -> Q: delta / m in one pass (maps: m t^-1, + h, * t / m, - t h / m)
  std::vector<u64> t_inv_mod_q_, t_inv_shoup_;  // m T^-1 mod q_i
  std::shared_ptr<backend::PerDevice<DeviceTables>> tables_;
};

}  // namespace ember::ring
