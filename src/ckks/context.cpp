// ckks::Context: coefficient encoding, homomorphic arithmetic, rescaling, rotations.
#include "ember/ckks/context.h"

#include <cmath>
#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ckks {

using backend::Stream;
using ring::Form;

namespace {
constexpr u64 kCkksTag = 0x434b4b53;  // "CKKS"

/// round(x) as a 128-bit integer; x finite with |x| < 2^126.
__int128 round_to_i128(double x) {
  if (!std::isfinite(x) || std::fabs(x) >= std::ldexp(1.0, 126))
    throw ParameterError(
        "encode: a value times the scale is not finite or exceeds 2^126; "
        "lower the scale or the values");
  const double r = std::nearbyint(x);
  if (std::fabs(r) < std::ldexp(1.0, 62)) return static_cast<__int128>(static_cast<long long>(r));
  int exp = 0;
  const double mant = std::frexp(r, &exp);  // r = mant * 2^exp, 0.5 <= |mant| < 1
  const long long m53 = static_cast<long long>(std::ldexp(mant, 53));
  return static_cast<__int128>(m53) << (exp - 53);
}

u64 residue_i128(__int128 v, u64 q) {
  __int128 r = v % static_cast<__int128>(q);
  if (r < 0) r += q;
  return static_cast<u64>(r);
}
}  // namespace

Context::Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
                 std::size_t dnum, backend::Device device)
    : rlwe_(n, q_primes, p_primes, dnum, device, kCkksTag) {}

RnsPoly Context::encode_coeffs(const double* coeffs, std::size_t level, double scale) const {
  if (level > max_level())
    throw ParameterError("encode: level " + std::to_string(level) + " is above the top level " +
                         std::to_string(max_level()));
  const std::size_t n = rlwe_.n();
  const ring::RnsBasis& q = rlwe_.q_basis(level);
  std::vector<__int128> v(n);
  bool small = true;
  for (std::size_t k = 0; k < n; ++k) {
    v[k] = round_to_i128(coeffs[k] * scale);
    small = small && v[k] > -(static_cast<__int128>(1) << 62) &&
            v[k] < (static_cast<__int128>(1) << 62);
  }
  if (small) {
    std::vector<std::int64_t> s(n);
    for (std::size_t k = 0; k < n; ++k) s[k] = static_cast<std::int64_t>(v[k]);
    return RnsPoly::from_signed(q, Form::eval, rlwe_.device(), s.data());
  }
  std::vector<u64> words(q.size() * n);
  for (std::size_t l = 0; l < q.size(); ++l)
    for (std::size_t k = 0; k < n; ++k) words[l * n + k] = residue_i128(v[k], q.prime(l));
  RnsPoly p = RnsPoly::from_host(q, Form::coeff, rlwe_.device(), words.data());
  p.ntt_inplace();
  return p;
}

std::vector<double> Context::decode_coeffs(const RnsPoly& m, double scale) const {
  if (m.form() != Form::coeff || m.limbs() > 2)
    throw ParameterError("decode: expects 1 or 2 primes in coefficient form");
  const std::vector<u64> w = m.to_host();
  const std::size_t n = m.n();
  std::vector<double> out(n);
  const u64 q0 = m.basis().prime(0);
  if (m.limbs() == 1) {
    for (std::size_t k = 0; k < n; ++k) {
      const u64 r = w[k];
      const double c = r > q0 / 2 ? -static_cast<double>(q0 - r) : static_cast<double>(r);
      out[k] = c / scale;
    }
    return out;
  }
  const u64 q1 = m.basis().prime(1);
  const Modulus m1 = make_modulus(q1);
  const u64 q0_inv = inverse_mod(q0 % q1, q1);
  const unsigned __int128 big_q = static_cast<unsigned __int128>(q0) * q1;
  for (std::size_t k = 0; k < n; ++k) {
    const u64 r0 = w[k], r1 = w[n + k];
    const u64 t = mul_mod(sub_mod(r1, barrett_reduce_64(r0, m1), q1), q0_inv, m1);
    const unsigned __int128 v = static_cast<unsigned __int128>(t) * q0 + r0;
    const double c = v > big_q / 2 ? -static_cast<double>(big_q - v) : static_cast<double>(v);
    out[k] = c / scale;
  }
  return out;
}

void Context::check_one(const Ciphertext& a, const char* op) const {
  rlwe_.check_params(a.params_id, op);
  if (a.polys.size() < 2) throw ParameterError(std::string(op) + ": empty ciphertext");
}

void Context::check_pair(const Ciphertext& a, const Ciphertext& b, const char* op) const {
  check_one(a, op);
  check_one(b, op);
  if (a.key_id != b.key_id)
    throw MismatchError(std::string(op) +
                        ": the ciphertexts were encrypted under different key sets");
  if (a.level != b.level)
    throw MismatchError(std::string(op) + ": the ciphertexts are at different levels (" +
                        std::to_string(a.level) + " and " + std::to_string(b.level) + ")");
}

Ciphertext Context::like(const Ciphertext& a, std::size_t polys) const {
  Ciphertext c;
  const ring::RnsBasis& q = rlwe_.q_basis(a.level);
  for (std::size_t i = 0; i < polys; ++i) c.polys.emplace_back(q, Form::eval, rlwe_.device());
  c.level = a.level;
  c.scale = a.scale;
  c.key_id = a.key_id;
  c.params_id = a.params_id;
  return c;
}

Ciphertext Context::add(const Ciphertext& a, const Ciphertext& b) const {
  check_pair(a, b, "add");
  auto& be = rlwe_.backend();
  const auto v = rlwe_.q_basis(a.level).on(be);
  const Stream s = be.default_stream();
  const std::size_t k = std::max(a.polys.size(), b.polys.size());
  Ciphertext c = like(a, k);
  for (std::size_t i = 0; i < k; ++i) {
    if (i < a.polys.size() && i < b.polys.size())
      be.add_async(c.polys[i].data(), a.polys[i].data(), b.polys[i].data(), v, s);
    else
      be.copy_async(c.polys[i].data(), (i < a.polys.size() ? a : b).polys[i].data(),
                    c.polys[i].words() * sizeof(u64), s);
  }
  return c;
}

Ciphertext Context::sub(const Ciphertext& a, const Ciphertext& b) const {
  return add(a, negate(b));
}

Ciphertext Context::negate(const Ciphertext& a) const {
  check_one(a, "negate");
  auto& be = rlwe_.backend();
  const auto v = rlwe_.q_basis(a.level).on(be);
  Ciphertext c = like(a, a.polys.size());
  for (std::size_t i = 0; i < a.polys.size(); ++i)
    be.negate_async(c.polys[i].data(), a.polys[i].data(), v, be.default_stream());
  return c;
}

Ciphertext Context::add_plain(const Ciphertext& a, const RnsPoly& p) const {
  check_one(a, "add_plain");
  if (p.basis() != rlwe_.q_basis(a.level) || p.form() != Form::eval)
    throw MismatchError("add_plain: the plaintext is not at the ciphertext's level");
  Ciphertext c = a.copy();
  auto& be = rlwe_.backend();
  be.add_async(c.polys[0].data(), a.polys[0].data(), p.data(), p.view(), be.default_stream());
  return c;
}

Ciphertext Context::sub_plain(const Ciphertext& a, const RnsPoly& p) const {
  return add_plain(a, p.negate());
}

Ciphertext Context::multiply_plain(const Ciphertext& a, const RnsPoly& p) const {
  check_one(a, "multiply_plain");
  if (p.basis() != rlwe_.q_basis(a.level) || p.form() != Form::eval)
    throw MismatchError("multiply_plain: the plaintext is not at the ciphertext's level");
  auto& be = rlwe_.backend();
  Ciphertext c = like(a, a.polys.size());
  for (std::size_t i = 0; i < a.polys.size(); ++i)
    be.multiply_async(c.polys[i].data(), a.polys[i].data(), p.data(), p.view(),
                      be.default_stream());
  return c;
}

Ciphertext Context::multiply_scalar(const Ciphertext& a, const std::vector<u64>& residues) const {
  check_one(a, "multiply_scalar");
  if (residues.size() != a.level + 1)
    throw ParameterError("multiply_scalar: need one residue per prime of the level");
  auto& be = rlwe_.backend();
  const auto v = rlwe_.q_basis(a.level).on(be);
  Ciphertext c = like(a, a.polys.size());
  for (std::size_t i = 0; i < a.polys.size(); ++i)
    be.multiply_scalar_async(c.polys[i].data(), a.polys[i].data(), residues, v,
                             be.default_stream());
  return c;
}

Ciphertext Context::add_scalar(const Ciphertext& a, const std::vector<u64>& residues) const {
  check_one(a, "add_scalar");
  if (residues.size() != a.level + 1)
    throw ParameterError("add_scalar: need one residue per prime of the level");
  auto& be = rlwe_.backend();
  const Stream s = be.default_stream();
  const auto v = rlwe_.q_basis(a.level).on(be);
  Ciphertext c = a.copy();
  backend::Buffer consts =
      backend::Buffer::from_host(be, residues.data(), residues.size() * sizeof(u64), s);
  // A constant polynomial has the same value in every evaluation slot.
  be.add_constant_async(c.polys[0].data(), a.polys[0].data(), consts.as<u64>(), v, s);
  return c;
}

Ciphertext Context::multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const {
  check_pair(a, b, "multiply");
  if (a.polys.size() != 2 || b.polys.size() != 2)
    throw ParameterError("multiply: relinearize the operands first (they have 3 polynomials)");
  auto& be = rlwe_.backend();
  const Stream s = be.default_stream();
  const auto v = rlwe_.q_basis(a.level).on(be);
  Ciphertext c = like(a, 3);
  be.tensor_async(c.polys[0].data(), c.polys[1].data(), c.polys[2].data(), a.polys[0].data(),
                  a.polys[1].data(), b.polys[0].data(), b.polys[1].data(), v, s);
  c.scale = a.scale * b.scale;
  return c;
}

Ciphertext Context::relinearize(const Ciphertext& a, const SwitchKey& relin) const {
  check_one(a, "relinearize");
  if (a.polys.size() == 2) return a.copy();
  if (relin.key_id != a.key_id || relin.galois != 0)
    throw MismatchError("relinearize: the key is not this key set's relinearization key");
  auto& be = rlwe_.backend();
  const Stream s = be.default_stream();
  const auto v = rlwe_.q_basis(a.level).on(be);
  Ciphertext c = like(a, 2);
  const backend::Buffer ext = rlwe_.mod_up(a.polys[2].data(), a.level, s);
  rlwe_.key_switch(a.polys[2].data(), ext, a.level, relin, 0, c.polys[0].data(), c.polys[1].data(),
                   s);
  be.add_async(c.polys[0].data(), c.polys[0].data(), a.polys[0].data(), v, s);
  be.add_async(c.polys[1].data(), c.polys[1].data(), a.polys[1].data(), v, s);
  return c;
}

Ciphertext Context::multiply(const Ciphertext& a, const Ciphertext& b,
                             const SwitchKey& relin) const {
  return relinearize(multiply_no_relin(a, b), relin);
}

Ciphertext Context::square(const Ciphertext& a, const SwitchKey& relin) const {
  return multiply(a, a, relin);
}

Ciphertext Context::rescale(const Ciphertext& a) const {
  check_one(a, "rescale");
  if (a.level == 0)
    throw ParameterError("rescale: the ciphertext is at level 0; no prime left to divide by");
  auto& be = rlwe_.backend();
  const Stream s = be.default_stream();
  Ciphertext c;
  const ring::RnsBasis& q = rlwe_.q_basis(a.level - 1);
  for (const auto& p : a.polys) {
    RnsPoly t = p.copy();
    rlwe_.rescale_poly(t.data(), a.level, s);
    RnsPoly r(q, Form::eval, rlwe_.device());
    be.copy_async(r.data(), t.data(), r.words() * sizeof(u64), s);
    c.polys.push_back(std::move(r));
  }
  c.level = a.level - 1;
  c.scale = a.scale / static_cast<double>(prime(a.level));
  c.key_id = a.key_id;
  c.params_id = a.params_id;
  return c;
}

Ciphertext Context::drop_level(const Ciphertext& a, std::size_t level) const {
  check_one(a, "drop_level");
  if (level > a.level)
    throw ParameterError("drop_level: target level " + std::to_string(level) +
                         " is above the ciphertext's level " + std::to_string(a.level));
  auto& be = rlwe_.backend();
  Ciphertext c;
  const ring::RnsBasis& q = rlwe_.q_basis(level);
  for (const auto& p : a.polys) {
    RnsPoly r(q, Form::eval, rlwe_.device());
    be.copy_async(r.data(), p.data(), r.words() * sizeof(u64), be.default_stream());
    c.polys.push_back(std::move(r));
  }
  c.level = level;
  c.scale = a.scale;
  c.key_id = a.key_id;
  c.params_id = a.params_id;
  return c;
}

std::vector<Ciphertext> Context::apply_galois_hoisted(
    const Ciphertext& a, const std::vector<const SwitchKey*>& keys) const {
  check_one(a, "rotate");
  if (a.polys.size() != 2) throw ParameterError("rotate: relinearize the ciphertext first");
  auto& be = rlwe_.backend();
  const Stream s = be.default_stream();
  const auto v = rlwe_.q_basis(a.level).on(be);
  const backend::Buffer ext = rlwe_.mod_up(a.polys[1].data(), a.level, s);
  std::vector<Ciphertext> out;
  for (const SwitchKey* key : keys) {
    if (key->key_id != a.key_id || key->galois == 0)
      throw MismatchError("rotate: the key is not a Galois key of this key set");
    Ciphertext c = like(a, 2);
    rlwe_.key_switch(a.polys[1].data(), ext, a.level, *key, key->galois, c.polys[0].data(),
                     c.polys[1].data(), s);
    RnsPoly g0(rlwe_.q_basis(a.level), Form::eval, rlwe_.device());
    be.automorphism_async(g0.data(), a.polys[0].data(), key->galois, true, v, s);
    be.add_async(c.polys[0].data(), c.polys[0].data(), g0.data(), v, s);
    out.push_back(std::move(c));
  }
  return out;
}

Ciphertext Context::apply_galois(const Ciphertext& a, const SwitchKey& key) const {
  auto r = apply_galois_hoisted(a, {&key});
  return std::move(r[0]);
}

}  // namespace ember::ckks
