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

/// One word of the map: (a - c) * mul (+ addend, when given) mod q, mul with its Shoup companion.
__device__ __forceinline__ u64 affine_word(u64 a, u64 c, u64 mul, u64 mul_companion, u64 q,
                                           const u64* addend) {
  const u64 v = mul_shoup(sub_mod(a, c, q), mul, mul_companion, q);
  return addend ? add_mod(v, *addend, q) : v;
}

}  // namespace ember::cuda::kernels
