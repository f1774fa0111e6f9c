// BFV/BGV plaintext arithmetic per element (modulo the plain modulus t): loading integer values
// of any width with the (-t, t) range check, centering, the centered lift to another prime, and
// the message of a decryption. __host__ __device__: the CPU backend and the CUDA kernels call
// the same functions, so both backends agree bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/core/config.h"
#include "ember/core/modarith.h"

namespace ember::backend::integer {

/// The element type of integer values read from memory (a DLPack dtype).
enum class IntType : std::uint8_t { i8, i16, i32, i64, u8, u16, u32, u64 };

/// Bytes of one value of `type`.
inline std::size_t int_type_bytes(IntType type) {
  switch (type) {
    case IntType::i8:
    case IntType::u8:
      return 1;
    case IntType::i16:
    case IntType::u16:
      return 2;
    case IntType::i32:
    case IntType::u32:
      return 4;
    default:
      return 8;
  }
}

/// Value i of `values` reduced modulo t into [0, t); `in_range` is false (and the result 0) for
/// a value outside (-t, t), the range the host encoder accepts.
EMBER_HD u64 load_reduced(const void* values, IntType type, std::size_t i, u64 t, bool& in_range) {
  std::int64_t s = 0;
  u64 u = 0;
  bool is_signed = true;
  switch (type) {
    case IntType::i8:
      s = static_cast<const std::int8_t*>(values)[i];
      break;
    case IntType::i16:
      s = static_cast<const std::int16_t*>(values)[i];
      break;
    case IntType::i32:
      s = static_cast<const std::int32_t*>(values)[i];
      break;
    case IntType::i64:
      s = static_cast<const std::int64_t*>(values)[i];
      break;
    case IntType::u8:
      u = static_cast<const std::uint8_t*>(values)[i], is_signed = false;
      break;
    case IntType::u16:
      u = static_cast<const std::uint16_t*>(values)[i], is_signed = false;
      break;
    case IntType::u32:
      u = static_cast<const std::uint32_t*>(values)[i], is_signed = false;
      break;
    case IntType::u64:
      u = static_cast<const u64*>(values)[i], is_signed = false;
      break;
  }
  if (is_signed) {
    // |s| < t < 2^60, so the magnitude fits a u64 without the INT64_MIN overflow.
    const u64 magnitude = s < 0 ? u64(0) - static_cast<u64>(s) : static_cast<u64>(s);
    in_range = magnitude < t;
    if (!in_range) return 0;
    return s < 0 ? neg_mod(magnitude, t) : magnitude;
  }
  in_range = u < t;
  return in_range ? u : 0;
}

/// m in [0, t) as the centered integer in (-t/2, t/2] (the decryption's convention).
EMBER_HD std::int64_t centered(u64 m, u64 t) {
  return m > t / 2 ? static_cast<std::int64_t>(m) - static_cast<std::int64_t>(t)
                   : static_cast<std::int64_t>(m);
}

/// The centered value of m in [0, t) modulo q > t: the residue of the integer polynomial whose
/// coefficients are the centered plaintext (BGV's lift; RnsPoly::from_signed of centered()).
EMBER_HD u64 centered_residue(u64 m, u64 t, u64 q) { return m > t / 2 ? q - (t - m) : m; }

/// The message modulo t of one coefficient v of a decryption: with q = 0, v in [0, t] (BFV's
/// rounding, t meaning 0); else v in [0, q) read centered modulo q (BGV's [v]_q0), reduced
/// modulo t and multiplied by factor_inv (the inverse of the ciphertext's factor).
EMBER_HD u64 message_of(u64 v, u64 q, const Modulus& t, u64 factor_inv) {
  const u64 tv = t.value;
  u64 x;
  if (q == 0)
    x = v == tv ? 0 : v;
  else
    x = v > q / 2 ? neg_mod((q - v) % tv, tv) : v % tv;
  return factor_inv == 1 ? x : mul_mod(x, factor_inv, t);
}

}  // namespace ember::backend::integer
