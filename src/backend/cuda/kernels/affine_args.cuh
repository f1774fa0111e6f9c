// The polynomials of a division's affine map out[k] = (a[k] - c[k]) * mul (+ addend[k]), passed
// by value to the kernels that apply it.
#pragma once

#include "ember/backend/backend.h"
#include "ember/core/modarith.h"

namespace ember::cuda::kernels {

template <class W>
struct AffineArgsT {
  W* out[backend::Backend::kMaxAffineTerms];
  const W* a[backend::Backend::kMaxAffineTerms];
  const W* addend[backend::Backend::kMaxAffineTerms];
  u32 count;
};
using AffineArgs = AffineArgsT<u64>;

/// One word of the map before its addend: (a - c) * mul mod q, mul with its Shoup companion.
__device__ __forceinline__ u64 affine_word(u64 a, u64 c, u64 mul, u64 mul_companion, u64 q) {
  return mul_shoup(sub_mod(a, c, q), mul, mul_companion, q);
}

/// Row `row` of a batch with `limbs` limbs per polynomial (polynomial k = row / limbs, its limb
/// j = row % limbs) from word `offset` of the limb on: where the map reads a and the addend
/// (nullptr: none) and writes out, and limb j's multiplier and prime. The stores that apply the
/// map as an NTT's last step (AffineStore, the cluster kernel's) start from it.
struct AffineRow {
  u64* out;
  const u64* a;
  const u64* addend;
  u64 mul, mul_companion, q;
  /// Writes the map of the transformed word c at position p of the row.
  __device__ __forceinline__ void operator()(u32 p, u64 c) const {
    const u64 v = affine_word(a[p], c, mul, mul_companion, q);
    out[p] = addend ? add_mod(v, addend[p], q) : v;
  }
};

__device__ __forceinline__ AffineRow affine_row(const AffineArgs& args, const u64* mul,
                                                const u64* mul_companion, const Modulus* moduli,
                                                const u32* ids, u32 n, u32 limbs, u32 row,
                                                std::size_t offset) {
  const u32 k = row / limbs, j = row % limbs;
  const std::size_t at = static_cast<std::size_t>(j) * n + offset;
  return AffineRow{
      args.out[k] + at, args.a[k] + at,   args.addend[k] ? args.addend[k] + at : nullptr,
      mul[j],           mul_companion[j], moduli[ids[j]].value};
}

/// The fast conversion from one prime p (backend::OnePrimeMaps) as
/// rows::convert_row computes it, less the word `at` of `sub` (an NTT's NttBatch::lift_sub, at
/// the kernel's base offset) when there is one. The row's constants are loaded once per thread,
/// before the kernel waits for the previous one (they are tables).
struct ConvertLift {
  Modulus m;
  u64 p, in_mul, in_mul_shoup, in_add, out_mul, out_mul_shoup, out_add;
  bool scale;
  const u64* sub;
  __device__ __forceinline__ u64 operator()(u64 x, std::size_t at) const {
    const u64 y = add_mod(mul_shoup(x, in_mul, in_mul_shoup, p), in_add, p);
    const u64 v = barrett_reduce_64(y, m);
    const u64 w =
        add_mod(scale ? mul_shoup(v, out_mul, out_mul_shoup, m.value) : v, out_add, m.value);
    return sub ? sub_mod(w, sub[at], m.value) : w;
  }
  /// The map to limb j (prime m) of the conversion's target basis.
  static __device__ __forceinline__ ConvertLift of(const backend::OnePrimeMaps& c, u32 j,
                                                   const Modulus& m, const u64* sub) {
    ConvertLift f;
    f.m = m;
    f.p = c.source->value;
    f.in_mul = *c.in_mul;
    f.in_mul_shoup = *c.in_mul_shoup;
    f.in_add = c.in_add ? *c.in_add : 0;
    f.scale = c.out_mul != nullptr;
    f.out_mul = f.scale ? c.out_mul[j] : 0;
    f.out_mul_shoup = f.scale ? c.out_mul_shoup[j] : 0;
    f.out_add = c.out_add ? c.out_add[j] : 0;
    f.sub = sub;
    return f;
  }
};

}  // namespace ember::cuda::kernels
