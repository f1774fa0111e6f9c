// ckks::Context: the CKKS mechanics on the RLWE core: encoding of coefficient vectors, the
// product and rescaling, slot encoding (the special FFT, on the context's device: slots.cpp); the
// shared operations come from rlwe::Evaluator. The scale policy lives in the Python layer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/backend/buffer.h"
#include "ember/backend/ckks_fft.h"
#include "ember/ring/crt.h"
#include "ember/rlwe/evaluator.h"

namespace ember::ckks {

using ring::RnsPoly;
using rlwe::Ciphertext;
using rlwe::SwitchKey;

class Context : public rlwe::Evaluator {
 public:
  static constexpr u64 kTag = 0x434b4b53;  // "CKKS": the scheme's part of the fingerprint
  /// level_primes: the primes of Q each level adds (see rlwe::SchemeOptions; empty: one each).
  Context(std::size_t n, const std::vector<u64>& q_primes, const std::vector<u64>& p_primes,
          std::size_t dnum, backend::Device device,
          std::shared_ptr<const ring::RingContext> shared_ring = nullptr,
          const std::vector<std::size_t>& level_primes = {});

  /// round(coeffs[k] * scale) in every prime of Q_level, evaluation form. Throws ParameterError
  /// when a value is not finite or round(coeffs[k] * scale) exceeds coefficient_bound(level).
  /// With extended = true the polynomial is over Q_level u P (plaintexts of double-hoisted
  /// linear transforms, multiplied before the ModDown).
  RnsPoly encode_coeffs(const double* coeffs, std::size_t level, double scale,
                        bool extended = false) const;
  /// The largest |round(value * scale)| a coefficient at `level` may hold: Q_level / 4 less
  /// 2^(log2 N + 6) (a bound on a fresh encryption's error). decode_coeffs recovers every value
  /// below Q_level / 4, so what encode accepts is what decryption returns.
  long double coefficient_bound(std::size_t level) const { return coefficient_bound_.at(level); }
  /// Centered value / scale of each coefficient of m (coefficient form, over Q_l for some level
  /// l, every prime of it: exact for any value below Q_l / 2). With check, throws
  /// DecryptionError when a coefficient reaches Q_l / 4: such values are outside what encoding
  /// allows and have most likely wrapped around Q_l (they would decode to garbage).
  std::vector<double> decode_coeffs(const RnsPoly& m, double scale, bool check = true) const;

  /// Where slot values live: host memory, or this context's device (backend memory).
  enum class Memory { host, device };
  using SlotType = backend::ckks::SlotType;
  using Cx = backend::ckks::Cx;
  /// A plaintext encoded by encode_slots, with what the slot loading saw of the values.
  struct EncodedSlots {
    RnsPoly poly;
    bool is_complex = false;  // some value has a nonzero imaginary part
    double magnitude = 0;     // max over values of max(|re|, |im|)
  };
  /// The slot encoding on this context's device (slots.cpp): `count` values of `type` (host
  /// memory, or this device's memory with Memory::device) in slots 0 .. count-1, zero padded,
  /// or repeated over every slot when `repeat` (sparse packing: count must divide N/2); the
  /// special FFT's inverse, times scale, rounded, reduced into every prime of Q_level (Q_level u
  /// P when extended) and transformed to evaluation form. Only the error flags travel to the
  /// host. Throws ParameterError as encode_coeffs does, and for a count that does not fit.
  EncodedSlots encode_slots(const void* values, SlotType type, std::size_t count, Memory where,
                            std::size_t level, double scale, bool repeat,
                            bool extended = false) const;
  /// The slots of m (coefficient form over Q_l, as decode_coeffs takes) divided by scale, the
  /// first `count` of them written to `out` (type f64: real parts, or c128) in host or device
  /// memory. Through the first two primes on the device when they hold every coefficient (what
  /// decode_coeffs checks); otherwise decode_coeffs's exact host path, then the FFT on the
  /// device. Throws DecryptionError as decode_coeffs does.
  void decode_slots(const RnsPoly& m, double scale, bool check, void* out, SlotType type,
                    std::size_t count, Memory where) const;
  /// The encoding's coefficients before the scale (2n doubles, host) of n = N/2 slot values
  /// (host, complex): the same special FFT as encode_slots, run on the host.
  std::vector<double> slots_to_coeffs(const Cx* slots) const;
  /// The slots (n complex values, host) of 2n coefficients (host): decode_slots's FFT.
  std::vector<Cx> coeffs_to_slots(const double* coeffs) const;

  /// multiply() (from rlwe::Evaluator) gives scale a.scale * b.scale; rescale() divides it.
  Ciphertext square(const Ciphertext& a, const SwitchKey& relin) const;
  /// Divides by the primes of the last level (level - 1, scale / q_level), rounding.
  Ciphertext rescale(const Ciphertext& a) const;
  /// Bootstrapping's ModRaise: a level-0 ciphertext (c0, c1 mod q_0) read as one over Q_level by
  /// lifting every coefficient's centered residue; it then decrypts to m + q_0 I with a small
  /// integer polynomial I. Scale unchanged. Throws ParameterError unless a is at level 0 with
  /// two polynomials and 1 <= level <= max_level().
  Ciphertext mod_raise(const Ciphertext& a, std::size_t level) const;

 private:
  /// Throws ParameterError unless m is in coefficient form over the first primes of Q.
  void check_decodable(const RnsPoly& m) const;
  const ring::BaseConverter& raise_converter(std::size_t level) const;
  const ring::CrtConverter& crt_converter(const ring::RnsBasis& basis) const;
  /// Whether m's first two rows give every coefficient's value (the device check of decode).
  bool two_rows_hold(const RnsPoly& m) const;
  /// The special FFT's twiddles in this context's device memory, uploaded on first use.
  const void* device_twiddles() const;
  std::vector<Cx> twiddles_;  // ckks_slot_twiddles(N / 2), host
  mutable std::mutex twiddle_mutex_;
  mutable backend::Buffer device_twiddles_;
  std::vector<long double> coefficient_bound_;  // per level
  mutable std::mutex crt_mutex_;
  mutable std::map<std::size_t, std::unique_ptr<ring::CrtConverter>> crt_;  // by prime count
  mutable std::mutex raise_mutex_;
  mutable std::map<std::size_t, std::unique_ptr<ring::BaseConverter>> raise_;  // q_0 -> q_1..q_l
};

}  // namespace ember::ckks
