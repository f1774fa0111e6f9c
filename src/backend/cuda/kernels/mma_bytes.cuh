// The integer tensor-core product of byte matrices (mma.sync m16n8k32, u8 x u8 -> s32).
#pragma once

#include "ember/core/config.h"

namespace ember::cuda::kernels {

/// d += a b for a 16x32 row-major and a 32x8 column-major matrix of unsigned bytes (tensor
/// cores, 32-bit accumulators): the fragments of mma.sync.m16n8k32 (PTX ISA, "Matrix Fragments
/// for mma.m16n8k32"). Lane (g, t) = (lane / 4, lane % 4) holds A's rows g and g + 8 at columns
/// 4t.. and 16 + 4t.. (a[0]: row g, a[1]: row g + 8, a[2]: row g at 16 + 4t, a[3]: row g + 8 at
/// 16 + 4t), B's column g at rows 4t.. and 16 + 4t.., D's rows g and g + 8 at columns 2t and
/// 2t + 1 (d[0], d[1]: row g; d[2], d[3]: row g + 8).
__device__ __forceinline__ void mma_bytes_16x8x32(u32 (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace ember::cuda::kernels
