// Fast and exact base conversion tables and launches.
#include "ember/ring/base_converter.h"

#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"
#include "ember/ring/byte_planes.h"

namespace ember::ring {

using backend::Buffer;

struct BaseConverter::DeviceTables {
  Buffer qhat_inv, qhat_inv_shoup, qhat_mod_p, inv_q, q_mod_p;
  Buffer y_add, out_mul, out_mul_shoup, out_add, byte_planes, byte_targets, byte_sources;
  Buffer one_prime;
  backend::BaseConvView view;
};

struct BaseConverter::DeviceTables32 {
  Buffer words;  // every 32-bit table, one upload
  Buffer inv_q, byte_planes;
  backend::BaseConvView32 view;
};

BaseConverter::BaseConverter(RnsBasis from, RnsBasis to, bool exact, const ConversionMaps& maps)
    : from_(std::move(from)),
      to_(std::move(to)),
      // From one prime x itself is below Q: the fast conversion is exact, and an overflow
      // estimate could only be wrong (y / q rounds to 1 in floating point for y near q).
      exact_(exact && from_.size() > 1),
      tables_(std::make_shared<backend::PerDevice<DeviceTables>>()),
      tables32_(std::make_shared<backend::PerDevice<DeviceTables32>>()) {
  from_.concat(to_);  // throws MismatchError for other rings or shared primes
  const auto q = from_.primes();
  const auto p = to_.primes();
  auto check = [](const std::vector<u64>& v, std::size_t size) {
    if (!v.empty() && v.size() != size)
      throw ParameterError("base conversion map: need one value per prime");
  };
  check(maps.in_mul, q.size());
  check(maps.in_add, q.size());
  check(maps.out_mul, p.size());
  check(maps.out_add, p.size());
  qhat_inv_.resize(q.size());
  qhat_inv_shoup_.resize(q.size());
  qhat_mod_p_.resize(q.size() * p.size());
  for (std::size_t i = 0; i < q.size(); ++i) {
    const Modulus m = make_modulus(q[i]);
    const u64 qhat_inv = inverse_mod(product_mod(q, q[i], i), q[i]);
    // (x a + b) qhat_inv = x (a qhat_inv) + b qhat_inv
    qhat_inv_[i] = maps.in_mul.empty() ? qhat_inv : mul_mod(maps.in_mul[i] % q[i], qhat_inv, m);
    qhat_inv_shoup_[i] = shoup_precompute(qhat_inv_[i], q[i]);
    if (!maps.in_add.empty()) y_add_.push_back(mul_mod(maps.in_add[i] % q[i], qhat_inv, m));
    for (std::size_t j = 0; j < p.size(); ++j)
      qhat_mod_p_[i * p.size() + j] = product_mod(q, p[j], i);
    inv_q_.push_back(1.0 / static_cast<double>(q[i]));
  }
  for (u64 pj : p) q_mod_p_.push_back(product_mod(q, pj));
  for (std::size_t j = 0; j < maps.out_mul.size(); ++j) {
    out_mul_.push_back(maps.out_mul[j] % p[j]);
    out_mul_shoup_.push_back(shoup_precompute(out_mul_.back(), p[j]));
  }
  for (std::size_t j = 0; j < maps.out_add.size(); ++j) out_add_.push_back(maps.out_add[j] % p[j]);
  // The byte matrix for tensor-core conversions: 8 bytes per source prime and, when exact, one
  // row for the overflow (u < from primes fits a byte), in blocks of 32 rows.
  if (q.size() + (exact_ ? 1 : 0) <= backend::kByteMatrixInputs) {
    const std::vector<std::vector<u64>> w = byte_matrix(8);
    byte_blocks_ = (w.size() + 31) / 32;
    byte_planes_ = byte_planes_of(w, p.size(), byte_blocks_, 8);
    for (std::size_t j = 0; j < p.size(); ++j)
      byte_targets_.push_back(
          {p[j], 1.0 / static_cast<double>(p[j]), out_add_.empty() ? 0 : out_add_[j]});
    for (std::size_t i = 0; i < q.size(); ++i)
      byte_sources_.push_back({q[i], qhat_inv_[i], qhat_inv_shoup_[i],
                               y_add_.empty() ? 0 : y_add_[i], exact_ ? inv_q_[i] : 0.0});
  }
}

BaseConverter BaseConverter::centered(RnsBasis from, RnsBasis to, const std::vector<u64>& in_mul,
                                      const std::vector<u64>& out_mul) {
  // Exact conversion of x + h (h = floor(Q/2)), which lies in [0, Q) for a centered x, then - h
  // (times out_mul: v out_mul - h out_mul).
  const auto q = from.primes();
  ConversionMaps maps;
  maps.in_mul = in_mul;
  maps.out_mul = out_mul;
  for (u64 qi : q) maps.in_add.push_back(half_product_mod(q, qi));
  const auto p = to.primes();
  if (!out_mul.empty() && out_mul.size() != p.size())
    throw ParameterError("base conversion map: need one value per prime");
  for (std::size_t j = 0; j < p.size(); ++j) {
    const u64 h = half_product_mod(q, p[j]);
    const u64 scaled = out_mul.empty() ? h : mul_mod(h, out_mul[j] % p[j], make_modulus(p[j]));
    maps.out_add.push_back(neg_mod(scaled, p[j]));
  }
  return BaseConverter(std::move(from), std::move(to), /*exact=*/true, maps);
}

backend::BaseConvView BaseConverter::view_on(backend::Backend& be) const {
  return tables_
      ->get(be,
            [&](backend::Backend& b) {
              DeviceTables t;
              t.qhat_inv = backend::upload(b, qhat_inv_);
              t.qhat_inv_shoup = backend::upload(b, qhat_inv_shoup_);
              t.qhat_mod_p = backend::upload(b, qhat_mod_p_);
              t.inv_q = backend::upload(b, inv_q_);
              t.q_mod_p = backend::upload(b, q_mod_p_);
              t.view.from_limbs = from_.size();
              t.view.to_limbs = to_.size();
              t.view.qhat_inv = t.qhat_inv.as<const u64>();
              t.view.qhat_inv_shoup = t.qhat_inv_shoup.as<const u64>();
              t.view.qhat_mod_p = t.qhat_mod_p.as<const u64>();
              if (exact_) {
                t.view.inv_q = t.inv_q.as<const double>();
                t.view.q_mod_p = t.q_mod_p.as<const u64>();
              }
              if (!y_add_.empty()) {
                t.y_add = backend::upload(b, y_add_);
                t.view.y_add = t.y_add.as<const u64>();
              }
              if (!out_mul_.empty()) {
                t.out_mul = backend::upload(b, out_mul_);
                t.out_mul_shoup = backend::upload(b, out_mul_shoup_);
                t.view.out_mul = t.out_mul.as<const u64>();
                t.view.out_mul_shoup = t.out_mul_shoup.as<const u64>();
              }
              if (!out_add_.empty()) {
                t.out_add = backend::upload(b, out_add_);
                t.view.out_add = t.out_add.as<const u64>();
              }
              if (!byte_planes_.empty()) {
                t.byte_planes = backend::upload(b, byte_planes_);
                t.view.byte_planes = t.byte_planes.as<const u32>();
                t.view.byte_blocks = static_cast<u32>(byte_blocks_);
                t.byte_targets = backend::upload(b, byte_targets_);
                t.view.byte_targets = t.byte_targets.as<const backend::ByteTarget>();
                t.byte_sources = backend::upload(b, byte_sources_);
                t.view.byte_sources = t.byte_sources.as<const backend::ByteSource>();
              }
              if (from_.size() == 1) {
                const backend::OnePrimeMaps maps{from_.on(b).ring->moduli + from_.ids()[0],
                                                 t.view.qhat_inv,
                                                 t.view.qhat_inv_shoup,
                                                 t.view.y_add,
                                                 t.view.out_mul,
                                                 t.view.out_mul_shoup,
                                                 t.view.out_add};
                t.one_prime = backend::upload(b, std::vector<backend::OnePrimeMaps>{maps});
                t.view.one_prime = t.one_prime.as<const backend::OnePrimeMaps>();
              }
              return t;
            })
      .view;
}

backend::BaseConvView32 BaseConverter::view32_on(backend::Backend& be) const {
  for (const RnsBasis* b : {&from_, &to_})
    for (u64 q : b->primes())
      if (q >> kMaxModulusBitsOf<u32>)
        throw ParameterError(
            "base conversion on 32-bit words: every prime must be below 2^30, got " +
            std::to_string(q));
  return tables32_
      ->get(be,
            [&](backend::Backend& b) {
              // The tables' values are below their primes (< 2^30): the 64-bit ones narrowed, with
              // the Shoup companions recomputed for 32-bit words.
              const auto p = to_.primes(), q = from_.primes();
              std::vector<u32> words;
              std::vector<std::size_t> at;
              const auto add = [&](std::vector<u32> v) {
                at.push_back(words.size());
                words.insert(words.end(), v.begin(), v.end());
              };
              const auto narrow = [](const std::vector<u64>& v) {
                return std::vector<u32>(v.begin(), v.end());
              };
              const auto shoup32 = [](const std::vector<u64>& v, const std::vector<u64>& mod) {
                std::vector<u32> out(v.size());
                for (std::size_t i = 0; i < v.size(); ++i)
                  out[i] = shoup_precompute<u32>(static_cast<u32>(v[i]), static_cast<u32>(mod[i]));
                return out;
              };
              add(narrow(qhat_inv_));
              add(shoup32(qhat_inv_, q));
              add(narrow(qhat_mod_p_));
              add(narrow(q_mod_p_));
              add(narrow(y_add_));
              add(narrow(out_mul_));
              add(shoup32(out_mul_, p));
              add(narrow(out_add_));
              DeviceTables32 t;
              t.words = backend::upload(b, words);
              const u32* base = t.words.as<const u32>();
              auto& v = t.view;
              v.from_limbs = from_.size();
              v.to_limbs = to_.size();
              v.qhat_inv = base + at[0];
              v.qhat_inv_shoup = base + at[1];
              v.qhat_mod_p = base + at[2];
              if (exact_) {
                t.inv_q = backend::upload(b, inv_q_);
                v.inv_q = t.inv_q.as<const double>();
                v.q_mod_p = base + at[3];
              }
              if (!y_add_.empty()) v.y_add = base + at[4];
              if (!out_mul_.empty()) {
                v.out_mul = base + at[5];
                v.out_mul_shoup = base + at[6];
              }
              if (!out_add_.empty()) v.out_add = base + at[7];
              const std::vector<u32> planes = byte_planes32();
              if (!planes.empty()) {
                t.byte_planes = backend::upload(b, planes);
                v.byte_planes = t.byte_planes.as<const u32>();
                v.byte_blocks = static_cast<u32>((4 * from_.size() + (exact_ ? 1 : 0) + 31) / 32);
              }
              return t;
            })
      .view;
}

std::vector<std::vector<u64>> BaseConverter::byte_matrix(std::size_t bytes) const {
  const auto q = from_.primes(), p = to_.primes();
  std::vector<std::vector<u64>> w;
  // Row of source i, byte a: (Q/q_i mod p_j) out_mul_j 2^(8a); the overflow's: -Q out_mul_j.
  const auto scaled = [&](std::size_t j, u64 v) {
    return out_mul_.empty() ? v : mul_mod(v, out_mul_[j], make_modulus(p[j]));
  };
  for (std::size_t i = 0; i < q.size(); ++i) {
    std::vector<u64> row(p.size());
    for (std::size_t j = 0; j < p.size(); ++j) row[j] = scaled(j, qhat_mod_p_[i * p.size() + j]);
    for (std::size_t a = 0; a < bytes; ++a) {
      w.push_back(row);
      for (std::size_t j = 0; j < p.size(); ++j) row[j] = mul_mod(row[j], 256, make_modulus(p[j]));
    }
  }
  if (exact_) {
    std::vector<u64>& row = w.emplace_back(p.size());
    for (std::size_t j = 0; j < p.size(); ++j) row[j] = scaled(j, neg_mod(q_mod_p_[j], p[j]));
  }
  return w;
}

std::vector<u32> BaseConverter::byte_planes32() const {
  if (4 * from_.size() + (exact_ ? 1 : 0) > backend::kByteMatrixInputs32) return {};
  const std::vector<std::vector<u64>> w = byte_matrix(4);
  return byte_planes_of(w, to_.size(), (w.size() + 31) / 32, 4);
}

backend::ConvJob BaseConverter::job(u64* out, const u64* a, backend::Backend& be) const {
  return {view_on(be), from_.on(be), to_.on(be), a, out, nullptr};
}

backend::ConvJob32 BaseConverter::job(u32* out, const u32* a, backend::Backend& be) const {
  return {view32_on(be), from_.on32(be), to_.on32(be), a, out};
}

void BaseConverter::convert_async(u64* out, const u64* a, backend::Backend& be,
                                  backend::Stream s) const {
  be.base_convert_async(out, a, view_on(be), from_.on(be), to_.on(be), s);
}

RnsPoly32 BaseConverter::convert(const RnsPoly32& a) const {
  if (a.basis() != from_)
    throw MismatchError("base conversion: the input's basis is not the converter's source basis");
  if (a.form() != Form::coeff)
    throw MismatchError("base conversion needs coeff form; call intt() first");
  auto& be = a.backend();
  const backend::BaseConvView32 view = view32_on(be);
  RnsPoly32 out(to_, Form::coeff, a.device(), a.stream());
  be.base_convert_async(out.data(), a.data(), view, from_.on32(be), to_.on32(be), a.stream());
  return out;
}

RnsPoly BaseConverter::convert(const RnsPoly& a) const {
  if (a.basis() != from_)
    throw MismatchError("base conversion: the input's basis is not the converter's source basis");
  if (a.form() != Form::coeff)
    throw MismatchError("base conversion needs coeff form; call intt() first");
  RnsPoly out(to_, Form::coeff, a.device(), a.stream());
  auto& be = a.backend();
  convert_async(out.data(), a.data(), be, a.stream());
  return out;
}

}  // namespace ember::ring
