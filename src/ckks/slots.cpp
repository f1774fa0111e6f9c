// ckks::Context's slot encoding: values <-> the special FFT <-> RNS coefficients through the
// backend's CkksEncodeOps, so that a CUDA context encodes and decodes device memory in place.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "ember/ckks/context.h"
#include "ember/core/errors.h"
#include "ember/core/numtheory.h"

namespace ember::ckks {

using ring::Form;
namespace fft = backend::ckks;

namespace {

double double_of_bits(u64 bits) {
  double d;
  static_assert(sizeof d == sizeof bits);
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace

const void* Context::device_twiddles() const {
  std::lock_guard<std::mutex> lock(twiddle_mutex_);
  if (!device_twiddles_.bytes()) {
    auto& be = rlwe_.backend();
    device_twiddles_ = backend::Buffer::from_host(be, twiddles_.data(),
                                                  twiddles_.size() * sizeof(Cx), backend::Stream{});
    be.synchronize(backend::Stream{});
  }
  return device_twiddles_.as<const void>();
}

Context::EncodedSlots Context::encode_slots(const void* values, SlotType type, std::size_t count,
                                            Memory where, std::size_t level, double scale,
                                            bool repeat, bool extended) const {
  if (level > max_level())
    throw ParameterError("encode: level " + std::to_string(level) + " is above the top level " +
                         std::to_string(max_level()));
  if (!(std::isfinite(scale) && scale > 0))
    throw ParameterError("encode: the scale must be positive and finite, got " +
                         std::to_string(scale));
  const std::size_t slots = rlwe_.n() / 2;
  if (repeat && (count == 0 || slots % count))
    throw ParameterError("sparse packing needs a length dividing " + std::to_string(slots) +
                         ", got " + std::to_string(count));
  if (!repeat && count > slots)
    throw ParameterError(std::to_string(count) + " values do not fit in " + std::to_string(slots) +
                         " slots");
  const ring::RnsBasis& q = extended ? rlwe_.qp_basis(level) : rlwe_.q_basis(level);
  const long double bound = coefficient_bound(level);
  // The bound as a double no larger than it (every double passes a bound beyond double's range).
  const double bound_d = bound >= static_cast<long double>(std::numeric_limits<double>::max())
                             ? std::numeric_limits<double>::infinity()
                             : std::nextafter(static_cast<double>(bound), 0.0);
  const void* twiddles = device_twiddles();
  auto& be = rlwe_.backend();
  auto& ops = be.ckks_encode();
  const backend::Stream s{};
  u64 flags[fft::kSlotFlagWords] = {};
  backend::Buffer flag_words = backend::Buffer::from_host(be, flags, sizeof flags, s);
  backend::Buffer staged;
  if (where == Memory::host && count) {
    staged = backend::Buffer::from_host(be, values, count * fft::slot_bytes(type), s);
    values = staged.as<const void>();
  }
  backend::Buffer z(be, slots * sizeof(Cx), s);
  ops.load_slots_async(z.as<void>(), values, type, count, repeat, slots, flag_words.as<u64>(), s);
  ops.special_fft_async(z.as<void>(), slots, twiddles, true, s);
  RnsPoly p(q, Form::coeff, rlwe_.device(), s);
  ops.round_to_residues_async(p.data(), z.as<const void>(), scale, bound_d, p.view(),
                              flag_words.as<u64>(), s);
  be.copy_to_host_async(flags, flag_words.as<const void>(), sizeof flags, s);
  be.synchronize(s);
  if (flags[0] & fft::kNotFinite)
    throw ParameterError("encode: values must be finite (no NaN or infinity)");
  if (flags[0] & fft::kTooLarge) {
    const double x = double_of_bits(flags[1]);
    throw ParameterError(
        "encode: a coefficient of the encoding times the scale reaches 2^" +
        std::to_string(std::log2(std::fabs(x))) + ", above 2^" +
        std::to_string(static_cast<double>(std::log2(bound))) + ", the most level " +
        std::to_string(level) +
        " holds (a quarter of its modulus Q, less the encryption error); use smaller values, a "
        "smaller scale or a higher level");
  }
  p.ntt_inplace();
  return EncodedSlots{std::move(p), (flags[0] & fft::kComplex) != 0, double_of_bits(flags[2])};
}

void Context::decode_slots(const RnsPoly& m, double scale, bool check, void* out, SlotType type,
                           std::size_t count, Memory where) const {
  check_decodable(m);
  const std::size_t limbs = m.limbs();
  if (type != SlotType::f64 && type != SlotType::c128)
    throw ParameterError("decode: the output type must be float64 or complex128");
  const std::size_t slots = m.n() / 2;
  if (count > slots)
    throw ParameterError("decode: " + std::to_string(count) + " values asked of " +
                         std::to_string(slots) + " slots");
  const void* twiddles = device_twiddles();
  auto& be = m.backend();
  auto& ops = be.ckks_encode();
  const auto s = m.stream();
  backend::Buffer z(be, slots * sizeof(Cx), s);
  if (two_rows_hold(m)) {
    const auto primes = m.basis().primes();
    const u64 q0_inv = limbs > 1 ? inverse_mod(primes[0] % primes[1], primes[1]) : 0;
    u64 flags[fft::kSlotFlagWords] = {};
    backend::Buffer flag_words = backend::Buffer::from_host(be, flags, sizeof flags, s);
    ops.two_prime_slots_async(z.as<void>(), m.data(), q0_inv, scale, check && limbs <= 2, m.view(),
                              flag_words.as<u64>(), s);
    be.copy_to_host_async(flags, flag_words.as<const void>(), sizeof flags, s);
    be.synchronize(s);
    // The exact path's message (with the coefficient's size) for a wrapped value.
    if (flags[0] & fft::kWrapped) decode_coeffs(m, scale, true);
  } else {
    // Values wider than q0 q1 / 4 (rare): the exact CRT over every prime on the host.
    const std::vector<double> c = decode_coeffs(m, scale, check);
    backend::Buffer coeffs = backend::Buffer::from_host(be, c.data(), c.size() * sizeof(double), s);
    ops.coefficient_slots_async(z.as<void>(), coeffs.as<const double>(), slots, s);
    be.synchronize(s);
  }
  ops.special_fft_async(z.as<void>(), slots, twiddles, false, s);
  const std::size_t bytes = count * fft::slot_bytes(type);
  if (where == Memory::device) {
    ops.store_slots_async(out, z.as<const void>(), type, count, s);
  } else if (count) {
    backend::Buffer staged(be, bytes, s);
    ops.store_slots_async(staged.as<void>(), z.as<const void>(), type, count, s);
    be.copy_to_host_async(out, staged.as<const void>(), bytes, s);
  }
  be.synchronize(s);
}

std::vector<double> Context::slots_to_coeffs(const Cx* slots) const {
  return fft::slots_to_coeffs(slots, twiddles_);
}

std::vector<Context::Cx> Context::coeffs_to_slots(const double* coeffs) const {
  return fft::coeffs_to_slots(coeffs, twiddles_);
}

}  // namespace ember::ckks
