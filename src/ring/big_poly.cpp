// BigPoly's storage and word arithmetic (the backend's big-integer family) and BigMultiplier's
// exact products (the ring family's CRT, NTT and Garner reconstruction).
#include "ember/ring/big_poly.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "ember/core/numtheory.h"
#include "ember/ring/byte_planes.h"

namespace ember::ring {

namespace {
/// Little-endian 32-bit limbs of host big integers: the inverse CRT's tables.
using Limbs = std::vector<std::uint32_t>;

Limbs times_small(const Limbs& a, u64 m) {
  Limbs out;
  u64 carry = 0;
  for (std::uint32_t x : a) {
    const unsigned __int128 t = static_cast<unsigned __int128>(x) * m + carry;
    out.push_back(static_cast<std::uint32_t>(t));
    carry = static_cast<u64>(t >> 32);
  }
  while (carry) {
    out.push_back(static_cast<std::uint32_t>(carry));
    carry >>= 32;
  }
  return out;
}

/// a / d (exact division by a small d).
Limbs divide_small(const Limbs& a, u64 d) {
  Limbs out(a.size());
  u64 rem = 0;
  for (std::size_t k = a.size(); k-- > 0;) {
    const u64 cur = (rem << 32) | a[k];
    out[k] = static_cast<std::uint32_t>(cur / d);
    rem = cur % d;
  }
  return out;
}

u64 mod_small(const Limbs& a, u64 d) {
  u64 rem = 0;
  for (std::size_t k = a.size(); k-- > 0;) rem = ((rem << 32) | a[k]) % d;
  return rem;
}

/// The low `count` limbs of a (zero-extended), or of -a mod 2^(32 count) when negate.
Limbs low_limbs(const Limbs& a, std::size_t count, bool negate) {
  Limbs out(count, 0);
  for (std::size_t k = 0; k < count && k < a.size(); ++k) out[k] = a[k];
  if (negate) {
    u64 carry = 1;
    for (auto& x : out) {
      const u64 t = static_cast<u64>(static_cast<std::uint32_t>(~x)) + carry;
      x = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
  }
  return out;
}

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
                        std::to_string(o.bits()) + " bits); bring them to the same modulus first");
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

BigPoly BigPoly::automorphism(u64 galois) const {
  if (galois % 2 == 0)
    throw ParameterError("automorphism: the Galois element must be odd, got " +
                         std::to_string(galois));
  if (n() == 0 || (n() & (n() - 1)))
    throw ParameterError("automorphism: N must be a power of two, got " + std::to_string(n()));
  BigPoly r(n(), bits(), device_, stream_);
  backend().big_int().big_automorphism_async(r.data(), data(), shape_, galois, stream_);
  return r;
}

struct BigMultiplier::Tables {
  backend::Buffer words, reciprocal, limbs, minus_p;  // minus_p, reciprocal: inverse CRT only
  backend::Buffer wrap;                               // the centered CRT's 2^bits mod p_i
  backend::Buffer bytes;                              // the tensor-core form (byte planes)
  backend::BigRnsView forward;
  backend::BigCrtView inverse;
};

BigMultiplier::BigMultiplier(std::shared_ptr<const RingContext> ring) : ring_(std::move(ring)) {
  for (std::size_t id = 0; id < ring_->prime_count(); ++id)
    if (ring_->prime(id) >> kMaxModulusBitsOf<u32>)
      throw ParameterError(
          "BigMultiplier: its primes must be below 2^30 (residues in 32-bit words), got " +
          std::to_string(ring_->prime(id)));
}

BigMultiplier::~BigMultiplier() = default;

void BigMultiplier::check_prefix(const RnsBasis& basis, const char* op) const {
  bool prefix = basis.context() == ring_;
  for (std::size_t k = 0; prefix && k < basis.size(); ++k) prefix = basis.ids()[k] == k;
  if (!prefix)
    throw MismatchError(std::string(op) + ": the basis is not a prefix of the multiplier's primes");
}

const BigMultiplier::Tables& BigMultiplier::forward_tables(const RnsBasis& basis, std::size_t words,
                                                           int centered_bits,
                                                           backend::Backend& be) const {
  const std::size_t m = basis.size(), limbs = 2 * words;
  const auto dev = be.device();
  std::lock_guard lock(mutex_);
  auto& slot =
      forward_[std::make_tuple(static_cast<int>(dev.kind), dev.index, m, limbs, centered_bits)];
  if (slot) return *slot;
  const std::size_t stride = (m + 7) / 8 * 8;
  std::vector<Modulus> moduli(m);
  std::vector<std::uint32_t> pow32(limbs * stride, 0), wrap(stride, 0);
  for (std::size_t i = 0; i < m; ++i) {
    moduli[i] = make_modulus(basis.prime(i));
    wrap[i] = static_cast<std::uint32_t>(pow_mod(2, static_cast<u64>(centered_bits), moduli[i]));
    const u64 two32 = (u64{1} << 32) % basis.prime(i);
    u64 cur = 1;
    for (std::size_t j = 0; j < limbs; ++j) {
      pow32[j * stride + i] = static_cast<std::uint32_t>(cur);
      cur = mul_mod(cur, two32, moduli[i]);
    }
  }
  // The byte matrix W[k][i] = 2^(8k) mod p_i over the input's bytes k.
  std::vector<std::vector<u64>> w(4 * limbs, std::vector<u64>(m));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < 4 * limbs; ++k)
      w[k][i] = k == 0 ? 1 : mul_mod(w[k - 1][i], 256, moduli[i]);
  const std::size_t blocks = (4 * limbs + 31) / 32;
  const std::vector<std::uint32_t> planes = fragment_tiles_of(w, m, blocks, 4);
  auto t = std::make_unique<Tables>();
  const backend::Stream s{};
  t->words = backend::Buffer::from_host(be, moduli.data(), m * sizeof(Modulus), s);
  t->limbs = backend::Buffer::from_host(be, pow32.data(), pow32.size() * 4, s);
  t->wrap = backend::Buffer::from_host(be, wrap.data(), wrap.size() * 4, s);
  t->bytes = backend::Buffer::from_host(be, planes.data(), planes.size() * 4, s);
  be.synchronize(s);
  t->forward = backend::BigRnsView{m, limbs, stride, t->words.as<const Modulus>(),
                                   t->limbs.as<const std::uint32_t>()};
  if (centered_bits) {
    t->forward.wrap = t->wrap.as<const std::uint32_t>();
    t->forward.bits = centered_bits;
  }
  t->forward.byte_planes = t->bytes.as<const std::uint32_t>();
  t->forward.byte_blocks = static_cast<std::uint32_t>(blocks);
  slot = std::move(t);
  return *slot;
}

const BigMultiplier::Tables& BigMultiplier::inverse_tables(const RnsBasis& basis, int out_bits,
                                                           backend::Backend& be) const {
  const std::size_t m = basis.size(), limbs = 2 * BigPoly::words_for(out_bits);
  const auto dev = be.device();
  std::lock_guard lock(mutex_);
  auto& slot = inverse_[std::make_tuple(static_cast<int>(dev.kind), dev.index, m, limbs, 0)];
  if (slot) return *slot;
  const auto primes = basis.primes();
  Limbs p_all{1};
  for (u64 q : primes) p_all = times_small(p_all, q);
  std::vector<u64> words(3 * m);  // primes, inverses, their Shoup companions
  std::vector<double> reciprocal(m);
  const std::size_t stride = (limbs + 7) / 8 * 8;
  std::vector<std::uint32_t> cofactor(m * stride, 0);
  for (std::size_t i = 0; i < m; ++i) {
    const u64 q = primes[i];
    const Limbs cof = divide_small(p_all, q);
    const u64 inv = inverse_mod(mod_small(cof, q), q);
    words[i] = q;
    words[m + i] = inv;
    words[2 * m + i] = shoup_precompute(inv, q);
    reciprocal[i] = 1.0 / static_cast<double>(q);
    const Limbs low = low_limbs(cof, limbs, false);
    std::copy(low.begin(), low.end(), cofactor.begin() + static_cast<std::ptrdiff_t>(i * stride));
  }
  Limbs minus_p = low_limbs(p_all, limbs, true);
  minus_p.resize(stride, 0);
  // The byte matrix: row 4 i + a (digit i's byte a; digit m is the multiple k of P, against
  // -P), column u: byte u - a of that digit's cofactor.
  std::vector<std::vector<u64>> w(4 * (m + 1), std::vector<u64>(4 * limbs, 0));
  for (std::size_t i = 0; i <= m; ++i) {
    const std::uint32_t* cof = i < m ? cofactor.data() + i * stride : minus_p.data();
    for (std::size_t a = 0; a < 4; ++a)
      for (std::size_t u = a; u < 4 * limbs; ++u)
        w[4 * i + a][u] = (cof[(u - a) / 4] >> (8 * ((u - a) % 4))) & 0xffu;
  }
  const std::size_t blocks = (4 * (m + 1) + 31) / 32;
  const std::vector<std::uint32_t> matrix = fragment_tiles_of(w, 4 * limbs, blocks, 1);
  auto t = std::make_unique<Tables>();
  const backend::Stream s{};
  t->words = backend::Buffer::from_host(be, words.data(), words.size() * sizeof(u64), s);
  t->reciprocal =
      backend::Buffer::from_host(be, reciprocal.data(), reciprocal.size() * sizeof(double), s);
  t->limbs = backend::Buffer::from_host(be, cofactor.data(), cofactor.size() * 4, s);
  t->minus_p = backend::Buffer::from_host(be, minus_p.data(), minus_p.size() * 4, s);
  t->bytes = backend::Buffer::from_host(be, matrix.data(), matrix.size() * 4, s);
  be.synchronize(s);
  auto& v = t->inverse;
  v.primes = m;
  v.limbs32 = limbs;
  v.stride = stride;
  v.prime = t->words.as<const u64>();
  v.inverse = v.prime + m;
  v.inverse_shoup = v.prime + 2 * m;
  v.reciprocal = t->reciprocal.as<const double>();
  v.cofactor = t->limbs.as<const std::uint32_t>();
  v.minus_p = t->minus_p.as<const std::uint32_t>();
  v.byte_matrix = t->bytes.as<const std::uint32_t>();
  v.byte_blocks = static_cast<std::uint32_t>(blocks);
  slot = std::move(t);
  return *slot;
}

RnsBasis BigMultiplier::basis_for(int a_bits, int b_bits) const {
  // P > 4 N 2^(a + b) (|x| < N 2^(a + b) within P / 4), with a bit to spare for the logs'
  // rounding.
  const double need = 3.0 + ring_->log_n() + a_bits + b_bits;
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

RnsPoly32 BigMultiplier::to_rns(const BigPoly& a, const RnsBasis& basis, bool centered) const {
  check_prefix(basis, "to_rns");
  if (a.n() != ring_->n())
    throw MismatchError("to_rns: the polynomial has N=" + std::to_string(a.n()) +
                        ", the multiplier's ring " + std::to_string(ring_->n()));
  RnsPoly32 r(basis, Form::coeff, a.device(), a.stream());
  auto& be = a.backend();
  const auto& tables = forward_tables(basis, a.words(), centered ? a.bits() : 0, be);
  be.big_int().big_to_rns_async(r.data(), a.data(), a.shape(), tables.forward, a.stream());
  return r;
}

RnsPoly32 BigMultiplier::transform(const BigPoly& a, const RnsBasis& basis, bool centered) const {
  RnsPoly32 r = to_rns(a, basis, centered);
  r.ntt_inplace();
  return r;
}

BigPoly BigMultiplier::product(const RnsPoly32& a, const RnsPoly32& b, int out_bits) const {
  RnsPoly32 c = a.multiply(b);
  c.intt_inplace();
  return from_rns(c, out_bits);
}

BigPoly BigMultiplier::from_rns(const RnsPoly32& a, int out_bits) const {
  if (a.form() != Form::coeff) throw MismatchError("from_rns needs coeff form; call intt() first");
  check_prefix(a.basis(), "from_rns");
  auto& be = a.backend();
  BigPoly r(a.n(), out_bits, a.device(), a.stream());
  be.big_int().big_from_rns_async(r.data(), r.shape(), a.data(),
                                  inverse_tables(a.basis(), out_bits, be).inverse, a.stream());
  return r;
}

BigPoly BigMultiplier::multiply(const BigPoly& a, const BigPoly& b, int out_bits) const {
  if (out_bits > a.bits() || out_bits > b.bits())
    throw ParameterError(
        "multiply: the product is exact mod 2^" + std::to_string(std::min(a.bits(), b.bits())) +
        " at most (the inputs' widths); asked for " + std::to_string(out_bits) + " bits");
  const RnsBasis basis = basis_for(a.bits(), b.bits());
  return product(transform(a, basis), transform(b, basis), out_bits);
}

}  // namespace ember::ring
