// rlwe::Context: the RNS ring Q = q_0..q_L, P = p_0..p_{k-1} with hybrid key switching (dnum
// digits), keys, encryption, decryption and key switching, on one device.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/ring/base_converter.h"
#include "ember/ring/divide_round.h"
#include "ember/ring/sampler.h"
#include "ember/rlwe/keys.h"

namespace ember::rlwe {

using backend::Device;
using ring::RnsBasis;

/// What a scheme adds to the RLWE core.
struct SchemeOptions {
  u64 tag = 0;            // scheme id, part of the parameter fingerprint
  u64 plain_modulus = 0;  // t of BFV/BGV (part of the fingerprint); 0 for CKKS
  /// BGV: every error is t e, and ModDown / modulus switching keep the message modulo t.
  bool errors_times_t = false;
  /// BFV: primes R of the extended basis Q u R of the multiplication (not used by keys).
  std::vector<u64> aux_primes;
  /// The primes of Q each level adds, from level 0 up (summing to |Q|); empty: one each. Level l
  /// holds the first rows(l) primes and a division by its last level (rescale, modulus switch)
  /// drops that level's primes at once: CKKS on 32-bit words keeps scales near 2^50 - 2^60 with
  /// levels of two primes. Part of the fingerprint when given.
  std::vector<std::size_t> level_primes;
};

/// ModUp's output: every digit's converted rows over the other primes of Q_level u P
/// (backend::KeyProductView::ext), in eval form; or, when `pending`, before their forward NTT,
/// which the one key product reading them runs (backend::ntt_key_product_async): in place on the
/// coefficient-form rows, or lifted from `lift` (one-prime digits).
struct ModUp {
  backend::Buffer ext;
  backend::Buffer coeff;  // the coefficients mod_up computed (lift.words points into them)
  backend::LiftedRows lift;
  bool pending = false;
  /// ext also holds every digit's own rows (digit j's row r at j * rows + r): the ModUp of a
  /// coefficient-form d with one-prime digits, whose key product reads no d in eval form.
  bool own_in_ext = false;
};

/// W: the word type of every polynomial, key and ciphertext (u64; u32 when every prime is below
/// 2^30, ParameterError otherwise). The 32-bit context runs the same steps; where the 64-bit one
/// calls a fused backend operation that has no 32-bit form yet (the lifted and pending ModUp,
/// the transform fused with the key product, the division fused with its NTT), it composes the
/// unfused ones (same values). Coefficient-form key switching (BFV's) throws ParameterError on
/// 32-bit words.
template <class W>
class ContextT {
 public:
  using Word = W;
  using RnsPoly = ring::RnsPolyT<W>;
  using SecretKey = SecretKeyT<W>;
  using PublicKey = PublicKeyT<W>;
  using SwitchKey = SwitchKeyT<W>;
  using Ciphertext = CiphertextT<W>;
  using KeyProductView = backend::KeyProductViewT<W>;
  /// Throws ParameterError for an empty Q or P, dnum outside [1, |Q|], or bad primes. `ring`:
  /// the ring of a context of the same parameters on another device, to share (its tables are
  /// per device already; its polynomials then move between the two without a change of basis);
  /// ParameterError unless its degree and primes are this context's. Null: a new ring.
  ContextT(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
           std::size_t dnum, Device device, const SchemeOptions& scheme,
           std::shared_ptr<const ring::RingContext> shared_ring = nullptr);
  ContextT(const ContextT&) = delete;
  ContextT& operator=(const ContextT&) = delete;

  std::size_t n() const { return n_; }
  std::size_t max_level() const { return rows_.size() - 1; }
  /// Primes of Q at `level` (its basis is the first rows(level) primes).
  std::size_t rows(std::size_t level) const { return rows_.at(level); }
  std::size_t q_count() const { return q_count_; }
  std::size_t p_count() const { return p_count_; }
  std::size_t dnum() const { return dnum_; }
  std::size_t alpha() const { return alpha_; }
  /// Digits of the decomposition at a level: ceil(rows(level) / alpha).
  std::size_t digits_at(std::size_t level) const { return (rows(level) + alpha_ - 1) / alpha_; }
  Device device() const { return device_; }
  backend::Backend& backend() const { return backend::backend_for(device_); }
  u64 params_id() const { return params_id_; }
  const std::shared_ptr<const ring::RingContext>& ring() const { return ring_; }
  const RnsBasis& q_basis(std::size_t level) const { return levels_.at(level).q; }
  /// Q_level u P (Q rows first): the basis of key products before their ModDown.
  const RnsBasis& qp_basis(std::size_t level) const { return levels_.at(level).qp; }
  /// P mod q_i for every prime of Q.
  const std::vector<u64>& p_mod_q() const { return p_mod_q_; }
  /// Q u P: the basis of the keys.
  const RnsBasis& full_basis() const { return full_; }
  /// R (BFV's auxiliary primes; empty basis otherwise), in the same ring after Q and P.
  const RnsBasis& aux_basis() const { return aux_; }
  u64 plain_modulus() const { return scheme_.plain_modulus; }
  /// The factor of every error: t for BGV, else 1.
  u64 error_factor() const { return scheme_.errors_times_t ? scheme_.plain_modulus : 1; }

  // Keys. The sampler supplies all randomness (an OS-keyed one unless a test fixes the key).
  /// Ternary secret: uniform over {-1, 0, 1}, or exactly `hamming_weight` nonzeros when > 0.
  SecretKey keygen(ring::Sampler& sampler, std::size_t hamming_weight = 0) const;
  PublicKey public_key(const SecretKey& sk, ring::Sampler& sampler) const;
  /// Key switching from s_from (eval form over the full basis) to sk.
  SwitchKey switch_key(const RnsPoly& s_from, const SecretKey& sk, ring::Sampler& sampler,
                       u64 galois) const;
  /// A switching key from s_from to sk usable only at level 0: only the rows of q_0 and P of its
  /// first digit are published (the rest are zero), so it is an RLWE sample modulo q_0 P only.
  /// Bootstrapping's switch to a sparse secret needs this: with the full modulus Q P, a sparse
  /// sk would be insecure.
  SwitchKey switch_key_level0(const RnsPoly& s_from, const SecretKey& sk,
                              ring::Sampler& sampler) const;
  SwitchKey relin_key(const SecretKey& sk, ring::Sampler& sampler) const;
  /// Key for the automorphism X -> X^g.
  SwitchKey galois_key(const SecretKey& sk, u64 galois, ring::Sampler& sampler) const;

  // Encryption of a plaintext m (over Q_level; the ciphertext takes m's form) and decryption.
  Ciphertext encrypt(const RnsPoly& m, const PublicKey& pk, ring::Sampler& sampler) const;
  Ciphertext encrypt_symmetric(const RnsPoly& m, const SecretKey& sk, ring::Sampler& sampler) const;
  /// c0 + c1 s (+ c2 s^2) on the first `limbs` primes, coefficient form.
  RnsPoly decrypt_core(const Ciphertext& ct, const SecretKey& sk, std::size_t limbs) const;

  // Key switching of d (eval form over Q_level).
  /// The converted rows of every ModUp digit of d (see backend::KeyProductView). `once`: the
  /// rows feed one key product (relinearization, a plain key switch, one rotation), which then
  /// runs their forward NTT itself (fused on the GPU).
  ModUp mod_up(const W* d, std::size_t level, backend::Stream s, bool once = false) const;
  /// mod_up of d given in coefficient form over Q_level (`coeff`, unchanged and kept alive by
  /// the caller until the key product has run): no INTT, for a d whose coefficients a scheme
  /// computed before its NTT (BFV's product).
  /// own_rows (one-prime digits only): ext also gets each digit's own row, so the key product
  /// needs no eval-form d (ModUp::own_in_ext).
  ModUp mod_up_coeff(const W* coeff, std::size_t level, backend::Stream s, bool once = false,
                     bool own_rows = false) const;
  /// key_switch for d, the outputs and the addends in coefficient form (BFV's ciphertexts): the
  /// ModUp lifts d's coefficients to every row of every digit (no INTT of d), the key products
  /// return to coefficient form in one INTT of all their rows, and the division by P is a
  /// conversion and a subtraction per coefficient (no NTT). out0 / out1 gain add0 / add1 (may
  /// be null), or their automorphism X -> X^add_galois (a rotation's sigma(c0); 0: none).
  void key_switch_coeff(const W* d, std::size_t level, const SwitchKey& key, u64 galois, W* out0,
                        W* out1, backend::Stream s, const W* add0 = nullptr,
                        const W* add1 = nullptr, u64 add_galois = 0) const;
  /// (out0, out1) over Q_level, eval form, with out0 + out1 s = g(d) s' + small, where g is the
  /// automorphism `galois` (0: none) applied to the digits and key switches s' -> s.
  /// add0 / add1 (eval form over Q_level, may be null) are added to the outputs in the same pass.
  /// rotated0 (eval form over Q_level, may be null) adds g(rotated0) to out0: a rotation's
  /// sigma(c0), folded into the key product (key_product's p_add), which the ModDown divides back
  /// exactly (one pass and one kernel fewer than an automorphism and an addend).
  /// p_coeff_adds (coefficient form over Q_level, two polynomials back to back: P e0, P e1) adds
  /// e0 / e1 to the outputs through the ModDown's own NTT (BFV's product, whose e0 / e1 come in
  /// coefficient form: no transform of their own).
  void key_switch(const W* d, const ModUp& up, std::size_t level, const SwitchKey& key, u64 galois,
                  W* out0, W* out1, backend::Stream s, const W* add0 = nullptr,
                  const W* add1 = nullptr, const W* rotated0 = nullptr,
                  const W* p_coeff_adds = nullptr) const;
  /// The key product of key_switch without its ModDown: out0 / out1 (each Q_level rows, then P
  /// rows, contiguous) hold P g(d) s' + small in the basis Q_level u P; with `p_add` (eval form
  /// over Q_level), out0 also gets P p_add(X^galois) on its Q rows in the same pass (a hoisted
  /// rotation's P sigma(c0)).
  void key_product(const W* d, const ModUp& up, std::size_t level, const SwitchKey& key, u64 galois,
                   W* out0, W* out1, backend::Stream s, const W* p_add = nullptr) const;
  /// The giant-step sums of a double-hoisted transform without storing its babies (see
  /// backend::BabyGiantView): baby b is the rotation by babies[b] of (c0, d), d's ModUp digits in
  /// ext, kept in Q_level u P; out[g] (two polynomials over Q_level u P, each Q rows then P rows)
  /// = sum_b plain[g][b] baby_b (plain[g][b] over Q_level u P, or null). Needs
  /// baby_giant_fits(level, babies, giants).
  void baby_giant_sums(const W* c0, const W* d, const ModUp& up, std::size_t level,
                       const std::vector<const SwitchKey*>& babies,
                       const std::vector<std::vector<const W*>>& plain, const std::vector<W*>& out,
                       backend::Stream s) const;
  static bool baby_giant_fits(std::size_t level, std::size_t babies, std::size_t giants) {
    return babies >= 1 && babies <= backend::BabyGiantView::kMaxBabies && giants >= 1 &&
           giants <= backend::BabyGiantView::kMaxGiants &&
           level + 1 <= backend::KeyProductView::kMaxAddRows;
  }
  /// ModDown (division by P: rounding, or BGV's rule) of `count` polynomials over Q_level u P
  /// (each contiguous, Q rows first) into out[k] over Q_level, plus addends[k] when not null.
  void mod_down_polys(W* const* out, const W* const* in, std::size_t count, std::size_t level,
                      backend::Stream s, const W* const* addends = nullptr) const;
  /// Division by P q_level (rounding; BGV's rule) of `count` polynomials over Q_level u P (each
  /// contiguous, Q rows first) into out[k] over Q_{level-1}: a ModDown and a rescale in one.
  void divide_extended(W* const* out, const W* const* in, std::size_t count, std::size_t level,
                       backend::Stream s) const;
  /// key_switch followed by the division by q_level, as one division by P q_level: out0 / out1
  /// over Q_{level-1} get (ks + P add) / (P q_level), rounded (BGV: its message-preserving rule,
  /// message times q_level^-1). add0 and add1 (over Q_level) are required. Saves the rescale's
  /// own INTT, conversion and NTT of every row. Throws ParameterError at level 0.
  /// With sub0 / sub1 (polynomials of level >= `level`, their first rows read) and per-prime
  /// integers `sub_scalars`, sub_scalars * (sub0, sub1) is subtracted before the division too.
  void key_switch_divide(const W* d, const ModUp& up, std::size_t level, const SwitchKey& key,
                         u64 galois, W* out0, W* out1, backend::Stream s, const W* add0,
                         const W* add1, const W* sub0 = nullptr, const W* sub1 = nullptr,
                         const std::vector<u64>& sub_scalars = {}) const;
  /// Division of `count` polynomials over Q_level (eval form) by the primes of its level (q_level
  /// with one prime a level) into out[k] over Q_{level-1} (may alias in[k]): rounding, or for BGV
  /// the message-preserving rule (see DivideRound); one batched division for all.
  void rescale_polys(W* const* out, const W* const* in, std::size_t count, std::size_t level,
                     backend::Stream s) const;
  /// log2 of the largest |z| over the coefficients of z = [multiplier (c0 + c1 s + ...)]_Q,
  /// centered (Q of the ciphertext's level): the noise measure of BFV (multiplier t) and BGV (1).
  double noise_log2(const Ciphertext& ct, const SecretKey& sk, u64 multiplier) const;

  // Rebuilding objects from their parts (deserialization). Each validates the shapes and
  // throws SerializationError when they do not fit these parameters.
  Ciphertext make_ciphertext(std::vector<RnsPoly> polys, std::size_t level, double scale,
                             u64 factor, u64 key_id) const;
  SecretKey make_secret_key(RnsPoly s, u64 key_id) const;
  /// Re-expands a from (seed, nonce).
  PublicKey make_public_key(RnsPoly b, const ChaChaKey& seed, u64 nonce, u64 key_id) const;
  /// Re-expands every a_j from (seed, nonce + j); b holds the dnum polynomials b_j.
  SwitchKey make_switch_key(const std::vector<RnsPoly>& b, const ChaChaKey& seed, u64 nonce,
                            u64 galois, u64 key_id) const;
  /// b_j of a switching key, as a polynomial over the full basis.
  RnsPoly switch_key_part(const SwitchKey& key, std::size_t j) const;
  /// a_j of a switching key (the uniform half), as a polynomial over the full basis: with b_j it
  /// lets a holder of the secret check the key (EvalKeys.verify).
  RnsPoly switch_key_uniform_part(const SwitchKey& key, std::size_t j) const;

  /// Throws MismatchError unless the object belongs to these parameters (and key set).
  void check_params(u64 params_id, const char* what) const;
  /// Throws MismatchError unless `d` is this context's device (an object of another device would
  /// be read through the wrong backend): move it with to() first.
  void check_device(Device d, const char* what) const;

 private:
  /// The one-prime digits of a coefficient-form d over Q_level (`coeff`) as a lifted NTT's input,
  /// each lifted to rows_per_digit rows, bounded by Q_level's largest prime (Level::largest_q).
  backend::LiftedRows lifted_digits(const W* coeff, std::size_t level,
                                    std::size_t rows_per_digit) const;
  /// The key inner product's view for d (its ModUp rows in ext) at a level.
  KeyProductView product_view(const W* d, const ModUp& up, std::size_t level, const SwitchKey& key,
                              u64 galois) const;
  /// A switching key whose uniform halves a_j are expanded from (seed, nonce + j); b_j unset.
  SwitchKey switch_key_with_uniform_parts(const ChaChaKey& seed, u64 nonce, u64 galois,
                                          u64 key_id) const;
  /// The kernel view of `basis` on this context's backend, in words W.
  backend::BasisViewT<W> view(const RnsBasis& basis) const {
    return basis.template view_on<W>(backend());
  }
  /// The division into out (Q part of each in, T rows from t_row) by `div`: the 64-bit fused
  /// path, or on 32-bit words its unfused steps.
  void divide_async(const ring::DivideRound& div, W* const* out, const W* const* in,
                    std::size_t t_row, std::size_t count, backend::Stream s,
                    const W* const* addends = nullptr, const W* coeff_addends = nullptr) const;
  /// The level of a plaintext (over some Q_l, on this device); throws MismatchError otherwise.
  std::size_t plaintext_level(const RnsPoly& m) const;
  struct Level {
    RnsBasis q;         // q_0..q_l
    RnsBasis qp;        // q_0..q_l, p_0..p_{k-1}
    RnsBasis ext;       // the converted rows of all digits, back to back
    RnsBasis ext_all;   // alpha 1: Q_l u P once per digit (a ModUp with the digits' own rows)
    u64 largest_q = 0;  // the largest prime of Q_l: the bound of its digits' words
    std::vector<std::unique_ptr<ring::BaseConverter>> digit_conv;  // D_j -> (Q_l u P) \ D_j
    std::unique_ptr<ring::DivideRound> mod_down;                   // Q_l u P -> Q_l
    std::unique_ptr<ring::DivideRound> rescale;                    // Q_l -> Q_{l-1}
    std::unique_ptr<ring::DivideRound> mod_down_rescale;  // Q_l u P -> Q_{l-1}: T = {q_l} u P
  };
  /// `count` error polynomials (Gaussian, times error_factor()) over `basis`, back to back, in
  /// `form` (eval: transformed by one batched NTT), drawn in order.
  backend::Buffer errors(const RnsBasis& basis, std::size_t count, ring::Sampler& sampler,
                         backend::Stream s, ring::Form form = ring::Form::eval) const;
  /// `count` Gaussian polynomials in place to `form` (eval: one NTT), then times error_factor().
  void scale_errors(W* e, const RnsBasis& basis, std::size_t count, backend::Stream s,
                    ring::Form form = ring::Form::eval) const;
  std::size_t n_, q_count_, p_count_, dnum_, alpha_;
  Device device_;
  SchemeOptions scheme_;
  u64 params_id_;
  std::shared_ptr<const ring::RingContext> ring_;
  RnsBasis full_, p_, aux_;
  std::vector<Level> levels_;
  std::vector<std::size_t> rows_;  // primes of Q per level
  std::vector<u64> gadget_;   // per digit j and full-basis prime i: P mod q_i if i in D_j, else 0
  std::vector<u64> p_mod_q_;  // P mod q_i for every prime of Q
};

using Context = ContextT<u64>;
using Context32 = ContextT<u32>;
extern template class ContextT<u64>;
extern template class ContextT<u32>;

/// 64-bit FNV-1a fingerprint of a parameter set.
u64 fingerprint(const SchemeOptions& scheme, std::size_t n, const std::vector<u64>& q,
                const std::vector<u64>& p, std::size_t dnum);

}  // namespace ember::rlwe
