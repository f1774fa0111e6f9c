// SplitEvaluator: plans per (rank, level), the split product and rotation, moves in and out.
#include "ember/rlwe/split_evaluator.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::rlwe {

using backend::Buffer;
using backend::Stream;
using ring::BaseConverter;
using ring::Form;

namespace {
/// A split ciphertext with a's rows, level, scale, factor and key set, and no parts yet.
SplitCiphertext without_parts(const SplitCiphertext& a) {
  SplitCiphertext c;
  c.rows = a.rows;
  c.level = a.level;
  c.scale = a.scale;
  c.factor = a.factor;
  c.key_id = a.key_id;
  c.params_id = a.params_id;
  return c;
}

std::vector<u32> id_range(u32 begin, u32 end) {
  std::vector<u32> ids;
  for (u32 i = begin; i < end; ++i) ids.push_back(i);
  return ids;
}
}  // namespace

/// What rank `rank` needs at one level: its rows, the bases over them, each digit's conversions
/// into them and the ModDown onto them.
struct SplitEvaluator::Plan {
  dist::RowRange rows;  // the rank's Q rows [b, e) of Q_level
  RnsBasis q;           // q_b .. q_{e-1}
  RnsBasis qp;          // q, then P
  RnsBasis ext;         // qp once per digit (a row -> prime map for the batched transform)
  /// Digit j's rows of the rank: the converted rows before and after the digit's own primes
  /// (null: none) and those own primes among the rank's rows, [own.begin, own.end) locally.
  struct Digit {
    std::unique_ptr<BaseConverter> before, after;
    backend::ConvJob before_job, after_job;  // their views on the rank's device (no in / out)
    dist::RowRange own;                      // local rows of qp
    std::size_t own_from = 0;                // the first own row's index in Q_level
  };
  std::vector<Digit> digits;
  std::unique_ptr<ring::DivideRound> mod_down;   // q u P -> q
  std::vector<u64> p_mod_q;                      // P mod q_i, the rank's rows
  backend::BasisView q_view, qp_view, ext_view;  // on the rank's device, looked up once
};

SplitEvaluator::SplitEvaluator(const Context& ctx, dist::DeviceSet devices, dist::Exchange exchange)
    : ctx_(ctx), comm_(std::make_unique<dist::Communicator>(std::move(devices), exchange)) {}

SplitEvaluator::~SplitEvaluator() = default;

const dist::DeviceSet& SplitEvaluator::devices() const { return comm_->devices(); }
const dist::Communicator& SplitEvaluator::communicator() const { return *comm_; }

std::vector<dist::RowRange> SplitEvaluator::rows_at(std::size_t level) const {
  if (level > ctx_.max_level())
    throw ParameterError("split: level " + std::to_string(level) + " is above the parameters' " +
                         std::to_string(ctx_.max_level()));
  if (devices().size() > level + 1)
    throw ParameterError("split: " + std::to_string(level + 1) + " rows at level " +
                         std::to_string(level) + " cannot be shared by " +
                         std::to_string(devices().size()) + " devices; use fewer devices");
  return dist::partition_rows(level + 1, devices());
}

const SplitEvaluator::Plan& SplitEvaluator::plan(std::size_t rank, std::size_t level) const {
  std::lock_guard lock(mutex_);
  auto& slot = plans_[{rank, level}];
  if (slot) return *slot;
  auto p = std::make_unique<Plan>();
  const auto& ring = ctx_.ring();
  auto& be = backend::backend_for(devices()[rank]);
  p->rows = rows_at(level)[rank];
  const u32 b = static_cast<u32>(p->rows.begin), e = static_cast<u32>(p->rows.end);
  const u32 qc = static_cast<u32>(ctx_.q_count()), pc = static_cast<u32>(ctx_.p_count());
  const RnsBasis p_basis(ring, id_range(qc, qc + pc));
  p->q = RnsBasis(ring, id_range(b, e));
  p->qp = p->q.concat(p_basis);
  const u32 alpha = static_cast<u32>(ctx_.alpha());
  std::vector<u32> ext_ids;
  for (u32 j = 0; j < ctx_.digits_at(level); ++j) {
    const u32 start = j * alpha, end = std::min<u32>(start + alpha, static_cast<u32>(level + 1));
    const RnsBasis digit(ring, id_range(start, end));
    // The digit's own primes among the rank's rows: [lo, hi) in Q_level (empty when lo >= hi).
    const u32 lo = std::max(start, b), hi = std::min(end, e);
    Plan::Digit d;
    std::vector<u32> before, after;
    if (lo < hi) {
      before = id_range(b, lo);
      after = id_range(hi, e);
      d.own = {lo - b, hi - b};
      d.own_from = lo;
    } else {
      after = id_range(b, e);
    }
    after.insert(after.end(), p_basis.ids().begin(), p_basis.ids().end());
    // The same fast conversion as one device's (Context's digit_conv), to fewer targets.
    if (!before.empty()) {
      d.before = std::make_unique<BaseConverter>(digit, RnsBasis(ring, before));
      d.before_job = d.before->job(static_cast<u64*>(nullptr), nullptr, be);
    }
    d.after = std::make_unique<BaseConverter>(digit, RnsBasis(ring, after));
    d.after_job = d.after->job(static_cast<u64*>(nullptr), nullptr, be);
    p->digits.push_back(std::move(d));
    ext_ids.insert(ext_ids.end(), p->qp.ids().begin(), p->qp.ids().end());
  }
  p->ext = RnsBasis::unchecked(ring, ext_ids);
  p->q_view = p->q.on(be);
  p->qp_view = p->qp.on(be);
  p->ext_view = p->ext.on(be);
  p->mod_down = std::make_unique<ring::DivideRound>(p->q, p_basis, ctx_.error_factor());
  p->p_mod_q.assign(ctx_.p_mod_q().begin() + b, ctx_.p_mod_q().begin() + e);
  slot = std::move(p);
  return *slot;
}

void SplitEvaluator::check(const SplitCiphertext& a, const char* op) const {
  ctx_.check_params(a.params_id, op);
  const auto rows = rows_at(a.level);
  if (a.parts.size() != devices().size() || a.rows != rows)
    throw MismatchError(std::string(op) + ": the ciphertext is not split over this device set " +
                        devices().str() + " at its level; split it with this evaluator");
  for (std::size_t d = 0; d < a.parts.size(); ++d) {
    if (a.parts[d].size() != a.polys())
      throw ParameterError(std::string(op) + ": parts with different polynomial counts");
    for (const RnsPoly& p : a.parts[d]) {
      if (!(p.device() == devices()[d]))
        throw MismatchError(std::string(op) + ": part " + std::to_string(d) + " is on " +
                            p.device().str() + ", not " + devices()[d].str());
      if (p.form() != Form::eval || p.limbs() != rows[d].size() ||
          p.basis().context() != ctx_.ring() || p.basis().ids().front() != rows[d].begin)
        throw MismatchError(std::string(op) + ": part " + std::to_string(d) +
                            " does not hold its rows in eval form");
    }
  }
}

void SplitEvaluator::check_keys(const std::vector<const SwitchKey*>& keys, const SplitCiphertext& a,
                                u64 galois, const char* op) const {
  if (keys.size() != devices().size())
    throw ParameterError(std::string(op) + ": one key per device (" +
                         std::to_string(devices().size()) + "), got " +
                         std::to_string(keys.size()));
  for (std::size_t d = 0; d < keys.size(); ++d) {
    const SwitchKey* k = keys[d];
    if (!k) throw ParameterError(std::string(op) + ": key " + std::to_string(d) + " is null");
    ctx_.check_params(k->params_id, op);
    if (k->key_id != a.key_id || k->galois != galois)
      throw MismatchError(std::string(op) + ": key " + std::to_string(d) +
                          " is not the right key of this key set");
    if (!(k->device() == devices()[d]))
      throw MismatchError(std::string(op) + ": key " + std::to_string(d) + " is on " +
                          k->device().str() + ", not " + devices()[d].str() +
                          "; copy it there with to()");
  }
}

SplitCiphertext SplitEvaluator::split(const Ciphertext& a) const {
  ctx_.check_params(a.params_id, "split");
  if (a.form() != Form::eval) throw ParameterError("split: the ciphertext must be in eval form");
  SplitCiphertext s;
  s.rows = rows_at(a.level);
  s.level = a.level;
  s.scale = a.scale;
  s.factor = a.factor;
  s.key_id = a.key_id;
  s.params_id = a.params_id;
  for (std::size_t d = 0; d < devices().size(); ++d) {
    std::vector<RnsPoly> polys;
    // On the communicator's stream of the rank: the all-gather then joins no other stream.
    for (const RnsPoly& p : a.polys)
      polys.push_back(dist::take_rows(p, s.rows[d], devices()[d], comm_->stream(d)));
    s.parts.push_back(std::move(polys));
  }
  return s;
}

Ciphertext SplitEvaluator::gather(const SplitCiphertext& a, backend::Device device) const {
  check(a, "gather");
  std::vector<RnsPoly> polys;
  for (std::size_t k = 0; k < a.polys(); ++k) {
    RnsPoly whole(ctx_.q_basis(a.level), Form::eval, device);
    for (std::size_t d = 0; d < a.parts.size(); ++d) {
      const RnsPoly& part = a.parts[d][k];
      backend::copy_between_devices(whole.backend(), whole.data() + a.rows[d].begin * whole.n(),
                                    whole.stream(), part.backend(), part.data(), part.stream(),
                                    part.limbs() * part.n() * sizeof(u64));
    }
    polys.push_back(std::move(whole));
  }
  Ciphertext c;
  c.polys = std::move(polys);
  c.level = a.level;
  c.scale = a.scale;
  c.factor = a.factor;
  c.key_id = a.key_id;
  c.params_id = a.params_id;
  return c;
}

void SplitEvaluator::synchronize(const SplitCiphertext& a) const {
  for (const auto& part : a.parts)
    for (const RnsPoly& p : part) p.backend().synchronize(p.stream());
}

SplitCiphertext SplitEvaluator::multiply(const SplitCiphertext& a, const SplitCiphertext& b,
                                         const std::vector<const SwitchKey*>& relin) {
  check(a, "split multiply");
  check(b, "split multiply");
  if (!ctx_.aux_basis().ids().empty())
    throw ParameterError("split multiply: BFV's product (in Q u R) is not split; use CKKS or BGV");
  if (a.polys() != 2 || b.polys() != 2)
    throw ParameterError("split multiply: relinearize the operands first");
  if (a.level != b.level || a.key_id != b.key_id)
    throw MismatchError("split multiply: operands of different levels or key sets");
  check_keys(relin, a, 0, "split multiply");
  const std::size_t ranks = devices().size();
  std::vector<std::vector<RnsPoly>> tensor(ranks);
  std::vector<RnsPoly> d_coeff;
  std::vector<const u64*> add0(ranks), add1(ranks), none(ranks, nullptr);
  for (std::size_t d = 0; d < ranks; ++d) {
    const Plan& p = plan(d, a.level);
    const auto& x = a.parts[d];
    const auto& y = b.parts[d];
    auto& be = x[0].backend();
    const Stream s = x[0].stream();
    const backend::StreamJoin join(be, s, {y[0].stream()});
    tensor[d] = RnsPoly::batch(p.q, Form::eval, devices()[d], 3, s);
    be.tensor_async(tensor[d][0].data(), tensor[d][1].data(), tensor[d][2].data(), x[0].data(),
                    x[1].data(), y[0].data(), y[1].data(), p.q_view, s);
    d_coeff.emplace_back(p.q, Form::coeff, devices()[d], s);
    const u64* c2 = tensor[d][2].data();
    be.ntt_inverse_async(d_coeff[d].data(), &c2, p.q_view, 1, s);
    add0[d] = tensor[d][0].data();
    add1[d] = tensor[d][1].data();
  }
  SplitCiphertext out = without_parts(a);
  key_switch(d_coeff, a, relin, 0, add0, add1, none, out.parts);
  out.scale = a.scale * b.scale;
  const u64 t = ctx_.plain_modulus();
  out.factor = t ? mul_mod(a.factor % t, b.factor % t, make_modulus(t)) : a.factor;
  return out;
}

SplitCiphertext SplitEvaluator::apply_galois(const SplitCiphertext& a,
                                             const std::vector<const SwitchKey*>& keys) {
  check(a, "split rotate");
  if (a.polys() != 2) throw ParameterError("split rotate: relinearize the ciphertext first");
  if (keys.empty() || !keys[0] || keys[0]->galois == 0)
    throw MismatchError("split rotate: the keys are not Galois keys");
  const u64 galois = keys[0]->galois;
  check_keys(keys, a, galois, "split rotate");
  const std::size_t ranks = devices().size();
  std::vector<RnsPoly> d_coeff;
  std::vector<const u64*> rotated0(ranks), none(ranks, nullptr);
  for (std::size_t d = 0; d < ranks; ++d) {
    const Plan& p = plan(d, a.level);
    auto& be = a.parts[d][0].backend();
    const Stream s = a.parts[d][0].stream();
    d_coeff.emplace_back(p.q, Form::coeff, devices()[d], s);
    const u64* c1 = a.parts[d][1].data();
    be.ntt_inverse_async(d_coeff[d].data(), &c1, p.q_view, 1, s);
    rotated0[d] = a.parts[d][0].data();
  }
  SplitCiphertext out = without_parts(a);
  key_switch(d_coeff, a, keys, galois, none, none, rotated0, out.parts);
  return out;
}

void SplitEvaluator::key_switch(std::vector<RnsPoly>& d_coeff, const SplitCiphertext& like,
                                const std::vector<const SwitchKey*>& keys, u64 galois,
                                const std::vector<const u64*>& add0,
                                const std::vector<const u64*>& add1,
                                const std::vector<const u64*>& rotated0,
                                std::vector<std::vector<RnsPoly>>& out) {
  const std::size_t ranks = devices().size(), level = like.level, n = ctx_.n();
  // Step 2: every rank gets all of d's coefficient rows.
  std::vector<RnsPoly> wholes;
  dist::ConstPolyRefs parts;
  for (std::size_t d = 0; d < ranks; ++d) {
    wholes.emplace_back(ctx_.q_basis(level), Form::coeff, devices()[d], d_coeff[d].stream());
    parts.push_back(&d_coeff[d]);
  }
  comm_->all_gather_into_async(parts, dist::refs(wholes));
  const std::size_t alpha = ctx_.alpha();
  out.clear();
  out.resize(ranks);
  for (std::size_t d = 0; d < ranks; ++d) {
    const Plan& p = plan(d, level);
    auto& be = d_coeff[d].backend();
    const Stream s = d_coeff[d].stream();
    const std::size_t rows = p.qp.size(), q_rows = p.q.size();
    const u64* coeff = wholes[d].data();
    // Step 3: every digit's rows over the rank's q u P, digit j's at j * rows.
    Buffer ext(be, p.digits.size() * rows * n * sizeof(u64), s);
    std::vector<backend::ConvJob> jobs;
    for (std::size_t j = 0; j < p.digits.size(); ++j) {
      const Plan::Digit& g = p.digits[j];
      u64* at = ext.as<u64>() + j * rows * n;
      const u64* digit = coeff + j * alpha * n;
      if (g.before) {
        jobs.push_back(g.before_job);
        jobs.back().in = digit;
        jobs.back().out = at;
      }
      jobs.push_back(g.after_job);
      jobs.back().in = digit;
      jobs.back().out = at + g.own.end * n;
      if (g.own.size())  // its own residues, which the transform below takes to eval form
        be.copy_async(at + g.own.begin * n, coeff + g.own_from * n, g.own.size() * n * sizeof(u64),
                      s);
    }
    be.base_convert_many_async(jobs, s);
    backend::KeyProductView kp;
    kp.ext = ext.as<const u64>();
    // Each rank's key rows start at its first row: key row b + r for local Q row r, and the P
    // rows after the key's L + 1 Q rows.
    const SwitchKey& key = *keys[d];
    kp.key = key.words() + p.rows.begin * n;
    kp.digits = static_cast<u32>(p.digits.size());
    kp.alpha = 0;  // every row of digit j, its own ones included, is row j * rows + r of ext
    kp.rows = static_cast<u32>(rows);
    kp.q_rows = static_cast<u32>(q_rows);
    kp.key_rows = static_cast<u32>(key.rows);
    kp.key_q_rows = static_cast<u32>(ctx_.q_count() - p.rows.begin);
    kp.galois = galois;
    // A rotation's P sigma(c0) joins the product's Q rows (as Context::key_product does).
    const bool fused_add = rotated0[d] && q_rows <= backend::KeyProductView::kMaxAddRows;
    if (fused_add) {
      kp.add = rotated0[d];
      std::copy(p.p_mod_q.begin(), p.p_mod_q.end(), kp.add_scale);
    }
    Buffer acc(be, 2 * rows * n * sizeof(u64), s);
    u64* q0 = acc.as<u64>();
    u64* q1 = q0 + rows * n;
    be.ntt_key_product_async(q0, q1, q0 + q_rows * n, q1 + q_rows * n, kp, backend::LiftedRows{},
                             p.ext_view, p.qp_view, s);
    if (rotated0[d] && !fused_add)
      be.automorphism_accumulate_async(q0, rotated0[d], galois, p.p_mod_q, p.q_view, s);
    // Step 4: ModDown onto the rank's rows, the tensor's c0, c1 added in its last pass.
    out[d] = RnsPoly::batch(p.q, Form::eval, devices()[d], 2, s);
    u64* const outs[2] = {out[d][0].data(), out[d][1].data()};
    const u64* const ins[2] = {q0, q1};
    const u64* const adds[2] = {add0[d], add1[d]};
    p.mod_down->apply_many_async(outs, ins, q_rows, 2, be, s, add0[d] || add1[d] ? adds : nullptr);
  }
}

}  // namespace ember::rlwe
