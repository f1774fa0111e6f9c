// The polynomials of a division's affine map out[k] = (a[k] - c[k]) * mul (+ addend[k]), passed
// by value to the kernels that apply it.
#pragma once

#include "ember/backend/backend.h"
#include "ember/core/modarith.h"

namespace ember::cuda::kernels {

struct AffineArgs {
  u64* out[backend::Backend::kMaxAffineTerms];
  const u64* a[backend::Backend::kMaxAffineTerms];
  const u64* addend[backend::Backend::kMaxAffineTerms];
  u32 count;
};

/// One word of the map before its addend: (a - c) * mul mod q, mul with its Shoup companion.
__device__ __forceinline__ u64 affine_word(u64 a, u64 c, u64 mul, u64 mul_companion, u64 q) {
  return mul_shoup(sub_mod(a, c, q), mul, mul_companion, q);
}

}  // namespace ember::cuda::kernels
