// rlwe::Evaluator: the scheme-independent ciphertext operations.
#include "ember/rlwe/evaluator.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::rlwe {

using backend::Stream;
using ring::Form;

template <class W>
EvaluatorT<W>::EvaluatorT(std::size_t n, const std::vector<u64>& q_primes,
                          const std::vector<u64>& p_primes, std::size_t dnum,
                          backend::Device device, const SchemeOptions& scheme,
                          std::shared_ptr<const ring::RingContext> shared_ring)
    : rlwe_(n, q_primes, p_primes, dnum, device, scheme, std::move(shared_ring)) {}

template <class W>
void EvaluatorT<W>::check_one(const Ciphertext& a, const char* op) const {
  rlwe_.check_params(a.params_id, op);
  if (a.polys.size() < 2) throw ParameterError(std::string(op) + ": empty ciphertext");
  for (const auto& p : a.polys)
    if (!(p.device() == rlwe_.device()))
      rlwe_.check_device(p.device(), (std::string(op) + ": the ciphertext").c_str());
}

template <class W>
void EvaluatorT<W>::check_pair_keys(const Ciphertext& a, const Ciphertext& b,
                                    const char* op) const {
  check_one(a, op);
  check_one(b, op);
  if (a.key_id != b.key_id)
    throw MismatchError(std::string(op) +
                        ": the ciphertexts were encrypted under different key sets");
}

template <class W>
void EvaluatorT<W>::check_pair(const Ciphertext& a, const Ciphertext& b, const char* op) const {
  check_pair_keys(a, b, op);
  if (a.level != b.level)
    throw MismatchError(std::string(op) + ": the ciphertexts are at different levels (" +
                        std::to_string(a.level) + " and " + std::to_string(b.level) + ")");
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::to_form(const Ciphertext& a, Form form) const {
  check_one(a, "to_form");
  if (a.form() == form) return a.copy();
  auto& be = rlwe_.backend();
  const ring::RnsBasis& q = rlwe_.q_basis(a.level);
  Ciphertext c = like(a, 0);
  c.polys = RnsPoly::batch(q, form, rlwe_.device(), a.polys.size(), a.stream());
  std::vector<const W*> in;
  for (const auto& p : a.polys) in.push_back(p.data());
  // The polynomials back to back in one allocation: one launch transforms them all.
  if constexpr (sizeof(W) == 4) {  // no gathering transform on 32-bit words: copy, then transform
    const std::size_t words = c.polys[0].words();
    for (std::size_t k = 0; k < in.size(); ++k)
      be.copy_async(c.polys[0].data() + k * words, in[k], words * sizeof(W), a.stream());
    if (form == Form::eval)
      be.ntt_forward_async(c.polys[0].data(), q.template view_on<W>(be), in.size(), a.stream());
    else
      be.ntt_inverse_async(c.polys[0].data(), q.template view_on<W>(be), in.size(), a.stream());
  } else if (form == Form::eval)
    be.ntt_forward_async(c.polys[0].data(), in.data(), q.template view_on<W>(be), in.size(),
                         a.stream());
  else
    be.ntt_inverse_async(c.polys[0].data(), in.data(), q.template view_on<W>(be), in.size(),
                         a.stream());
  return c;
}

template <class W>
const typename EvaluatorT<W>::Ciphertext& EvaluatorT<W>::eval_form(const Ciphertext& a,
                                                                   Ciphertext& holder) const {
  if (a.form() == Form::eval) return a;
  holder = to_form(a, Form::eval);
  return holder;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::like(const Ciphertext& a, std::size_t polys,
                                                       std::size_t level) const {
  Ciphertext c;
  const ring::RnsBasis& q = rlwe_.q_basis(level);
  for (std::size_t i = 0; i < polys; ++i)
    c.polys.emplace_back(q, a.form(), rlwe_.device(), a.stream());
  c.level = level;
  c.scale = a.scale;
  c.factor = a.factor;
  c.key_id = a.key_id;
  c.params_id = a.params_id;
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::divided_like(const Ciphertext& a,
                                                               std::size_t polys) const {
  Ciphertext c = like(a, polys, a.level - 1);
  for (std::size_t i = rlwe_.rows(a.level - 1); i < rlwe_.rows(a.level); ++i) {
    const u64 q = prime(i);  // the primes of the level divided away
    c.scale /= static_cast<double>(q);
    if (rlwe_.error_factor() != 1) {
      const u64 t = rlwe_.plain_modulus();
      c.factor = mul_mod(c.factor, inverse_mod(q % t, t), make_modulus(t));
    }
  }
  return c;
}

template <class W>
void EvaluatorT<W>::dot_plain_rows(W* out0, W* out1, const std::vector<const W*>& a0,
                                   const std::vector<const W*>& a1, const std::vector<const W*>& p,
                                   const backend::BasisViewT<W>& v, Stream s) const {
  auto& be = rlwe_.backend();
  {
    constexpr std::size_t kChunk = backend::Backend::kMaxDotTerms;
    for (std::size_t at = 0; at < p.size(); at += kChunk) {
      const std::size_t end = std::min(p.size(), at + kChunk);
      be.dot_plain_async(out0, out1, {a0.begin() + at, a0.begin() + end},
                         {a1.begin() + at, a1.begin() + end}, {p.begin() + at, p.begin() + end},
                         at ? out0 : nullptr, at ? out1 : nullptr, v, s);
    }
  }
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::add(const Ciphertext& a_in,
                                                      const Ciphertext& b_in) const {
  check_pair(a_in, b_in, "add");
  // Operands in different forms meet in eval form.
  Ciphertext ha, hb;
  const bool mixed = a_in.form() != b_in.form();
  const Ciphertext& a = mixed ? eval_form(a_in, ha) : a_in;
  const Ciphertext& b = mixed ? eval_form(b_in, hb) : b_in;
  auto& be = rlwe_.backend();
  const auto v = rlwe_.q_basis(a.level).template view_on<W>(be);
  const Stream s = a.stream();
  const backend::StreamJoin join(be, s, {b.stream()});
  const std::size_t k = std::max(a.polys.size(), b.polys.size());
  Ciphertext c = like(a, k);
  for (std::size_t i = 0; i < k; ++i) {
    if (i < a.polys.size() && i < b.polys.size())
      be.add_async(c.polys[i].data(), a.polys[i].data(), b.polys[i].data(), v, s);
    else
      be.copy_async(c.polys[i].data(), (i < a.polys.size() ? a : b).polys[i].data(),
                    c.polys[i].words() * sizeof(W), s);
  }
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::sub(const Ciphertext& a,
                                                      const Ciphertext& b) const {
  return add(a, negate(b));
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::negate(const Ciphertext& a) const {
  check_one(a, "negate");
  auto& be = rlwe_.backend();
  const auto v = rlwe_.q_basis(a.level).template view_on<W>(be);
  Ciphertext c = like(a, a.polys.size());
  for (std::size_t i = 0; i < a.polys.size(); ++i)
    be.negate_async(c.polys[i].data(), a.polys[i].data(), v, a.stream());
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::add_plain(const Ciphertext& a,
                                                            const RnsPoly& p) const {
  check_one(a, "add_plain");
  rlwe_.check_device(p.device(), "add_plain: the plaintext");
  if (p.basis() != rlwe_.q_basis(a.level))
    throw MismatchError("add_plain: the plaintext is not at the ciphertext's level");
  // A plaintext in the other form is transformed (one polynomial, not the ciphertext's two).
  std::optional<RnsPoly> holder;
  if (p.form() != a.form()) holder = a.form() == Form::eval ? p.ntt() : p.intt();
  const RnsPoly* q = holder ? &*holder : &p;
  Ciphertext c = a.copy();
  auto& be = rlwe_.backend();
  const backend::StreamJoin join(be, a.stream(), {q->stream()});
  be.add_async(c.polys[0].data(), a.polys[0].data(), q->data(), q->view(), a.stream());
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::sub_plain(const Ciphertext& a,
                                                            const RnsPoly& p) const {
  return add_plain(a, p.negate());
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::multiply_plain(const Ciphertext& a_in,
                                                                 const RnsPoly& p) const {
  check_one(a_in, "multiply_plain");
  rlwe_.check_device(p.device(), "multiply_plain: the plaintext");
  if (p.basis() != rlwe_.q_basis(a_in.level) || p.form() != Form::eval)
    throw MismatchError("multiply_plain: the plaintext is not at the ciphertext's level");
  Ciphertext holder;
  const Ciphertext& a = eval_form(a_in, holder);
  auto& be = rlwe_.backend();
  Ciphertext c = like(a, a.polys.size());
  const backend::StreamJoin join(be, a.stream(), {p.stream()});
  for (std::size_t i = 0; i < a.polys.size(); ++i)
    be.multiply_async(c.polys[i].data(), a.polys[i].data(), p.data(), p.view(), a.stream());
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::multiply_scalar(
    const Ciphertext& a, const std::vector<u64>& residues) const {
  check_one(a, "multiply_scalar");
  if (residues.size() != rlwe_.rows(a.level))
    throw ParameterError("multiply_scalar: need one residue per prime of the level");
  auto& be = rlwe_.backend();
  const auto v = rlwe_.q_basis(a.level).template view_on<W>(be);
  Ciphertext c = like(a, a.polys.size());
  for (std::size_t i = 0; i < a.polys.size(); ++i)
    be.multiply_scalar_async(c.polys[i].data(), a.polys[i].data(), residues, v, a.stream());
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::add_scalar(
    const Ciphertext& a, const std::vector<u64>& residues) const {
  check_one(a, "add_scalar");
  if (residues.size() != rlwe_.rows(a.level))
    throw ParameterError("add_scalar: need one residue per prime of the level");
  if (a.polys.size() != 2) throw ParameterError("add_scalar: relinearize the ciphertext first");
  return linear_combination({&a}, {std::vector<u64>(residues.size(), 1)}, residues, a.level);
}

template <class W>
void EvaluatorT<W>::check_linear_operands(const std::vector<const Ciphertext*>& cts,
                                          std::size_t level, const std::string& op) const {
  for (const Ciphertext* c : cts) {
    check_pair_keys(*cts[0], *c, op.c_str());
    if (c->polys.size() != 2) throw ParameterError(op + ": relinearize the ciphertexts first");
    // A ciphertext above `level` is read as its first rows(level) rows (dropping is free).
    if (c->level < level) throw ParameterError(op + ": an operand is below the target level");
  }
}

template <class W>
std::vector<const typename EvaluatorT<W>::Ciphertext*> EvaluatorT<W>::in_eval_form_if_mixed(
    const std::vector<const Ciphertext*>& cts, std::vector<Ciphertext>& held) const {
  const auto is_coeff = [](const Ciphertext* c) { return c->form() == Form::coeff; };
  if (std::all_of(cts.begin(), cts.end(), is_coeff) ||
      std::none_of(cts.begin(), cts.end(), is_coeff))
    return {};
  held.reserve(cts.size());  // no reallocation: the pointers below stay valid
  std::vector<const Ciphertext*> evals;
  for (const Ciphertext* c : cts) {
    if (is_coeff(c)) held.push_back(to_form(*c, Form::eval));
    evals.push_back(is_coeff(c) ? &held.back() : c);
  }
  return evals;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::linear_combination(
    const std::vector<const Ciphertext*>& cts, const std::vector<std::vector<u64>>& scalars,
    const std::vector<u64>& constant, std::size_t level) const {
  if (cts.empty() || cts.size() != scalars.size())
    throw ParameterError("linear_combination: needs one scalar list per ciphertext");
  const Ciphertext& first = *cts[0];
  const std::size_t limbs = rlwe_.rows(level);
  check_linear_operands(cts, level, "linear_combination");
  for (const auto& s : scalars)
    if (s.size() != limbs) throw ParameterError("linear_combination: one scalar per prime");
  if (!constant.empty() && constant.size() != limbs)
    throw ParameterError("linear_combination: one constant residue per prime");
  // Operands in different forms are combined in eval form. In coefficient form the constant goes
  // to coefficient 0 only (in eval form it is in every slot).
  std::vector<Ciphertext> held;
  if (const auto evals = in_eval_form_if_mixed(cts, held); !evals.empty())
    return linear_combination(evals, scalars, constant, level);
  const bool coeff = cts[0]->form() == Form::coeff;
  auto& be = rlwe_.backend();
  const Stream s = first.stream();
  std::vector<Stream> operand_streams;
  for (const Ciphertext* c : cts) operand_streams.push_back(c->stream());
  const backend::StreamJoin join(be, s, operand_streams);
  const auto v = rlwe_.q_basis(level).template view_on<W>(be);
  Ciphertext c = like(first, 2, level);
  W* o0 = c.polys[0].data();
  W* o1 = c.polys[1].data();
  // Chunks of kMaxLinearTerms; every later chunk carries the running sum as a term times 1.
  const std::size_t chunk = backend::Backend::kMaxLinearTerms - 1;
  for (std::size_t at = 0; at < cts.size(); at += chunk) {
    std::vector<const W*> a0, a1;
    std::vector<std::vector<u64>> sc;
    if (at) {
      a0.push_back(o0);
      a1.push_back(o1);
      sc.emplace_back(limbs, 1);
    }
    for (std::size_t i = at; i < std::min(cts.size(), at + chunk); ++i) {
      a0.push_back(cts[i]->polys[0].data());
      a1.push_back(cts[i]->polys[1].data());
      sc.push_back(scalars[i]);
    }
    const bool with_constant = at == 0 && !constant.empty();
    be.linear_combination_async(o0, o1, a0, a1, sc,
                                with_constant ? constant : std::vector<u64>(limbs, 0), v, s, coeff);
  }
  return c;
}

template <class W>
std::vector<typename EvaluatorT<W>::Ciphertext> EvaluatorT<W>::linear_combinations(
    const std::vector<const Ciphertext*>& cts, const std::vector<u64>& weights,
    const std::vector<u64>& constants, std::size_t level) const {
  const std::size_t limbs = rlwe_.rows(level);
  if (cts.empty() || constants.empty() || constants.size() % limbs)
    throw ParameterError("linear_combinations: needs ciphertexts and one constant per output");
  const std::size_t outputs = constants.size() / limbs;
  if (weights.size() != outputs * cts.size() * limbs)
    throw ParameterError("linear_combinations: one weight per output, ciphertext and prime");
  const Ciphertext& first = *cts[0];
  check_linear_operands(cts, level, "linear_combinations");
  std::vector<Ciphertext> held;
  if (const auto evals = in_eval_form_if_mixed(cts, held); !evals.empty())
    return linear_combinations(evals, weights, constants, level);
  const bool coeff = first.form() == Form::coeff;
  auto& be = rlwe_.backend();
  const Stream s = first.stream();
  std::vector<Stream> operand_streams;
  for (const Ciphertext* c : cts) operand_streams.push_back(c->stream());
  const backend::StreamJoin join(be, s, operand_streams);
  const auto v = rlwe_.q_basis(level).template view_on<W>(be);
  std::vector<Ciphertext> out;
  out.reserve(outputs);
  std::vector<W*> o0, o1;
  for (std::size_t j = 0; j < outputs; ++j) {
    out.push_back(like(first, 2, level));
    o0.push_back(out.back().polys[0].data());
    o1.push_back(out.back().polys[1].data());
  }
  std::vector<const W*> a0, a1;
  for (const Ciphertext* c : cts) {
    a0.push_back(c->polys[0].data());
    a1.push_back(c->polys[1].data());
  }
  be.linear_map_async(o0, o1, a0, a1, weights, constants, v, s, coeff);
  return out;
}

template <class W>
void EvaluatorT<W>::check_product(const Ciphertext& a, const Ciphertext& b) const {
  check_pair(a, b, "multiply");
  if (a.polys.size() != 2 || b.polys.size() != 2)
    throw ParameterError("multiply: relinearize the operands first (they have 3 polynomials)");
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::multiply_no_relin(const Ciphertext& a_in,
                                                                    const Ciphertext& b_in) const {
  check_product(a_in, b_in);
  Ciphertext ha, hb;
  const Ciphertext& a = eval_form(a_in, ha);
  const Ciphertext& b = eval_form(b_in, hb);
  auto& be = rlwe_.backend();
  const Stream s = a.stream();
  const backend::StreamJoin join(be, s, {b.stream()});
  const auto v = rlwe_.q_basis(a.level).template view_on<W>(be);
  Ciphertext c = like(a, 3);
  be.tensor_async(c.polys[0].data(), c.polys[1].data(), c.polys[2].data(), a.polys[0].data(),
                  a.polys[1].data(), b.polys[0].data(), b.polys[1].data(), v, s);
  c.scale = a.scale * b.scale;
  c.factor = a.factor;  // BGV: the scheme layer sets the product of the factors
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::relinearize(const Ciphertext& a,
                                                              const SwitchKey& relin) const {
  check_one(a, "relinearize");
  if (a.polys.size() == 2) return a.copy();
  if (relin.key_id != a.key_id || relin.galois != 0)
    throw MismatchError("relinearize: the key is not this key set's relinearization key");
  rlwe_.check_device(relin.device(), "relinearize: the key");
  const Stream s = a.stream();
  Ciphertext c = like(a, 2);
  if (a.form() == Form::coeff) {
    rlwe_.key_switch_coeff(a.polys[2].data(), a.level, relin, 0, c.polys[0].data(),
                           c.polys[1].data(), s, a.polys[0].data(), a.polys[1].data());
    return c;
  }
  const ModUp ext = rlwe_.mod_up(a.polys[2].data(), a.level, s, /*once=*/true);
  rlwe_.key_switch(a.polys[2].data(), ext, a.level, relin, 0, c.polys[0].data(), c.polys[1].data(),
                   s, a.polys[0].data(), a.polys[1].data());
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::dot_plain(
    const std::vector<const Ciphertext*>& cts_in, const std::vector<const RnsPoly*>& pts) const {
  if (cts_in.empty() || cts_in.size() != pts.size())
    throw ParameterError("dot_plain: needs as many plaintexts as ciphertexts (at least one)");
  std::vector<Ciphertext> held(cts_in.size());
  std::vector<const Ciphertext*> cts;
  for (std::size_t i = 0; i < cts_in.size(); ++i) cts.push_back(&eval_form(*cts_in[i], held[i]));
  const Ciphertext& first = *cts[0];
  for (const Ciphertext* c : cts) {
    check_pair(first, *c, "dot_plain");
    if (c->polys.size() != 2) throw ParameterError("dot_plain: relinearize the ciphertexts first");
  }
  const ring::RnsBasis& q = rlwe_.q_basis(first.level);
  for (const RnsPoly* p : pts) {
    if (p->basis() != q || p->form() != Form::eval)
      throw MismatchError("dot_plain: a plaintext is not in eval form at the ciphertexts' level");
    rlwe_.check_device(p->device(), "dot_plain: a plaintext");
  }
  auto& be = rlwe_.backend();
  std::vector<Stream> operand_streams;
  for (std::size_t i = 0; i < cts.size(); ++i) {
    operand_streams.push_back(cts[i]->stream());
    operand_streams.push_back(pts[i]->stream());
  }
  const backend::StreamJoin join(be, first.stream(), operand_streams);
  Ciphertext c = like(first, 2);
  std::vector<const W*> a0, a1, p;
  for (std::size_t i = 0; i < cts.size(); ++i) {
    a0.push_back(cts[i]->polys[0].data());
    a1.push_back(cts[i]->polys[1].data());
    p.push_back(pts[i]->data());
  }
  dot_plain_rows(c.polys[0].data(), c.polys[1].data(), a0, a1, p, q.template view_on<W>(be),
                 first.stream());
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::linear_transform_hoisted(
    const Ciphertext& x_in, const std::vector<const SwitchKey*>& babies,
    const std::vector<TransformGiant>& giants) const {
  check_one(x_in, "linear transform");
  Ciphertext holder;
  const Ciphertext& x = eval_form(x_in, holder);
  if (x.polys.size() != 2) throw ParameterError("linear transform: relinearize the input first");
  if (giants.empty()) throw ParameterError("linear transform: no giant steps");
  auto& be = rlwe_.backend();
  const Stream s = x.stream();
  std::vector<Stream> plain_streams;
  for (const auto& g : giants)
    for (const auto& term : g.terms) plain_streams.push_back(term.second->stream());
  const backend::StreamJoin join(be, s, plain_streams);
  const std::size_t level = x.level, n = rlwe_.n();
  const std::size_t q_rows = rlwe_.rows(level), rows = q_rows + rlwe_.p_count();
  const ring::RnsBasis& q = rlwe_.q_basis(level);
  const ring::RnsBasis& qp = rlwe_.qp_basis(level);
  const auto vq = q.template view_on<W>(be);
  const auto vqp = qp.template view_on<W>(be);
  for (const SwitchKey* k : babies)
    if (!k || k->key_id != x.key_id || k->galois == 0)
      throw MismatchError("linear transform: a baby-step key is not a Galois key of this key set");
    else
      rlwe_.check_device(k->device(), "linear transform: a baby-step key");
  for (const auto& g : giants) {
    if (g.key && (g.key->key_id != x.key_id || g.key->galois == 0))
      throw MismatchError("linear transform: a giant-step key is not a Galois key of this key set");
    if (g.key) rlwe_.check_device(g.key->device(), "linear transform: a giant-step key");
    for (const auto& [b, p] : g.terms)
      if (b > babies.size() || p->basis() != qp || p->form() != ring::Form::eval)
        throw MismatchError(
            "linear transform: a term's baby index is out of range or its plaintext is not in "
            "eval form over Q_level u P");
  }
  const std::vector<u64> p_mod(rlwe_.p_mod_q().begin(), rlwe_.p_mod_q().begin() + q_rows);
  // The automorphism of (c0, c1) in Q u P before its ModDown: the key product of c1 (whose ModUp
  // rows are in ext) plus P sigma(c0) on the Q rows; out: two contiguous Q u P polynomials.
  auto rotate_extended = [&](const Ciphertext& c, const ModUp& ext, const SwitchKey& k, W* out) {
    rlwe_.key_product(c.polys[1].data(), ext, level, k, k.galois, out, out + rows * n, s,
                      c.polys[0].data());
  };
  // Each giant's sum of its baby terms (babies 1.., in Q u P): when they fit one pass, computed
  // directly (BabyGiantView: the babies are never stored, read back or reduced twice); else each
  // baby is stored, then summed per giant by dot_plain.
  std::vector<backend::Buffer> baby_sums(giants.size());  // empty for giants without baby terms
  if (!babies.empty()) {
    const ModUp ext = rlwe_.mod_up(x.polys[1].data(), level, s);
    std::vector<std::vector<const W*>> plain;  // [giant with baby terms][baby]
    std::vector<W*> sums;
    bool repeated = false;  // a baby twice in one giant: only the stored path sums both
    for (std::size_t g = 0; g < giants.size(); ++g) {
      std::vector<const W*> row(babies.size(), nullptr);
      bool any = false;
      for (const auto& [b, p] : giants[g].terms)
        if (b > 0) {
          repeated = repeated || row[b - 1];
          row[b - 1] = p->data();
          any = true;
        }
      if (!any) continue;
      baby_sums[g] = backend::Buffer(be, 2 * rows * n * sizeof(W), s);
      plain.push_back(std::move(row));
      sums.push_back(baby_sums[g].as<W>());
    }
    if (!repeated && Context::baby_giant_fits(level, babies.size(), sums.size())) {
      rlwe_.baby_giant_sums(x.polys[0].data(), x.polys[1].data(), ext, level, babies, plain, sums,
                            s);
    } else {
      std::vector<backend::Buffer> baby;
      for (const SwitchKey* k : babies) {
        baby.emplace_back(be, 2 * rows * n * sizeof(W), s);
        rotate_extended(x, ext, *k, baby.back().as<W>());
      }
      for (std::size_t g = 0; g < giants.size(); ++g) {
        if (baby_sums[g].bytes() == 0) continue;
        std::vector<const W*> e0, e1, ep;
        for (const auto& [b, p] : giants[g].terms)
          if (b > 0) {
            e0.push_back(baby[b - 1].template as<W>());
            e1.push_back(baby[b - 1].template as<W>() + rows * n);
            ep.push_back(p->data());
          }
        W* sum = baby_sums[g].as<W>();
        dot_plain_rows(sum, sum + rows * n, e0, e1, ep, vqp, s);
      }
    }
  }
  // The giant steps' rotations are summed in Q u P too (the unrotated ones enter as P times
  // themselves on the Q rows) and divided once by P q_level: no ModDown per giant step and no
  // separate rescale.
  const bool rotating = std::any_of(giants.begin(), giants.end(),
                                    [](const TransformGiant& g) { return g.key != nullptr; });
  backend::Buffer acc(be, 2 * rows * n * sizeof(W), s), step(be, 2 * rows * n * sizeof(W), s);
  W* a0 = acc.template as<W>();
  W* a1 = a0 + rows * n;
  bool have = false;
  Ciphertext plain_sum;  // without rotating giant steps: the sum, rescaled at the end
  std::vector<Ciphertext> identity_parts;
  for (std::size_t gi = 0; gi < giants.size(); ++gi) {
    const TransformGiant& g = giants[gi];
    std::vector<const W*> i0, i1, ip;  // identity terms (baby 0)
    for (const auto& [b, p] : g.terms) {
      if (b == 0) {
        i0.push_back(x.polys[0].data());
        i1.push_back(x.polys[1].data());
        ip.push_back(p->data());  // its Q rows come first
      }
    }
    Ciphertext part = like(x, 2);
    W* out0 = part.polys[0].data();
    W* out1 = part.polys[1].data();
    if (baby_sums[gi].bytes() == 0) {
      dot_plain_rows(out0, out1, i0, i1, ip, vq, s);
    } else {
      W* s0 = baby_sums[gi].as<W>();
      W* s1 = s0 + rows * n;
      backend::Buffer ident;
      const W* adds[2] = {nullptr, nullptr};
      if (!i0.empty()) {
        ident = backend::Buffer(be, 2 * q_rows * n * sizeof(W), s);
        dot_plain_rows(ident.template as<W>(), ident.template as<W>() + q_rows * n, i0, i1, ip, vq,
                       s);
        adds[0] = ident.template as<W>();
        adds[1] = ident.template as<W>() + q_rows * n;
      }
      W* const outs[2] = {out0, out1};
      const W* const ins[2] = {s0, s1};
      rlwe_.mod_down_polys(outs, ins, 2, level, s, adds);
    }
    if (!rotating) {
      plain_sum = have ? add(plain_sum, part) : std::move(part);
      have = true;
      continue;
    }
    if (g.key) {
      const ModUp ext = rlwe_.mod_up(part.polys[1].data(), level, s);
      W* t0 = have ? step.template as<W>() : a0;
      rotate_extended(part, ext, *g.key, t0);
      if (have) {
        be.add_async(a0, a0, t0, vqp, s);
        be.add_async(a1, a1, t0 + rows * n, vqp, s);
      }
      have = true;
    } else {
      // Added after the loop (times P, on the Q rows only: P vanishes modulo P), once a
      // rotating giant step has initialized acc.
      identity_parts.push_back(std::move(part));
    }
  }
  if (!rotating) return divide_by_last_prime(plain_sum);
  for (const Ciphertext& part : identity_parts) {
    be.automorphism_accumulate_async(a0, part.polys[0].data(), 1, p_mod, vq, s);
    be.automorphism_accumulate_async(a1, part.polys[1].data(), 1, p_mod, vq, s);
  }
  Ciphertext c = divided_like(x, 2);
  W* const outs[2] = {c.polys[0].data(), c.polys[1].data()};
  const W* const ins[2] = {a0, a1};
  rlwe_.divide_extended(outs, ins, 2, level, s);
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::switch_key(const Ciphertext& a_in,
                                                             const SwitchKey& key) const {
  check_one(a_in, "switch_key");
  Ciphertext holder;
  const Ciphertext& a = eval_form(a_in, holder);
  if (a.polys.size() != 2) throw ParameterError("switch_key: relinearize the ciphertext first");
  if (key.key_id != a.key_id || key.galois != 0)
    throw MismatchError("switch_key: the key is not a plain switching key of this key set");
  rlwe_.check_device(key.device(), "switch_key: the key");
  const Stream s = a.stream();
  Ciphertext c = like(a, 2);
  const ModUp ext = rlwe_.mod_up(a.polys[1].data(), a.level, s, /*once=*/true);
  rlwe_.key_switch(a.polys[1].data(), ext, a.level, key, 0, c.polys[0].data(), c.polys[1].data(), s,
                   a.polys[0].data(), nullptr);
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::drop_level(const Ciphertext& a,
                                                             std::size_t level) const {
  check_one(a, "drop_level");
  if (level > a.level)
    throw ParameterError("drop_level: target level " + std::to_string(level) +
                         " is above the ciphertext's level " + std::to_string(a.level));
  auto& be = rlwe_.backend();
  Ciphertext c = like(a, a.polys.size(), level);
  for (std::size_t p = 0; p < a.polys.size(); ++p)
    be.copy_async(c.polys[p].data(), a.polys[p].data(), c.polys[p].words() * sizeof(W), a.stream());
  return c;
}

template <class W>
std::vector<typename EvaluatorT<W>::Ciphertext> EvaluatorT<W>::apply_galois_hoisted(
    const Ciphertext& a_in, const std::vector<const SwitchKey*>& keys) const {
  check_one(a_in, "rotate");
  if (a_in.polys.size() != 2) throw ParameterError("rotate: relinearize the ciphertext first");
  const Stream s = a_in.stream();
  for (const SwitchKey* key : keys)
    if (key->key_id != a_in.key_id || key->galois == 0)
      throw MismatchError("rotate: the key is not a Galois key of this key set");
    else
      rlwe_.check_device(key->device(), "rotate: the key");
  if (a_in.form() == Form::coeff && keys.size() == 1) {
    // c0 = sigma(a0) + ks0 in coefficient form: sigma(a0) joins the ModDown's last pass.
    Ciphertext c = like(a_in, 2);
    const u64 g = keys[0]->galois;
    rlwe_.key_switch_coeff(a_in.polys[1].data(), a_in.level, *keys[0], g, c.polys[0].data(),
                           c.polys[1].data(), s, a_in.polys[0].data(), nullptr, g);
    std::vector<Ciphertext> out;
    out.push_back(std::move(c));
    return out;
  }
  // Several rotations share one ModUp and read c0, c1 in eval form; a coefficient-form c1 feeds
  // the ModUp as it is (no INTT of its transformed copy).
  Ciphertext holder;
  const Ciphertext& a = eval_form(a_in, holder);
  // One key: the rows serve one product, which transforms them itself (fused on the GPU).
  const bool once = keys.size() == 1;
  const ModUp ext = a_in.form() == Form::coeff
                        ? rlwe_.mod_up_coeff(a_in.polys[1].data(), a.level, s, once)
                        : rlwe_.mod_up(a.polys[1].data(), a.level, s, once);
  std::vector<Ciphertext> out;
  for (const SwitchKey* key : keys) {
    Ciphertext c = like(a, 2);
    // c0 = sigma(a0) + ks0, sigma(a0) folded into the key switch.
    rlwe_.key_switch(a.polys[1].data(), ext, a.level, *key, key->galois, c.polys[0].data(),
                     c.polys[1].data(), s, nullptr, nullptr, a.polys[0].data());
    out.push_back(std::move(c));
  }
  return out;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::apply_galois(const Ciphertext& a,
                                                               const SwitchKey& key) const {
  auto r = apply_galois_hoisted(a, {&key});
  return std::move(r[0]);
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::divide_by_last_prime(
    const Ciphertext& a_in) const {
  check_one(a_in, "rescale");
  Ciphertext holder;
  const Ciphertext& a = eval_form(a_in, holder);
  if (a.level == 0)
    throw ParameterError("rescale: the ciphertext is at level 0; no prime left to divide by");
  Ciphertext c = divided_like(a, a.polys.size());
  std::vector<W*> outs;
  std::vector<const W*> ins;
  for (std::size_t k = 0; k < a.polys.size(); ++k) {
    outs.push_back(c.polys[k].data());
    ins.push_back(a.polys[k].data());
  }
  rlwe_.rescale_polys(outs.data(), ins.data(), outs.size(), a.level, a.stream());
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::multiply(const Ciphertext& a, const Ciphertext& b,
                                                           const SwitchKey& relin) const {
  return relinearize(multiply_no_relin(a, b), relin);
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::multiply_divide(
    const Ciphertext& a, const Ciphertext& b, const SwitchKey& relin, const Ciphertext* sub,
    const std::vector<u64>& sub_scalars) const {
  Ciphertext t = multiply_no_relin(a, b);
  if (t.form() == Form::coeff) t = to_form(t, Form::eval);
  Ciphertext sub_holder;
  if (sub) sub = &eval_form(*sub, sub_holder);
  if (sub) {
    check_pair_keys(t, *sub, "multiply");
    if (sub->polys.size() != 2 || sub->level < t.level)
      throw ParameterError(
          "multiply: the subtracted ciphertext must be relinearized and at the product's level "
          "or above");
  }
  if (t.level == 0)
    throw ParameterError("multiply: the operands are at level 0; no prime left to divide by");
  if (relin.key_id != t.key_id || relin.galois != 0)
    throw MismatchError("relinearize: the key is not this key set's relinearization key");
  rlwe_.check_device(relin.device(), "relinearize: the key");
  const Stream s = t.stream();
  const backend::StreamJoin join(rlwe_.backend(), s, {sub ? sub->stream() : s});
  Ciphertext c = divided_like(t, 2);
  const ModUp ext = rlwe_.mod_up(t.polys[2].data(), t.level, s, /*once=*/true);
  rlwe_.key_switch_divide(t.polys[2].data(), ext, t.level, relin, 0, c.polys[0].data(),
                          c.polys[1].data(), s, t.polys[0].data(), t.polys[1].data(),
                          sub ? sub->polys[0].data() : nullptr,
                          sub ? sub->polys[1].data() : nullptr, sub_scalars);
  return c;
}

template <class W>
typename EvaluatorT<W>::Ciphertext EvaluatorT<W>::mod_switch(const Ciphertext& a,
                                                             std::size_t target) const {
  check_one(a, "mod_switch");
  if (target > a.level)
    throw ParameterError("mod_switch: target level " + std::to_string(target) +
                         " is above the ciphertext's level " + std::to_string(a.level));
  if (target == a.level) return a.copy();
  Ciphertext c = divide_by_last_prime(a);
  while (c.level > target) c = divide_by_last_prime(c);
  return c;
}

template class EvaluatorT<u64>;
template class EvaluatorT<u32>;

}  // namespace ember::rlwe
