// ckks::Context32: CKKS on 32-bit words, with the 64-bit context's encodings over the same ring.
#include "ember/ckks/context32.h"

namespace ember::ckks {

using ring::Form;

namespace {
rlwe::SchemeOptions ckks32_options(const std::vector<std::size_t>& level_primes) {
  rlwe::SchemeOptions o;
  o.tag = ckks::Context::kTag;
  o.level_primes = level_primes;
  return o;
}
}  // namespace

Context32::Context32(std::size_t n, const std::vector<u64>& q_primes,
                     const std::vector<u64>& p_primes, std::size_t dnum, backend::Device device,
                     std::shared_ptr<const ring::RingContext> shared_ring,
                     const std::vector<std::size_t>& level_primes)
    : rlwe::EvaluatorT<u32>(n, q_primes, p_primes, dnum, device, ckks32_options(level_primes),
                            std::move(shared_ring)),
      wide_(n, q_primes, p_primes, dnum, device, rlwe_.ring(), level_primes) {}

Context32::Poly Context32::encode_coeffs(const double* coeffs, std::size_t level, double scale,
                                         bool extended) const {
  return wide_.encode_coeffs(coeffs, level, scale, extended).to_words<u32>();
}

std::vector<double> Context32::decode_coeffs(const Poly& m, double scale, bool check) const {
  return wide_.decode_coeffs(m.to_words<u64>(), scale, check);
}

Context32::EncodedSlots Context32::encode_slots(const void* values, ckks::Context::SlotType type,
                                                std::size_t count, ckks::Context::Memory where,
                                                std::size_t level, double scale, bool repeat,
                                                bool extended) const {
  auto e = wide_.encode_slots(values, type, count, where, level, scale, repeat, extended);
  return {e.poly.to_words<u32>(), e.is_complex, e.magnitude};
}

void Context32::decode_slots(const Poly& m, double scale, bool check, void* out,
                             ckks::Context::SlotType type, std::size_t count,
                             ckks::Context::Memory where) const {
  wide_.decode_slots(m.to_words<u64>(), scale, check, out, type, count, where);
}

Context32::Ciphertext Context32::square(const Ciphertext& a, const SwitchKey& relin) const {
  return multiply(a, a, relin);
}

Context32::Ciphertext Context32::rescale(const Ciphertext& a) const {
  return divide_by_last_prime(a);
}

Context32::Ciphertext Context32::mod_raise(const Ciphertext& a, std::size_t level) const {
  check_one(a, "mod_raise");
  // The 64-bit context's raise of the widened ciphertext (same values; it checks the level and
  // the size), narrowed back.
  std::vector<ring::RnsPoly> widened;
  for (const auto& p : a.polys) widened.push_back(p.to_words<u64>());
  rlwe::Ciphertext w;
  w.polys = std::move(widened);
  w.level = a.level;
  w.scale = a.scale;
  w.factor = a.factor;
  w.key_id = a.key_id;
  w.params_id = wide_.rlwe().params_id();
  rlwe::Ciphertext raised = wide_.mod_raise(w, level);
  Ciphertext c = like(a, 0, level);
  for (const auto& p : raised.polys) c.polys.push_back(p.to_words<u32>());
  return c;
}

}  // namespace ember::ckks
