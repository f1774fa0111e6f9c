// RingContext: NTT tables per prime, and their cached copies in each backend's memory.
#include "ember/ring/ring_context.h"

#include <algorithm>
#include <set>
#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ring {

using backend::Buffer;

namespace {

PrimeTables build_prime_tables(u64 q, std::size_t n, int log_n) {
  PrimeTables t;
  t.modulus = make_modulus(q);
  t.psi = primitive_root_2n(q, n);
  const u64 psi_inv = inverse_mod(t.psi, q);
  std::vector<u64> pow(n), pow_inv(n);
  pow[0] = pow_inv[0] = 1;
  for (std::size_t i = 1; i < n; ++i) {
    pow[i] = mul_mod(pow[i - 1], t.psi, t.modulus);
    pow_inv[i] = mul_mod(pow_inv[i - 1], psi_inv, t.modulus);
  }
  t.psi_rev.resize(n);
  t.psi_inv_rev.resize(n);
  t.psi_rev_shoup.resize(n);
  t.psi_inv_rev_shoup.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    u32 r = bit_reverse(static_cast<u32>(i), log_n);
    t.psi_rev[i] = pow[r];
    t.psi_inv_rev[i] = pow_inv[r];
    t.psi_rev_shoup[i] = shoup_precompute(t.psi_rev[i], q);
    t.psi_inv_rev_shoup[i] = shoup_precompute(t.psi_inv_rev[i], q);
  }
  t.n_inv = inverse_mod(static_cast<u64>(n) % q, q);
  t.n_inv_shoup = shoup_precompute(t.n_inv, q);
  return t;
}

/// A ring's tables in one backend's memory on words of type W.
template <class W>
struct TablesOf {
  Buffer moduli, psi_rev, psi_rev_shoup, psi_inv_rev, psi_inv_rev_shoup, n_inv, n_inv_shoup;
  std::vector<ModulusT<W>> host_moduli;
  backend::RingTablesViewT<W> view;
};

/// The tables of `primes` in be's memory on words of type W: the host tables themselves on 64-bit
/// words; on 32-bit words their roots narrowed with Shoup companions and Barrett constants for
/// 32-bit words, for the primes below 2^30 (the others' rows left zero).
template <class W>
std::unique_ptr<TablesOf<W>> build_tables(const std::vector<PrimeTables>& primes, std::size_t n,
                                          int log_n, Backend& be) {
  auto t = std::make_unique<TablesOf<W>>();
  const std::size_t p = primes.size();
  std::vector<ModulusT<W>> moduli(p);
  std::vector<W> fw(p * n), fws(p * n), iv(p * n), ivs(p * n), ni(p), nis(p);
  for (std::size_t i = 0; i < p; ++i) {
    const auto& pt = primes[i];
    const u64 q = pt.modulus.value;
    if (q >> kMaxModulusBitsOf<W>) continue;
    if constexpr (sizeof(W) == 8) {
      moduli[i] = pt.modulus;
      std::copy(pt.psi_rev_shoup.begin(), pt.psi_rev_shoup.end(), fws.begin() + i * n);
      std::copy(pt.psi_inv_rev_shoup.begin(), pt.psi_inv_rev_shoup.end(), ivs.begin() + i * n);
      nis[i] = pt.n_inv_shoup;
    } else {
      moduli[i] = make_modulus32(q);
    }
    for (std::size_t j = 0; j < n; ++j) {
      fw[i * n + j] = static_cast<W>(pt.psi_rev[j]);
      iv[i * n + j] = static_cast<W>(pt.psi_inv_rev[j]);
    }
    ni[i] = static_cast<W>(pt.n_inv);
    if constexpr (sizeof(W) == 4) {
      const W qw = static_cast<W>(q);
      for (std::size_t j = i * n; j < (i + 1) * n; ++j) {
        fws[j] = shoup_precompute<W>(fw[j], qw);
        ivs[j] = shoup_precompute<W>(iv[j], qw);
      }
      nis[i] = shoup_precompute<W>(ni[i], qw);
    }
  }
  const auto s = backend::Stream{};
  auto up = [&](const auto& v) {
    return Buffer::from_host(be, v.data(), v.size() * sizeof(v[0]), s);
  };
  t->moduli = up(moduli);
  t->psi_rev = up(fw);
  t->psi_rev_shoup = up(fws);
  t->psi_inv_rev = up(iv);
  t->psi_inv_rev_shoup = up(ivs);
  t->n_inv = up(ni);
  t->n_inv_shoup = up(nis);
  be.synchronize(s);
  t->host_moduli = std::move(moduli);
  auto& v = t->view;
  v.n = n;
  v.log_n = log_n;
  v.prime_count = p;
  v.moduli = t->moduli.template as<const ModulusT<W>>();
  v.host_moduli = t->host_moduli.data();
  v.psi_rev = t->psi_rev.template as<const W>();
  v.psi_rev_shoup = t->psi_rev_shoup.template as<const W>();
  v.psi_inv_rev = t->psi_inv_rev.template as<const W>();
  v.psi_inv_rev_shoup = t->psi_inv_rev_shoup.template as<const W>();
  v.n_inv = t->n_inv.template as<const W>();
  v.n_inv_shoup = t->n_inv_shoup.template as<const W>();
  return t;
}

}  // namespace

struct RingContext::DeviceTables {
  std::unique_ptr<TablesOf<u64>> words64;
  std::unique_ptr<TablesOf<u32>> words32;  // built on the first basis32_on
  struct Ids {
    Buffer device;
    std::vector<u32> host;
  };
  std::map<std::vector<u32>, std::unique_ptr<Ids>> bases;
};

RingContext::RingContext(std::size_t n, int log_n, std::vector<PrimeTables> primes)
    : n_(n), log_n_(log_n), primes_(std::move(primes)) {}

std::shared_ptr<const RingContext> RingContext::create(std::size_t n,
                                                       const std::vector<u64>& primes) {
  int log_n = log2_exact(n);
  if (log_n < 4 || log_n > 17)
    throw ParameterError("ring degree N=" + std::to_string(n) + " is out of range: use 16..2^17");
  if (primes.empty()) throw ParameterError("a ring needs at least one prime");
  std::set<u64> seen;
  std::vector<PrimeTables> tables;
  tables.reserve(primes.size());
  for (u64 q : primes) {
    if (!seen.insert(q).second)
      throw ParameterError("prime " + std::to_string(q) +
                           " appears twice; primes must be distinct");
    if (q >= (u64{1} << kMaxModulusBits))
      throw ParameterError("prime " + std::to_string(q) + " has more than 61 bits");
    tables.push_back(build_prime_tables(q, n, log_n));
  }
  return std::make_shared<RingContext>(n, log_n, std::move(tables));
}

RingContext::DeviceTables& RingContext::device_tables(Backend& be) const {
  auto dev = be.device();
  auto key = std::make_pair(static_cast<int>(dev.kind), dev.index);
  auto it = device_tables_.find(key);
  if (it != device_tables_.end()) return *it->second;

  auto dt = std::make_shared<DeviceTables>();
  dt->words64 = build_tables<u64>(primes_, n_, log_n_, be);
  device_tables_[key] = dt;
  return *dt;
}

const RingTablesView& RingContext::tables_on(Backend& be) const {
  std::lock_guard lock(mutex_);
  return device_tables(be).words64->view;
}

const std::vector<u32>& RingContext::basis_ids(DeviceTables& dt, Backend& be,
                                               const std::vector<u32>& ids,
                                               const u32*& device_ids) const {
  auto it = dt.bases.find(ids);
  if (it == dt.bases.end()) {
    auto entry = std::make_unique<DeviceTables::Ids>();
    entry->host = ids;
    auto s = backend::Stream{};
    entry->device = Buffer::from_host(be, ids.data(), ids.size() * sizeof(u32), s);
    be.synchronize(s);
    it = dt.bases.emplace(ids, std::move(entry)).first;
  }
  device_ids = it->second->device.as<const u32>();
  return it->second->host;
}

BasisView RingContext::basis_on(Backend& be, const std::vector<u32>& ids) const {
  std::lock_guard lock(mutex_);
  auto& dt = device_tables(be);
  BasisView view;
  view.ring = &dt.words64->view;
  view.host_ids = basis_ids(dt, be, ids, view.ids).data();
  view.limbs = ids.size();
  return view;
}

BasisView32 RingContext::basis32_on(Backend& be, const std::vector<u32>& ids) const {
  for (u32 id : ids)
    if (id >= primes_.size() || prime(id) >> kMaxModulusBitsOf<u32>)
      throw ParameterError("32-bit-word transforms need primes below 2^30; prime index " +
                           std::to_string(id) + " is not one");
  std::lock_guard lock(mutex_);
  auto& dt = device_tables(be);
  if (!dt.words32) dt.words32 = build_tables<u32>(primes_, n_, log_n_, be);
  BasisView32 view;
  view.ring = &dt.words32->view;
  view.host_ids = basis_ids(dt, be, ids, view.ids).data();
  view.limbs = ids.size();
  return view;
}

RnsBasis::RnsBasis(std::shared_ptr<const RingContext> ctx, std::vector<u32> ids)
    : ctx_(std::move(ctx)), ids_(std::move(ids)) {
  if (!ctx_) throw ParameterError("a basis needs a ring context");
  if (ids_.empty()) throw ParameterError("a basis needs at least one prime");
  std::set<u32> seen;
  for (u32 id : ids_) {
    if (id >= ctx_->prime_count())
      throw ParameterError("prime index " + std::to_string(id) + " is out of range: the ring has " +
                           std::to_string(ctx_->prime_count()) + " primes");
    if (!seen.insert(id).second)
      throw ParameterError("prime index " + std::to_string(id) + " appears twice in the basis");
  }
}

RnsBasis RnsBasis::unchecked(std::shared_ptr<const RingContext> ctx, std::vector<u32> ids) {
  for (u32 id : ids)
    if (id >= ctx->prime_count())
      throw ParameterError("prime index " + std::to_string(id) + " is out of range");
  RnsBasis b;
  b.ctx_ = std::move(ctx);
  b.ids_ = std::move(ids);
  return b;
}

RnsBasis RnsBasis::all(std::shared_ptr<const RingContext> ctx) {
  std::vector<u32> ids(ctx->prime_count());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<u32>(i);
  return RnsBasis(std::move(ctx), std::move(ids));
}

std::vector<u64> RnsBasis::primes() const {
  std::vector<u64> out;
  for (u32 id : ids_) out.push_back(ctx_->prime(id));
  return out;
}

RnsBasis RnsBasis::concat(const RnsBasis& other) const {
  if (ctx_ != other.ctx_) throw MismatchError("cannot join bases of different rings");
  std::vector<u32> ids = ids_;
  ids.insert(ids.end(), other.ids_.begin(), other.ids_.end());
  try {
    return RnsBasis(ctx_, ids);
  } catch (const ParameterError&) {
    throw MismatchError("bases share a prime; ModUp/ModDown need disjoint bases Q and P");
  }
}

}  // namespace ember::ring
