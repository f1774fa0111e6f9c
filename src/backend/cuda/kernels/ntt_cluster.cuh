// CUDA one-pass NTT: a thread-block cluster transforms one limb, exchanging its column and chunk
// phases through distributed shared memory instead of global memory.
//
// N = C * S with C = 2^kLogC blocks per cluster and chunks of S = 2^kLogS values (notation of
// ntt.cuh: N1 = C values per column, N2 = S columns). Block r of a limb's cluster owns chunk r: its
// shared memory holds positions [r S, (r + 1) S). The forward transform runs the column phase (the
// log C stages whose half-span is >= S) on columns r 2^(kLogS - kLogC) + h, reading the limb
// from global memory and writing each result into the shared memory of the block that owns its
// chunk; after a cluster barrier every block runs its chunk's log S stages in its own shared
// memory and writes the limb once. The inverse runs the same steps backwards (chunks first, the
// columns reading the owners' shared memory). Global memory is read and written once per word
// (the two-kernel schedules move it twice); the transform is bound by instruction issue and
// latency all the same, so this wins where its blocks are small (N = 2^12 .. 2^14, chunks of
// 2^9 .. 2^10 values) and loses with blocks of 256 and 512 threads (measured in
// bench/RESULTS.md).
#pragma once

#include <cooperative_groups.h>

#include "kernels/ntt.cuh"

namespace ember::cuda::kernels {

namespace cg = cooperative_groups;

/// Chunk stages with fewer groups than this take their twiddles from a local table; the later
/// ones read the global table directly (each of their entries serves one or two butterflies of
/// the chunk, so a local copy would be converted and read as often).
template <int kLogS>
inline constexpr int kClusterLocalLog = kLogS < 9 ? kLogS : 9;

/// Shared memory of a cluster block: its chunk, the column values between rounds (two rounds of
/// columns: log C > 3), and the local twiddle tables of the columns and of the chunk.
template <int kLogC, int kLogS>
constexpr std::size_t cluster_smem_bytes() {
  return (std::size_t{kLogC > 3 ? 2u : 1u} << kLogS) * sizeof(u64) +
         ((std::size_t{1} << kLogC) + (std::size_t{1} << kClusterLocalLog<kLogS>)) * 2 *
             sizeof(u64);
}

/// A chunk's twiddles: stages of fewer than 2^kLogLocal groups from `local`, the others from the
/// global bit-reversed table (entries base * m + i).
template <class P, int kLogLocal>
struct SplitTwiddles {
  using Tw = typename P::Tw;
  const Tw* local;
  GlobalTwiddles<P> global;
  __device__ __forceinline__ Tw operator()(u32 m, u32 i) const {
    return m < (1u << kLogLocal) ? local[m + i] : global(m, i);
  }
};

/// Column memory of a cluster block: column col = r 2^kLogSubs + h, row k (position k S + col)
/// in global memory at d[(k << log S) + h] and in the shared memory of block k at its chunk's
/// position col; between rounds in this block's `scratch` at [(k << kLogSubs) + h].
template <bool kForward, int kLogSubs, class P, class Lift>
struct ClusterColumnMem {
  using Path = P;
  using V = typename P::V;
  u64* __restrict__ d;         // the limb at this block's first column
  const u64* __restrict__ in;  // the input at the same offset
  u64* chunk;                  // the chunk buffer (the same offset in every block)
  V* scratch;
  u32 h, col, log_s;
  P path;
  Lift lift;  // see NttBatch::row_lift (forward only)
  __device__ __forceinline__ u64* owner(u32 k) const {
    return cg::this_cluster().map_shared_rank(chunk, k) + chunk_swizzle(col);
  }
  __device__ __forceinline__ u64 first_load(u32 base, u32 off) const {
    if constexpr (kForward) {
      const std::size_t at = ((base + off) << log_s) + h;
      return lift(in[at], at);
    } else
      return *owner(base + off);
  }
  __device__ __forceinline__ V load(u32 p) const { return scratch[(p << kLogSubs) + h]; }
  __device__ __forceinline__ void store(u32 p, V v) const { scratch[(p << kLogSubs) + h] = v; }
  __device__ __forceinline__ void last_store(u32 base, u32 off, V v) const {
    if constexpr (kForward)
      *owner(base + off) = path.word(v);
    else
      d[((base + off) << log_s) + h] = path.template finish<false>(v);
  }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

/// Where a forward cluster transform puts the canonical word of position p of its chunk: the
/// limb itself.
struct ClusterPlainOut {
  u64* __restrict__ d;  // the limb at this block's chunk
  __device__ __forceinline__ void operator()(u32 p, u64 word) const { d[p] = word; }
};

/// ... or a division's affine map of it: AffineRow (see affine_args.cuh).

/// Chunk memory of a cluster block: position p at s[chunk_swizzle(p)] (words when handed to or
/// from the column phase, the path's values between rounds); the forward transform's results go
/// to `out` (Out: ClusterPlainOut or AffineRow), the inverse reads its input from `in`.
template <bool kForward, class P, class Out>
struct ClusterChunkMem {
  using Path = P;
  using V = typename P::V;
  Out out;
  const u64* __restrict__ in;  // the limb at this block's chunk (inverse)
  u64* s;
  P path;
  bool finish;  // forward: canonical values, or the path's words (NttBatch::leave_words)
  __device__ __forceinline__ u64 first_load(u32 base, u32 off) const {
    if constexpr (kForward)
      return s[chunk_swizzle(base + off)];
    else
      return in[base + off];
  }
  __device__ __forceinline__ V load(u32 p) const {
    return reinterpret_cast<const V*>(s)[chunk_swizzle(p)];
  }
  __device__ __forceinline__ void store(u32 p, V v) const {
    reinterpret_cast<V*>(s)[chunk_swizzle(p)] = v;
  }
  __device__ __forceinline__ void last_store(u32 base, u32 off, V v) const {
    if constexpr (kForward)
      out(base + off, finish ? path.template finish<true>(v) : path.word(v));
    else
      s[chunk_swizzle(base + off)] = path.word(v);
  }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

/// The two halves of a cluster barrier (PTX barrier.cluster): arrive says "this block has
/// started" (relaxed: it publishes no data), wait returns once every block of the cluster has
/// arrived. Split, they let a block's first work overlap the others' start.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
}

/// One limb per cluster of 2^kLogC blocks (blockIdx.x: the block's chunk, blockIdx.y: the limb),
/// 2^(kLogS - 3) threads per block, eight values each. kLogC in {3, 4}: one or two radix-8 rounds
/// of columns with 2^(kLogC - 3) threads per column. make_out(limb, chunk) gives the forward
/// transform's Out.
template <bool kForward, int kLogC, int kLogS, NttPaths kPaths, int kLift, class MakeOut>
__device__ __forceinline__ void cluster_ntt(const NttBatch& a, const MakeOut& make_out) {
  static_assert(kLogC == 3 || kLogC == 4, "one or two rounds of columns");
  static_assert(kLift == kNoLift || kForward, "only forward transforms read lifted input");
  constexpr int kLogSubs = kLogS - kLogC;  // columns per block
  constexpr u32 kS = 1u << kLogS, kC = 1u << kLogC;
  constexpr int kLogLocal = kClusterLocalLog<kLogS>;
  extern __shared__ u64 sm[];
  const u32 r = cg::this_cluster().block_rank();
  const u32 limb = blockIdx.y;
  const u32 id = a.ids[row_limb(limb, a.limbs)];
  const u32 h = threadIdx.x & ((1u << kLogSubs) - 1);
  const std::size_t limb_at = static_cast<std::size_t>(limb) * a.n;
  const std::size_t cols_at = limb_at + (r << kLogSubs);
  const std::size_t chunk_at = limb_at + static_cast<std::size_t>(r) * kS;
  const u64* tw = a.tw + static_cast<std::size_t>(id) * a.n;
  const u64* tws = a.tw_shoup + static_cast<std::size_t>(id) * a.n;
  const auto lift = a.row_lift<kLift>(limb, id, cols_at);
  // The forward column phase writes into the other blocks' shared memory, which CUDA allows only
  // once every block of the cluster has started (compute-sanitizer's racecheck reported the
  // writes without this barrier); the wait comes after the twiddle gathers, which hide it. The
  // inverse first touches another block's memory after its own cluster barrier.
  if constexpr (kForward) cluster_arrive_relaxed();
  with_path<kForward, kPaths>(a, id, [&](const auto& path) {
    using P = std::decay_t<decltype(path)>;
    using V = typename P::V;
    using Tw = typename P::Tw;
    u64* chunk = sm;
    V* scratch = reinterpret_cast<V*>(sm + kS);
    Tw* column_tw = reinterpret_cast<Tw*>(sm + (kLogC > 3 ? 2 * kS : kS));
    Tw* chunk_tw = column_tw + kC;
    // Columns use global entries m + i (base 1), chunk r entries (C + r) m + i.
    load_local_twiddles(column_tw, kLogC, 1u, tw, tws, threadIdx.x, blockDim.x, path);
    load_local_twiddles(chunk_tw, kLogLocal, kC + r, tw, tws, threadIdx.x, blockDim.x, path);
    if constexpr (kForward) cluster_wait();
    wait_for_previous_kernels();  // the twiddle gathers above overlap the previous kernel
    ClusterColumnMem<kForward, kLogSubs, P, std::decay_t<decltype(lift)>> columns{
        a.data + cols_at,
        a.input<kLift != kNoLift>(cols_at),
        chunk,
        scratch,
        h,
        (r << kLogSubs) + h,
        kLogS,
        path,
        lift};
    ClusterChunkMem<kForward, P, decltype(make_out(limb, r))> own{
        make_out(limb, r), a.input<false>(chunk_at), chunk, path, a.finishes<P>(true)};
    const LocalTwiddles<Tw> column_table{column_tw};
    const SplitTwiddles<P, kLogLocal> chunk_table{chunk_tw, {tw, tws, kC + r, &path}};
    const u32 column_tau = threadIdx.x >> kLogSubs;
    if constexpr (kForward) {
      ntt_rounds<true, kLogC, 0>(column_tau, column_table, columns);
      cg::this_cluster().sync();  // every chunk has arrived in its owner's shared memory
      ntt_rounds<true, kLogS, 0>(threadIdx.x, chunk_table, own);
    } else {
      ntt_rounds<false, kLogS, 0>(threadIdx.x, chunk_table, own);
      cg::this_cluster().sync();  // every chunk is transformed
      ntt_rounds<false, kLogC, 0>(column_tau, column_table, columns);
      cg::this_cluster().sync();  // the other blocks read this one's chunk until here
    }
  });
}

/// Blocks of kThreads per SM the register budget is set for: 64 registers per thread. Measured on
/// an H200 against 40 (the column kernel's budget, which spills here): 10-30 % faster at N = 2^13
/// and 2^14.
template <int kThreads>
inline constexpr int kClusterMinBlocks = 1024 / kThreads;

template <bool kForward, int kLogC, int kLogS, NttPaths kPaths, int kLift>
__global__ void __launch_bounds__(1 << (kLogS - 3), kClusterMinBlocks<(1 << (kLogS - 3))>)
    ntt_cluster_kernel(NttBatch a) {
  cluster_ntt<kForward, kLogC, kLogS, kPaths, kLift>(a, [&](u32 limb, u32 r) {
    return ClusterPlainOut{a.data + static_cast<std::size_t>(limb) * a.n + (r << kLogS)};
  });
}

/// The forward cluster transform with a division's affine map as its store (ModDown, rescale):
/// row k * limbs + j of the batch is polynomial k's limb j (see AffineStore). kLift is kNoLift,
/// or kConvertLift: the division's conversion from one prime runs in the first load.
template <int kLogC, int kLogS, NttPaths kPaths, int kLift>
__global__ void __launch_bounds__(1 << (kLogS - 3), kClusterMinBlocks<(1 << (kLogS - 3))>)
    ntt_cluster_affine_kernel(NttBatch a, const __grid_constant__ AffineArgs args, const u64* mul,
                              const u64* mul_companion) {
  cluster_ntt<true, kLogC, kLogS, kPaths, kLift>(a, [&](u32 row, u32 r) {
    return affine_row(args, mul, mul_companion, a.moduli, a.ids, a.n, a.limbs, row, r << kLogS);
  });
}

}  // namespace ember::cuda::kernels
