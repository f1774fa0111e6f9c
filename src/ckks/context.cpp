// ckks::Context: coefficient encoding, homomorphic arithmetic, rescaling, rotations.
#include "ember/ckks/context.h"

#include <cmath>
#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ckks {

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

rlwe::SchemeOptions ckks_options() {
  rlwe::SchemeOptions o;
  o.tag = kCkksTag;
  return o;
}

u64 residue_i128(__int128 v, u64 q) {
  __int128 r = v % static_cast<__int128>(q);
  if (r < 0) r += q;
  return static_cast<u64>(r);
}
}  // namespace

Context::Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
                 std::size_t dnum, backend::Device device)
    : rlwe::Evaluator(n, q_primes, p_primes, dnum, device, ckks_options()) {}

RnsPoly Context::encode_coeffs(const double* coeffs, std::size_t level, double scale,
                               bool extended) const {
  if (level > max_level())
    throw ParameterError("encode: level " + std::to_string(level) + " is above the top level " +
                         std::to_string(max_level()));
  const std::size_t n = rlwe_.n();
  const ring::RnsBasis& q = extended ? rlwe_.qp_basis(level) : rlwe_.q_basis(level);
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

Ciphertext Context::square(const Ciphertext& a, const SwitchKey& relin) const {
  return multiply(a, a, relin);
}

Ciphertext Context::rescale(const Ciphertext& a) const { return divide_by_last_prime(a); }

const ring::BaseConverter& Context::raise_converter(std::size_t level) const {
  std::lock_guard<std::mutex> lock(raise_mutex_);
  auto& conv = raise_[level];
  if (!conv) {
    const auto& ids = rlwe_.q_basis(level).ids();
    const ring::RnsBasis upper(rlwe_.ring(), std::vector<u32>(ids.begin() + 1, ids.end()));
    conv = std::make_unique<ring::BaseConverter>(
        ring::BaseConverter::centered(rlwe_.q_basis(0), upper));
  }
  return *conv;
}

Ciphertext Context::mod_raise(const Ciphertext& a, std::size_t level) const {
  check_one(a, "mod_raise");
  if (a.level != 0 || a.polys.size() != 2)
    throw ParameterError(
        "mod_raise: expects a relinearized ciphertext at level 0 (drop it to level 0 first)");
  if (level < 1 || level > max_level())
    throw ParameterError("mod_raise: target level must be in [1, " + std::to_string(max_level()) +
                         "]");
  auto& be = rlwe_.backend();
  const auto s = be.default_stream();
  const ring::BaseConverter& conv = raise_converter(level);
  const std::size_t n = rlwe_.n();
  Ciphertext c = like(a, 0, level);  // the polynomials are built below
  for (const auto& p : a.polys) {
    RnsPoly low = p.copy();
    low.intt_inplace();
    RnsPoly out(rlwe_.q_basis(level), Form::coeff, rlwe_.device());
    // q_0's row is the residue itself; the other primes get the centered value's residues.
    be.copy_async(out.data(), low.data(), n * sizeof(u64), s);
    conv.convert_async(out.data() + n, low.data(), be, s);
    out.ntt_inplace();
    c.polys.push_back(std::move(out));
  }
  return c;
}

}  // namespace ember::ckks
