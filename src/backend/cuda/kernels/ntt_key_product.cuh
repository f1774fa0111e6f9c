// The chunk phase of ModUp's forward NTT fused with the key inner product: each warp finishes
// every digit's transform of one 256-value chunk of one row of Q_l u P and accumulates it times
// the key, so the transformed digits are never written out and read back.
#pragma once

#include "ember/backend/backend.h"
#include "ember/backend/rows.h"
#include "kernels/ntt.cuh"

namespace ember::cuda::kernels {

/// The per-warp 128-bit sums of the fused key product on the integer path, in shared memory
/// (registers would leave too few warps per SM to hide the digits' loads): entry (poly, i, lane)
/// is the sum of output i of the lane's eight, poly 0 or 1, stored so that the warp's accesses
/// are conflict-free. 32 products fit 128 bits (see IntegerPath::kWordsFitKeyProduct): the sums
/// are reduced after every 32nd term.
struct KeyProductSums {
  using V = u64;
  ulonglong2* s;  // [2][8][32] (hi, lo) pairs of this warp
  const Modulus* m;
  u32 terms = 0;
  __device__ __forceinline__ KeyProductSums(ulonglong2* words, const Modulus& mod)
      : s(words), m(&mod) {
#pragma unroll
    for (int i = 0; i < 8; ++i) at(0, i) = at(1, i) = make_ulonglong2(0, 0);
  }
  __device__ __forceinline__ ulonglong2& at(int poly, int i) const {
    return s[(poly * 8 + i) * 32 + (threadIdx.x & 31)];
  }
  __device__ __forceinline__ static V from_word(u64 x) { return x; }
  __device__ __forceinline__ void add(int poly, int i, u64 x, u64 k) const {
    ulonglong2& w = at(poly, i);
    backend::rows::Wide acc{w.x, w.y};
    acc.add_product(x, k);
    w = make_ulonglong2(acc.hi, acc.lo);
  }
  /// Called once every sum has taken one more term.
  __device__ __forceinline__ void after_term() {
    if (++terms < 32) return;
    terms = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i)
      for (int p = 0; p < 2; ++p) at(p, i) = make_ulonglong2(0, result(p, i));
  }
  __device__ __forceinline__ u64 result(int poly, int i) const {
    const ulonglong2 w = at(poly, i);
    return backend::rows::Wide{w.x, w.y}.reduce(*m);
  }
};

/// The fused key product's sums on the FP64 path (primes below 2^50), in registers: each term
/// y k mod p is a signed double (mul_mod_float: |y| < 2^51, which the transform's recentering
/// schedule keeps for its last stage's values, and |term| < p), summed exactly and recentered
/// before a sum could reach 2^53; canonical once at the end. Against the integer sums: no 64 x
/// 64-bit products, no shared-memory round trip per term, no 128-bit reduction, and the
/// transform's values enter without their conversion to words.
struct FloatKeyProductSums {
  using V = double;
  double s[2][8];
  FloatModulus m;
  u64 q;
  u32 terms = 0;
  u32 period;  // float_sum_period: terms between recenterings
  __device__ __forceinline__ explicit FloatKeyProductSums(const FloatPath& path)
      : m(path.m), q(path.q), period(float_sum_period(bit_length(path.q))) {
#pragma unroll
    for (int i = 0; i < 8; ++i) s[0][i] = s[1][i] = 0.0;
  }
  __device__ __forceinline__ static V from_word(u64 x) { return u64_to_float(x); }
  __device__ __forceinline__ void add(int poly, int i, double y, u64 k) {
    const double kd = u64_to_float(k);
    s[poly][i] = fp_add(s[poly][i], mul_mod_float(y, kd, float_companion(kd, m), m));
  }
  __device__ __forceinline__ void after_term() {
    if (++terms < period) return;
    terms = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      s[0][i] = recenter(s[0][i], m);
      s[1][i] = recenter(s[1][i], m);
    }
  }
  __device__ __forceinline__ u64 result(int poly, int i) const {
    return float_to_canonical(s[poly][i], m, q);
  }
};

/// Where the lane's eight outputs (adjacent positions of the output chunk) read their inputs:
/// an automorphism X -> X^k in eval form maps each aligned chunk of 256 slots onto one chunk of
/// the source (the low bits of a slot's bit-reversed index decide the chunk, and X^k keeps
/// them), permuted within it. local(i): output i's position in the source chunk, a byte in the
/// warp's shared memory (in registers, the rotation kernels spilled 88 bytes on the integer
/// path; measured 3.6 % faster BGV N15 rotations on an H200). kPermuted: compiled for an
/// automorphism (kernels without one keep the table out).
template <bool kPermuted>
struct ChunkSource {
  u32 chunk;               // the source chunk
  std::uint8_t* local_of;  // [8][32]: local(i) of lane l at i * 32 + l (kPermuted only)
  __device__ __forceinline__ ChunkSource(u32 out_chunk, u32 lane, u64 galois, u32 log_n,
                                         std::uint8_t* table) {
    chunk = out_chunk;
    local_of = table;
    if constexpr (kPermuted) {
      chunk = backend::rows::automorphism_eval_source(out_chunk * 256u, galois, log_n) >> 8;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const u32 p = out_chunk * 256u + lane * 8u + i;
        table[i * 32 + lane] = static_cast<std::uint8_t>(
            backend::rows::automorphism_eval_source(p, galois, log_n) & 255u);
      }
    }
  }
  __device__ __forceinline__ u32 local(int i) const {
    if constexpr (!kPermuted) return threadIdx.x % 32 * 8u + i;
    return local_of[i * 32 + (threadIdx.x & 31)];
  }
  /// The lane's eight inputs from a source chunk in memory.
  __device__ __forceinline__ void gather(const u64* chunk_words, u64 (&x)[8]) const {
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = chunk_words[local(i)];
  }
};

/// The warp chunks' store for the fused key product: the transformed source chunk (eight
/// adjacent values per lane), permuted through the warp's shared memory when an automorphism
/// applies, times digit j's two key rows at the output positions `out_at`, added to the sums
/// (words on the integer path, the transform's own doubles on the FP64 path).
template <bool kPermuted, class Sums>
struct KeyProductAccumulate {
  using V = typename Sums::V;
  const u64* key0;  // digit j's key rows for the chunk's row (first and second polynomial)
  const u64* key1;
  u32 out_at;  // the lane's first output position
  Sums& sums;
  const ChunkSource<kPermuted>& source;
  u64* exchange;  // the warp's 256 words (free once the chunk transform has stored)
  __device__ __forceinline__ void accumulate(const V (&x)[8]) const {
    const ulonglong2* k0 = reinterpret_cast<const ulonglong2*>(key0 + out_at);
    const ulonglong2* k1 = reinterpret_cast<const ulonglong2*>(key1 + out_at);
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const ulonglong2 a = __ldg(k0 + v), b = __ldg(k1 + v);
      sums.add(0, 2 * v, x[2 * v], a.x);
      sums.add(0, 2 * v + 1, x[2 * v + 1], a.y);
      sums.add(1, 2 * v, x[2 * v], b.x);
      sums.add(1, 2 * v + 1, x[2 * v + 1], b.y);
    }
    sums.after_term();
  }
  __device__ __forceinline__ void permute_and_accumulate(const V (&x)[8]) const {
    if constexpr (!kPermuted) return accumulate(x);
    // Position p sits at (p % 8) * 32 + p / 8: the warp's writes are conflict-free.
    V* ex = reinterpret_cast<V*>(exchange);
    const u32 lane = threadIdx.x & 31;
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 8; ++i) ex[i * 32 + lane] = x[i];
    __syncwarp();
    V y[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) y[i] = ex[(source.local(i) & 7u) * 32 + (source.local(i) >> 3)];
    accumulate(y);
  }
  /// Integer path: warp_chunk_with's words (each of the two is only instantiated on its path).
  __device__ __forceinline__ void operator()(u32, u32, const u64 (&x)[8]) const {
    permute_and_accumulate(x);
  }
  /// FP64 path: warp_chunk_with's values before their conversion to words (see TakesValues).
  __device__ __forceinline__ void take_values(const double (&x)[8]) const {
    permute_and_accumulate(x);
  }
};

/// Asks L2 for the line holding p (the next digit's words while this one is computed).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/// Blocks per SM the fused kernel is compiled for, measured on an H200 (bench/RESULTS.md). Integer
/// path: 8 (128 registers, 16 warps); 10 blocks (94 registers) made BGV N15 relinearization 9 %
/// slower, and 6 blocks BGV N15 rotation 4 % slower. With FP64 rows (their sums in registers):
/// 6 blocks (162 registers, no spills), against 8 (16-32 bytes spilled) CKKS N16_36+4 rotation 2 %
/// and N16_42+1 relinearization 2 % faster.
template <NttPaths kPaths>
inline constexpr int kKeyProductBlocks = kPaths == NttPaths::kInt ? 8 : 6;

/// The digit loop of ntt_key_product_kernel for one warp with its path's sums (see there).
template <bool kPermuted, class Path, class Sums>
__device__ __forceinline__ void key_product_rows(const NttBatch& a,
                                                 const backend::KeyProductView& kp, u32 r,
                                                 u32 chunk, u32 id,
                                                 const ChunkSource<kPermuted>& source,
                                                 const Path& path, Sums& sums, u64* exchange,
                                                 u64* q0, u64* q1, u64* p0, u64* p1) {
  const u32 lane = threadIdx.x & 31;
  const std::size_t n = a.n;
  const u32 at = chunk * 256u + lane * 8u;  // the lane's eight adjacent outputs
  const u32 key_row = r < kp.q_rows ? r : kp.key_q_rows + (r - kp.q_rows);
  const std::size_t source_at = source.chunk * 256u;
  for (u32 j = 0; j < kp.digits; ++j) {
    const u64* key0 = kp.key + (static_cast<std::size_t>(j) * 2 * kp.key_rows + key_row) * n;
    const u64* key1 = key0 + static_cast<std::size_t>(kp.key_rows) * n;
    prefetch_l2(key0 + at);
    prefetch_l2(key1 + at);
    if (j + 1 < kp.digits) {
      bool next_own;
      const u32 next = backend::rows::digit_row(kp, j + 1, r, next_own);
      prefetch_l2((next_own ? kp.d : kp.ext) + next * n + source_at + lane * 8u);
    }
    const KeyProductAccumulate<kPermuted, Sums> acc{key0, key1, at, sums, source, exchange};
    bool own;
    const u32 row = backend::rows::digit_row(kp, j, r, own);
    if (own) {
      wait_for_previous_kernels();
      u64 w[8];
      source.gather(kp.d + row * n + source_at, w);
      typename Sums::V x[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) x[i] = Sums::from_word(w[i]);
      acc.accumulate(x);
    } else {
      // The integer sums take the transform's words unreduced where they fit (the final
      // reduction of the 128-bit sums gives the same values); the FP64 sums its doubles.
      warp_chunk_with<true>(a, row, source.chunk, id, a.finishes<Path>(true), path, acc, exchange);
    }
  }
  // One more term; rotations only (the launcher sends a product with an addend and no
  // automorphism to the unfused kernels).
  if (kPermuted && kp.add && r < kp.q_rows) {
    u64 x[8];
    source.gather(kp.add + r * n + source_at, x);
#pragma unroll
    for (int i = 0; i < 8; ++i) sums.add(0, i, Sums::from_word(x[i]), kp.add_scale[r]);
    sums.after_term();
  }
  u64* o0 = r < kp.q_rows ? q0 + r * n : p0 + (r - kp.q_rows) * n;
  u64* o1 = r < kp.q_rows ? q1 + r * n : p1 + (r - kp.q_rows) * n;
  ulonglong2* d0 = reinterpret_cast<ulonglong2*>(o0 + at);
  ulonglong2* d1 = reinterpret_cast<ulonglong2*>(o1 + at);
#pragma unroll
  for (int v = 0; v < 4; ++v) {
    d0[v] = make_ulonglong2(sums.result(0, 2 * v), sums.result(0, 2 * v + 1));
    d1[v] = make_ulonglong2(sums.result(1, 2 * v), sums.result(1, 2 * v + 1));
  }
}

/// One warp per (row r of Q_l u P, output chunk of 256 positions): for every digit, the digit's
/// own row (d, already in eval form) or the chunk phase of its converted row r (the column phase
/// has run on kp.ext), read through the automorphism kp.galois (0: none), times the key; on the
/// Q rows also kp.add (through the automorphism, kPermuted only) times kp.add_scale. The sums are
/// reduced once and stored to q0 / q1 (Q rows) or p0 / p1 (P rows). The values equal
/// key_inner_product_kernel's on the fully transformed rows. kPermuted: kp.galois != 0.
template <NttPaths kPaths, bool kPermuted>
__global__ void __launch_bounds__(kWarpChunkThreads, kKeyProductBlocks<kPaths>)
    ntt_key_product_kernel(NttBatch a, const __grid_constant__ backend::KeyProductView kp,
                           const u32* row_ids, u64* q0, u64* q1, u64* p0, u64* p1) {
  __shared__ alignas(16) u64 values[kWarpChunkThreads / 32][256];
  __shared__ ulonglong2 sum_words[kPaths == NttPaths::kFloat ? 1 : kWarpChunkThreads / 32]
                                 [kPaths == NttPaths::kFloat ? 1 : 2 * 8 * 32];
  __shared__ std::uint8_t local_words[kPermuted ? kWarpChunkThreads / 32 : 1][8 * 32];
  const u32 warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (warp >= kp.rows * (a.n >> 8)) return;
  const RowChunk rc = row_chunk(warp, a.n);
  const u32 r = rc.row, chunk = rc.chunk, lane = threadIdx.x & 31;
  const u32 id = row_ids[r];
  const ChunkSource<kPermuted> source(chunk, lane, kp.galois, static_cast<u32>(__ffs(a.n) - 1),
                                      local_words[kPermuted ? threadIdx.x >> 5 : 0]);
  u64* exchange = values[threadIdx.x >> 5];
  with_path<true, kPaths>(a, id, [&](const auto& path) {
    using P = std::decay_t<decltype(path)>;
    if constexpr (std::is_same_v<P, FloatPath>) {
      FloatKeyProductSums sums(path);
      key_product_rows(a, kp, r, chunk, id, source, path, sums, exchange, q0, q1, p0, p1);
    } else {
      KeyProductSums sums(sum_words[kPaths == NttPaths::kFloat ? 0 : threadIdx.x >> 5],
                          a.moduli[id]);
      key_product_rows(a, kp, r, chunk, id, source, path, sums, exchange, q0, q1, p0, p1);
    }
  });
}

}  // namespace ember::cuda::kernels
