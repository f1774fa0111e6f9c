// rlwe::Evaluator: the ciphertext operations every RLWE scheme shares (addition, plaintext and
// scalar products, tensoring, relinearization, automorphisms, level dropping). CKKS, BFV and BGV
// derive from it and add their encodings, their multiplication and their modulus management.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/rlwe/context.h"

namespace ember::rlwe {

/// W: the word type (see ContextT): every operation runs on both and gives the same values over
/// the same primes, except BFV's coefficient-form key switching (64-bit words only).
template <class W>
class EvaluatorT {
 public:
  using Word = W;
  using RnsPoly = ring::RnsPolyT<W>;
  using SwitchKey = SwitchKeyT<W>;
  using Ciphertext = CiphertextT<W>;
  using Context = ContextT<W>;
  EvaluatorT(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
             std::size_t dnum, backend::Device device, const SchemeOptions& scheme,
             std::shared_ptr<const ring::RingContext> shared_ring = nullptr);
  virtual ~EvaluatorT() = default;
  EvaluatorT(const EvaluatorT&) = delete;
  EvaluatorT& operator=(const EvaluatorT&) = delete;
  Context& rlwe() { return rlwe_; }
  const Context& rlwe() const { return rlwe_; }
  std::size_t n() const { return rlwe_.n(); }
  std::size_t max_level() const { return rlwe_.max_level(); }
  u64 prime(std::size_t i) const { return rlwe_.ring()->prime(i); }

  /// The same ciphertext in `form` (one batched transform of its polynomials; a copy when it is
  /// already there). Every operation accepts either form: those that need eval form transform
  /// coefficient-form operands first; BFV's products, relinearizations and rotations of
  /// coefficient-form ciphertexts stay in coefficient form.
  Ciphertext to_form(const Ciphertext& a, ring::Form form) const;

  // Operands at the same level (the scheme layers match levels, scales and factors first).
  Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext negate(const Ciphertext& a) const;
  /// Adds / subtracts p (over the ciphertext's Q_level, either form) to c0.
  Ciphertext add_plain(const Ciphertext& a, const RnsPoly& p) const;
  Ciphertext sub_plain(const Ciphertext& a, const RnsPoly& p) const;
  Ciphertext multiply_plain(const Ciphertext& a, const RnsPoly& p) const;
  /// sum_i cts[i] * pts[i] (plaintexts in eval form over the ciphertexts' Q_level) in one pass
  /// per 32 terms: the diagonal sums of linear transforms. Throws for mismatched levels or keys.
  Ciphertext dot_plain(const std::vector<const Ciphertext*>& cts,
                       const std::vector<const RnsPoly*>& pts) const;
  /// Multiplies by one integer per prime of the level (an exact constant's residues).
  Ciphertext multiply_scalar(const Ciphertext& a, const std::vector<u64>& residues) const;
  /// sum_i scalars[i] cts[i] + constant at `level` (one integer per prime of that level for
  /// each; the constant is added to c0, may be empty): one pass per 15 terms. Operands may sit
  /// at any level at or above `level` (their first rows(level) rows are read: dropping is free);
  /// the result carries the first operand's scale (the caller's scalars make it exact).
  Ciphertext linear_combination(const std::vector<const Ciphertext*>& cts,
                                const std::vector<std::vector<u64>>& scalars,
                                const std::vector<u64>& constant, std::size_t level) const;
  /// out[j] = sum_i w[j][i] cts[i] + c[j] at `level` for every output j, one backend pass
  /// (linear_map_async): `weights` row-major [outputs][cts.size()][rows] and `constants`
  /// [outputs][rows] (rows: the level's primes), residues of integers. Operands as for
  /// linear_combination.
  std::vector<Ciphertext> linear_combinations(const std::vector<const Ciphertext*>& cts,
                                              const std::vector<u64>& weights,
                                              const std::vector<u64>& constants,
                                              std::size_t level) const;
  /// Adds the constant polynomial whose residues are given (c0 only).
  Ciphertext add_scalar(const Ciphertext& a, const std::vector<u64>& residues) const;
  /// The scheme's product before relinearization (3 polynomials). Here: the tensor product over
  /// Q_level (CKKS, and BGV's after matching levels); BFV's works in Q u R.
  virtual Ciphertext multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext relinearize(const Ciphertext& a, const SwitchKey& relin) const;
  /// multiply_no_relin, relinearize and divide_by_last_prime with one division by P q_level
  /// (see Context::key_switch_divide): CKKS's rescaled product, BGV's switched one.
  /// With `sub` (a ciphertext at a level >= the product's, same key set) and per-prime integers
  /// k (`sub_scalars`), the result is (a b - k sub) / q_level: Chebyshev's T_a+b = 2 T_a T_b -
  /// T_a-b without aligning T_a-b first. CKKS only (the scheme sets the scales).
  Ciphertext multiply_divide(const Ciphertext& a, const Ciphertext& b, const SwitchKey& relin,
                             const Ciphertext* sub = nullptr,
                             const std::vector<u64>& sub_scalars = {}) const;
  /// multiply_no_relin, then relinearize.
  virtual Ciphertext multiply(const Ciphertext& a, const Ciphertext& b,
                              const SwitchKey& relin) const;
  /// Drops primes down to `level` (no division: the CKKS scale and BGV factor are unchanged).
  Ciphertext drop_level(const Ciphertext& a, std::size_t level) const;
  /// X -> X^galois with its key.
  Ciphertext apply_galois(const Ciphertext& a, const SwitchKey& key) const;
  /// One giant step of a baby-step giant-step linear transform: its rotation key (nullptr: none)
  /// and its terms (index into the baby steps, plaintext over Q_level u P in eval form).
  struct TransformGiant {
    const SwitchKey* key = nullptr;
    std::vector<std::pair<std::size_t, const RnsPoly*>> terms;
  };
  /// sum_g rot_g(sum_(b, p) p * rot_b(x)) / q_level with baby steps rot_b = x itself (index 0)
  /// and the automorphisms of `babies` (indices 1..): double hoisting. The baby rotations share
  /// one ModUp and stay in Q u P without a ModDown; each giant step's sum takes one ModDown and
  /// its rotation's key product stays in Q u P too; the rotated sums are divided once by
  /// P q_level (ModDown and rescale in one). Level - 1; scale x.scale / q_level (the caller
  /// multiplies in the plaintexts' scale).
  Ciphertext linear_transform_hoisted(const Ciphertext& x,
                                      const std::vector<const SwitchKey*>& babies,
                                      const std::vector<TransformGiant>& giants) const;
  /// Key switching without an automorphism: the same message under the key's target secret
  /// (bootstrapping's switches to and from a sparse secret). The key must have galois 0.
  Ciphertext switch_key(const Ciphertext& a, const SwitchKey& key) const;
  /// Several automorphisms of one ciphertext sharing one ModUp (hoisting).
  std::vector<Ciphertext> apply_galois_hoisted(const Ciphertext& a,
                                               const std::vector<const SwitchKey*>& keys) const;
  /// Divides every polynomial by the last prime of its level (CKKS rescale: rounding; BGV
  /// modulus switching: message kept modulo t, times q_level^-1, which `factor` records).
  /// With levels of several primes (SchemeOptions::level_primes), by all the primes of its level.
  Ciphertext divide_by_last_prime(const Ciphertext& a) const;
  /// divide_by_last_prime down to `level` (BFV/BGV modulus switching; a copy at the same level).
  Ciphertext mod_switch(const Ciphertext& a, std::size_t level) const;

 protected:
  void check_one(const Ciphertext& a, const char* op) const;
  /// Same parameters and key set (any levels).
  void check_pair_keys(const Ciphertext& a, const Ciphertext& b, const char* op) const;
  /// Same parameters, key set and level.
  void check_pair(const Ciphertext& a, const Ciphertext& b, const char* op) const;
  /// The operands of a linear combination: one key set, relinearized, at or above `level`.
  void check_linear_operands(const std::vector<const Ciphertext*>& cts, std::size_t level,
                             const std::string& op) const;
  /// Operands that mix coefficient and evaluation form, all in evaluation form (converted
  /// copies kept in `held`); empty when they already share one form.
  std::vector<const Ciphertext*> in_eval_form_if_mixed(const std::vector<const Ciphertext*>& cts,
                                                       std::vector<Ciphertext>& held) const;
  /// check_pair for a product, whose operands must also be relinearized (2 polynomials).
  void check_product(const Ciphertext& a, const Ciphertext& b) const;
  /// a in eval form: a itself, or its transform kept in `holder`.
  const Ciphertext& eval_form(const Ciphertext& a, Ciphertext& holder) const;
  /// Uninitialized ciphertext with a's level, scale, factor, key set and form.
  Ciphertext like(const Ciphertext& a, std::size_t polys) const { return like(a, polys, a.level); }
  /// The same at another level (scale, factor and key set kept).
  Ciphertext like(const Ciphertext& a, std::size_t polys, std::size_t level) const;
  /// Uninitialized ciphertext for a divided by its last prime: level - 1, scale / q_level, and
  /// for BGV the factor times q_level^-1 (the message became m q_level^-1 mod t).
  Ciphertext divided_like(const Ciphertext& a, std::size_t polys) const;
  /// out0/out1 = sum_i a0[i]/a1[i] * p[i] over the basis view, in chunks of kMaxDotTerms.
  void dot_plain_rows(W* out0, W* out1, const std::vector<const W*>& a0,
                      const std::vector<const W*>& a1, const std::vector<const W*>& p,
                      const backend::BasisViewT<W>& v, backend::Stream s) const;
  Context rlwe_;
};

using Evaluator = EvaluatorT<u64>;
extern template class EvaluatorT<u64>;
extern template class EvaluatorT<u32>;

}  // namespace ember::rlwe
