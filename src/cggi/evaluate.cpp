// CGGI evaluation: vectorized gates, MUX, NOT, constants, programmable bootstrapping and the
// linear operations between bootstraps, each a few batched backend calls.
#include <algorithm>
#include <string>

#include "detail.h"
#include "ember/cggi/context.h"

namespace ember::cggi {

using backend::Buffer;
using backend::Stream;
using detail::with_torus;

namespace {

/// The key id of a result of operands with ids a and b (0: a trivial ciphertext, any key).
std::uint64_t joint_key(std::uint64_t a, std::uint64_t b) {
  if (a && b && a != b) throw MismatchError("the ciphertexts were encrypted under different keys");
  return a ? a : b;
}

/// (ca, cb, constant in units of 1/8) of each two-input gate: gate(a, b) = sign of
/// ca a + cb b + constant/8, true = +1/8, false = -1/8.
struct GateForm {
  int ca, cb, eighths;
};
GateForm form_of(Gate g) {
  switch (g) {
    case Gate::and_:
      return {1, 1, -1};
    case Gate::nand:
      return {-1, -1, 1};
    case Gate::or_:
      return {1, 1, 1};
    case Gate::nor:
      return {-1, -1, -1};
    case Gate::xor_:
      return {2, 2, 2};
    case Gate::xnor:
      return {-2, -2, -2};
    case Gate::andny:
      return {-1, 1, -1};
    case Gate::andyn:
      return {1, -1, -1};
    case Gate::orny:
      return {-1, 1, 1};
    case Gate::oryn:
      return {1, -1, 1};
  }
  throw ParameterError("unknown gate");
}

}  // namespace

void Context::check(const LweBatch& c, const char* what) const {
  if (c.params_id != params_id_)
    throw MismatchError(std::string(what) +
                        ": the ciphertexts belong to a context with other parameters");
  if (!c.words || c.torus_bits != params_.torus_bits || c.dim != shape_.big_dim())
    throw MismatchError(std::string(what) + ": malformed ciphertext batch");
  if (c.words->backend() != be_)
    throw MismatchError(std::string(what) + ": the ciphertexts are on another device");
}

backend::BootstrapKeyView Context::key_view(const ServerKey& sk) const {
  if (sk.params_id != params_id_)
    throw MismatchError("the server key belongs to a context with other parameters");
  return {sk.bsk.as<void>(), forward_table_.as<void>(), inverse_table_.as<void>()};
}

LweBatch Context::linear(const LweBatch& a, const LweBatch* b, std::int64_t ca, std::int64_t cb,
                         std::uint64_t constant, int message_bits) {
  check(a, "linear");
  std::uint64_t key = a.key_id;
  if (b) {
    check(*b, "linear");
    if (b->count != a.count)
      throw ParameterError("the operands have " + std::to_string(a.count) + " and " +
                           std::to_string(b->count) + " ciphertexts: give equal lengths");
    key = joint_key(a.key_id, b->key_id);
  }
  const Stream st = a.stream;
  LweBatch out = empty_batch(a.count, message_bits, key, st);
  if (a.count)
    be_->cggi().linear_async(out.words->as<void>(), a.words->as<void>(),
                             b ? b->words->as<void>() : nullptr, ca, cb, constant, a.dim, a.count,
                             shape_, st);
  be_->synchronize(st);
  return out;
}

LweBatch Context::bootstrap_with(const LweBatch& in, const Buffer& tests, std::size_t stride,
                                 int message_bits, const ServerKey& sk) {
  if (sk.params_id != params_id_)
    throw MismatchError("the server key belongs to a context with other parameters");
  const std::uint64_t key = joint_key(in.key_id, sk.key_id);
  if (sk.bsk.backend() != be_) throw MismatchError("the server key is on another device");
  const Stream st = in.stream;
  LweBatch out = empty_batch(in.count, message_bits, key, st);
  if (!in.count) return out;
  // Large batches run in chunks, so that the key-switched intermediate stays bounded (the
  // output itself is the caller's): only the ciphertexts and their result use memory per gate.
  constexpr std::size_t kChunk = std::size_t{1} << 18;
  const std::size_t chunk = std::min(in.count, kChunk), wb = shape_.word_bytes();
  const std::size_t in_words = shape_.big_dim() + 1, small_words = shape_.n + 1;
  Buffer small(*be_, chunk * small_words * wb, st);
  auto& ops = be_->cggi();
  const auto* src = static_cast<const char*>(in.words->as<void>());
  auto* dst = static_cast<char*>(out.words->as<void>());
  const auto* test = static_cast<const char*>(tests.as<void>());
  for (std::size_t first = 0; first < in.count; first += chunk) {
    const std::size_t cnt = std::min(chunk, in.count - first);
    ops.key_switch_async(small.as<void>(), src + first * in_words * wb, sk.ksk.as<void>(), cnt,
                         shape_, st);
    ops.blind_rotate_extract_async(dst + first * in_words * wb, small.as<void>(),
                                   test + first * stride * wb, stride, cnt, shape_, key_view(sk),
                                   st);
  }
  be_->synchronize(st);
  return out;
}

namespace {
/// The gate test polynomial: every coefficient 1/8 (a phase in [0, 1/2) gives +1/8, else -1/8).
Buffer gate_test(backend::Backend& be, const backend::CggiShape& s, Stream st) {
  return with_torus(s.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> v(s.N, static_cast<T>(detail::mu(s.torus_bits)));
    auto b = Buffer::from_host(be, v.data(), v.size() * sizeof(T), st);
    be.synchronize(st);
    return b;
  });
}

std::uint64_t eighths(int e, int torus_bits) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(e)) * detail::mu(torus_bits);
}
}  // namespace

LweBatch Context::gate(Gate g, const LweBatch& a, const LweBatch& b, const ServerKey& sk) {
  if (a.message_bits || b.message_bits) throw MismatchError("gates take bits, not integers");
  const GateForm f = form_of(g);
  const LweBatch lin = linear(a, &b, f.ca, f.cb, eighths(f.eighths, params_.torus_bits), 0);
  return bootstrap_with(lin, gate_test(*be_, shape_, lin.stream), 0, 0, sk);
}

// Three inputs of +-1/8: a + b + c is +-1/8 or +-3/8, positive exactly when two or more are
// true (margin 1/8, as the AND-type gates); 2 (a + b + c) + 1/2 is s/2 - 1/4 mod 1 for s true
// inputs, so its sign is the parity (margin 1/4, as XOR; with c false it is XOR's 2a + 2b + 1/4).
// One bootstrap each, the linear step in two calls (a b, then c) as the circuit executor does it,
// word for word.
LweBatch Context::maj(const LweBatch& a, const LweBatch& b, const LweBatch& c,
                      const ServerKey& sk) {
  if (a.message_bits || b.message_bits || c.message_bits)
    throw MismatchError("maj takes bits, not integers");
  const LweBatch ab = linear(a, &b, 1, 1, 0, 0);
  const LweBatch lin = linear(ab, &c, 1, 1, 0, 0);
  return bootstrap_with(lin, gate_test(*be_, shape_, lin.stream), 0, 0, sk);
}

LweBatch Context::xor3(const LweBatch& a, const LweBatch& b, const LweBatch& c,
                       const ServerKey& sk) {
  if (a.message_bits || b.message_bits || c.message_bits)
    throw MismatchError("xor3 takes bits, not integers");
  const LweBatch ab = linear(a, &b, 2, 2, eighths(4, params_.torus_bits), 0);
  const LweBatch lin = linear(ab, &c, 1, 2, 0, 0);
  return bootstrap_with(lin, gate_test(*be_, shape_, lin.stream), 0, 0, sk);
}

LweBatch Context::bootstrap(const LweBatch& a, const ServerKey& sk) {
  check(a, "bootstrap");
  if (a.message_bits) throw MismatchError("bootstrap takes bits: use apply_lut for integers");
  return bootstrap_with(a, gate_test(*be_, shape_, a.stream), 0, 0, sk);
}

LweBatch Context::mux(const LweBatch& s, const LweBatch& a, const LweBatch& b,
                      const ServerKey& sk) {
  if (s.message_bits || a.message_bits || b.message_bits)
    throw MismatchError("mux takes bits, not integers");
  const int W = params_.torus_bits;
  if (!s.count) return linear(s, &a, 1, 1, 0, 0);  // checks, and the empty result
  // s AND a and (NOT s) AND b side by side, one bootstrap of both, then their sum + 1/8.
  const LweBatch x = linear(s, &a, 1, 1, eighths(-1, W), 0);
  const LweBatch y = linear(s, &b, -1, 1, eighths(-1, W), 0);
  const Stream st = s.stream;
  LweBatch both = empty_batch(2 * s.count, 0, joint_key(x.key_id, y.key_id), st);
  const std::size_t bytes = s.count * (shape_.big_dim() + 1) * shape_.word_bytes();
  be_->copy_async(both.words->as<char>(), x.words->as<char>(), bytes, st);
  be_->copy_async(both.words->as<char>() + bytes, y.words->as<char>(), bytes, st);
  const LweBatch u = bootstrap_with(both, gate_test(*be_, shape_, st), 0, 0, sk);
  LweBatch u1 = u, u2 = u;
  u1.count = u2.count = s.count;
  u2.words = std::make_shared<Buffer>(*be_, bytes, st);
  be_->copy_async(u2.words->as<char>(), u.words->as<char>() + bytes, bytes, st);
  return linear(u1, &u2, 1, 1, eighths(1, W), 0);
}

LweBatch Context::not_(const LweBatch& a) {
  if (a.message_bits) throw MismatchError("not_ takes bits, not integers");
  return linear(a, nullptr, -1, 0, 0, 0);
}

LweBatch Context::copy(const LweBatch& a) { return linear(a, nullptr, 1, 0, 0, a.message_bits); }

LweBatch Context::constant(const std::vector<std::uint8_t>& bits) {
  LweBatch c = empty_batch(bits.size(), 0, 0);
  with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const std::size_t w = c.dim + 1;
    std::vector<T> host(bits.size() * w, T{0});
    const T mu = static_cast<T>(detail::mu(params_.torus_bits));
    for (std::size_t i = 0; i < bits.size(); ++i)
      host[i * w + c.dim] = bits[i] ? mu : static_cast<T>(T{0} - mu);
    be_->copy_from_host_async(c.words->as<T>(), host.data(), host.size() * sizeof(T), Stream{});
    be_->synchronize(Stream{});
  });
  return c;
}

LweBatch Context::apply_lut(const LweBatch& a, const std::vector<std::uint64_t>& table,
                            const ServerKey& sk) {
  check(a, "apply_lut");
  const int bits = a.message_bits;
  if (bits == 0) throw MismatchError("apply_lut takes integers (encrypt_int), not bits");
  if (table.size() != (std::size_t{1} << bits))
    throw ParameterError("apply_lut: the table needs " + std::to_string(1u << bits) +
                         " entries, got " + std::to_string(table.size()));
  for (auto v : table)
    if (v >> bits)
      throw ParameterError("apply_lut: table value " + std::to_string(v) + " does not fit " +
                           std::to_string(bits) + " bits");
  // Box i (N / 2^bits coefficients) holds table[i] delta; rotated by half a box so that a
  // phase within half a box of m delta lands in box m (the wrapped part negated).
  const Buffer tests = with_torus(params_.torus_bits, [&](auto zero) {
    using T = decltype(zero);
    const std::size_t N = shape_.N, box = N >> bits;
    const T delta = static_cast<T>(detail::delta(params_.torus_bits, bits));
    std::vector<T> v(N), rotated(N);
    for (std::size_t j = 0; j < N; ++j) v[j] = static_cast<T>(table[j / box] * delta);
    backend::cggi::rotate_monomial(rotated.data(), v.data(), N, 2 * N - box / 2);
    auto b = Buffer::from_host(*be_, rotated.data(), N * sizeof(T), a.stream);
    be_->synchronize(a.stream);
    return b;
  });
  return bootstrap_with(a, tests, 0, bits, sk);
}

LweBatch Context::add(const LweBatch& a, const LweBatch& b) {
  if (a.message_bits == 0 || a.message_bits != b.message_bits)
    throw MismatchError("add takes two integer batches of the same bit width");
  return linear(a, &b, 1, 1, 0, a.message_bits);
}

LweBatch Context::mul_scalar(const LweBatch& a, std::int64_t c) {
  if (a.message_bits == 0) throw MismatchError("mul_scalar takes integers, not bits");
  return linear(a, nullptr, c, 0, 0, a.message_bits);
}

LweBatch Context::add_scalar(const LweBatch& a, std::int64_t v) {
  if (a.message_bits == 0) throw MismatchError("add_scalar takes integers, not bits");
  const std::uint64_t d = detail::delta(params_.torus_bits, a.message_bits);
  return linear(a, nullptr, 1, 0, static_cast<std::uint64_t>(v) * d, a.message_bits);
}

LweBatch Context::slice(const LweBatch& a, std::size_t start, std::size_t count) const {
  check(a, "slice");
  if (start > a.count || count > a.count - start)
    throw ParameterError("slice [" + std::to_string(start) + ", " + std::to_string(start + count) +
                         ") is outside a batch of " + std::to_string(a.count));
  LweBatch out = empty_batch(count, a.message_bits, a.key_id, a.stream);
  const std::size_t bytes = (a.dim + 1) * shape_.word_bytes();
  if (count)
    be_->copy_async(out.words->as<char>(), a.words->as<char>() + start * bytes, count * bytes,
                    a.stream);
  be_->synchronize(a.stream);
  return out;
}

LweBatch Context::concat(const std::vector<const LweBatch*>& parts) const {
  std::size_t total = 0;
  std::uint64_t key = 0;
  int bits = parts.empty() ? 0 : parts[0]->message_bits;
  for (const LweBatch* p : parts) {
    check(*p, "concat");
    if (p->message_bits != bits) throw MismatchError("concat: the batches encode different types");
    key = joint_key(key, p->key_id);
    total += p->count;
  }
  const Stream st = parts.empty() ? Stream{} : parts[0]->stream;
  LweBatch out = empty_batch(total, bits, key, st);
  const std::size_t bytes = (shape_.big_dim() + 1) * shape_.word_bytes();
  std::size_t at = 0;
  for (const LweBatch* p : parts) {
    if (p->count)
      be_->copy_async(out.words->as<char>() + at * bytes, p->words->as<char>(), p->count * bytes,
                      st);
    at += p->count;
  }
  be_->synchronize(st);
  return out;
}

LweBatch Context::take(const LweBatch& a, const std::vector<std::uint32_t>& index) const {
  check(a, "take");
  std::vector<std::uint32_t> lits(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (index[i] >= a.count)
      throw ParameterError("take: index " + std::to_string(index[i]) + " is outside a batch of " +
                           std::to_string(a.count));
    lits[i] = index[i] << 1;  // a literal without negation (see CggiOps::gather_async)
  }
  LweBatch out = empty_batch(index.size(), a.message_bits, a.key_id, a.stream);
  if (!index.empty()) {
    Buffer lits_dev(*be_, lits.size() * sizeof(std::uint32_t), a.stream);
    be_->copy_from_host_async(lits_dev.as<std::uint32_t>(), lits.data(),
                              lits.size() * sizeof(std::uint32_t), a.stream);
    be_->cggi().gather_async(out.words->as<void>(), nullptr, a.words->as<void>(),
                             lits_dev.as<std::uint32_t>(), a.dim, index.size(), shape_, a.stream);
    be_->synchronize(a.stream);
  }
  return out;
}

}  // namespace ember::cggi
