// heaan::Context: keys, encryption and HE Mul of big-integer CKKS over ring::BigPoly.
#include "ember/heaan/context.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "ember/core/errors.h"
#include "ember/core/modarith.h"

namespace ember::heaan {

using ring::Form;
using ring::RnsBasis;

namespace {
constexpr double kErrorSigma = 3.2;

/// The seconds of each phase of an HE Mul or a rotation, when asked for (phases non-null): each
/// lap synchronizes the device and adds the time since the last lap to one phase.
class PhaseClock {
 public:
  PhaseClock(Device device, MulPhases* phases)
      : be_(backend::backend_for(device)), phases_(phases) {}
  void lap(double MulPhases::*phase) {
    if (!phases_) return;
    be_.synchronize(backend::Stream{});
    const auto now = clock::now();
    phases_->*phase += std::chrono::duration<double>(now - mark_).count();
    mark_ = now;
  }
  /// Starts the next lap now (after a call that timed its own phases).
  void restart() { mark_ = clock::now(); }

 private:
  using clock = std::chrono::steady_clock;
  backend::Backend& be_;
  MulPhases* phases_;
  clock::time_point mark_ = clock::now();
};

/// The width small polynomials (secrets, masks) take between their one-prime residues and the
/// CRT to many primes: two 32-bit limbs.
constexpr int kSmallBits = 64;
}  // namespace

Context::Context(std::size_t n, int log_q, const std::vector<u64>& primes, Device device)
    : n_(n),
      log_q_(log_q),
      device_(device),
      mult_(ring::RingContext::create(n, primes)),
      relin_basis_(mult_.basis_for(log_q, 2 * log_q)),
      small_basis_(mult_.ring(), {0}),
      twiddles_(backend::ckks::ckks_slot_twiddles(n / 2)),
      device_twiddles_(backend::Buffer::from_host(backend::backend_for(device), twiddles_.data(),
                                                  twiddles_.size() * sizeof(Cx),
                                                  backend::Stream{})) {
  backend::backend_for(device).synchronize(backend::Stream{});
  if (log_q < 2) throw ParameterError("HEAAN: log Q must be at least 2");
}

SecretKey Context::generate_secret(ring::Sampler& sampler, std::size_t hamming_weight) const {
  if (hamming_weight) return SecretKey{sampler.ternary_hamming_values(n_, hamming_weight)};
  const RnsPoly s = sampler.ternary(small_basis_, device_);
  const std::vector<u64> r = s.to_host();
  const u64 q = small_basis_.prime(0);
  SecretKey sk{std::vector<std::int64_t>(n_)};
  for (std::size_t i = 0; i < n_; ++i)
    sk.s[i] = r[i] > q / 2 ? -static_cast<std::int64_t>(q - r[i]) : static_cast<std::int64_t>(r[i]);
  return sk;
}

RnsPoly32 Context::secret_over(const SecretKey& sk, const RnsBasis& basis) const {
  if (sk.s.size() != n_)
    throw MismatchError("HEAAN: the secret key has " + std::to_string(sk.s.size()) +
                        " coefficients, the context N=" + std::to_string(n_));
  return small_over(RnsPoly::from_signed(small_basis_, Form::coeff, device_, sk.s.data()), basis);
}

RnsPoly32 Context::small_over(const RnsPoly& small, const RnsBasis& basis) const {
  return mult_.transform(BigPoly::from_residues(small, kSmallBits), basis, true);
}

BigPoly Context::small_error(ring::Sampler& sampler, int bits) const {
  return BigPoly::from_residues(sampler.gaussian(small_basis_, device_, kErrorSigma), bits);
}

PublicKey Context::generate_public(const SecretKey& sk, ring::Sampler& sampler) const {
  BigPoly a = BigPoly::uniform(sampler, n_, log_q_, device_);
  const RnsBasis basis = mult_.basis_for(log_q_, 1);
  const BigPoly as = mult_.product(mult_.transform(a, basis), secret_over(sk, basis), log_q_);
  return PublicKey{small_error(sampler, log_q_).sub(as), std::move(a)};
}

SwitchKey Context::generate_switch(const SecretKey& sk, const BigPoly& target, u64 galois,
                                   ring::Sampler& sampler) const {
  const int wide = 2 * log_q_;
  const BigPoly a = BigPoly::uniform(sampler, n_, wide, device_);
  const BigPoly as =
      mult_.product(mult_.transform(a, relin_basis_), secret_over(sk, relin_basis_), wide);
  const BigPoly b = small_error(sampler, wide).sub(as).add(target.shifted(wide, log_q_, 0));
  return SwitchKey{mult_.transform(b, relin_basis_), mult_.transform(a, relin_basis_), galois};
}

RelinKey Context::generate_relin(const SecretKey& sk, ring::Sampler& sampler) const {
  // s^2 is small (|coefficients| <= N), exact over these primes.
  const RnsPoly32 s = secret_over(sk, relin_basis_);
  return generate_switch(sk, mult_.product(s, s, 2 * log_q_), 0, sampler);
}

namespace {
void check_galois(u64 galois, std::size_t n, const char* op) {
  if (galois % 2 == 0 || galois <= 1 || galois >= 2 * n)
    throw ParameterError(std::string("HEAAN ") + op + ": the Galois element " +
                         std::to_string(galois) +
                         " must be odd and in (1, 2N = " + std::to_string(2 * n) + ")");
}
}  // namespace

SwitchKey Context::generate_rotation(const SecretKey& sk, u64 galois,
                                     ring::Sampler& sampler) const {
  check_galois(galois, n_, "rotation key");
  const RnsPoly s = RnsPoly::from_signed(small_basis_, Form::coeff, device_, sk.s.data());
  const BigPoly target = BigPoly::from_residues(s, 2 * log_q_).automorphism(galois);
  return generate_switch(sk, target, galois, sampler);
}

void Context::check_key(const SwitchKey& key, const char* op) const {
  if (key.b.basis() != relin_basis_ || key.a.basis() != relin_basis_)
    throw MismatchError(std::string("HEAAN ") + op + ": the key belongs to another context");
  if (key.b.device() != device_ || key.a.device() != device_)
    throw MismatchError(std::string("HEAAN ") + op + ": the key is on another device than " +
                        device_.str());
}

std::pair<BigPoly, BigPoly> Context::key_words(const SwitchKey& key) const {
  check_key(key, "key_words");
  // The key's words are below Q^2, far below a quarter of the primes' product: exact.
  return {mult_.from_rns(key.b.intt(), 2 * log_q_), mult_.from_rns(key.a.intt(), 2 * log_q_)};
}

SwitchKey Context::key_from_words(const BigPoly& b, const BigPoly& a, u64 galois) const {
  if (galois) check_galois(galois, n_, "key_from_words");
  for (const BigPoly* p : {&b, &a})
    if (p->n() != n_ || p->bits() != 2 * log_q_ || p->device() != device_)
      throw MismatchError("HEAAN: a key-switching key half must have N=" + std::to_string(n_) +
                          " coefficients of 2 log Q = " + std::to_string(2 * log_q_) +
                          " bits on this context's device");
  return SwitchKey{mult_.transform(b, relin_basis_), mult_.transform(a, relin_basis_), galois};
}

Ciphertext Context::encrypt(const BigPoly& m, const SecretKey& sk, ring::Sampler& sampler) const {
  const int bits = m.bits();
  if (bits > log_q_ || m.n() != n_)
    throw ParameterError("HEAAN encrypt: the message must have N=" + std::to_string(n_) +
                         " coefficients of at most log Q = " + std::to_string(log_q_) + " bits");
  BigPoly c1 = BigPoly::uniform(sampler, n_, bits, device_);
  const RnsBasis basis = mult_.basis_for(bits, 1);
  const BigPoly c1s = mult_.product(mult_.transform(c1, basis), secret_over(sk, basis), bits);
  return Ciphertext{small_error(sampler, bits).sub(c1s).add(m), std::move(c1)};
}

Ciphertext Context::encrypt(const BigPoly& m, const PublicKey& pk, ring::Sampler& sampler) const {
  if (m.bits() > log_q_ || m.n() != n_)
    throw ParameterError("HEAAN encrypt: the message must have N=" + std::to_string(n_) +
                         " coefficients of at most log Q = " + std::to_string(log_q_) + " bits");
  const RnsBasis basis = mult_.basis_for(log_q_, 1);
  const RnsPoly32 v = small_over(sampler.ternary(small_basis_, device_, 0.5), basis);
  const BigPoly vb = mult_.product(mult_.transform(pk.b, basis), v, log_q_);
  const BigPoly va = mult_.product(mult_.transform(pk.a, basis), v, log_q_);
  Ciphertext ct{vb.add(small_error(sampler, log_q_)), va.add(small_error(sampler, log_q_))};
  if (m.bits() < log_q_) ct = mod_down(ct, m.bits());
  ct.c0 = ct.c0.add(m);
  return ct;
}

BigPoly Context::decrypt(const Ciphertext& ct, const SecretKey& sk) const {
  check(ct, "decrypt");
  const int bits = ct.bits();
  const RnsBasis basis = mult_.basis_for(bits, 1);
  return ct.c0.add(mult_.product(mult_.transform(ct.c1, basis), secret_over(sk, basis), bits));
}

void Context::check(const Ciphertext& a, const char* op) const {
  if (a.c0.n() != n_ || a.c1.n() != n_ || a.c0.bits() != a.c1.bits() || a.bits() > log_q_)
    throw MismatchError(std::string("HEAAN ") + op +
                        ": the ciphertext does not belong to this context (N, or its width above "
                        "log Q, or two halves of different widths)");
  if (a.c0.device() != device_ || a.c1.device() != device_)
    throw MismatchError(std::string("HEAAN ") + op + ": the ciphertext is on another device");
}

Ciphertext Context::add(const Ciphertext& a, const Ciphertext& b) const {
  check(a, "add");
  check(b, "add");
  return Ciphertext{a.c0.add(b.c0), a.c1.add(b.c1)};
}

Ciphertext Context::sub(const Ciphertext& a, const Ciphertext& b) const {
  check(a, "sub");
  check(b, "sub");
  return Ciphertext{a.c0.sub(b.c0), a.c1.sub(b.c1)};
}

Ciphertext Context::negate(const Ciphertext& a) const {
  check(a, "negate");
  return Ciphertext{a.c0.negate(), a.c1.negate()};
}

Ciphertext Context::rescale(const Ciphertext& a, int bits) const {
  check(a, "rescale");
  if (bits < 1 || bits >= a.bits())
    throw ParameterError("HEAAN rescale: " + std::to_string(bits) +
                         " bits must be positive and less than the ciphertext's " +
                         std::to_string(a.bits()));
  const int out = a.bits() - bits;
  return Ciphertext{a.c0.shifted(out, 0, bits), a.c1.shifted(out, 0, bits)};
}

Ciphertext Context::mod_down(const Ciphertext& a, int bits) const {
  check(a, "mod_down");
  if (bits < 1 || bits > a.bits())
    throw ParameterError("HEAAN mod_down: " + std::to_string(bits) +
                         " bits must be positive and at most the ciphertext's " +
                         std::to_string(a.bits()));
  return Ciphertext{a.c0.shifted(bits, 0, 0), a.c1.shifted(bits, 0, 0)};
}

std::pair<BigPoly, BigPoly> Context::key_switch(const BigPoly& d, const SwitchKey& key,
                                                MulPhases* phases) const {
  check_key(key, "key_switch");
  const int bits = d.bits();
  if (d.n() != n_ || bits > log_q_ || d.device() != device_)
    throw MismatchError("HEAAN key_switch: the polynomial must have N=" + std::to_string(n_) +
                        " coefficients of at most log Q = " + std::to_string(log_q_) + " bits on " +
                        device_.str());
  PhaseClock clock(device_, phases);
  // d (b, a) over Z, d centered: below N 2^(bits - 1 + 2 log Q) <= N 2^(3 log Q), within the
  // relinearization primes' quarter, so the inverse CRT is exact mod 2^(bits + log Q); then / Q,
  // rounded.
  RnsPoly32 r = centered_residues(d);
  clock.lap(&MulPhases::crt);
  r.ntt_inplace();
  clock.lap(&MulPhases::ntt);
  RnsPoly32 rb = r.multiply(key.b), ra = r.multiply(key.a);
  clock.lap(&MulPhases::other);
  rb.intt_inplace();
  ra.intt_inplace();
  clock.lap(&MulPhases::intt);
  const int wide = bits + log_q_;
  const BigPoly tb = mult_.from_rns(rb, wide), ta = mult_.from_rns(ra, wide);
  clock.lap(&MulPhases::icrt);
  std::pair<BigPoly, BigPoly> out{tb.shifted(bits, 0, log_q_), ta.shifted(bits, 0, log_q_)};
  clock.lap(&MulPhases::other);
  return out;
}

RnsPoly32 Context::centered_residues(const BigPoly& d) const {
  // Read in [0, 2^bits), d would add 2^(bits - log Q) u e to the key switch's error d e / Q, for
  // u the 0/1 polynomial of d's sign bits: its mean (e times the all-ones polynomial, halved) is
  // large in the slots near 1 (2^-11 instead of 2^-14 for a rotation at N = 2^14, bits = log Q).
  // The CRT reads d signed: 2^bits mod p off the residues of its negative coefficients.
  return mult_.to_rns(d, relin_basis_, true);
}

Ciphertext Context::apply_galois(const Ciphertext& a, const SwitchKey& key,
                                 MulPhases* phases) const {
  check(a, "rotate");
  check_key(key, "rotate");
  if (key.galois == 0)
    throw MismatchError(
        "HEAAN rotate: the relinearization key is not a rotation or conjugation key");
  PhaseClock clock(device_, phases);
  const BigPoly c0 = a.c0.automorphism(key.galois), c1 = a.c1.automorphism(key.galois);
  clock.lap(&MulPhases::other);
  auto [t0, t1] = key_switch(c1, key, phases);
  clock.restart();
  Ciphertext out{c0.add(t0), std::move(t1)};
  clock.lap(&MulPhases::other);
  return out;
}

Ciphertext Context::multiply(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk,
                             MulPhases* phases) const {
  check(a, "multiply");
  check(b, "multiply");
  if (a.bits() != b.bits())
    throw MismatchError("HEAAN multiply: operands of " + std::to_string(a.bits()) + " and " +
                        std::to_string(b.bits()) +
                        " bits; bring them to the same width first (mod_down)");
  check_key(rk, "multiply");
  if (rk.galois != 0)
    throw MismatchError("HEAAN multiply: a rotation key is not the relinearization key");
  const int bits = a.bits();
  PhaseClock clock(device_, phases);
  // The tensor product: d0 = a0 b0, d2 = a1 b1, d1 = (a0 + a1)(b0 + b1) - d0 - d2.
  const RnsBasis tb = tensor_basis(bits);
  RnsPoly32 a0 = mult_.to_rns(a.c0, tb), a1 = mult_.to_rns(a.c1, tb);
  RnsPoly32 b0 = mult_.to_rns(b.c0, tb), b1 = mult_.to_rns(b.c1, tb);
  clock.lap(&MulPhases::crt);
  for (RnsPoly32* p : {&a0, &a1, &b0, &b1}) p->ntt_inplace();
  clock.lap(&MulPhases::ntt);
  RnsPoly32 p2 = a1.multiply(b1), p0 = a0.multiply(b0);
  RnsPoly32 p1 = a0.add(a1).multiply(b0.add(b1));
  clock.lap(&MulPhases::other);
  for (RnsPoly32* p : {&p0, &p1, &p2}) p->intt_inplace();
  clock.lap(&MulPhases::intt);
  const BigPoly d0 = mult_.from_rns(p0, bits), d1 = mult_.from_rns(p1, bits);
  const BigPoly d2 = mult_.from_rns(p2, bits);
  clock.lap(&MulPhases::icrt);
  // Relinearization: d2 s^2 switched to s.
  auto [t0, t1] = key_switch(d2, rk, phases);
  clock.restart();
  Ciphertext out{d0.add(t0), d1.sub(d0).sub(d2).add(t1)};
  clock.lap(&MulPhases::other);
  return out;
}

}  // namespace ember::heaan

namespace ember::heaan {

SwitchKey Context::key_on(const SwitchKey& key, Device device) const {
  if (key.b.basis() != relin_basis_ || key.a.basis() != relin_basis_)
    throw MismatchError("HEAAN: the key belongs to another context");
  return SwitchKey{key.b.to(device), key.a.to(device), key.galois};
}

Ciphertext Context::multiply_spread(const Ciphertext& a, const Ciphertext& b,
                                    const std::vector<const RelinKey*>& keys,
                                    const std::vector<Device>& devices) const {
  check(a, "multiply");
  check(b, "multiply");
  const std::size_t count = devices.size();
  if (count == 0 || devices[0] != device_)
    throw ParameterError("HEAAN multiply: the first device must be the context's, " +
                         device_.str());
  if (keys.size() != count)
    throw ParameterError("HEAAN multiply: one relinearization key slot per device");
  const Device dev0 = devices[0], dev1 = count > 1 ? devices[1] : dev0;
  const Device dev2 = count > 2 ? devices[2] : dev1, dev3 = count > 3 ? devices[3] : dev0;
  const RelinKey* key0 = keys[0];
  const RelinKey* key3 = count > 3 ? keys[3] : key0;
  for (const RelinKey* k : {key0, key3})
    if (!k || k->b.basis() != relin_basis_ || k->galois != 0)
      throw MismatchError("HEAAN multiply: a relinearization key of this context is needed on " +
                          dev0.str() + (count > 3 ? " and " + dev3.str() : std::string()));
  if (key0->b.device() != dev0 || key3->a.device() != dev3)
    throw MismatchError("HEAAN multiply: the relinearization keys are not on their devices");
  if (count == 1) return multiply(a, b, *key0);
  if (a.bits() != b.bits())
    throw MismatchError("HEAAN multiply: operands of different widths; mod_down one first");
  const int bits = a.bits();
  const RnsBasis tb = tensor_basis(bits);
  // The other devices' inputs first, so that device 0 does not queue them behind its own work.
  const BigPoly a0 = a.c0.to(dev1), b0 = b.c0.to(dev1);
  const BigPoly sum_a = a.c0.add(a.c1).to(dev2), sum_b = b.c0.add(b.c1).to(dev2);
  const auto product = [&](const BigPoly& x, const BigPoly& y) {
    return mult_.product(mult_.transform(x, tb), mult_.transform(y, tb), bits);
  };
  const BigPoly d2 = product(a.c1, b.c1);
  // Device 3's copy of d2 leaves before device 0 goes on with the relinearization.
  const BigPoly d2_on_3 = dev3 == dev0 ? BigPoly(n_, 1, dev0) : d2.to(dev3);
  const BigPoly d0_far = product(a0, b0);
  const BigPoly d1_far = product(sum_a, sum_b);
  const int wide = bits + log_q_;
  const RnsPoly32 r0 = centered_residues(d2).ntt();
  const BigPoly t0 = mult_.product(r0, key0->b, wide);
  const BigPoly t1_far = dev3 == dev0
                             ? mult_.product(r0, key0->a, wide)
                             : mult_.product(centered_residues(d2_on_3).ntt(), key3->a, wide);
  const BigPoly d0 = d0_far.to(dev0), d1 = d1_far.to(dev0), t1 = t1_far.to(dev0);
  return Ciphertext{d0.add(t0.shifted(bits, 0, log_q_)),
                    d1.sub(d0).sub(d2).add(t1.shifted(bits, 0, log_q_))};
}

}  // namespace ember::heaan

namespace ember::heaan {

namespace fft = backend::ckks;

BigPoly Context::encode_slots(const void* values, SlotType type, std::size_t count, bool on_device,
                              int scale_bits) const {
  const std::size_t slots = n_ / 2;
  if (count > slots)
    throw ParameterError(std::to_string(count) + " values do not fit in " + std::to_string(slots) +
                         " slots");
  if (scale_bits < 0 || scale_bits > 1000)
    throw ParameterError("encode: the scale 2^" + std::to_string(scale_bits) + " is out of range");
  auto& be = backend::backend_for(device_);
  auto& ops = be.ckks_encode();
  const backend::Stream s{};
  u64 flags[fft::kSlotFlagWords] = {};
  backend::Buffer flag_words = backend::Buffer::from_host(be, flags, sizeof flags, s);
  backend::Buffer staged;
  if (!on_device && count) {
    staged = backend::Buffer::from_host(be, values, count * fft::slot_bytes(type), s);
    values = staged.as<const void>();
  }
  backend::Buffer z(be, slots * sizeof(Cx), s);
  ops.load_slots_async(z.as<void>(), values, type, count, false, slots, flag_words.as<u64>(), s);
  ops.special_fft_async(z.as<void>(), slots, device_twiddles_.as<const void>(), true, s);
  BigPoly m(n_, log_q_, device_, s);
  // Below 2^62, as the host encoder had it (two's complement words from an int64).
  const double bound = std::nextafter(std::ldexp(1.0, 62), 0.0);
  be.big_int().big_encode_slots_async(m.data(), m.shape(), z.as<const void>(),
                                      std::ldexp(1.0, scale_bits), bound, flag_words.as<u64>(), s);
  be.copy_to_host_async(flags, flag_words.as<const void>(), sizeof flags, s);
  be.synchronize(s);
  if (flags[0] & fft::kNotFinite)
    throw ParameterError("values must be finite (no NaN or infinity)");
  if (flags[0] & fft::kTooLarge) {
    double x;
    std::memcpy(&x, &flags[1], sizeof x);
    throw ParameterError("values times 2^" + std::to_string(scale_bits) + " reach 2^" +
                         std::to_string(std::log2(std::fabs(x))) +
                         " in a coefficient, above 2^62: use smaller values");
  }
  return m;
}

void Context::decode_slots(const BigPoly& m, int scale_bits, void* out, SlotType type,
                           std::size_t count, bool on_device) const {
  if (m.n() != n_ || m.device() != device_)
    throw MismatchError("decode: the polynomial must have N=" + std::to_string(n_) +
                        " coefficients on " + device_.str());
  if (type != SlotType::f64 && type != SlotType::c128)
    throw ParameterError("decode: the output type must be float64 or complex128");
  const std::size_t slots = n_ / 2;
  if (count > slots)
    throw ParameterError("decode: " + std::to_string(count) + " values asked of " +
                         std::to_string(slots) + " slots");
  auto& be = m.backend();
  auto& ops = be.ckks_encode();
  const auto s = m.stream();
  backend::Buffer coeffs(be, n_ * sizeof(double), s);
  be.big_int().big_to_doubles_async(coeffs.as<double>(), m.data(), m.shape(), scale_bits, s);
  backend::Buffer z(be, slots * sizeof(Cx), s);
  ops.coefficient_slots_async(z.as<void>(), coeffs.as<const double>(), slots, s);
  ops.special_fft_async(z.as<void>(), slots, device_twiddles_.as<const void>(), false, s);
  if (on_device) {
    ops.store_slots_async(out, z.as<const void>(), type, count, s);
  } else if (count) {
    const std::size_t bytes = count * fft::slot_bytes(type);
    backend::Buffer staged(be, bytes, s);
    ops.store_slots_async(staged.as<void>(), z.as<const void>(), type, count, s);
    be.copy_to_host_async(out, staged.as<const void>(), bytes, s);
  }
  be.synchronize(s);
}

}  // namespace ember::heaan
