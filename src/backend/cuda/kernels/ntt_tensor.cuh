// The chunk phase of the forward NTT of two degree-1 ciphertexts fused with their tensor product:
// four warps finish the same 256-value chunk of one row of each operand polynomial, and the block
// multiplies the four chunks out, so the transformed operands are never written out and read back.
#pragma once

#include "kernels/ntt.cuh"

namespace ember::cuda::kernels {

/// Threads of the fused kernel: one warp per operand polynomial (a0, a1, b0, b1).
inline constexpr int kTensorThreads = 128;

/// The warp chunks' store into the block's transformed chunks: position p of warp w's chunk at
/// chunks[w][warp_swizzle(p)] (the lanes' eight adjacent positions here, the block's adjacent
/// positions in the product below: both patterns conflict-free, see warp_swizzle).
struct ChunkTileStore {
  u64* tile;  // this warp's 256 words
  u32 chunk_offset;
  __device__ __forceinline__ void operator()(u32, u32 offset, const u64 (&x)[8]) const {
    const u32 p = offset - chunk_offset;
#pragma unroll
    for (int i = 0; i < 8; ++i) tile[warp_swizzle(p + i)] = x[i];
  }
};

/// Block (row r of the basis, chunk c of 256 positions): warp k transforms chunk c of row r of
/// polynomial k (a0, a1, b0, b1 back to back in a.data after the column phase, a.limbs rows
/// each), then d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1 at those positions (rows of a.limbs
/// each). The words equal tensor_kernel's on the fully transformed operands.
template <NttPaths kPaths>
__global__ void __launch_bounds__(kTensorThreads, 6)
    ntt_tensor_kernel(NttBatch a, u64* d0, u64* d1, u64* d2) {
  __shared__ alignas(16) u64 values[4][256];
  __shared__ u64 chunks[4][256];
  const RowChunk rc = row_chunk(blockIdx.x, a.n);
  const u32 r = rc.row, chunk = rc.chunk, k = threadIdx.x >> 5;
  const u32 id = a.ids[r];
  with_path<true, kPaths>(a, id, [&](const auto& path) {
    using P = std::decay_t<decltype(path)>;
    warp_chunk_with<true>(a, k * a.limbs + r, chunk, id, a.finishes<P>(true), path,
                          ChunkTileStore{chunks[k], chunk * 256u}, values[k]);
  });
  __syncthreads();
  const Modulus& m = a.moduli[id];
  const std::size_t at = static_cast<std::size_t>(r) * a.n + chunk * 256u;
#pragma unroll
  for (int i = 0; i < 256 / kTensorThreads; ++i) {
    const u32 p = threadIdx.x + i * kTensorThreads, s = warp_swizzle(p);
    const u64 x0 = chunks[0][s], x1 = chunks[1][s], y0 = chunks[2][s], y1 = chunks[3][s];
    d0[at + p] = mul_mod(x0, y0, m);
    d1[at + p] = mul_add_mul_mod(x0, y1, x1, y0, m);
    d2[at + p] = mul_mod(x1, y1, m);
  }
}

}  // namespace ember::cuda::kernels
