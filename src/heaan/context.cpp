// heaan::Context: keys, encryption and HE Mul of big-integer CKKS over ring::BigPoly.
#include "ember/heaan/context.h"

#include <chrono>
#include <string>

#include "ember/core/errors.h"

namespace ember::heaan {

using ring::Form;
using ring::RnsBasis;

namespace {
constexpr double kErrorSigma = 3.2;
}

Context::Context(std::size_t n, int log_q, const std::vector<u64>& primes, Device device)
    : n_(n),
      log_q_(log_q),
      device_(device),
      mult_(ring::RingContext::create(n, primes)),
      relin_basis_(mult_.basis_for(log_q, 2 * log_q)),
      small_basis_(mult_.ring(), {0}),
      twiddles_(backend::ckks::ckks_slot_twiddles(n / 2)) {
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

RnsPoly Context::secret_over(const SecretKey& sk, const RnsBasis& basis) const {
  if (sk.s.size() != n_)
    throw MismatchError("HEAAN: the secret key has " + std::to_string(sk.s.size()) +
                        " coefficients, the context N=" + std::to_string(n_));
  return RnsPoly::from_signed(basis, Form::eval, device_, sk.s.data());
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

RelinKey Context::generate_relin(const SecretKey& sk, ring::Sampler& sampler) const {
  const int wide = 2 * log_q_;
  const BigPoly a = BigPoly::uniform(sampler, n_, wide, device_);
  const RnsPoly s = secret_over(sk, relin_basis_);
  const BigPoly as = mult_.product(mult_.transform(a, relin_basis_), s, wide);
  // Q s^2: s^2 is small (|coefficients| <= N), exact over these primes; times Q = 2^log_q.
  const BigPoly q_s2 = mult_.product(s, s, wide).shifted(wide, log_q_, 0);
  const BigPoly b = small_error(sampler, wide).sub(as).add(q_s2);
  return RelinKey{mult_.transform(b, relin_basis_), mult_.transform(a, relin_basis_)};
}

std::pair<BigPoly, BigPoly> Context::relin_words(const RelinKey& rk) const {
  if (rk.b.basis() != relin_basis_ || rk.a.basis() != relin_basis_)
    throw MismatchError("HEAAN: the relinearization key belongs to another context");
  // The key's words are below Q^2, far below a quarter of the primes' product: exact.
  return {mult_.from_rns(rk.b.intt(), 2 * log_q_), mult_.from_rns(rk.a.intt(), 2 * log_q_)};
}

RelinKey Context::relin_from_words(const BigPoly& b, const BigPoly& a) const {
  for (const BigPoly* p : {&b, &a})
    if (p->n() != n_ || p->bits() != 2 * log_q_ || p->device() != device_)
      throw MismatchError("HEAAN: a relinearization key half must have N=" + std::to_string(n_) +
                          " coefficients of 2 log Q = " + std::to_string(2 * log_q_) +
                          " bits on this context's device");
  return RelinKey{mult_.transform(b, relin_basis_), mult_.transform(a, relin_basis_)};
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
  RnsPoly v = sampler.ternary(basis, device_, 0.5);
  v.ntt_inplace();
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

Ciphertext Context::multiply(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk,
                             MulPhases* phases) const {
  check(a, "multiply");
  check(b, "multiply");
  if (a.bits() != b.bits())
    throw MismatchError("HEAAN multiply: operands of " + std::to_string(a.bits()) + " and " +
                        std::to_string(b.bits()) +
                        " bits; bring them to the same width first (mod_down)");
  if (rk.b.basis() != relin_basis_ || rk.a.basis() != relin_basis_)
    throw MismatchError("HEAAN multiply: the relinearization key belongs to another context");
  const int bits = a.bits();
  auto& be = backend::backend_for(device_);
  using clock = std::chrono::steady_clock;
  auto mark = clock::now();
  auto lap = [&](double MulPhases::*phase) {
    if (!phases) return;
    be.synchronize(backend::Stream{});
    const auto now = clock::now();
    phases->*phase += std::chrono::duration<double>(now - mark).count();
    mark = now;
  };
  // The tensor product: d0 = a0 b0, d2 = a1 b1, d1 = (a0 + a1)(b0 + b1) - d0 - d2.
  const RnsBasis tb = tensor_basis(bits);
  RnsPoly a0 = mult_.to_rns(a.c0, tb), a1 = mult_.to_rns(a.c1, tb);
  RnsPoly b0 = mult_.to_rns(b.c0, tb), b1 = mult_.to_rns(b.c1, tb);
  lap(&MulPhases::crt);
  for (RnsPoly* p : {&a0, &a1, &b0, &b1}) p->ntt_inplace();
  lap(&MulPhases::ntt);
  RnsPoly p2 = a1.multiply(b1), p0 = a0.multiply(b0);
  RnsPoly p1 = a0.add(a1).multiply(b0.add(b1));
  lap(&MulPhases::other);
  for (RnsPoly* p : {&p0, &p1, &p2}) p->intt_inplace();
  lap(&MulPhases::intt);
  const BigPoly d0 = mult_.from_rns(p0, bits), d1 = mult_.from_rns(p1, bits);
  const BigPoly d2 = mult_.from_rns(p2, bits);
  lap(&MulPhases::icrt);
  // Relinearization: d2 (b, a) mod 2^(bits + log Q), divided by Q.
  RnsPoly r = mult_.to_rns(d2, relin_basis_);
  lap(&MulPhases::crt);
  r.ntt_inplace();
  lap(&MulPhases::ntt);
  RnsPoly rb = r.multiply(rk.b), ra = r.multiply(rk.a);
  lap(&MulPhases::other);
  rb.intt_inplace();
  ra.intt_inplace();
  lap(&MulPhases::intt);
  const BigPoly tb0 = mult_.from_rns(rb, bits + log_q_), ta1 = mult_.from_rns(ra, bits + log_q_);
  lap(&MulPhases::icrt);
  Ciphertext out{d0.add(tb0.shifted(bits, 0, log_q_)),
                 d1.sub(d0).sub(d2).add(ta1.shifted(bits, 0, log_q_))};
  lap(&MulPhases::other);
  return out;
}

}  // namespace ember::heaan

namespace ember::heaan {

RelinKey Context::relin_on(const RelinKey& rk, Device device) const {
  if (rk.b.basis() != relin_basis_ || rk.a.basis() != relin_basis_)
    throw MismatchError("HEAAN: the relinearization key belongs to another context");
  return RelinKey{rk.b.to(device), rk.a.to(device)};
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
    if (!k || k->b.basis() != relin_basis_)
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
  const RnsPoly r0 = mult_.transform(d2, relin_basis_);
  const BigPoly t0 = mult_.product(r0, key0->b, wide);
  const BigPoly t1_far = dev3 == dev0
                             ? mult_.product(r0, key0->a, wide)
                             : mult_.product(mult_.transform(d2_on_3, relin_basis_), key3->a, wide);
  const BigPoly d0 = d0_far.to(dev0), d1 = d1_far.to(dev0), t1 = t1_far.to(dev0);
  return Ciphertext{d0.add(t0.shifted(bits, 0, log_q_)),
                    d1.sub(d0).sub(d2).add(t1.shifted(bits, 0, log_q_))};
}

}  // namespace ember::heaan
