// SplitEvaluator: one relinearized multiplication or one rotation spread over the devices of a
// set, each device holding a contiguous range of the Q rows of every polynomial; the results are
// word for word those of one device.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ember/dist/communicator.h"
#include "ember/rlwe/context.h"

namespace ember::rlwe {

/// A ciphertext split by rows over a device set: rank d holds rows `rows[d]` of every polynomial
/// (primes q_begin .. q_end-1 of Q_level), on the set's device d, in eval form.
struct SplitCiphertext {
  SplitCiphertext() = default;
  SplitCiphertext(SplitCiphertext&&) noexcept = default;
  SplitCiphertext& operator=(SplitCiphertext&&) noexcept = default;
  SplitCiphertext(const SplitCiphertext&) = delete;
  SplitCiphertext& operator=(const SplitCiphertext&) = delete;
  std::vector<std::vector<RnsPoly>> parts;  // [rank][polynomial]
  std::vector<dist::RowRange> rows;         // [rank]
  std::size_t level = 0;
  double scale = 1.0;
  u64 factor = 1;
  u64 key_id = 0;
  u64 params_id = 0;
  std::size_t polys() const { return parts.empty() ? 0 : parts[0].size(); }
};

/// Splits key switching by the rows of its target basis (HE-Booster's partition by primes, with
/// the digits' conversions split by target columns): rank d owns Q rows [b_d, e_d) and computes
/// the special primes P itself, so its key product, ModDown and result need no other rank's rows
/// except d's coefficients, which one all-gather brings (|Q_l| rows, the only exchange):
///   1. tensor (a product) on the rank's rows, inverse NTT of d = c2 (or c1 for a rotation);
///   2. all-gather of d's coefficient rows: every rank holds all of d in coefficient form;
///   3. ModUp of every digit D_j to the rank's rows [b_d, e_d) u P (the digit's own rows there
///      are copied), forward NTT fused with the key inner product over those rows;
///   4. ModDown (P -> [b_d, e_d)) with the tensor's c0, c1 (or the rotation's P sigma(c0)).
/// The extra work is P's rows, computed on every rank (4 of 41 rows at N16_36+4). Each
/// conversion, transform and reduction is per target row, so the words equal one device's.
/// Keys are the whole switching keys, one copy per device (SwitchKey::to); a rank reads only its
/// rows. Split ciphertexts live on the communicator's streams (one per device), so the exchange
/// needs no joins of other streams. Not thread-safe: one operation at a time per object.
class SplitEvaluator {
 public:
  /// `ctx`: the parameters (any device; it must outlive this object). Throws ParameterError for
  /// a set with more devices than Q_0.. rows at level 0 would allow at the levels used (checked
  /// per operation), DeviceError when a device cannot be opened.
  SplitEvaluator(const Context& ctx, dist::DeviceSet devices,
                 dist::Exchange exchange = dist::Exchange::automatic);
  ~SplitEvaluator();

  const dist::DeviceSet& devices() const;
  const dist::Communicator& communicator() const;
  /// The rows of rank d at `level`: dist::partition_rows(level + 1, devices).
  std::vector<dist::RowRange> rows_at(std::size_t level) const;

  /// `a` (eval form, any device) split over the set: rank d gets rows_at(a.level)[d].
  SplitCiphertext split(const Ciphertext& a) const;
  /// The whole ciphertext on `device`, eval form.
  Ciphertext gather(const SplitCiphertext& a, backend::Device device) const;

  /// a * b relinearized (not rescaled) with `relin[d]`, the relinearization key on device d. The
  /// scale is a.scale * b.scale; with a plain modulus t (BGV) the factor is a.factor b.factor
  /// mod t. BFV is refused (its product works in Q u R).
  SplitCiphertext multiply(const SplitCiphertext& a, const SplitCiphertext& b,
                           const std::vector<const SwitchKey*>& relin);
  /// The automorphism X -> X^galois of `a` with keys[d], its Galois key on device d.
  SplitCiphertext apply_galois(const SplitCiphertext& a, const std::vector<const SwitchKey*>& keys);
  /// Waits until the work queued on every part's stream so far is done.
  void synchronize(const SplitCiphertext& a) const;

 private:
  struct Plan;
  const Plan& plan(std::size_t rank, std::size_t level) const;
  void check(const SplitCiphertext& a, const char* op) const;
  void check_keys(const std::vector<const SwitchKey*>& keys, const SplitCiphertext& a, u64 galois,
                  const char* op) const;
  /// Steps 2-4 for d (coefficient rows per rank): out[rank] = its two result polynomials.
  void key_switch(std::vector<RnsPoly>& d_coeff, const SplitCiphertext& like,
                  const std::vector<const SwitchKey*>& keys, u64 galois,
                  const std::vector<const u64*>& add0, const std::vector<const u64*>& add1,
                  const std::vector<const u64*>& rotated0, std::vector<std::vector<RnsPoly>>& out);

  const Context& ctx_;
  std::unique_ptr<dist::Communicator> comm_;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<Plan>> plans_;
};

}  // namespace ember::rlwe
