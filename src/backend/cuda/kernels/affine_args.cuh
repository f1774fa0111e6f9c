// The polynomials of a division's affine map out[k] = (a[k] - c[k]) * mul (+ addend[k]), passed
// by value to the kernels that apply it.
#pragma once

#include "ember/backend/backend.h"

namespace ember::cuda::kernels {

struct AffineArgs {
  u64* out[backend::Backend::kMaxAffineTerms];
  const u64* a[backend::Backend::kMaxAffineTerms];
  const u64* addend[backend::Backend::kMaxAffineTerms];
  u32 count;
};

}  // namespace ember::cuda::kernels
