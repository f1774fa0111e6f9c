// The chunk phase of a division's forward NTT on 32-bit words with its affine map as the last
// store: out[k] = (a[k] - c[k]) mul (+ addend[k]) is written where the transform of c would be.
#pragma once

#include "kernels/affine_args.cuh"
#include "kernels/ntt.cuh"

namespace ember::cuda::kernels {

/// Chunk memory whose last store applies the division's affine map to the transformed word
/// instead of writing it: the chunk's row of out, a and the addend start at the chunk.
template <class P>
struct AffineChunkMem32 : ChunkRounds<P> {
  u32* out;
  const u32* a;
  const u32* addend;         // nullptr: none
  u32 factor, factor_shoup;  // the limb's multiplier and its Shoup companion
  __device__ __forceinline__ void last_store(u32 base, u32 off, typename P::V v) const {
    const u32 p = base + off, q = this->path.q;
    const u32 w = mul_shoup<u32>(sub_mod<u32>(a[p], this->path.template finish<true>(v), q), factor,
                                 factor_shoup, q);
    out[p] = addend ? add_mod<u32>(w, addend[p], q) : w;
  }
};

/// ntt_chunk_kernel's forward chunk phase on 32-bit words (2^kLogS values a chunk, subs chunks
/// a block) over the rows of args.count polynomials of a.limbs limbs at a.data, each chunk's
/// values stored through AffineChunkMem32 (limb j's multiplier mul[j], Shoup companion
/// mul_shoup[j]).
template <int kLogS>
__global__ void ntt_chunk_affine32_kernel(NttBatchT<u32> a, u32 subs,
                                          const __grid_constant__ AffineArgsT<u32> args,
                                          const u32* mul, const u32* mul_shoup) {
  using P = IntegerPath<false, u32>;
  extern __shared__ u64 sm[];
  const u32 row = blockIdx.y, k = row / a.limbs, j = row_limb(row, a.limbs);
  const u32 id = a.ids[j];
  constexpr u32 kPerSub = 1u << (kLogS - 3);
  const u32 h = threadIdx.x / kPerSub, tau = threadIdx.x % kPerSub;
  const u32 chunk = blockIdx.x * subs + h;
  const std::size_t n = a.n, at = j * n + (std::size_t{chunk} << kLogS);
  const P path{a.moduli[id].value, a.n_inv[id], a.n_inv_shoup[id], 0};
  const AffineChunkMem32<P> mem{{a.data + row * n + (std::size_t{chunk} << kLogS),
                                 reinterpret_cast<u32*>(sm) + (h << kLogS), path},
                                args.out[k] + at,
                                args.a[k] + at,
                                args.addend[k] ? args.addend[k] + at : nullptr,
                                mul[j],
                                mul_shoup[j]};
  auto* twl = reinterpret_cast<P::Tw*>(reinterpret_cast<u32*>(sm) + (subs << kLogS)) + (h << kLogS);
  load_local_twiddles(twl, kLogS, (a.n >> kLogS) + chunk, a.tw + std::size_t{id} * n,
                      a.tw_shoup + std::size_t{id} * n, tau, kPerSub, path);
  wait_for_previous_kernels();  // the twiddle gather above overlaps the previous kernel
  ntt_rounds<true, kLogS, 0>(tau, LocalTwiddles<P::Tw>{twl}, mem);
}

}  // namespace ember::cuda::kernels
