// The CKKS encoding family of backend operations: slot values <-> the special FFT <-> RNS
// coefficients, in device memory (the arithmetic is ckks_fft.h's, so both backends agree bit
// for bit).
#pragma once

#include <cstddef>

#include "ember/backend/ckks_fft.h"
#include "ember/backend/ring_ops.h"
#include "ember/backend/runtime.h"

namespace ember::backend {

/// Backend operations of CKKS encoding and decoding. `slots` buffers hold n = N/2 ckks::Cx
/// values; `flags` is ckks::kSlotFlagWords u64 words (ckks::SlotFlag), zeroed by the caller,
/// read back after the operations. Every pointer is backend memory; every call is
/// stream-ordered (see runtime.h).
class CkksEncodeOps {
 public:
  virtual ~CkksEncodeOps() = default;

  /// slots[s] = ckks::slot_value(values, type, count, repeat, s) for s < n (zero padding or
  /// repetition); ORs ckks::value_flags of each value into flags[0] and raises flags[2] to the
  /// bits of the largest ckks::value_magnitude.
  virtual void load_slots_async(void* slots, const void* values, ckks::SlotType type,
                                std::size_t count, bool repeat, std::size_t n, u64* flags,
                                Stream stream) = 0;

  /// The special FFT's stages in place (ckks::special_fft_stages): forward (bit-reversed input,
  /// slot order output) or inverse (slot order input, bit-reversed output, no 1/n). twiddles:
  /// ckks::ckks_slot_twiddles(n).
  virtual void special_fft_async(void* slots, std::size_t n, const void* twiddles, bool inverse,
                                 Stream stream) = 0;

  /// out (b.limbs rows of N = 2n words, coefficient form): the residues of
  /// round(ckks::encoded_coefficient(slots, k) * scale). A coefficient whose rounded value is
  /// not <= bound (also infinite ones) sets kTooLarge in flags[0] and its product's bits in
  /// flags[1]; its residues are left unwritten.
  virtual void round_to_residues_async(u64* out, const void* slots, double scale, double bound,
                                       const BasisView& b, u64* flags, Stream stream) = 0;

  /// slots (bit-reversed, ready for the forward stages) = (c_k, c_{k+n}) with c the centered
  /// values of a's coefficients from its first two rows (one when b.limbs is 1) divided by
  /// scale (ckks::two_prime_coefficient); with check, sets kWrapped in flags[0] for a value of at
  /// least a quarter of q0 q1. q0_inv: q0^-1 mod q1.
  virtual void two_prime_slots_async(void* slots, const u64* a, u64 q0_inv, double scale,
                                     bool check, const BasisView& b, u64* flags, Stream stream) = 0;

  /// slots (bit-reversed) = (c_k, c_{k+n}) from 2n decoded coefficients (doubles).
  virtual void coefficient_slots_async(void* slots, const double* coeffs, std::size_t n,
                                       Stream stream) = 0;

  /// out[i] for i < count from slots[i]: the real part (type f64) or the complex value (c128).
  virtual void store_slots_async(void* out, const void* slots, ckks::SlotType type,
                                 std::size_t count, Stream stream) = 0;
};

}  // namespace ember::backend
