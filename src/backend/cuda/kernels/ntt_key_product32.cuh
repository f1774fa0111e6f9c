// The chunk phase of ModUp's forward NTT fused with the key inner product on 32-bit words: a
// block finishes every digit's transform of its chunks of one row of Q_l u P in shared memory and
// accumulates them times the key, so the transformed digits are never written out and read back.
#pragma once

#include "ember/backend/backend.h"
#include "ember/backend/rows.h"
#include "kernels/ntt.cuh"

namespace ember::cuda::kernels {

/// Chunk memory of the fused 32-bit key product: the first round reads the chunk of a converted
/// row (its column phase done), the last round leaves canonical words in shared memory, where
/// the accumulation reads them (in place or through an automorphism).
template <class P>
struct KeyProductChunkMem32 : ChunkRounds<P> {
  __device__ __forceinline__ void last_store(u32 base, u32 off, typename P::V v) const {
    this->s[chunk_swizzle(base + off)] = this->path.template finish<true>(v);
  }
};

/// Adds x[i] times the eight key words at `key` (the lane's adjacent outputs) to sums[i].
__device__ __forceinline__ void add_key_products32(u64 (&sums)[8], const u32 (&x)[8],
                                                   const u32* key) {
  const uint4* k = reinterpret_cast<const uint4*>(key);
  const uint4 a = __ldg(k), b = __ldg(k + 1);
  sums[0] += u64{x[0]} * a.x;
  sums[1] += u64{x[1]} * a.y;
  sums[2] += u64{x[2]} * a.z;
  sums[3] += u64{x[3]} * a.w;
  sums[4] += u64{x[4]} * b.x;
  sums[5] += u64{x[5]} * b.y;
  sums[6] += u64{x[6]} * b.z;
  sums[7] += u64{x[7]} * b.w;
}

/// Block (chunks blockIdx.x * subs .. + subs - 1 of 2^kLogS positions, row r = blockIdx.y of
/// Q_l u P), 2^(kLogS - 3) lanes per chunk: for every digit, the digit's own row (kp.d, already
/// in eval form) or the chunk phase of its converted row r (the column phase has run on kp.ext),
/// read through the automorphism kp.galois (kPermuted; an automorphism maps every aligned chunk
/// onto one chunk of the source, permuted within it), times the key; on the Q rows also kp.add
/// times kp.add_scale. A lane sums eight adjacent outputs in 64 bits (products of canonical
/// words below 2^60: folded every 16 terms) and reduces them once, so the words equal
/// key_inner_product_kernel's on the fully transformed rows.
template <int kLogS, bool kPermuted>
__global__ void __launch_bounds__(256, 3)
    ntt_key_product32_kernel(NttBatchT<u32> a, u32 subs,
                             const __grid_constant__ backend::KeyProductView32 kp,
                             const u32* row_ids, u32* q0, u32* q1, u32* p0, u32* p1) {
  using P = IntegerPath<false, u32>;
  constexpr u32 kS = 1u << kLogS, kPerSub = kS / 8;
  extern __shared__ u64 sm[];
  const u32 r = blockIdx.y, id = row_ids[r];
  const u32 h = threadIdx.x / kPerSub, tau = threadIdx.x % kPerSub;
  const u32 chunk = blockIdx.x * subs + h;
  const std::size_t n = a.n;
  const u32 log_n = static_cast<u32>(__ffs(a.n) - 1);
  const ModulusT<u32> m = a.moduli[id];
  const P path{m.value, a.n_inv[id], a.n_inv_shoup[id], 0};
  u32* values = reinterpret_cast<u32*>(sm) + h * kS;
  auto* twl = reinterpret_cast<P::Tw*>(reinterpret_cast<u32*>(sm) + subs * kS) + h * kS;
  // The lane's outputs out_at .. out_at + 7 read positions local[i] of source chunk `source`.
  const u32 out_at = chunk * kS + tau * 8;
  u32 source = chunk, local[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) local[i] = tau * 8 + i;
  if constexpr (kPermuted) {
    source = backend::rows::automorphism_eval_source(chunk * kS, kp.galois, log_n) >> kLogS;
#pragma unroll
    for (int i = 0; i < 8; ++i)
      local[i] = backend::rows::automorphism_eval_source(out_at + i, kp.galois, log_n) & (kS - 1);
  }
  const std::size_t source_at = std::size_t{source} * kS;
  load_local_twiddles(twl, kLogS, (a.n >> kLogS) + source, a.tw + std::size_t{id} * n,
                      a.tw_shoup + std::size_t{id} * n, tau, kPerSub, path);
  wait_for_previous_kernels();  // the twiddle gather above overlaps the previous kernel
  const u32 key_row = r < kp.q_rows ? r : kp.key_q_rows + (r - kp.q_rows);
  u64 sums0[8] = {}, sums1[8] = {};
  u32 terms = 0;
  const auto fold_after_term = [&] {
    if (++terms < 16) return;  // 16 products below 2^60 fit 64 bits
    terms = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      sums0[i] = backend::rows::Wide32{sums0[i]}.reduce(m);
      sums1[i] = backend::rows::Wide32{sums1[i]}.reduce(m);
    }
  };
  for (u32 j = 0; j < kp.digits; ++j) {
    bool own;
    const u32 row = backend::rows::digit_row(kp, j, r, own);
    u32 x[8];
    if (own) {  // block-uniform: every chunk of the block is on row r
      const u32* d = kp.d + row * n + source_at;
#pragma unroll
      for (int i = 0; i < 8; ++i) x[i] = d[local[i]];
    } else {
      KeyProductChunkMem32<P> mem{{kp.ext + row * n + source_at, values, path}};
      ntt_rounds<true, kLogS, 0>(tau, LocalTwiddles<P::Tw>{twl}, mem);
      __syncthreads();  // the last round's stores are the other lanes' reads
#pragma unroll
      for (int i = 0; i < 8; ++i) x[i] = values[chunk_swizzle(local[i])];
    }
    const u32* key0 = kp.key + (std::size_t{j} * 2 * kp.key_rows + key_row) * n + out_at;
    add_key_products32(sums0, x, key0);
    add_key_products32(sums1, x, key0 + std::size_t{kp.key_rows} * n);
    fold_after_term();
  }
  if (kp.add && r < kp.q_rows) {
    const u32* add = kp.add + r * n + source_at;
    const u64 scale = kp.add_scale[r];
#pragma unroll
    for (int i = 0; i < 8; ++i) sums0[i] += add[local[i]] * scale;
    fold_after_term();
  }
  u32* o0 = (r < kp.q_rows ? q0 + r * n : p0 + (r - kp.q_rows) * n) + out_at;
  u32* o1 = (r < kp.q_rows ? q1 + r * n : p1 + (r - kp.q_rows) * n) + out_at;
  u32 w0[8], w1[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    w0[i] = backend::rows::Wide32{sums0[i]}.reduce(m);
    w1[i] = backend::rows::Wide32{sums1[i]}.reduce(m);
  }
  reinterpret_cast<uint4*>(o0)[0] = make_uint4(w0[0], w0[1], w0[2], w0[3]);
  reinterpret_cast<uint4*>(o0)[1] = make_uint4(w0[4], w0[5], w0[6], w0[7]);
  reinterpret_cast<uint4*>(o1)[0] = make_uint4(w1[0], w1[1], w1[2], w1[3]);
  reinterpret_cast<uint4*>(o1)[1] = make_uint4(w1[4], w1[5], w1[6], w1[7]);
}

}  // namespace ember::cuda::kernels
