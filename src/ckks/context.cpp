// ckks::Context: coefficient encoding, homomorphic arithmetic, rescaling, rotations.
#include "ember/ckks/context.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ckks {

using ring::Form;

namespace {

/// x mod q for a double x that is an integer (|x| >= 2^62 here): x = mant 2^exp exactly.
u64 residue_of_integral_double(double x, const Modulus& m) {
  int exp = 0;
  const double mant = std::frexp(x, &exp);  // x = mant * 2^exp, 0.5 <= |mant| < 1
  const long long m53 = static_cast<long long>(std::ldexp(mant, 53));
  const u64 magnitude = static_cast<u64>(m53 < 0 ? -m53 : m53) % m.value;
  const u64 r = mul_mod(magnitude, pow_mod(2, static_cast<u64>(exp - 53), m), m);
  return m53 < 0 ? neg_mod(r, m.value) : r;
}

/// log2 of a positive long double (for messages).
double log2_of(long double v) { return static_cast<double>(std::log2(v)); }

rlwe::SchemeOptions ckks_options(const std::vector<std::size_t>& level_primes) {
  rlwe::SchemeOptions o;
  o.tag = Context::kTag;
  o.level_primes = level_primes;
  return o;
}

}  // namespace

Context::Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
                 std::size_t dnum, backend::Device device,
                 std::shared_ptr<const ring::RingContext> shared_ring,
                 const std::vector<std::size_t>& level_primes)
    : rlwe::Evaluator(n, q_primes, p_primes, dnum, device, ckks_options(level_primes),
                      std::move(shared_ring)) {
  const long double error_bound = std::ldexp(1.0L, static_cast<int>(std::log2(n)) + 6);
  long double q = 1;
  for (std::size_t i = 0, level = 0; i < q_primes.size(); ++i) {
    q *= static_cast<long double>(q_primes[i]);
    if (i + 1 != rlwe_.rows(level)) continue;
    // Q_level / 4 rounded down by a relative 2^-50, so that the long double product's rounding
    // cannot let a value at the exact edge through.
    coefficient_bound_.push_back(q / 4 * (1 - std::ldexp(1.0L, -50)) - error_bound);
    ++level;
  }
  twiddles_ = backend::ckks::ckks_slot_twiddles(n / 2);
}

RnsPoly Context::encode_coeffs(const double* coeffs, std::size_t level, double scale,
                               bool extended) const {
  if (level > max_level())
    throw ParameterError("encode: level " + std::to_string(level) + " is above the top level " +
                         std::to_string(max_level()));
  if (!(std::isfinite(scale) && scale > 0))
    throw ParameterError("encode: the scale must be positive and finite, got " +
                         std::to_string(scale));
  const std::size_t n = rlwe_.n();
  const ring::RnsBasis& q = extended ? rlwe_.qp_basis(level) : rlwe_.q_basis(level);
  const long double bound = coefficient_bound(level);
  // The bound as a double no larger than it (every double passes a bound beyond double's range).
  const double bound_d = bound >= static_cast<long double>(std::numeric_limits<double>::max())
                             ? std::numeric_limits<double>::infinity()
                             : std::nextafter(static_cast<double>(bound), 0.0);
  std::vector<double> v(n);
  bool small = true;
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(coeffs[k]))
      throw ParameterError("encode: values must be finite (no NaN or infinity)");
    const double x = coeffs[k] * scale;
    v[k] = std::nearbyint(x);
    if (!(std::fabs(v[k]) <= bound_d)) {  // also true for an infinite product
      const double log2_x = std::log2(std::fabs(coeffs[k])) + std::log2(scale);
      throw ParameterError(
          "encode: a coefficient of the encoding times the scale reaches 2^" +
          std::to_string(log2_x) + ", above 2^" + std::to_string(log2_of(bound)) +
          ", the most level " + std::to_string(level) +
          " holds (a quarter of its modulus Q, less the encryption error); use smaller values, a "
          "smaller scale or a higher level");
    }
    small = small && std::fabs(v[k]) < std::ldexp(1.0, 62);
  }
  if (small) {
    std::vector<std::int64_t> s(n);
    for (std::size_t k = 0; k < n; ++k) s[k] = static_cast<std::int64_t>(v[k]);
    return RnsPoly::from_signed(q, Form::eval, rlwe_.device(), s.data());
  }
  std::vector<u64> words(q.size() * n);
  for (std::size_t l = 0; l < q.size(); ++l) {
    const Modulus m = make_modulus(q.prime(l));
    for (std::size_t k = 0; k < n; ++k) {
      const double x = v[k];
      words[l * n + k] =
          std::fabs(x) < std::ldexp(1.0, 62)
              ? (x < 0 ? neg_mod(static_cast<u64>(-static_cast<long long>(x)) % m.value, m.value)
                       : static_cast<u64>(static_cast<long long>(x)) % m.value)
              : residue_of_integral_double(x, m);
    }
  }
  RnsPoly p = RnsPoly::from_host(q, Form::coeff, rlwe_.device(), words.data());
  p.ntt_inplace();
  return p;
}

const ring::CrtConverter& Context::crt_converter(const ring::RnsBasis& basis) const {
  std::lock_guard<std::mutex> lock(crt_mutex_);
  auto& conv = crt_[basis.size()];
  if (!conv) conv = std::make_unique<ring::CrtConverter>(basis);
  return *conv;
}

bool Context::two_rows_hold(const RnsPoly& m) const {
  const std::size_t limbs = m.limbs();
  if (limbs <= 2) return true;
  const auto primes = m.basis().primes();
  const u64 q0_inv = inverse_mod(primes[0] % primes[1], primes[1]);
  auto& be = m.backend();
  const auto s = m.stream();
  // With three primes or more, the backend checks on the device that every coefficient's value
  // is the one its first two residues give (backend::rows::two_prime_value_holds): then only those
  // two rows are needed, and |v| < q0 q1 / 4 <= Q_l / 4 needs no wrap check.
  backend::Buffer count(be, sizeof(u64), s);
  u64 wide = 0;
  be.copy_from_host_async(count.as<u64>(), &wide, sizeof(u64), s);
  be.count_wide_coefficients_async(count.as<u64>(), m.data(), q0_inv, m.view(), s);
  be.copy_to_host_async(&wide, count.as<const u64>(), sizeof(u64), s);
  be.synchronize(s);
  return wide == 0;
}

void Context::check_decodable(const RnsPoly& m) const {
  const std::size_t limbs = m.limbs();
  bool prefix = limbs >= 1 && limbs <= rlwe_.q_count() && m.basis().context() == rlwe_.ring();
  for (std::size_t i = 0; prefix && i < limbs; ++i) prefix = m.basis().ids()[i] == i;
  if (m.form() != Form::coeff || !prefix)
    throw ParameterError(
        "decode: expects a polynomial over the first primes of Q in coefficient form");
}

std::vector<double> Context::decode_coeffs(const RnsPoly& m, double scale, bool check) const {
  const std::size_t limbs = m.limbs();
  check_decodable(m);
  const std::size_t n = m.n();
  const auto primes = m.basis().primes();
  long double quarter = 0.25L;  // Q_l / 4
  for (u64 p : primes) quarter *= static_cast<long double>(p);
  auto wrapped = [&](long double v) {
    return DecryptionError(
        "decrypt: a coefficient reaches 2^" + std::to_string(log2_of(std::fabs(v))) +
        ", at least a quarter of the modulus of its " + std::to_string(limbs) + " primes (2^" +
        std::to_string(log2_of(quarter * 4)) +
        "): the values have most likely wrapped around the modulus and would decode to garbage; "
        "keep |values x scale| smaller (multiply by smaller constants, rescale), or pass "
        "check=False to read them anyway");
  };
  const u64 q0 = primes[0];
  const u64 q1 = limbs > 1 ? primes[1] : 1;
  const Modulus m1 = make_modulus(limbs > 1 ? q1 : 2);
  const u64 q0_inv = limbs > 1 ? inverse_mod(q0 % q1, q1) : 0;
  auto& be = m.backend();
  const auto s = m.stream();
  // With three primes or more, the backend checks on the device that every coefficient's value
  // is the one its first two residues give (backend::rows::two_prime_value_holds): then only those
  // two rows travel, and |v| < q0 q1 / 4 <= Q_l / 4 needs no wrap check.
  const bool two_rows = two_rows_hold(m);
  std::vector<double> out(n);
  if (two_rows) {
    std::vector<u64> w(std::min<std::size_t>(limbs, 2) * n);
    be.copy_to_host_async(w.data(), m.data(), w.size() * sizeof(u64), s);
    be.synchronize(s);
    const __int128 big_q = static_cast<__int128>(q0) * q1, half_q = big_q / 2;
    const __int128 quarter_q = big_q / 4;
    for (std::size_t k = 0; k < n; ++k) {
      const u64 r0 = w[k];
      const u64 t =
          limbs > 1 ? mul_mod(sub_mod(w[n + k], barrett_reduce_64(r0, m1), q1), q0_inv, m1) : 0;
      __int128 v = static_cast<__int128>(t) * q0 + r0;
      if (v > half_q) v -= big_q;
      if (check && limbs <= 2 && (v >= quarter_q || -v >= quarter_q))
        throw wrapped(static_cast<long double>(v));
      out[k] = static_cast<double>(v) / scale;
    }
    return out;
  }
  // Exact path: Garner's mixed radix over every prime, Q subtracted in integers.
  const std::vector<long double> exact = crt_converter(m.basis()).centered(m);
  for (std::size_t k = 0; k < n; ++k) {
    const long double v = exact[k];
    if (check && std::fabs(v) >= quarter) throw wrapped(v);
    // A double holds the value itself only below 2^1024.
    out[k] = std::fabs(v) < std::ldexp(1.0L, 1000) ? static_cast<double>(v) / scale
                                                   : static_cast<double>(v / scale);
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
    const ring::RnsBasis upper(rlwe_.ring(),
                               std::vector<u32>(ids.begin() + rlwe_.rows(0), ids.end()));
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
  const auto s = a.stream();
  const ring::BaseConverter& conv = raise_converter(level);
  const std::size_t n = rlwe_.n();
  Ciphertext c = like(a, 0, level);  // the polynomials are built below
  for (const auto& p : a.polys) {
    RnsPoly low = p.copy();
    low.intt_inplace();
    RnsPoly out(rlwe_.q_basis(level), Form::coeff, rlwe_.device(), s);
    // Q_0's rows are the residues themselves; the other primes get the centered value's.
    const std::size_t low_rows = rlwe_.rows(0);
    be.copy_async(out.data(), low.data(), low_rows * n * sizeof(u64), s);
    conv.convert_async(out.data() + low_rows * n, low.data(), be, s);
    out.ntt_inplace();
    c.polys.push_back(std::move(out));
  }
  return c;
}

}  // namespace ember::ckks
