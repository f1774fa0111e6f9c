// CUDA NTT kernels: per-stage butterflies, shared-memory radix-8 rounds, warp-synchronous chunks.
//
// Notation (see cpu_ntt.cpp for the reference loops). A transform of size N is split into a
// "column" phase and a "chunk" phase: N = N1 * N2, column c = {c + k N2 : k < N1} and chunk j =
// [j N2, (j + 1) N2). The forward (Cooley-Tukey) NTT first runs the log N1 stages whose half-span
// is >= N2 on every column, then the log N2 remaining stages on every chunk; the inverse
// (Gentleman-Sande) runs chunks first, then columns. In a sub-transform of local size S whose
// stage has m = S / (2 t) groups, the twiddle of local group i is table[base * m + i], with
// base = 1 for columns and base = N1 + j for chunk j: this is how the global bit-reversed table
// psi^bitrev(.) is indexed without copies.
//
// Arithmetic: the column, chunk and warp chunk kernels run each limb on one of two paths,
// IntPath (64-bit words, Shoup products) or FloatPath (primes below 2^50 on the FP64 pipe, see
// ember/core/float_modarith.h); NttPaths says which a launch compiles in. The per-stage kernel
// is integer only: both paths hand each other words in the integer path's lazy ranges.
//
// Word type: the column and chunk kernels are templates on it (NttBatchT<W>, IntegerPath<.., W>):
// 64-bit words for the RNS schemes, 32-bit ones (primes below 2^30, Harvey's [0, 4q) butterflies)
// for big-integer CKKS's residues, the same code instantiated twice.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/core/float_modarith.h"
#include "ember/core/modarith.h"
#include "kernels/affine_args.cuh"
#include "kernels/dependent_launch.cuh"

namespace ember::cuda::kernels {

/// Which arithmetic a launch compiles in: the integer path only (every prime above
/// float_bits), the FP64 path only, or both with a per-limb branch (mixed batches). Single-path
/// kernels keep the other path's registers and code out.
enum class NttPaths { kInt, kFloat, kMixed };

/// How a kernel's first load lifts its words (NttBatch::lift_rows): not at all, by a reduction
/// modulo the row's prime (ModUp's one-prime digits), or by the conversion from one prime that
/// NttBatch::lift_maps describes (a division's). Kernels compile in one kind.
enum LiftKind : int { kNoLift = 0, kReduceLift = 1, kConvertLift = 2 };

/// kReduceLift (or kNoLift with m == nullptr): the word modulo the row's prime m (`at`, the
/// word's offset from the kernel's base, is not needed).
template <class WordT = u64>
struct ReduceLiftT {
  const ModulusT<WordT>* m;
  __device__ __forceinline__ WordT operator()(WordT x, std::size_t) const {
    return m ? barrett_reduce_64<WordT>(x, *m) : x;
  }
};
using ReduceLift = ReduceLiftT<u64>;

/// Everything an NTT kernel needs about the batch: data, tables, and which prime each limb uses,
/// on words of type WordT (the lifts and conversions are 64-bit only).
template <class WordT>
struct NttBatchT {
  WordT* data;
  const ModulusT<WordT>* moduli;
  const u32* ids;
  const WordT* tw;  // psi_rev (forward) or psi_inv_rev (inverse), [primes][n]
  const WordT* tw_shoup;
  const WordT* n_inv;
  const WordT* n_inv_shoup;
  u32 n;
  u32 limbs;  // limbs per polynomial; blockIdx.y runs over count * limbs
  // Limbs whose prime has at most this many bits run on the FP64 pipe (FloatPath); 0 keeps every
  // limb on the integer path (backend option ntt_fp64 = false, for comparisons).
  u32 float_bits = kMaxFloatModulusBits;
  // Forward transforms on the integer path skip their butterflies' reductions for primes of at
  // most this many bits (IntegerPath<true>); 0 keeps them (backend option ntt_unreduced =
  // false, for comparisons). Both give the same words.
  u32 unreduced_bits = kUnreducedCtMaxBits;
  NttPaths paths = NttPaths::kMixed;  // set by the host from the batch's primes
  // Out of place: the first kernel of a schedule reads polynomial k (limbs x n words) from srck
  // (launches of at most kMaxSources polynomials) and writes data; src0 == nullptr transforms
  // data in place. Scalars, not an array: a dynamically indexed parameter array would be copied
  // to every thread's stack.
  static constexpr int kMaxSources = 4;
  const WordT* src0 = nullptr;
  const WordT* src1 = nullptr;
  const WordT* src2 = nullptr;
  const WordT* src3 = nullptr;
  // Out of place with source_rows > 0: only each polynomial's first source_rows rows come from
  // its source; its other rows are read in place (see Backend::ntt_forward_async).
  u32 source_rows = 0;
  // Lifted input (lift_rows > 0, forward): row r starts as src0's row r / lift_rows, words below
  // 2^61 reduced modulo row r's prime on the first load (the ModUp of one-prime digits, see
  // Backend::ntt_forward_lifted_async), or converted from one prime with lift_maps (a division's
  // conversion, see Backend::convert_ntt_affine_sub_async).
  u32 lift_rows = 0;
  // Whether the first load reduces lifted words (kReduceLift): false when every source word is
  // already below 8 q of its row's prime, the range every transform takes (see
  // CudaBackend::lift_needs_reduction).
  bool lift_reduce = true;
  // Forward: the last kernel may leave its path's words (below 76q, see
  // IntegerPath::kWordsFitKeyProduct) instead of canonical values, for rows that only key
  // products read (ModUp's, which reduce their 128-bit sums once).
  bool leave_words = false;
  /// Whether the last kernel of a forward transform on path P finishes its values (see
  /// leave_words).
  template <class P>
  __device__ __forceinline__ bool finishes(bool last) const {
    return last && !(leave_words && P::kWordsFitKeyProduct);
  }
  const backend::OnePrimeMaps* lift_maps = nullptr;
  // With lift_maps: words subtracted from the converted ones (this batch's layout; nullptr:
  // none), see Backend::convert_ntt_affine_sub_async.
  const u64* lift_sub = nullptr;
  /// Where the first pass reads the word at `offset` of the batch (kLifted: a kernel compiled
  /// for lifted batches; the others carry no lifting code).
  template <bool kLifted>
  __device__ __forceinline__ const WordT* input(std::size_t offset) const {
    if (!src0) return data + offset;
    if (kLifted) {
      const u32 row = static_cast<u32>(offset >> (__ffs(n) - 1));
      return src0 + static_cast<std::size_t>(row / lift_rows) * n + (offset & (n - 1));
    }
    // Once per block or warp: the polynomial, then the offset within it.
    const u32 row = static_cast<u32>(offset >> (__ffs(n) - 1)), k = row / limbs;
    if (source_rows && row - k * limbs >= source_rows) return data + offset;
    const WordT* src = k == 0 ? src0 : k == 1 ? src1 : k == 2 ? src2 : src3;
    return src + (offset - static_cast<std::size_t>(k) * limbs * n);
  }
  /// The modulus a lifted first load reduces by (nullptr: the words are already in range).
  template <bool kLifted>
  __device__ __forceinline__ ReduceLiftT<WordT> lift(u32 id) const {
    return ReduceLiftT<WordT>{kLifted && lift_reduce ? moduli + id : nullptr};
  }
  /// Limb `limb`'s conversion from lift_maps (kConvertLift kernels), for a kernel whose words
  /// start at `offset` of the batch.
  __device__ __forceinline__ ConvertLift convert_lift(u32 limb, std::size_t offset) const {
    const u32 j = limb % limbs;
    return ConvertLift::of(*lift_maps, j, moduli[ids[j]], lift_sub ? lift_sub + offset : nullptr);
  }
  /// The first load's lift of a kernel compiled for kLift (limb: the batch's limb, id its prime,
  /// offset: where the kernel's words start in the batch).
  template <int kLift>
  __device__ __forceinline__ auto row_lift(u32 limb, u32 id, std::size_t offset) const {
    if constexpr (kLift == kConvertLift)
      return convert_lift(limb, offset);
    else
      return lift<kLift == kReduceLift>(id);
  }
};
using NttBatch = NttBatchT<u64>;

/// The integer path: 64-bit words lazily reduced ([0, 8q) forward, [0, 4q) inverse), Shoup
/// products with (w, w_shoup) twiddle pairs. kUnreduced (forward transforms over primes below
/// 2^kUnreducedCtMaxBits, see NttBatch::unreduced_bits): the butterflies never reduce, words grow
/// by at most 4q a stage (below 76q after 17 stages) and leave the transform through one Barrett
/// reduction. Kernels of one transform take the same path for a limb, so the words they hand each
/// other stay within that bound. On 32-bit words (WordT = u32, primes below 2^30) Harvey's
/// butterflies keep [0, 4q) forward and [0, 2q) inverse: there is no room for 8q.
template <bool kUnreduced, class WordT = u64>
struct IntegerPath {
  static constexpr bool kNarrow = sizeof(WordT) == 4;
  static_assert(!(kNarrow && kUnreduced), "32-bit words have no room for unreduced butterflies");
  using Word = WordT;
  using V = WordT;
  using Tw = std::conditional_t<kNarrow, uint2, ulonglong2>;
  /// Whether a forward transform's words (word(), before finish) may enter a key product's
  /// 128-bit sums as they are: 32 products of words below 76q < 2^63.3 and key words below
  /// q < 2^57 stay below 2^125.3. Reduced words of larger primes (below 8q < 2^64) may not.
  static constexpr bool kWordsFitKeyProduct = kUnreduced;
  WordT q, ninv, ninv_s;
  WordT ratio;  // floor(2^64 / q), Barrett's constant (kUnreduced only)
  __device__ __forceinline__ V first(WordT x) const { return x; }
  __device__ __forceinline__ WordT word(V v) const { return v; }
  template <bool kForward>
  __device__ __forceinline__ WordT finish(V v) const {
    if constexpr (!kForward) return mul_shoup<WordT>(v, ninv, ninv_s, q);
    if constexpr (kUnreduced) return barrett_reduce_64(v, Modulus{q, ratio, 0});
    if constexpr (kNarrow) return reduce_4q<WordT>(v, q);
    return reduce_8q<WordT>(v, q);
  }
  __device__ __forceinline__ Tw twiddle(WordT w, WordT ws) const {
    if constexpr (kNarrow)
      return make_uint2(w, ws);
    else
      return make_ulonglong2(w, ws);
  }
  __device__ __forceinline__ void ct(V& x, V& y, Tw w) const {
    if constexpr (kUnreduced)
      ct_butterfly_unreduced(x, y, w.x, w.y, q);
    else if constexpr (kNarrow)
      ct_butterfly<WordT>(x, y, w.x, w.y, q);
    else
      ct_butterfly_8q(x, y, w.x, w.y, q);
  }
  __device__ __forceinline__ void gs(V& x, V& y, Tw w) const {
    static_assert(!kUnreduced, "inverse transforms reduce their sums");
    if constexpr (kNarrow)
      gs_butterfly<WordT>(x, y, w.x, w.y, q);
    else
      gs_butterfly_4q(x, y, w.x, w.y, q);
  }
  template <int kCount>
  __device__ __forceinline__ void before_stage(int, V (&)[kCount]) const {}
};
using IntPath = IntegerPath<false>;

/// Bits period, 2 period, ... below 32 set (0 for period >= 32): which stages a FloatPath
/// recenters before, in a few shifts: a loop over the multiples (a division behind its trip
/// count) cost every thread of an NTT kernel about 100 instructions at 50-bit primes.
__device__ __forceinline__ u32 multiples_below_32(int period) {
  if (period >= 32) return 0;  // never (forward transforms of primes below 2^48): no work
  u32 mask = 1u << period;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int span = period << k;
    if (span < 32) mask |= mask << span;
  }
  return mask;
}

/// The limb of a batch's row: the row itself in a one-polynomial batch (no division).
__device__ __forceinline__ u32 row_limb(u32 row, u32 limbs) {
  return row < limbs ? row : row % limbs;
}

/// Row and 256-value chunk of the index-th chunk of rows of N values (N / 256 chunks per row, a
/// power of two: shifts, not divisions).
struct RowChunk {
  u32 row, chunk;
};
__device__ __forceinline__ RowChunk row_chunk(u32 index, u32 n) {
  const u32 log_chunks = __ffs(n) - 9;
  return {index >> log_chunks, index & ((1u << log_chunks) - 1)};
}

/// The FP64 path (primes below 2^50, see ember/core/float_modarith.h): signed integers held in
/// doubles, twiddles as (w, w / p); values are recentered on their first load and before every
/// `period`-th stage of a kernel (bit s of `due`), and leave as words in [0, 2q) between kernels
/// or canonical.
struct FloatPath {
  using Word = u64;
  using V = double;
  using Tw = double2;
  /// Words below 2q < 2^51 (see IntegerPath::kWordsFitKeyProduct).
  static constexpr bool kWordsFitKeyProduct = true;
  FloatModulus m;
  u64 q;
  u32 due;
  bool recenter_input;  // false: words in [0, 8q) enter as they are (small primes, forward)
  u64 ninv;             // N^-1 mod q (inverse transforms)
  template <bool kForward>
  __device__ __forceinline__ static FloatPath make(u64 q, u64 ninv) {
    FloatPath f;
    f.m = float_modulus(q);
    f.q = q;
    const int bits = bit_length(q);
    const int period = kForward ? float_ct_period(bits) : float_gs_period(bits);
    f.due = multiples_below_32(period);
    f.recenter_input = !(kForward && float_ct_takes_lazy_input(bits));
    f.ninv = ninv;
    return f;
  }
  /// A word in [0, 8q) (8q < 2^53) as a recentered double.
  __device__ __forceinline__ V first(u64 x) const {
    if (!recenter_input) return u64_to_float(x);
    return recenter(u64_to_float(x >= 4 * q ? x - 4 * q : x), m);
  }
  __device__ __forceinline__ u64 word(V v) const { return float_to_lazy(v, m); }
  template <bool kForward>
  __device__ __forceinline__ u64 finish(V v) const {
    if constexpr (kForward) {
      return float_to_canonical(v, m, q);
    } else {
      const double w = u64_to_float(ninv);  // computed once for a thread's values (unrolled)
      return float_to_canonical(mul_mod_float(recenter(v, m), w, float_companion(w, m), m), m, q);
    }
  }
  __device__ __forceinline__ Tw twiddle(u64 w, u64) const {
    const double wd = u64_to_float(w);
    return make_double2(wd, float_companion(wd, m));
  }
  __device__ __forceinline__ void ct(V& x, V& y, Tw w) const {
    ct_butterfly_float(x, y, w.x, w.y, m);
  }
  __device__ __forceinline__ void gs(V& x, V& y, Tw w) const {
    gs_butterfly_float(x, y, w.x, w.y, m);
  }
  /// Recenters the values a thread holds before stage `stage` (> 0) of its kernel when due (the
  /// stage is a compile-time constant once unrolled: one bit test).
  template <int kCount>
  __device__ __forceinline__ void before_stage(int stage, V (&x)[kCount]) const {
    if ((due >> stage) & 1u) {
#pragma unroll
      for (int j = 0; j < kCount; ++j) x[j] = recenter(x[j], m);
    }
  }
};

/// Whether limb prime q takes the FP64 path in this batch.
__device__ __forceinline__ bool float_path(const NttBatch& a, u64 q) {
  return bit_length(q) <= static_cast<int>(a.float_bits);
}

/// A sub-transform's twiddles from a local table: entry m + i is the twiddle of group i at a stage
/// of m groups (see load_local_twiddles).
template <class Tw>
struct LocalTwiddles {
  const Tw* table;
  __device__ __forceinline__ Tw operator()(u32 m, u32 i) const { return table[m + i]; }
};

/// A transform's twiddles straight from the global bit-reversed table: entry base * m + i.
template <class P>
struct GlobalTwiddles {
  using Tw = typename P::Tw;
  const u64* __restrict__ w;
  const u64* __restrict__ ws;
  u32 base;
  const P* path;
  // Plain loads: a path that does not read the Shoup companion (FloatPath) drops its load.
  __device__ __forceinline__ Tw operator()(u32 m, u32 i) const {
    const u32 g = base * m + i;
    return path->twiddle(w[g], ws[g]);
  }
};

/// The twiddles of one radix-2^R round held in registers, fetched ahead of the round (before the
/// previous kernel finishes, or while the round before runs). The round's stages have kMMin * r
/// groups (r = 1, 2, .., 2^(R-1)); at each, the lane's butterflies use groups blk * kG * r + i
/// with i < kG * r. ct_round / gs_round then run with the lane's block taken out of blk (the
/// groups' own offsets g, or 0) and read entry kG (r - 1) + i: all indices fold at compile time.
template <class Tw, int R, int kG, u32 kMMin>
struct HeldTwiddles {
  Tw e[kG * ((1 << R) - 1)];
  __device__ __forceinline__ Tw operator()(u32 m, u32 i) const {
    return e[kG * (m / kMMin - 1) + i];
  }
};

template <int R, int kG, u32 kMMin, class P>
__device__ __forceinline__ HeldTwiddles<typename P::Tw, R, kG, kMMin> hold_twiddles(
    const GlobalTwiddles<P>& tw, u32 blk) {
  HeldTwiddles<typename P::Tw, R, kG, kMMin> h;
  // Entry (r, i) is global entry r (base kMMin + blk kG) + i: one shift per stage, and i an
  // immediate offset.
  const std::size_t first = std::size_t{tw.base} * kMMin + blk * kG;
#pragma unroll
  for (int k = 0; k < R; ++k) {
    const u64* w = tw.w + (first << k);
    const u64* ws = tw.ws + (first << k);
#pragma unroll
    for (int i = 0; i < (kG << k); ++i)
      h.e[kG * ((1 << k) - 1) + i] = tw.path->twiddle(w[i], ws[i]);
  }
  return h;
}

/// One radix-2^R round of forward stages on 8 register values: 8 >> R groups of 2^R values, each
/// group at local positions blk * 2t + off + j * u (u = t >> (R - 1)); `blk[g]` per group.
/// `tw(m, i)` is the sub-transform's twiddle of group i at a stage of m groups (LocalTwiddles:
/// entry m + i of a table the kernel fills from the global bit-reversed one). `stage` counts the
/// kernel's stages before this round.
template <int R, class Path, class Table>
__device__ __forceinline__ void ct_round(typename Path::V (&x)[8], const u32 (&blk)[8 >> R],
                                         u32 s_size, u32 t, const Table& tw, const Path& path,
                                         int stage) {
  constexpr int G = 8 >> R;
  constexpr int W = 1 << R;
  const u32 m0 = s_size / (2 * t);
#pragma unroll
  for (int k = 0; k < R; ++k) {
    const int half = 1 << (R - 1 - k);
    const u32 m = m0 << k;
    if (stage + k > 0) path.before_stage(stage + k, x);
#pragma unroll
    for (int g = 0; g < G; ++g) {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        if (j & half) continue;
        path.ct(x[g * W + j], x[g * W + j + half], tw(m, (blk[g] << k) + (j >> (R - k))));
      }
    }
  }
}

/// One radix-2^R round of inverse stages starting at half-span t (the smallest of the round).
template <int R, class Path, class Table>
__device__ __forceinline__ void gs_round(typename Path::V (&x)[8], const u32 (&blk)[8 >> R],
                                         u32 s_size, u32 t, const Table& tw, const Path& path,
                                         int stage) {
  constexpr int G = 8 >> R;
  constexpr int W = 1 << R;
  const u32 m0 = s_size / (2 * t);
#pragma unroll
  for (int k = 0; k < R; ++k) {
    const int d = 1 << k;
    const u32 m = m0 >> k;
    if (stage + k > 0) path.before_stage(stage + k, x);
#pragma unroll
    for (int g = 0; g < G; ++g) {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        if (j & d) continue;
        path.gs(x[g * W + j], x[g * W + j + d], tw(m, (blk[g] << (R - 1 - k)) + (j >> (k + 1))));
      }
    }
  }
}

/// Fills the local twiddle table of a sub-transform of size s_size whose stage with m groups uses
/// global entries base * m + i: local entry k = m + i (m the largest power of two <= k).
template <class Path>
__device__ __forceinline__ void load_local_twiddles(typename Path::Tw* local, u32 log_s, u32 base,
                                                    const typename Path::Word* __restrict__ tw,
                                                    const typename Path::Word* __restrict__ tws,
                                                    u32 thread, u32 threads, const Path& path) {
  for (u32 k = thread + 1; k < (1u << log_s); k += threads) {
    const u32 m = 1u << (31 - __clz(k));
    const u32 g = base * m + (k - m);
    local[k] = path.twiddle(tw[g], tws[g]);
  }
}

/// One stage over whole polynomials: thread b does the butterfly (p, p + t), p = (b / t) 2t + b %
/// t. Integer path only: its words stay in the lazy ranges both paths read.
template <bool kForward, int kLift>
__global__ void ntt_stage_kernel(NttBatch a, u32 log_t, u32 m, bool last) {
  const u32 limb = blockIdx.y;
  const u32 id = a.ids[row_limb(limb, a.limbs)];
  const auto lift = a.row_lift<kLift>(limb, id, static_cast<std::size_t>(limb) * a.n);
  wait_for_previous_kernels();
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= a.n / 2) return;
  const u64 q = a.moduli[id].value;
  u64* d = a.data + static_cast<std::size_t>(limb) * a.n;
  const u64* in = a.input<kLift != kNoLift>(static_cast<std::size_t>(limb) * a.n);
  const u32 t = 1u << log_t;
  const u32 i = b >> log_t;
  const u32 p = (i << (log_t + 1)) + (b & (t - 1));
  const u64* tw = a.tw + static_cast<std::size_t>(id) * a.n;
  const u64* tws = a.tw_shoup + static_cast<std::size_t>(id) * a.n;
  u64 x = lift(in[p], p), y = lift(in[p + t], p + t);
  if constexpr (kForward) {
    ct_butterfly_8q(x, y, tw[m + i], tws[m + i], q);
    if (last) {
      x = reduce_8q(x, q);
      y = reduce_8q(y, q);
    }
  } else {
    gs_butterfly_4q(x, y, tw[m + i], tws[m + i], q);
    if (last) {
      x = mul_shoup(x, a.n_inv[id], a.n_inv_shoup[id], q);
      y = mul_shoup(y, a.n_inv[id], a.n_inv_shoup[id], q);
    }
  }
  d[p] = x;
  d[p + t] = y;
}

/// Compile-time shape of the round of a size-2^kLogS sub-transform that starts after kDone stages:
/// R stages (3, or what is left), starting half-span 2^kLogT; each of the 8 >> R groups a thread
/// holds has its 2^R values at base + j * 2^kLogU.
template <bool kForward, int kLogS, int kDone>
struct Round {
  static constexpr int R = (kLogS - kDone) >= 3 ? 3 : (kLogS - kDone);
  static constexpr int G = 8 >> R;
  static constexpr int W = 1 << R;
  static constexpr int kLogT = kForward ? kLogS - 1 - kDone : kDone;
  static constexpr int kLogU = kForward ? kLogT - (R - 1) : kLogT;
  static constexpr bool kFirst = kDone == 0;
  static constexpr bool kLast = kDone + R == kLogS;
};

/// Runs every round of one sub-transform of size 2^kLogS held by 2^(kLogS - 3) threads (`tau` is
/// this thread's index among them). All sizes are compile-time constants, so positions, shared
/// addresses and twiddle offsets fold into immediates. `mem` supplies first_load / load / store /
/// last_store (global for the first and last round, shared between) and sync.
template <bool kForward, int kLogS, int kDone, class Mem, class Table>
__device__ __forceinline__ void ntt_rounds(u32 tau, const Table& tw, Mem& mem) {
  if constexpr (kDone < kLogS) {
    using Rd = Round<kForward, kLogS, kDone>;
    using V = typename Mem::Path::V;
    constexpr int R = Rd::R, G = Rd::G, W = Rd::W, LU = Rd::kLogU;
    constexpr u32 kPerSub = 1u << (kLogS - 3);
    u32 blk[G], base[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const u32 gamma = g * kPerSub + tau;
      blk[g] = gamma >> LU;
      base[g] = (blk[g] << (LU + R)) + (gamma & ((1u << LU) - 1));
    }
    V x[8];
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int j = 0; j < W; ++j) {
        if constexpr (Rd::kFirst)
          x[g * W + j] = mem.path.first(mem.first_load(base[g], j << LU));
        else
          x[g * W + j] = mem.load(base[g] + (j << LU));
      }
    mem.sync();  // this round's reads are done (first round: the twiddle table is written)
    if constexpr (kForward)
      ct_round<R>(x, blk, 1u << kLogS, 1u << Rd::kLogT, tw, mem.path, kDone);
    else
      gs_round<R>(x, blk, 1u << kLogS, 1u << Rd::kLogT, tw, mem.path, kDone);
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int j = 0; j < W; ++j) {
        if constexpr (Rd::kLast)
          mem.last_store(base[g], j << LU, x[g * W + j]);
        else
          mem.store(base[g] + (j << LU), x[g * W + j]);
      }
    if constexpr (!Rd::kLast) mem.sync();
    ntt_rounds<kForward, kLogS, kDone + R>(tau, tw, mem);
  }
}

/// A value leaving a kernel: the path's word (the last kernel's fix-up included, see finish).
template <bool kForward, class Path>
__device__ __forceinline__ typename Path::Word leave(const Path& path, typename Path::V v,
                                                     bool last) {
  return last ? path.template finish<kForward>(v) : path.word(v);
}

/// Column memory: value (row p, column h) is d[p * N2 + h] globally and sm[p * 2^kLogSubs + h].
template <bool kForward, int kLogSubs, class P, class Lift>
struct ColumnMem {
  using Path = P;
  using V = typename P::V;
  using Wd = typename P::Word;
  Wd* __restrict__ d;
  const Wd* __restrict__ in;  // d, or the out-of-place source at the same offset
  V* sm;
  u32 h, log_n2;
  bool last;
  P path;
  Lift lift;  // see NttBatch::row_lift
  __device__ __forceinline__ Wd first_load(u32 base, u32 off) const {
    const std::size_t at = ((base + off) << log_n2) + h;
    return lift(in[at], at);
  }
  __device__ __forceinline__ V load(u32 p) const { return sm[(p << kLogSubs) + h]; }
  __device__ __forceinline__ void store(u32 p, V v) const { sm[(p << kLogSubs) + h] = v; }
  __device__ __forceinline__ void last_store(u32 base, u32 off, V v) const {
    d[((base + off) << log_n2) + h] = leave<kForward>(path, v, last);
  }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

/// Where a chunk's position p lies in shared memory: the swizzle spreads the short-stride rounds
/// over all banks.
__device__ __forceinline__ u32 chunk_swizzle(u32 p) { return p ^ ((p >> 4) & 15u); }

/// Chunk memory: value p is d[p] globally and s[chunk_swizzle(p)] in shared memory.
template <bool kForward, class P>
struct ChunkMem {
  using Path = P;
  using V = typename P::V;
  using Wd = typename P::Word;
  Wd* __restrict__ d;
  const Wd* __restrict__ in;  // d, or the out-of-place source at the same offset
  V* s;
  bool last;
  P path;
  ReduceLiftT<Wd> lift;  // see NttBatch::lift
  __device__ __forceinline__ Wd first_load(u32 base, u32 off) const {
    return lift(in[base + off], base + off);
  }
  __device__ __forceinline__ V load(u32 p) const { return s[chunk_swizzle(p)]; }
  __device__ __forceinline__ void store(u32 p, V v) const { s[chunk_swizzle(p)] = v; }
  __device__ __forceinline__ void last_store(u32 base, u32 off, V v) const {
    d[base + off] = leave<kForward>(path, v, last);
  }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

/// The reads and shared-memory rounds of a chunk whose transformed values are not stored as they
/// are: value p is in[p] at first and s[chunk_swizzle(p)] between rounds. The fused 32-bit
/// kernels' memories derive from it and add last_store.
template <class P>
struct ChunkRounds {
  using Path = P;
  using V = typename P::V;
  using Wd = typename P::Word;
  const Wd* __restrict__ in;  // the chunk's first word
  V* s;
  P path;
  __device__ __forceinline__ Wd first_load(u32 base, u32 off) const { return in[base + off]; }
  __device__ __forceinline__ V load(u32 p) const { return s[chunk_swizzle(p)]; }
  __device__ __forceinline__ void store(u32 p, V v) const { s[chunk_swizzle(p)] = v; }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

/// Calls f(path) with the limb's arithmetic: FloatPath for primes of at most a.float_bits bits,
/// IntPath otherwise (in mixed launches a warp-uniform branch: a block or warp works on one limb).
template <bool kForward, NttPaths kPaths, class WordT, class F>
__device__ __forceinline__ void with_path(const NttBatchT<WordT>& a, u32 id, F&& f) {
  const WordT q = a.moduli[id].value;
  if constexpr (sizeof(WordT) == 4) {
    static_assert(kPaths == NttPaths::kInt, "32-bit words take the integer path only");
    f(IntegerPath<false, WordT>{q, a.n_inv[id], a.n_inv_shoup[id], 0});
  } else if constexpr (kPaths == NttPaths::kFloat) {
    f(FloatPath::make<kForward>(q, a.n_inv[id]));
  } else if constexpr (kPaths == NttPaths::kInt) {
    // Forward only, and for the integer-only launches (the big integer schemes' primes): a
    // block-uniform branch, each side compiled with its own butterfly.
    if constexpr (kForward) {
      if (bit_length(q) <= static_cast<int>(a.unreduced_bits)) {
        f(IntegerPath<true>{q, a.n_inv[id], a.n_inv_shoup[id], a.moduli[id].ratio_hi});
        return;
      }
    }
    f(IntPath{q, a.n_inv[id], a.n_inv_shoup[id], 0});
  } else {
    if (float_path(a, q))
      f(FloatPath::make<kForward>(q, a.n_inv[id]));
    else
      f(IntPath{q, a.n_inv[id], a.n_inv_shoup[id], 0});
  }
}

/// Column phase: a block transforms 2^kLogSubs adjacent columns of 2^kLogRows values (stride
/// N2 = N >> kLogRows). Thread (tau, h) with h the fastest index, so a warp touches whole 128-byte
/// rows (16 columns) in global and shared memory alike: coalesced and free of bank conflicts.
/// 40 registers per thread (no spills) let 48 warps share an SM: more warps to hide the global
/// loads and barriers of each block.
template <int kThreads>
inline constexpr int kColumnMinBlocks = kThreads >= 1536 ? 1
                                                         : (kThreads >= 48 ? 1536 / kThreads : 32);

template <bool kForward, int kLogRows, int kLogSubs, NttPaths kPaths, int kLift, class WordT = u64>
__global__ void __launch_bounds__(1 << (kLogRows + kLogSubs - 3),
                                  kColumnMinBlocks<(1 << (kLogRows + kLogSubs - 3))>)
    ntt_column_kernel(NttBatchT<WordT> a, bool last) {
  extern __shared__ u64 sm[];
  const u32 limb = blockIdx.y;
  const u32 id = a.ids[row_limb(limb, a.limbs)];
  const u32 h = threadIdx.x & ((1u << kLogSubs) - 1);
  const u32 tau = threadIdx.x >> kLogSubs;
  const std::size_t offset = static_cast<std::size_t>(limb) * a.n + (blockIdx.x << kLogSubs);
  with_path<kForward, kPaths>(a, id, [&](const auto& path) {
    using P = std::decay_t<decltype(path)>;
    using V = typename P::V;
    const auto lift = a.template row_lift<kLift>(limb, id, offset);
    ColumnMem<kForward, kLogSubs, P, std::decay_t<decltype(lift)>> mem{
        a.data + offset,
        a.template input<kLift != kNoLift>(offset),
        reinterpret_cast<V*>(sm),
        h,
        static_cast<u32>(__ffs(a.n) - 1 - kLogRows),
        last,
        path,
        lift};
    // Column stages use global entries m + i (base 1): the first N1 entries, shared by all
    // columns.
    auto* twl =
        reinterpret_cast<typename P::Tw*>(reinterpret_cast<V*>(sm) + (1u << (kLogRows + kLogSubs)));
    load_local_twiddles(twl, kLogRows, 1u, a.tw + static_cast<std::size_t>(id) * a.n,
                        a.tw_shoup + static_cast<std::size_t>(id) * a.n, threadIdx.x, blockDim.x,
                        path);
    wait_for_previous_kernels();  // the twiddle gather above overlaps the previous kernel
    ntt_rounds<kForward, kLogRows, 0>(tau, LocalTwiddles<typename P::Tw>{twl}, mem);
  });
}

/// Chunk phase: a block transforms `subs` chunks of 2^kLogS contiguous values (chunk index
/// blockIdx.x * subs + h, N1 = N >> kLogS chunks per limb), each with its own twiddle table.
template <bool kForward, int kLogS, NttPaths kPaths, bool kLifted, class WordT = u64>
__global__ void ntt_chunk_kernel(NttBatchT<WordT> a, u32 subs, bool last) {
  extern __shared__ u64 sm[];
  const u32 limb = blockIdx.y;
  const u32 id = a.ids[row_limb(limb, a.limbs)];
  constexpr u32 kPerSub = 1u << (kLogS - 3);
  const u32 h = threadIdx.x / kPerSub;
  const u32 tau = threadIdx.x % kPerSub;
  const u32 chunk = blockIdx.x * subs + h;
  const u32 n1 = a.n >> kLogS;
  const std::size_t offset =
      static_cast<std::size_t>(limb) * a.n + (static_cast<std::size_t>(chunk) << kLogS);
  with_path<kForward, kPaths>(a, id, [&](const auto& path) {
    using P = std::decay_t<decltype(path)>;
    using V = typename P::V;
    ChunkMem<kForward, P> mem{a.data + offset,
                              a.template input<kLifted>(offset),
                              reinterpret_cast<V*>(sm) + (static_cast<std::size_t>(h) << kLogS),
                              kForward ? a.template finishes<P>(last) : last,
                              path,
                              a.template lift<kLifted>(id)};
    // Chunk j's stage with m local groups uses global entries (N1 + j) m + i: gathered per chunk.
    auto* twl = reinterpret_cast<typename P::Tw*>(reinterpret_cast<V*>(sm) +
                                                  (static_cast<std::size_t>(subs) << kLogS)) +
                (static_cast<std::size_t>(h) << kLogS);
    load_local_twiddles(twl, kLogS, n1 + chunk, a.tw + static_cast<std::size_t>(id) * a.n,
                        a.tw_shoup + static_cast<std::size_t>(id) * a.n, tau, kPerSub, path);
    wait_for_previous_kernels();  // the twiddle gather above overlaps the previous kernel
    ntt_rounds<kForward, kLogS, 0>(tau, LocalTwiddles<typename P::Tw>{twl}, mem);
  });
}

/// A store that takes a forward chunk's values in the path's own representation (the fused key
/// product's FP64 sums) instead of words.
template <class Store, class V, class = void>
struct TakesValues : std::false_type {};
template <class Store, class V>
struct TakesValues<
    Store, V,
    std::void_t<decltype(std::declval<const Store&>().take_values(std::declval<const V (&)[8]>()))>>
    : std::true_type {};

/// Stores a lane's eight results at their place: `row` is the limb of the batch, `offset` the
/// position of the first value within the limb (forward chunks: eight adjacent values per lane).
struct PlainStore {
  u64* data;
  u32 n;
  __device__ __forceinline__ void operator()(u32 row, u32 offset, const u64 (&x)[8]) const {
    ulonglong2* dst =
        reinterpret_cast<ulonglong2*>(data + static_cast<std::size_t>(row) * n + offset);
#pragma unroll
    for (int v = 0; v < 4; ++v) dst[v] = make_ulonglong2(x[2 * v], x[2 * v + 1]);
  }
  /// Value j of a lane at position at(j) of the chunk starting at `offset` (inverse chunks: a
  /// warp's store instruction writes 32 adjacent words).
  template <class At>
  __device__ __forceinline__ void spread(u32 row, u32 offset, const u64 (&x)[8],
                                         const At& at) const {
    u64* dst = data + static_cast<std::size_t>(row) * n + offset;
#pragma unroll
    for (int j = 0; j < 8; ++j) dst[at(j)] = x[j];
  }
};

/// Stores out[k] = (a[k] - x) * mul[j] (+ addend[k]) for row k * limbs + j instead of x: the
/// affine map of a division (ModDown, rescale) applied as the forward NTT's last store.
struct AffineStore {
  const AffineArgs* args;  // the kernel's __grid_constant__ parameter: read in place
  const u64* mul;
  const u64* mul_companion;
  const Modulus* moduli;
  const u32* ids;
  u32 n, limbs;
  __device__ __forceinline__ void operator()(u32 row, u32 offset, const u64 (&x)[8]) const {
    const AffineRow r = affine_row(*args, mul, mul_companion, moduli, ids, n, limbs, row, offset);
    const u64 q = r.q, m = r.mul, mc = r.mul_companion;
    // 16-byte accesses: the row's eight words are this lane's.
    const ulonglong2* src = reinterpret_cast<const ulonglong2*>(r.a);
    const ulonglong2* add = r.addend ? reinterpret_cast<const ulonglong2*>(r.addend) : nullptr;
    ulonglong2* dst = reinterpret_cast<ulonglong2*>(r.out);
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const ulonglong2 av = src[v];
      u64 lo = affine_word(av.x, x[2 * v], m, mc, q);
      u64 hi = affine_word(av.y, x[2 * v + 1], m, mc, q);
      if (add) {
        const ulonglong2 dv = add[v];
        lo = add_mod(lo, dv.x, q);
        hi = add_mod(hi, dv.y, q);
      }
      dst[v] = make_ulonglong2(lo, hi);
    }
  }
};

/// Where position p of a warp's 256-value chunk lies in the warp's shared memory. The transposes
/// below access it in five patterns (lane l, register j; forward: 32 j + l, 32 (l / 4) + 4 j +
/// l % 4, 8 l + j; inverse: 8 l + j, 64 (l / 8) + 8 j + l % 8, 32 j' + l): for each, the XOR of
/// bits 4..6 into bits 0..3 sends a half-warp's 16 words to 16 different 8-byte bank pairs.
__device__ __forceinline__ u32 warp_swizzle(u32 p) {
  return p ^ ((p >> 4) & 7u) ^ ((((p >> 5) ^ (p >> 6)) & 1u) << 3);
}

/// A lane's positions in one of the warp chunk's layouts: value j at lane_part | j_part(j) (the
/// two have no bit in common).
template <class JPart>
struct WarpLayout {
  u32 lane_part;
  JPart j_part;  // constexpr in j
  __device__ __forceinline__ u32 operator()(int j) const { return lane_part | j_part(j); }
  /// warp_swizzle(position of j): the swizzle is linear over XOR, so one XOR with the lane's
  /// swizzled part per access, the rest folds into a constant.
  __device__ __forceinline__ u32 swizzled(u32 lane_swizzled, int j) const {
    return lane_swizzled ^ warp_swizzle(j_part(j));
  }
};
template <class JPart>
__device__ __forceinline__ WarpLayout<JPart> warp_layout(u32 lane_part, JPart j_part) {
  return {lane_part, j_part};
}

/// Rewrites a lane's eight values from layout `from` to layout `to` through the warp's shared
/// memory. The first __syncwarp keeps the writes behind every lane's reads of the previous
/// exchange; the second makes them visible.
template <class V, class From, class To>
__device__ __forceinline__ void warp_exchange(V (&x)[8], V* s, const From& from, const To& to) {
  const u32 fs = warp_swizzle(from.lane_part), ts = warp_swizzle(to.lane_part);
  __syncwarp();
#pragma unroll
  for (int j = 0; j < 8; ++j) s[from.swizzled(fs, j)] = x[j];
  __syncwarp();
#pragma unroll
  for (int j = 0; j < 8; ++j) x[j] = s[to.swizzled(ts, j)];
}

/// Warp chunk transform (fine-grained synchronization, HE-Booster): one warp transforms a chunk of
/// 256 contiguous values, eight per lane, in three rounds on registers (radix 8, 8, 4) with two
/// transposes through the warp's own 2 KB of shared memory between them: warp barriers only, and
/// two shared-memory round trips per value instead of a pair of shuffles and selects per stage.
/// Forward: lane l holds positions 32 j + l (stages of half-span 128, 64, 32), then
/// 32 (l / 4) + 4 j + l % 4 (16, 8, 4), then 8 l + j (2, 1), stored as eight adjacent words.
/// Inverse: the mirror image, from 8 l + j to 64 (l / 8) + 8 j + l % 8 to 32 j' + l. Each round's
/// twiddles are fetched during the round before (the first round's before the previous kernel
/// has finished). n1 = N / 256 chunks per limb; `store` writes the results.
template <bool kForward, class Path, class Store>
__device__ __forceinline__ void warp_chunk_with(const NttBatch& a, u32 limb, u32 chunk, u32 id,
                                                bool last, const Path& path, const Store& store,
                                                u64* smem) {
  using V = typename Path::V;
  V* s = reinterpret_cast<V*>(smem);
  const u32 lane = threadIdx.x & 31;
  const GlobalTwiddles<Path> tw{a.tw + static_cast<std::size_t>(id) * a.n,
                                a.tw_shoup + static_cast<std::size_t>(id) * a.n, (a.n >> 8) + chunk,
                                &path};
  const u32 offset = chunk * 256u;
  const std::size_t at = static_cast<std::size_t>(limb) * a.n + offset;
  const u32 zero[1] = {0};
  V x[8];
  if constexpr (kForward) {
    // The three rounds' layouts (see above).
    const auto p1 = warp_layout(lane, [](int j) { return 32u * j; });
    const auto p2 = warp_layout(32u * (lane >> 2) + (lane & 3), [](int j) { return 4u * j; });
    const auto p3 = warp_layout(8u * lane, [](int j) { return u32(j); });
    const auto tw1 = hold_twiddles<3, 1, 1>(tw, 0);
    wait_for_previous_kernels();
    // Never lifted (launch/ntt.cu starts lifted batches with another kernel).
    const u64* src = a.input<false>(at);
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = path.first(src[p1(j)]);
    const auto tw2 = hold_twiddles<3, 1, 8>(tw, lane >> 2);
    ct_round<3>(x, zero, 256, 128, tw1, path, 0);
    warp_exchange(x, s, p1, p2);
    const auto tw3 = hold_twiddles<2, 2, 64>(tw, lane);
    ct_round<3>(x, zero, 256, 16, tw2, path, 3);
    warp_exchange(x, s, p2, p3);
    const u32 groups[2] = {0, 1};
    ct_round<2>(x, groups, 256, 2, tw3, path, 6);
    if constexpr (TakesValues<Store, V>::value) {
      store.take_values(x);
    } else {
      u64 out[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) out[j] = leave<true>(path, x[j], last);
      store(limb, offset + lane * 8u, out);
    }
  } else {
    static_assert(std::is_same_v<Store, PlainStore>, "inverse chunks store plainly");
    const auto p1 = warp_layout(8u * lane, [](int j) { return u32(j); });
    const auto p2 = warp_layout(((lane >> 3) << 6) | (lane & 7), [](int j) { return u32(j) << 3; });
    // Register j holds bits (5, 6, 7) = (j >> 2, j & 1, (j >> 1) & 1) of the position, so that
    // the last radix-4 round's pairs are (j, j + 1) and (j, j + 2).
    const auto p3 = warp_layout(lane, [](int j) { return 32u * (((j & 3) << 1) | (j >> 2)); });
    const auto tw1 = hold_twiddles<3, 1, 32>(tw, lane);
    wait_for_previous_kernels();
    const ulonglong2* src = reinterpret_cast<const ulonglong2*>(a.input<false>(at) + p1.lane_part);
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const ulonglong2 w = src[v];
      x[2 * v] = path.first(w.x);
      x[2 * v + 1] = path.first(w.y);
    }
    const auto tw2 = hold_twiddles<3, 1, 4>(tw, lane >> 3);
    gs_round<3>(x, zero, 256, 1, tw1, path, 0);
    warp_exchange(x, s, p1, p2);
    const auto tw3 = hold_twiddles<2, 1, 1>(tw, 0);
    gs_round<3>(x, zero, 256, 8, tw2, path, 3);
    warp_exchange(x, s, p2, p3);
    const u32 same[2] = {0, 0};
    gs_round<2>(x, same, 256, 64, tw3, path, 6);
    u64 out[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = leave<false>(path, x[j], last);
    store.spread(limb, offset, out, p3);
  }
}

/// Two warps per block (see launch/ntt.cu); at most 80 registers (12 blocks per SM), each warp
/// with its chunk's 2 KB of shared memory.
inline constexpr int kWarpChunkThreads = 64;

template <bool kForward, NttPaths kPaths, class Store>
__device__ __forceinline__ void warp_chunk(const NttBatch& a, u32 chunks_total, bool last,
                                           const Store& store) {
  __shared__ alignas(16) u64 values[kWarpChunkThreads / 32][256];
  const u32 warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (warp >= chunks_total) return;
  const RowChunk rc = row_chunk(warp, a.n);
  const u32 limb = rc.row;
  const u32 id = a.ids[row_limb(limb, a.limbs)];
  with_path<kForward, kPaths>(a, id, [&](const auto& path) {
    using P = std::decay_t<decltype(path)>;
    warp_chunk_with<kForward>(a, limb, rc.chunk, id, kForward ? a.finishes<P>(last) : last, path,
                              store, values[threadIdx.x >> 5]);
  });
}

/// kBlocks per SM: 12 (80 registers, no spills), or 16 (64 registers, the inverse integer-path
/// kernel spills 24 bytes), which measured faster for batches that fit one wave at 12 (see
/// launch/ntt.cu).
template <bool kForward, NttPaths kPaths, int kBlocks = 12>
__global__ void __launch_bounds__(kWarpChunkThreads, kBlocks)
    ntt_warp_chunk_kernel(NttBatch a, u32 chunks_total, bool last) {
  warp_chunk<kForward, kPaths>(a, chunks_total, last, PlainStore{a.data, a.n});
}

/// The forward warp chunks with a division's affine map as their store (see AffineStore).
template <NttPaths kPaths>
__global__ void __launch_bounds__(kWarpChunkThreads, 10)  // 12 would spill the store's pointers
    ntt_warp_chunk_affine_kernel(NttBatch a, u32 chunks_total,
                                 const __grid_constant__ AffineArgs args, const u64* mul,
                                 const u64* mul_companion) {
  warp_chunk<true, kPaths>(a, chunks_total, true,
                           AffineStore{&args, mul, mul_companion, a.moduli, a.ids, a.n, a.limbs});
}

}  // namespace ember::cuda::kernels
