// The chunk phase of ModUp's forward NTT fused with the key inner product: each warp finishes
// every digit's transform of one 256-value chunk of one row of Q_l u P and accumulates it times
// the key in registers, so the transformed digits are never written out and read back.
#pragma once

#include "ember/backend/backend.h"
#include "ember/ring/rows.h"
#include "kernels/ntt.cuh"

namespace ember::cuda::kernels {

/// The per-warp 128-bit sums of the fused key product, in shared memory (registers would leave
/// too few warps per SM to hide the digits' loads): entry (poly, i, lane) is the sum of output
/// i of the lane's eight, poly 0 or 1, stored so that the warp's accesses are conflict-free.
struct KeyProductSums {
  ulonglong2* s;  // [2][8][32] (hi, lo) pairs of this warp
  u32 lane;
  __device__ __forceinline__ ulonglong2& at(int poly, int i) const {
    return s[(poly * 8 + i) * 32 + lane];
  }
};

/// The warp chunks' store for the fused key product: the lane's eight outputs (adjacent
/// positions) times digit j's two key rows, added to the sums.
struct KeyProductAccumulate {
  const u64* key0;  // digit j's key rows for the chunk's row (first and second polynomial)
  const u64* key1;
  KeyProductSums sums;
  __device__ __forceinline__ static void add(ulonglong2& w, u64 x, u64 k) {
    ring::rows::Wide acc{w.x, w.y};
    acc.add_product(x, k);
    w = make_ulonglong2(acc.hi, acc.lo);
  }
  __device__ __forceinline__ void operator()(u32, u32 at, const u64 (&x)[8]) const {
    const ulonglong2* k0 = reinterpret_cast<const ulonglong2*>(key0 + at);
    const ulonglong2* k1 = reinterpret_cast<const ulonglong2*>(key1 + at);
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const ulonglong2 a = __ldg(k0 + v), b = __ldg(k1 + v);
      add(sums.at(0, 2 * v), x[2 * v], a.x);
      add(sums.at(0, 2 * v + 1), x[2 * v + 1], a.y);
      add(sums.at(1, 2 * v), x[2 * v], b.x);
      add(sums.at(1, 2 * v + 1), x[2 * v + 1], b.y);
    }
  }
};

/// Asks L2 for the line holding p (the next digit's words while this one is computed).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/// One warp per (row r of Q_l u P, chunk of 256 positions): for every digit, the digit's own row
/// (d, already in eval form) or the chunk phase of its converted row r (the column phase has run
/// on kp.ext), times the key; the sums reduced once and stored to q0 / q1 (Q rows) or p0 / p1
/// (P rows). The values equal key_inner_product_kernel's on the fully transformed rows.
/// Relinearization-type products only (no automorphism, no addend).
/// Blocks per SM the fused kernel is compiled for (registers: 65536 / (64 x blocks)).
#ifndef EMBER_KEY_PRODUCT_BLOCKS
#define EMBER_KEY_PRODUCT_BLOCKS 8
#endif
inline constexpr int kKeyProductBlocks = EMBER_KEY_PRODUCT_BLOCKS;

template <NttPaths kPaths>
__global__ void __launch_bounds__(kWarpChunkThreads, kKeyProductBlocks)
    ntt_key_product_kernel(NttBatch a, const __grid_constant__ backend::KeyProductView kp,
                           const u32* row_ids, u64* q0, u64* q1, u64* p0, u64* p1) {
  __shared__ alignas(16) u64 values[kWarpChunkThreads / 32][256];
  __shared__ ulonglong2 sum_words[kWarpChunkThreads / 32][2 * 8 * 32];
  const u32 warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const u32 n1 = a.n >> 8;
  if (warp >= kp.rows * n1) return;
  const u32 r = warp / n1, chunk = warp % n1, lane = threadIdx.x & 31;
  const u32 id = row_ids[r];
  const std::size_t n = a.n;
  const u32 at = chunk * 256u + lane * 8u;  // the lane's eight adjacent outputs
  const u32 key_row = r < kp.q_rows ? r : kp.key_q_rows + (r - kp.q_rows);
  const Modulus& m = a.moduli[id];
  const KeyProductSums sums{sum_words[threadIdx.x >> 5], lane};
#pragma unroll
  for (int i = 0; i < 8; ++i) sums.at(0, i) = sums.at(1, i) = make_ulonglong2(0, 0);
  // Where digit j's input chunk for row r lies (its own row of d, or its converted row).
  const auto source = [&](u32 j) -> const u64* {
    const u32 start = j * kp.alpha;
    const u32 end = start + kp.alpha < kp.q_rows ? start + kp.alpha : kp.q_rows;
    if (r >= start && r < end) return kp.d + r * n + chunk * 256u;
    const u32 row = j * (kp.rows - kp.alpha) + (r < start ? r : r - (end - start));
    return kp.ext + row * n + chunk * 256u;
  };
  with_path<true, kPaths>(a, id, [&](const auto& path) {
    for (u32 j = 0; j < kp.digits; ++j) {
      const u64* key0 = kp.key + (static_cast<std::size_t>(j) * 2 * kp.key_rows + key_row) * n;
      const u64* key1 = key0 + static_cast<std::size_t>(kp.key_rows) * n;
      prefetch_l2(key0 + at);
      prefetch_l2(key1 + at);
      if (j + 1 < kp.digits) prefetch_l2(source(j + 1) + lane * 8u);
      const KeyProductAccumulate acc{key0, key1, sums};
      const u32 start = j * kp.alpha;
      const u32 end = start + kp.alpha < kp.q_rows ? start + kp.alpha : kp.q_rows;
      if (r >= start && r < end) {
        wait_for_previous_kernels();
        const ulonglong2* d = reinterpret_cast<const ulonglong2*>(kp.d + r * n + at);
        u64 x[8];
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const ulonglong2 w = d[v];
          x[2 * v] = w.x;
          x[2 * v + 1] = w.y;
        }
        acc(r, at, x);
      } else {
        const u32 row = j * (kp.rows - kp.alpha) + (r < start ? r : r - (end - start));
        warp_chunk_with<true>(a, row, chunk, id, true, path, acc, values[threadIdx.x >> 5]);
      }
      if ((j & 31) == 31) {  // 32 products of words below 2^61 fit 128 bits
#pragma unroll
        for (int i = 0; i < 8; ++i)
          for (int p = 0; p < 2; ++p) {
            const ulonglong2 w = sums.at(p, i);
            sums.at(p, i) = make_ulonglong2(0, ring::rows::Wide{w.x, w.y}.reduce(m));
          }
      }
    }
  });
  u64* o0 = r < kp.q_rows ? q0 + r * n : p0 + (r - kp.q_rows) * n;
  u64* o1 = r < kp.q_rows ? q1 + r * n : p1 + (r - kp.q_rows) * n;
  ulonglong2* d0 = reinterpret_cast<ulonglong2*>(o0 + at);
  ulonglong2* d1 = reinterpret_cast<ulonglong2*>(o1 + at);
  const auto reduced = [&](int p, int i) {
    const ulonglong2 w = sums.at(p, i);
    return ring::rows::Wide{w.x, w.y}.reduce(m);
  };
#pragma unroll
  for (int v = 0; v < 4; ++v) {
    d0[v] = make_ulonglong2(reduced(0, 2 * v), reduced(0, 2 * v + 1));
    d1[v] = make_ulonglong2(reduced(1, 2 * v), reduced(1, 2 * v + 1));
  }
}

}  // namespace ember::cuda::kernels
