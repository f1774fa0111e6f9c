// IntegerEncoder: BFV/BGV plaintexts in backend memory through the integer encoding family
// (backend/integer_encode_ops.h) and the ring's NTT modulo t.
#include "ember/rlwe/integer_encoder.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::rlwe {

using backend::Buffer;
using backend::Stream;
using ring::Form;
using ring::RnsPoly;

std::vector<u64> PlainCoeffs::to_host() const {
  auto& be = backend::backend_for(device_);
  std::vector<u64> out(n_);
  be.copy_to_host_async(out.data(), words_, n_ * sizeof(u64), stream_);
  be.synchronize(stream_);
  return out;
}

IntegerEncoder::IntegerEncoder(std::size_t n, u64 t, const std::vector<u32>& slot_index,
                               backend::Device device)
    : n_(n), t_(t), t_mod_(make_modulus(t)), device_(device) {
  if (slot_index.empty()) return;
  if (slot_index.size() != n) throw ParameterError("the slot order must have N entries");
  std::vector<bool> seen(n, false);
  for (u32 i : slot_index) {
    if (i >= n || seen[i]) throw ParameterError("the slot order must be a permutation of [0, N)");
    seen[i] = true;
  }
  t_ring_ = ring::RingContext::create(n, {t});
  auto& be = backend::backend_for(device);
  slot_index_ = std::make_shared<const Buffer>(
      Buffer::from_host(be, slot_index.data(), n * sizeof(u32), Stream{}));
  be.synchronize(Stream{});
}

void IntegerEncoder::check_device(const PlainCoeffs& m, const char* op) const {
  if (m.device() != device_ || m.n() != n_)
    throw MismatchError(std::string(op) + ": the plaintext is on " + m.device().str() +
                        " with N=" + std::to_string(m.n()) + ", the context on " + device_.str() +
                        " with N=" + std::to_string(n_));
}

void IntegerEncoder::check_batching(const char* op) const {
  if (!batching())
    throw ParameterError(std::string(op) + ": t=" + std::to_string(t_) +
                         " does not allow batching (it must be a prime = 1 mod 2N); use the "
                         "coefficient encoding");
}

PlainCoeffs IntegerEncoder::encode(const void* values, IntType type, std::size_t count,
                                   Memory where, bool batched) const {
  if (count > n_)
    throw ParameterError(std::to_string(count) + " values do not fit in " + std::to_string(n_) +
                         (batched ? " slots" : " coefficients"));
  if (batched) check_batching("encode");
  auto& be = backend::backend_for(device_);
  auto& ops = be.integer_encode();
  const Stream s{};  // a fresh plaintext: the default stream (as scale_plain's)
  u64 flag = 0;
  const Buffer flag_word = Buffer::from_host(be, &flag, sizeof flag, s);
  Buffer staged;
  if (where == Memory::host && count) {
    staged = Buffer::from_host(be, values, count * backend::integer::int_type_bytes(type), s);
    values = staged.as<const void>();
  }
  auto check_flag = [&] {
    be.copy_to_host_async(&flag, flag_word.as<const void>(), sizeof flag, s);
    be.synchronize(s);
    if (flag)
      throw ParameterError("values must be integers in (-t, t) for the plain modulus t=" +
                           std::to_string(t_) + "; some value is outside that range");
  };
  if (!batched) {
    auto words = std::make_shared<Buffer>(be, n_ * sizeof(u64), s);
    ops.load_plain_async(words->as<u64>(), values, type, count, n_, t_, nullptr,
                         flag_word.as<u64>(), s);
    check_flag();
    const u64* data = words->as<const u64>();
    return PlainCoeffs(std::move(words), data, n_, device_, s);
  }
  RnsPoly slots(ring::RnsBasis::all(t_ring_), Form::eval, device_, s);
  ops.load_plain_async(slots.data(), values, type, count, n_, t_, slot_index_->as<const u32>(),
                       flag_word.as<u64>(), s);
  check_flag();
  auto coeffs = std::make_shared<RnsPoly>(slots.intt());
  const u64* data = coeffs->data();
  return PlainCoeffs(std::move(coeffs), data, n_, device_, s);
}

PlainCoeffs IntegerEncoder::from_host(const u64* coeffs) const {
  for (std::size_t i = 0; i < n_; ++i)
    if (coeffs[i] >= t_)
      throw ParameterError("plaintext coefficient " + std::to_string(coeffs[i]) +
                           " is not reduced modulo t=" + std::to_string(t_));
  auto& be = backend::backend_for(device_);
  auto words = std::make_shared<Buffer>(Buffer::from_host(be, coeffs, n_ * sizeof(u64), Stream{}));
  const u64* data = words->as<const u64>();
  return PlainCoeffs(std::move(words), data, n_, device_, Stream{});
}

PlainCoeffs IntegerEncoder::multiply(const PlainCoeffs& m, u64 k) const {
  check_device(m, "multiply");
  auto& be = backend::backend_for(device_);
  const Stream s = m.stream();
  auto words = std::make_shared<Buffer>(be, n_ * sizeof(u64), s);
  be.integer_encode().multiply_plain_async(words->as<u64>(), m.data(), k % t_, t_mod_, n_, s);
  const u64* data = words->as<const u64>();
  return PlainCoeffs(std::move(words), data, n_, device_, s);
}

RnsPoly IntegerEncoder::lift(const PlainCoeffs& m, const ring::RnsBasis& q, Form form) const {
  check_device(m, "lift");
  if (q.n() != n_) throw MismatchError("lift: the basis has another ring degree");
  RnsPoly out(q, Form::coeff, device_, m.stream());
  auto& be = out.backend();
  be.integer_encode().lift_plain_async(out.data(), m.data(), t_, out.view(), m.stream());
  if (form == Form::eval) out.ntt_inplace();
  return out;
}

PlainCoeffs IntegerEncoder::message(const u64* v, Stream stream, u64 q, u64 factor) const {
  auto& be = backend::backend_for(device_);
  const u64 factor_inv = inverse_mod(factor % t_, t_);
  auto words = std::make_shared<Buffer>(be, n_ * sizeof(u64), stream);
  be.integer_encode().message_async(words->as<u64>(), v, q, t_mod_, factor_inv, n_, stream);
  // Readers of plaintexts (scale_plain, encode's stream) use the default stream: the words are
  // complete when this returns.
  be.synchronize(stream);
  const u64* data = words->as<const u64>();
  return PlainCoeffs(std::move(words), data, n_, device_, stream);
}

void IntegerEncoder::decode(const PlainCoeffs& m, bool batched, std::int64_t* out,
                            std::size_t count, Memory where) const {
  check_device(m, "decode");
  if (count > n_) throw ParameterError("decode: at most N values");
  auto& be = backend::backend_for(device_);
  const Stream s = m.stream();
  const u64* words = m.data();
  std::optional<RnsPoly> slots;
  if (batched) {
    check_batching("decode");
    RnsPoly c(ring::RnsBasis::all(t_ring_), Form::coeff, device_, s);
    be.copy_async(c.data(), m.data(), n_ * sizeof(u64), s);
    slots.emplace(c.ntt());
    words = slots->data();
  }
  const u32* index = batched ? slot_index_->as<const u32>() : nullptr;
  if (where == Memory::device) {
    be.integer_encode().store_plain_async(out, words, t_, index, count, s);
    be.synchronize(s);
    return;
  }
  Buffer values(be, std::max<std::size_t>(count, 1) * sizeof(std::int64_t), s);
  be.integer_encode().store_plain_async(values.as<std::int64_t>(), words, t_, index, count, s);
  be.copy_to_host_async(out, values.as<const void>(), count * sizeof(std::int64_t), s);
  be.synchronize(s);
}

}  // namespace ember::rlwe
