// BigPoly's storage and word arithmetic (the backend's big-integer family) and BigMultiplier's
// exact products (the ring family's CRT, NTT and Garner reconstruction).
#include "ember/ring/big_poly.h"

#include <cmath>
#include <string>

#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"

namespace ember::ring {

namespace {
BigShape shape_of(std::size_t n, int bits) {
  if (bits < 1) throw ParameterError("a big-integer polynomial needs at least one bit");
  return BigShape{n, BigPoly::words_for(bits), bits};
}
}  // namespace

BigPoly::BigPoly(std::size_t n, int bits, Device device, backend::Stream stream)
    : shape_(shape_of(n, bits)),
      device_(device),
      stream_(stream),
      storage_(backend::backend_for(device), shape_.total_words() * sizeof(u64), stream) {}

backend::Backend& BigPoly::backend() const { return backend::backend_for(device_); }

BigPoly BigPoly::zeros(std::size_t n, int bits, Device device) {
  const std::vector<u64> z(n * words_for(bits), 0);
  return from_host(n, bits, device, z.data());
}

BigPoly BigPoly::from_host(std::size_t n, int bits, Device device, const u64* words) {
  BigPoly p(n, bits, device);
  std::vector<u64> masked(words, words + p.shape_.total_words());
  for (std::size_t c = 0; c < n; ++c) masked[c * p.words() + p.words() - 1] &= p.shape_.top_mask();
  auto& be = p.backend();
  be.copy_from_host_async(p.data(), masked.data(), masked.size() * sizeof(u64), p.stream_);
  be.synchronize(p.stream_);
  return p;
}

BigPoly BigPoly::from_residues(const RnsPoly& small, int bits) {
  if (small.form() != Form::coeff)
    throw MismatchError("from_residues needs coeff form; call intt() first");
  BigPoly p(small.n(), bits, small.device(), small.stream());
  p.backend().big_int().big_from_residues_async(p.data(), p.shape_, small.data(),
                                                small.basis().prime(0), p.stream_);
  return p;
}

BigPoly BigPoly::uniform(Sampler& sampler, std::size_t n, int bits, Device device) {
  BigPoly p(n, bits, device);
  p.backend().big_int().big_sample_uniform_async(p.data(), p.shape_, sampler.key(),
                                                 sampler.next_nonce(), p.stream_);
  return p;
}

BigPoly BigPoly::copy() const {
  BigPoly p(n(), bits(), device_, stream_);
  backend().copy_async(p.data(), data(), shape_.total_words() * sizeof(u64), stream_);
  return p;
}

BigPoly BigPoly::to(Device device) const {
  if (device == device_) return copy();
  BigPoly p(n(), bits(), device);
  backend::copy_between_devices(p.backend(), p.data(), p.stream_, backend(), data(), stream_,
                                shape_.total_words() * sizeof(u64));
  return p;
}

std::vector<u64> BigPoly::to_host() const {
  std::vector<u64> out(shape_.total_words());
  auto& be = backend();
  be.copy_to_host_async(out.data(), data(), out.size() * sizeof(u64), stream_);
  be.synchronize(stream_);
  return out;
}

void BigPoly::check_same(const BigPoly& o, const char* op) const {
  if (n() != o.n() || bits() != o.bits())
    throw MismatchError(std::string(op) + ": operands differ (N " + std::to_string(n()) + " vs " +
                        std::to_string(o.n()) + ", " + std::to_string(bits()) + " vs " +
                        std::to_string(o.bits()) +
                        " bits); bring them to the same modulus first");
  if (device_ != o.device_)
    throw MismatchError(std::string(op) + ": operands are on different devices");
}

BigPoly BigPoly::add(const BigPoly& o) const {
  check_same(o, "add");
  BigPoly r(n(), bits(), device_, stream_);
  auto& be = backend();
  const backend::StreamJoin join(be, stream_, {o.stream_});
  be.big_int().big_add_async(r.data(), data(), o.data(), shape_, false, stream_);
  return r;
}

BigPoly BigPoly::sub(const BigPoly& o) const {
  check_same(o, "sub");
  BigPoly r(n(), bits(), device_, stream_);
  auto& be = backend();
  const backend::StreamJoin join(be, stream_, {o.stream_});
  be.big_int().big_add_async(r.data(), data(), o.data(), shape_, true, stream_);
  return r;
}

BigPoly BigPoly::negate() const {
  BigPoly r(n(), bits(), device_, stream_);
  backend().big_int().big_negate_async(r.data(), data(), shape_, stream_);
  return r;
}

BigPoly BigPoly::shifted(int out_bits, int left, int right) const {
  if (left < 0 || right < 0 || (left && right))
    throw ParameterError("shifted: give a left or a right shift, not both, and not negative");
  BigPoly r(n(), out_bits, device_, stream_);
  backend().big_int().big_shift_async(r.data(), r.shape_, data(), shape_, left, right, stream_);
  return r;
}

BigMultiplier::BigMultiplier(std::shared_ptr<const RingContext> ring) : ring_(std::move(ring)) {}

RnsBasis BigMultiplier::basis_for(int a_bits, int b_bits) const {
  // P > 2 N 2^(a + b): log2 P against the bound, with a bit to spare for the logs' rounding.
  const double need = 2.0 + ring_->log_n() + a_bits + b_bits;
  double have = 0;
  std::vector<u32> ids;
  for (std::size_t id = 0; id < ring_->prime_count() && have < need; ++id) {
    have += std::log2(static_cast<double>(ring_->prime(id)));
    ids.push_back(static_cast<u32>(id));
  }
  if (have < need)
    throw ParameterError("a product of " + std::to_string(a_bits) + "- and " +
                         std::to_string(b_bits) + "-bit polynomials needs primes of " +
                         std::to_string(static_cast<int>(need)) + " bits in all; the ring has " +
                         std::to_string(static_cast<int>(have)));
  return RnsBasis(ring_, std::move(ids));
}

const CrtConverter& BigMultiplier::converter(const RnsBasis& basis) const {
  std::lock_guard lock(mutex_);
  auto& c = converters_[basis.size()];
  if (!c) c = std::make_unique<CrtConverter>(basis);
  return *c;
}

RnsPoly BigMultiplier::to_rns(const BigPoly& a, const RnsBasis& basis) const {
  if (basis.context() != ring_ || a.n() != ring_->n())
    throw MismatchError("to_rns: the polynomial or the basis belongs to another ring");
  const CrtConverter& conv = converter(basis);
  if (conv.basis() != basis)
    throw MismatchError("to_rns: the basis is not a prefix of the ring's primes");
  RnsPoly r(basis, Form::coeff, a.device(), a.stream());
  conv.to_rns_async(r.data(), a.data(), a.words(), a.backend(), a.stream());
  return r;
}

RnsPoly BigMultiplier::transform(const BigPoly& a, const RnsBasis& basis) const {
  RnsPoly r = to_rns(a, basis);
  r.ntt_inplace();
  return r;
}

BigPoly BigMultiplier::product(const RnsPoly& a, const RnsPoly& b, int out_bits) const {
  RnsPoly c = a.multiply(b);
  c.intt_inplace();
  return from_rns(c, out_bits);
}

BigPoly BigMultiplier::from_rns(const RnsPoly& a, int out_bits) const {
  const CrtConverter& conv = converter(a.basis());
  if (conv.basis() != a.basis())
    throw MismatchError("from_rns: the polynomial's basis is not a prefix of the ring's primes");
  auto& be = a.backend();
  const std::size_t p_words = conv.output_words();
  backend::Buffer words(be, a.n() * p_words * sizeof(u64), a.stream());
  conv.from_rns_async(words.as<u64>(), a, a.stream());
  const auto [p, half] = conv.modulus_on(be);
  BigPoly r(a.n(), out_bits, a.device(), a.stream());
  be.big_int().big_centered_async(r.data(), r.shape(), words.as<const u64>(), p, half, p_words,
                                  a.stream());
  return r;
}

BigPoly BigMultiplier::multiply(const BigPoly& a, const BigPoly& b, int out_bits) const {
  if (out_bits > a.bits() || out_bits > b.bits())
    throw ParameterError("multiply: the product is exact mod 2^" +
                         std::to_string(std::min(a.bits(), b.bits())) +
                         " at most (the inputs' widths); asked for " + std::to_string(out_bits) +
                         " bits");
  const RnsBasis basis = basis_for(a.bits(), b.bits());
  return product(transform(a, basis), transform(b, basis), out_bits);
}

}  // namespace ember::ring
