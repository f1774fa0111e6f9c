// The big-integer kernels: one thread per coefficient running big_int_rows.h, the CPU's code
// (staged through shared memory where it reads its own words), and the tensor-core CRTs.
#pragma once

#include <cstddef>

#include "ember/backend/big_int_rows.h"
#include "kernels/dependent_launch.cuh"
#include "kernels/mma_bytes.cuh"
#include "kernels/tile_stager.cuh"

namespace ember::cuda::kernels {

using backend::BigShape;

/// The coefficient this thread handles, or n when it has none.
__device__ __forceinline__ std::size_t big_coefficient() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// Coefficients (and threads) of a block of the staged kernels below: each block copies its
/// coefficients' words into shared memory coalesced, a thread runs the CPU's row code on one
/// coefficient there, and the block copies the results out coalesced (a thread reading its own
/// coefficient's words from global memory touched a different sector in every lane).
inline constexpr unsigned kBigStagedCoefficients = 32;

/// Shared bytes of a staged kernel whose coefficients take `words` words in all (inputs and
/// output).
constexpr std::size_t big_staged_smem(std::size_t words) {
  return kBigStagedCoefficients * words * sizeof(u64);
}

/// Copies `total` words between global and shared memory, the block's threads side by side.
__device__ __forceinline__ void big_copy(u64* to, const u64* from, std::size_t total) {
  for (std::size_t k = threadIdx.x; k < total; k += blockDim.x) to[k] = from[k];
}

/// The block's first coefficient and how many it takes (of n).
__device__ __forceinline__ std::size_t big_staged_count(std::size_t n, std::size_t& first) {
  first = static_cast<std::size_t>(blockIdx.x) * kBigStagedCoefficients;
  return n - first < kBigStagedCoefficients ? n - first : kBigStagedCoefficients;
}

__global__ void __launch_bounds__(kBigStagedCoefficients)
    big_add_kernel(u64* out, const u64* a, const u64* b, BigShape s, bool subtract) {
  extern __shared__ u64 staged[];  // a's words, then b's; the sum replaces a's
  std::size_t first = 0;
  const std::size_t count = big_staged_count(s.n, first), total = count * s.words;
  u64* sa = staged;
  u64* sb = staged + kBigStagedCoefficients * s.words;
  wait_for_previous_kernels();
  big_copy(sa, a + first * s.words, total);
  big_copy(sb, b + first * s.words, total);
  __syncthreads();
  if (threadIdx.x < count) {
    const std::size_t o = threadIdx.x * s.words;
    backend::big::add(sa + o, sa + o, sb + o, s, subtract);  // word by word: in place is safe
  }
  __syncthreads();
  big_copy(out + first * s.words, sa, total);
}

__global__ void __launch_bounds__(kBigStagedCoefficients)
    big_negate_kernel(u64* out, const u64* a, BigShape s) {
  extern __shared__ u64 staged[];
  std::size_t first = 0;
  const std::size_t count = big_staged_count(s.n, first), total = count * s.words;
  wait_for_previous_kernels();
  big_copy(staged, a + first * s.words, total);
  __syncthreads();
  if (threadIdx.x < count) {
    u64* x = staged + threadIdx.x * s.words;
    backend::big::negate(x, x, s);
  }
  __syncthreads();
  big_copy(out + first * s.words, staged, total);
}

__global__ void __launch_bounds__(kBigStagedCoefficients)
    big_shift_kernel(u64* out, BigShape o, const u64* a, BigShape i, int left, int right) {
  extern __shared__ u64 staged[];  // a's words, then the output's
  std::size_t first = 0;
  const std::size_t count = big_staged_count(o.n, first);
  u64* sa = staged;
  u64* so = staged + kBigStagedCoefficients * i.words;
  wait_for_previous_kernels();
  big_copy(sa, a + first * i.words, count * i.words);
  __syncthreads();
  if (threadIdx.x < count)
    backend::big::shift(so + threadIdx.x * o.words, o, sa + threadIdx.x * i.words, i, left, right);
  __syncthreads();
  big_copy(out + first * o.words, so, count * o.words);
}

__global__ void big_automorphism_kernel(u64* out, const u64* a, BigShape s, u64 galois_inverse) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c < s.n) backend::big::automorphism(out + c * s.words, a, s, c, galois_inverse);
}

__global__ void big_encode_slots_kernel(u64* out, BigShape o, const backend::ckks::Cx* w, int log_n,
                                        double scale, double bound, unsigned long long* flags) {
  const std::size_t k = big_coefficient();
  wait_for_previous_kernels();
  if (k >= o.n) return;
  double x = 0;
  if (!backend::big::encode_coefficient(out + k * o.words, o, w, o.n / 2, log_n, k, scale, bound,
                                        x)) {
    atomicOr(flags, static_cast<unsigned long long>(backend::ckks::kTooLarge));
    atomicExch(flags + 1, static_cast<unsigned long long>(backend::ckks::double_bits(x)));
  }
}

__global__ void big_to_doubles_kernel(double* out, const u64* a, BigShape s, int scale_bits) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c < s.n) out[c] = backend::big::to_double(a + c * s.words, s, scale_bits);
}

/// Integer tensor-core CRT and inverse CRT (backend::BigRnsView::byte_planes,
/// BigCrtView::byte_matrix): one warp takes 16 coefficients, the rows of its mma A fragments,
/// and the block's warps share each tile of the byte matrices, staged in shared memory
/// (TileStager). Both are exact integer sums, so their words equal the CPU's (big::rns_residues,
/// big::crt_combine) for every input.
inline constexpr unsigned kBigBytesThreads = 128;
inline constexpr int kBigBytesStages = 3;

/// Shared bytes of a byte-matrix kernel's staged tiles (pairs of blocks, planes) and, for the
/// inverse CRT, of its staged output words.
constexpr std::size_t big_bytes_smem(std::size_t pairs, std::size_t planes, std::size_t words) {
  return kBigBytesStages * planes * pairs * 512 + kBigBytesThreads / 32 * 16 * words * 8;
}

/// Calls f(kb, slot, r, i) for each word of lane t's mma A fragments over kBlocks blocks: word
/// `slot` of block kb holds row g + 8 r's 32-bit input i = 8 kb + 4 h + t (slot = 2 h + r).
template <int kBlocks, class F>
__device__ __forceinline__ void for_fragment_words(u32 t, F f) {
#pragma unroll
  for (int kb = 0; kb < kBlocks; ++kb)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int r = 0; r < 2; ++r) f(kb, 2 * h + r, r, static_cast<std::size_t>(8 * kb + 4 * h + t));
}

/// The first of the 16 coefficients this warp takes.
__device__ __forceinline__ std::size_t big_warp_first() {
  return (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32 * 16;
}

/// The CRT of coefficients c0 .. c0 + 15: their 32-bit limbs are the A fragments as they lie in
/// memory (limb 8 kb + t of rows g and g + 8, then limb 8 kb + 4 + t: bytes 32 kb + 4t .. of the
/// little-endian input), times the four byte planes of 2^(8k) mod p_i, eight primes a tile
/// (ring::fragment_tiles_of). Lane (g, t) then joins the planes of its rows g, g + 8 and primes
/// 2t, 2t + 1 of the tile (each sum < 2^26: at most 640 byte products), reduces, and writes the
/// residue (the centered reading takes 2^bits off negative inputs). kPairs: the most pairs of
/// blocks of 32 input bytes it takes.
template <int kPairs>
__global__ void __launch_bounds__(kBigBytesThreads)
    big_to_rns_bytes_kernel(u32* out, const u64* words, BigShape in, backend::BigRnsView v) {
  extern __shared__ uint4 tiles_staged[];
  const u32 pairs = (v.byte_blocks + 1) / 2, tiles = static_cast<u32>(v.stride / 8);
  const TileStager<kBigBytesStages> stager{
      tiles_staged, reinterpret_cast<const uint4*>(v.byte_planes), 4 * pairs * 32, tiles};
  const std::size_t c0 = big_warp_first();
  wait_for_previous_kernels();
  stager.start();
  const u32 lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const u32* limbs = reinterpret_cast<const u32*>(words);
  const std::size_t count = v.limbs32, row[2] = {c0 + g, c0 + g + 8};
  const bool valid[2] = {row[0] < in.n, row[1] < in.n};
  u32 frag[2 * kPairs][4];
  for_fragment_words<2 * kPairs>(t, [&](int kb, int slot, int r, std::size_t j) {
    frag[kb][slot] = valid[r] && j < count ? __ldg(limbs + row[r] * count + j) : 0;
  });
  bool negative[2] = {false, false};
  if (v.wrap) {
    const int top = v.bits - 1;
#pragma unroll
    for (int r = 0; r < 2; ++r)
      negative[r] = valid[r] && ((limbs[row[r] * count + top / 32] >> (top % 32)) & 1u);
  }
  for (u32 tile = 0; tile < tiles; ++tile) {
    const uint4* staged = stager.acquire(tile) + lane;
    if (c0 >= in.n) continue;  // the warp only helps stage
    u32 d[4][4] = {};
#pragma unroll
    for (int b = 0; b < 4; ++b)
#pragma unroll
      for (int kp = 0; kp < kPairs; ++kp) {
        if (kp >= pairs) break;
        const uint4 w = staged[(b * pairs + kp) * 32];
        mma_bytes_16x8x32(d[b], frag[2 * kp], w.x, w.y);
        mma_bytes_16x8x32(d[b], frag[2 * kp + 1], w.z, w.w);
      }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int r = q / 2;
      const std::size_t i = tile * 8 + 2 * t + q % 2;
      if (i >= v.primes || !valid[r]) continue;
      const u64 sum =
          u64{d[0][q]} + (u64{d[1][q]} << 8) + (u64{d[2][q]} << 16) + (u64{d[3][q]} << 24);
      const Modulus& m = v.moduli[i];
      const u64 x = barrett_reduce_64(sum, m);
      out[i * in.n + row[r]] =
          static_cast<u32>(negative[r] ? sub_mod(x, u64{v.wrap[i]}, m.value) : x);
    }
  }
}

/// The inverse CRT of coefficients c0 .. c0 + 15: lane (g, t) computes the digits y_i of rows g,
/// g + 8 for i = 8 kb + t and 8 kb + 4 + t (its A fragment words: digits are below 2^30, four
/// bytes each), the quad sums its shares of sum_i y_i / p_i (the rounding to the multiple k is
/// exact whatever the order: the fraction is within a quarter of an integer), and k enters as
/// digit `primes`. Each tile of eight byte columns is one output word: the quad joins its
/// columns (2t, 2t + 1 a lane) at their byte offsets in 128 bits, adds the carry of the word
/// below, keeps the low 64 bits and carries the rest. Even and odd blocks accumulate apart (two
/// chains of dependent products). The words are staged in shared memory and written coalesced.
/// kPairs: the most pairs of blocks of 32 digit bytes it takes.
template <int kPairs>
__global__ void __launch_bounds__(kBigBytesThreads)
    big_from_rns_bytes_kernel(u64* out, BigShape o, const u32* residues, backend::BigCrtView v) {
  extern __shared__ uint4 tiles_staged[];
  const u32 pairs = (v.byte_blocks + 1) / 2;
  const TileStager<kBigBytesStages> stager{tiles_staged,
                                           reinterpret_cast<const uint4*>(v.byte_matrix),
                                           pairs * 32, static_cast<u32>(o.words)};
  // [warps][16][o.words], after the stages
  u64* words_staged = reinterpret_cast<u64*>(tiles_staged + kBigBytesStages * pairs * 32);
  const std::size_t c0 = big_warp_first();
  wait_for_previous_kernels();
  stager.start();
  const u32 lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  u64* mine_out = words_staged + (threadIdx.x / 32) * 16 * o.words;
  const std::size_t row[2] = {c0 + g, c0 + g + 8};
  const bool valid[2] = {row[0] < o.n, row[1] < o.n};
  u32 frag[2 * kPairs][4];
  double share[2] = {0.0, 0.0};
  for_fragment_words<2 * kPairs>(t, [&](int kb, int slot, int r, std::size_t i) {
    u32 y = 0;
    if (valid[r] && i < v.primes) {
      y = static_cast<u32>(backend::big::crt_digit(residues[i * o.n + row[r]], v, i));
      share[r] += static_cast<double>(y) * v.reciprocal[i];
    }
    frag[kb][slot] = y;
  });
  u32 k[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    share[r] += __shfl_xor_sync(0xffffffffu, share[r], 1);
    share[r] += __shfl_xor_sync(0xffffffffu, share[r], 2);
    k[r] = static_cast<u32>(share[r] + 0.5);  // the CPU's crt_multiple
  }
  for_fragment_words<2 * kPairs>(t, [&](int kb, int slot, int r, std::size_t i) {
    if (i == v.primes) frag[kb][slot] = k[r];
  });
  u64 carry[2] = {0, 0};
  for (u32 w = 0; w < o.words; ++w) {
    const uint4* staged = stager.acquire(w) + lane;
    if (c0 >= o.n) continue;  // the warp only helps stage
    u32 even[4] = {0, 0, 0, 0}, odd[4] = {0, 0, 0, 0};
#pragma unroll
    for (int kp = 0; kp < kPairs; ++kp) {
      if (kp >= pairs) break;
      const uint4 b = staged[kp * 32];
      mma_bytes_16x8x32(even, frag[2 * kp], b.x, b.y);
      mma_bytes_16x8x32(odd, frag[2 * kp + 1], b.z, b.w);
    }
    const u32 d[4] = {even[0] + odd[0], even[1] + odd[1], even[2] + odd[2], even[3] + odd[3]};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // Columns 2t, 2t + 1 at byte offset 2t of the word (< 2^35 before the shift).
      const u64 e = u64{d[2 * r]} + (u64{d[2 * r + 1]} << 8);
      u64 lo = e << (16 * t), hi = t ? e >> (64 - 16 * t) : 0;
#pragma unroll
      for (int s = 1; s <= 2; s *= 2) {
        const u64 other_lo = __shfl_xor_sync(0xffffffffu, lo, s);
        const u64 other_hi = __shfl_xor_sync(0xffffffffu, hi, s);
        lo += other_lo;
        hi += other_hi + (lo < other_lo);
      }
      lo += carry[r];
      hi += lo < carry[r];
      carry[r] = hi;
      if (t == static_cast<u32>(r))
        mine_out[(g + 8 * r) * o.words + w] = w + 1 == o.words ? lo & o.top_mask() : lo;
    }
  }
  if (c0 >= o.n) return;
  __syncwarp();
  const std::size_t count = o.n - c0 < 16 ? o.n - c0 : 16;
  for (std::size_t k = lane; k < count * o.words; k += 32) out[c0 * o.words + k] = mine_out[k];
}

__global__ void big_from_residues_kernel(u64* out, BigShape o, const u64* residues, u64 q) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c < o.n) backend::big::from_residue(out + c * o.words, o, residues[c], q);
}

__global__ void big_uniform_kernel(u64* out, BigShape o, ChaChaKey key, u64 nonce) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c < o.n) backend::big::uniform(out + c * o.words, o, c, key, nonce);
}

}  // namespace ember::cuda::kernels
