// bgv::Context: level and factor matching, products, modulus switching, decryption, noise.
#include "ember/bgv/context.h"

#include <cmath>
#include <numeric>
#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::bgv {

namespace {
constexpr u64 kBgvTag = 0x424756;  // "BGV"

rlwe::SchemeOptions bgv_options(u64 t) {
  rlwe::SchemeOptions o;
  o.tag = kBgvTag;
  o.plain_modulus = t;
  o.errors_times_t = true;
  return o;
}
}  // namespace

Context::Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
                 std::size_t dnum, u64 t, backend::Device device,
                 std::shared_ptr<const ring::RingContext> shared_ring)
    : rlwe::Evaluator(n, q_primes, p_primes, dnum, device, bgv_options(t), std::move(shared_ring)) {
  if (t >= (u64{1} << 61)) throw ParameterError("plain modulus t must be below 2^61");
  for (u64 q : rlwe_.full_basis().primes())
    if (std::gcd(q, t) != 1)
      throw ParameterError("plain modulus t=" + std::to_string(t) +
                           " must be coprime to every prime of Q and P");
  const auto& ring = rlwe_.ring();
  to_q0_.emplace_back();
  for (std::size_t l = 1; l <= max_level(); ++l) {
    std::vector<u32> upper;
    for (u32 i = 1; i <= l; ++i) upper.push_back(i);
    to_q0_.push_back(
        std::make_unique<ring::DivideRound>(rlwe_.q_basis(0), ring::RnsBasis(ring, upper), t));
  }
}

std::vector<u64> Context::residues(u64 v, std::size_t level) const {
  const u64 t = plain_modulus();
  std::vector<u64> out;
  for (std::size_t i = 0; i <= level; ++i) {
    const u64 q = prime(i);
    // The centered representative of v mod t: noise grows by at most t / 2.
    out.push_back(v <= t / 2 ? v % q : neg_mod((t - v) % q, q));
  }
  return out;
}

std::vector<Ciphertext> Context::match(const Ciphertext& a, const Ciphertext& b) const {
  check_pair_keys(a, b, "add");
  const std::size_t level = std::min(a.level, b.level);
  std::vector<Ciphertext> out;
  out.push_back(mod_switch(a, level));
  out.push_back(mod_switch(b, level));
  if (out[0].factor != out[1].factor) {
    const u64 t = plain_modulus();
    const u64 k = mul_mod(out[0].factor, inverse_mod(out[1].factor, t), make_modulus(t));
    out[1] = multiply_scalar(out[1], residues(k, level));
    out[1].factor = out[0].factor;
  }
  return out;
}

Ciphertext Context::add(const Ciphertext& a, const Ciphertext& b) const {
  if (a.level == b.level && a.factor == b.factor) return rlwe::Evaluator::add(a, b);
  const auto m = match(a, b);
  return rlwe::Evaluator::add(m[0], m[1]);
}

Ciphertext Context::sub(const Ciphertext& a, const Ciphertext& b) const {
  if (a.level == b.level && a.factor == b.factor) return rlwe::Evaluator::sub(a, b);
  const auto m = match(a, b);
  return rlwe::Evaluator::sub(m[0], m[1]);
}

Ciphertext Context::multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const {
  check_pair_keys(a, b, "multiply");
  const std::size_t level = std::min(a.level, b.level);
  const Modulus t = make_modulus(plain_modulus());
  if (a.level == b.level) {
    Ciphertext c = rlwe::Evaluator::multiply_no_relin(a, b);
    c.factor = mul_mod(a.factor, b.factor, t);
    return c;
  }
  const Ciphertext a2 = mod_switch(a, level), b2 = mod_switch(b, level);
  Ciphertext c = rlwe::Evaluator::multiply_no_relin(a2, b2);
  c.factor = mul_mod(a2.factor, b2.factor, t);
  return c;
}

RnsPoly Context::decrypt_low(const Ciphertext& ct, const SecretKey& sk, u64& factor) const {
  check_one(ct, "decrypt");
  RnsPoly v = rlwe_.decrypt_core(ct, sk, ct.level + 1);
  factor = ct.factor;
  if (ct.level == 0) return v;
  // Switching the decryption v instead of (c0, c1): the same message times (q_1...q_l)^-1,
  // one conversion instead of l.
  const u64 t = plain_modulus();
  const Modulus mt = make_modulus(t);
  for (std::size_t i = 1; i <= ct.level; ++i)
    factor = mul_mod(factor, inverse_mod(prime(i) % t, t), mt);
  auto& be = rlwe_.backend();
  RnsPoly low(rlwe_.q_basis(0), ring::Form::coeff, rlwe_.device(), v.stream());
  to_q0_[ct.level]->apply_coeff_async(low.data(), v.data(), v.data() + n(), be, v.stream());
  return low;
}

std::vector<u64> Context::decrypt(const Ciphertext& ct, const SecretKey& sk) const {
  u64 factor = 1;
  const std::vector<u64> v = decrypt_low(ct, sk, factor).to_host();
  const u64 q0 = prime(0), t = plain_modulus();
  const Modulus mt = make_modulus(t);
  const u64 f_inv = inverse_mod(factor, t);
  std::vector<u64> m(n());
  for (std::size_t i = 0; i < n(); ++i) {
    const u64 x = v[i] > q0 / 2 ? neg_mod((q0 - v[i]) % t, t) : v[i] % t;  // centered, mod t
    m[i] = mul_mod(x, f_inv, mt);
  }
  return m;
}

double Context::noise_budget(const Ciphertext& ct, const SecretKey& sk) const {
  double log_q = 0;
  for (u64 q : rlwe_.q_basis(ct.level).primes()) log_q += std::log2(static_cast<double>(q));
  return log_q - rlwe_.noise_log2(ct, sk, 1) - 1.0;
}

}  // namespace ember::bgv
