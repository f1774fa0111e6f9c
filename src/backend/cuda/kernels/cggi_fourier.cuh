// CGGI's blind rotation on the GPU, in two forms: C ciphertexts per block sharing every read of
// the bootstrapping key (throughput), and one ciphertext per cluster of k+1 blocks (latency).
// The accumulators, the CMux's folded digit spectra and their products live in shared memory;
// FFT passes of up to 16 points run in registers, with the transform's size a compile-time
// constant so that index arithmetic folds away. All arithmetic comes from backend/cggi_fft.h in
// the CPU backend's order, so every result equals the CPU's bit for bit.
#pragma once

#include <cooperative_groups.h>

#include <cstddef>
#include <cstdint>

#include "ember/backend/cggi_fft.h"
#include "kernels/cggi.cuh"

namespace ember::cuda::kernels {

using backend::cggi::Cx;

/// Transform sizes (log2 of N / 2) the Fourier kernels are built for: N = 256 .. 2048.
inline constexpr int kFourierMinLog = 7, kFourierMaxLog = 10;

/// The FFT's passes for 2^kLog values: stages per pass, at most 4 (16 values in registers),
/// as even as possible (8 = 4 + 4, 9 = 3 + 3 + 3, 10 = 4 + 3 + 3). The inverse runs them in
/// reverse order, so that its first pass (unit stride) has the forward's last size.
template <int kLog, int kMaxStages = 4>
struct FourierPlan {
  static constexpr int passes = (kLog + kMaxStages - 1) / kMaxStages;
  static constexpr int stages(int p) {  // forward pass p
    const int base = kLog / passes, extra = kLog % passes;
    return base + (p < extra ? 1 : 0);
  }
  /// The swizzle's shift: the unit-stride passes read 2^last values per thread, whose threads
  /// sit 2^last apart; XORing the low three bits with the three above them spreads a quarter
  /// warp's 16-byte reads over the eight bank groups.
  static constexpr int last = stages(passes - 1);
  static __device__ __forceinline__ u32 swz(u32 pos) { return pos ^ ((pos >> last) & 7u); }
};

/// Where twiddle x sits in shared memory: the unit-stride passes' threads read twiddles 2^u
/// apart at their stage u (u < 4); XORing the low three bits with the next three sends a quarter
/// warp's reads to eight different bank groups at every u (the strided passes broadcast).
__device__ __forceinline__ u32 tw_swz(u32 x) { return x ^ ((x >> 3) & 7u); }

/// One forward pass (fft_forward's stages m = 2^log_m0 .. 2^(log_m0 + kStages - 1)) over `rows`
/// rows of 2^kLog values at `a + row_offset(row)`, groups of 2^kStages values in registers.
template <class Plan, int kLog, int kStages, class RowOffset>
__device__ __forceinline__ void fourier_ct_pass(Cx* a, u32 rows, RowOffset row_offset, int log_m0,
                                                const Cx* tw) {
  constexpr u32 R = 1u << kStages, log_groups = kLog - kStages;
  const u32 log_t0 = kLog - 1 - log_m0, log_s = log_t0 + 1 - kStages;
  const u32 total = rows << log_groups;
  for (u32 w = threadIdx.x; w < total; w += blockDim.x) {
    const u32 row = w >> log_groups, g = w & ((1u << log_groups) - 1);
    const u32 pos0 = ((g >> log_s) << (log_t0 + 1)) + (g & ((1u << log_s) - 1));
    Cx* x = a + row_offset(row);
    Cx v[R];
#pragma unroll
    for (u32 q = 0; q < R; ++q) v[q] = x[Plan::swz(pos0 + (q << log_s))];
#pragma unroll
    for (u32 u = 0; u < kStages; ++u) {
      const u32 half = R >> (u + 1), log_t = log_t0 - u, m = 1u << (log_m0 + u);
#pragma unroll
      for (u32 q = 0; q < R; ++q) {
        if (q & half) continue;
        cg::cx_ct(v[q], v[q + half], tw[tw_swz(m + ((pos0 + (q << log_s)) >> (log_t + 1)))]);
      }
    }
#pragma unroll
    for (u32 q = 0; q < R; ++q) x[Plan::swz(pos0 + (q << log_s))] = v[q];
  }
}

/// One unscaled inverse pass (fft_inverse_unscaled's stages t = 2^log_t0 .. ), its twiddles
/// the conjugates of the forward table's (exactly the values of the CPU's itw table).
template <class Plan, int kLog, int kStages, class RowOffset>
__device__ __forceinline__ void fourier_gs_pass(Cx* a, u32 rows, RowOffset row_offset, int log_t0,
                                                const Cx* tw) {
  constexpr u32 R = 1u << kStages, log_groups = kLog - kStages;
  const u32 total = rows << log_groups;
  for (u32 w = threadIdx.x; w < total; w += blockDim.x) {
    const u32 row = w >> log_groups, g = w & ((1u << log_groups) - 1);
    const u32 pos0 = ((g >> log_t0) << (log_t0 + kStages)) + (g & ((1u << log_t0) - 1));
    Cx* x = a + row_offset(row);
    Cx v[R];
#pragma unroll
    for (u32 q = 0; q < R; ++q) v[q] = x[Plan::swz(pos0 + (q << log_t0))];
#pragma unroll
    for (u32 u = 0; u < kStages; ++u) {
      const u32 step = 1u << u, log_t = log_t0 + u, h = 1u << (kLog - 1 - log_t);
#pragma unroll
      for (u32 q = 0; q < R; ++q) {
        if (q & step) continue;
        const Cx w = tw[tw_swz(h + ((pos0 + (q << log_t0)) >> (log_t + 1)))];
        cg::cx_gs(v[q], v[q + step], Cx{w.re, -w.im});
      }
    }
#pragma unroll
    for (u32 q = 0; q < R; ++q) x[Plan::swz(pos0 + (q << log_t0))] = v[q];
  }
}

/// Forward FFTs of `rows` rows in shared memory, pass by pass; ends with a barrier.
template <int kLog, int kMax = 4, int kPass = 0, class RowOffset>
__device__ __forceinline__ void block_fft_forward(Cx* a, u32 rows, RowOffset off, const Cx* tw,
                                                  int log_m0 = 0) {
  using Plan = FourierPlan<kLog, kMax>;
  if constexpr (kPass < Plan::passes) {
    constexpr int stages = Plan::stages(kPass);
    fourier_ct_pass<Plan, kLog, stages>(a, rows, off, log_m0, tw);
    __syncthreads();
    block_fft_forward<kLog, kMax, kPass + 1>(a, rows, off, tw, log_m0 + stages);
  }
}

/// Unscaled inverse FFTs of `rows` rows in shared memory, the forward's passes in reverse;
/// ends with a barrier.
template <int kLog, int kMax = 4, int kPass = FourierPlan<kLog, kMax>::passes - 1, class RowOffset>
__device__ __forceinline__ void block_fft_inverse(Cx* a, u32 rows, RowOffset off, const Cx* tw,
                                                  int log_t0 = 0) {
  using Plan = FourierPlan<kLog, kMax>;
  if constexpr (kPass >= 0) {
    constexpr int stages = Plan::stages(kPass);
    fourier_gs_pass<Plan, kLog, stages>(a, rows, off, log_t0, tw);
    __syncthreads();
    block_fft_inverse<kLog, kMax, kPass - 1>(a, rows, off, tw, log_t0 + stages);
  }
}

/// Rows of spectra a grouped rotation keeps per ciphertext: the (k+1) l digit rows, the
/// (k+1) x limbs product rows written over them when there is one limb (after a barrier),
/// after them otherwise.
inline std::size_t fourier_region_rows(const CggiShape& s) {
  return s.limbs == 1 ? s.rows() : s.rows() + (s.k + 1) * s.limbs;
}

/// Shared memory of a grouped rotation of C ciphertexts: the twiddles, C regions of spectra of
/// N / 2 values, C accumulators of (k+1) N words, C x n CMux exponents (u16).
inline std::size_t fourier_rotate_smem(const CggiShape& s, int C) {
  const std::size_t half = s.N / 2;
  return (half + C * fourier_region_rows(s) * half) * sizeof(Cx) +
         C * (s.k + 1) * s.N * s.word_bytes() + (C * s.n * sizeof(std::uint16_t) + 15) / 16 * 16;
}

/// Threads of a grouped rotation's block when each takes `items` products (output
/// polynomial, frequency): (k+1) N / 2 / items.
inline std::size_t fourier_rotate_threads(const CggiShape& s, int items) {
  return (s.k + 1) * s.N / 2 / items;
}

/// Asks for the line holding p in this SM's L1 cache (the key's values of the coming products:
/// issued at the start of a CMux, they arrive while its digits are made and transformed).
__device__ __forceinline__ void prefetch_l1(const void* p) {
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
}

/// Coefficient j of X^e p (negacyclic, n coefficients, e in [0, 2n)), 32-bit indices.
template <class T>
__device__ __forceinline__ T rotated_word(const T* p, u32 n, u32 e, u32 j) {
  const bool flip = e >= n;
  const u32 s = flip ? e - n : e;
  const bool wrap = j < s;
  const T v = p[wrap ? j + n - s : j - s];
  return (wrap != flip) ? static_cast<T>(T{0} - v) : v;
}

/// One key polynomial per thread to the Fourier domain (cggi::fourier_key_polynomial, in place
/// in `out`): a one-time transform, kept to the CPU's very function.
template <class T>
__global__ void cggi_key_to_fourier_kernel(Cx* out, const T* in, std::size_t polys,
                                           std::size_t half, const Cx* tw, int limb_bits,
                                           int limbs) {
  const std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  wait_for_previous_kernels();
  if (t >= polys) return;
  cg::fourier_key_polynomial(out + t * limbs * half, in + t * 2 * half, half, tw, limb_bits, limbs);
}

/// The k+1 polynomials of X^e acc - acc of one ciphertext... (see the kernels): digits of
/// coefficients j and j + N/2 of polynomial p folded into one complex value per level, written
/// to rows p l .. p l + l - 1 at `dst` (2^kLog values apart).
template <class Plan, int kLog, class T>
__device__ __forceinline__ void fold_digits(Cx* dst, const T* a, u32 e, u32 j, int base_log,
                                            int levels) {
  constexpr u32 half = 1u << kLog, N = 2 * half;
  const T lo = static_cast<T>(rotated_word(a, N, e, j) - a[j]);
  const T hi = static_cast<T>(rotated_word(a, N, e, j + half) - a[j + half]);
  Cx* d = dst + Plan::swz(j);
  cg::decompose_pair_each(lo, hi, base_log, levels, [&](int l, cg::i64 x, cg::i64 y) {
    d[l << kLog] = Cx{static_cast<double>(x), static_cast<double>(y)};
  });
}

/// Coefficients j and j + N/2 of an accumulator polynomial `a` += the nearest integers of the
/// `limbs` folded product values at `first`, 2^kLog values apart, limb c times 2^(c limb_bits)
/// (the CPU's Rotation::accumulate).
template <int kLog, class T>
__device__ __forceinline__ void add_rounded_limbs(T* a, u32 j, const Cx* first, u32 limbs,
                                                  int limb_bits) {
  constexpr u32 half = 1u << kLog;
  T lo = a[j], hi = a[j + half];
  for (u32 c = 0; c < limbs; ++c) {
    const Cx v = first[c << kLog];
    const int shift = static_cast<int>(c) * limb_bits;
    lo = static_cast<T>(lo + cg::limb_to_torus<T>(v.re, shift));
    hi = static_cast<T>(hi + cg::limb_to_torus<T>(v.im, shift));
  }
  a[j] = lo;
  a[j + half] = hi;
}

/// Block b rotates ciphertexts [b C, b C + C) (those past `count` ride along on zeros): acc =
/// X^-b test, then for each i a CMux by GGSW i (digits of X^e acc - acc folded, forward FFTs,
/// products with the key's limbs summed over the rows in row order, unscaled inverse FFTs,
/// nearest integers added limb by limb), then the constant coefficient's extraction.
/// N = 2^(kLog + 1); threads: (k+1) N / 2 / kItems.
template <class T, int kLog, int C, int kItems>
__global__ void __launch_bounds__(512)
    cggi_blind_rotate_fourier_kernel(T* out, const T* in, const T* test, std::size_t test_stride,
                                     std::size_t count, CggiShape s, BootstrapKeyView bsk) {
  using Plan = FourierPlan<kLog>;
  extern __shared__ Cx fourier_shared[];
  constexpr u32 half = 1u << kLog, N = 2 * half;
  const u32 k = static_cast<u32>(s.k), L = static_cast<u32>(s.bk_levels);
  const u32 rows = (k + 1) * L, outs = k + 1, n_small = static_cast<u32>(s.n);
  const u32 limbs = static_cast<u32>(s.limbs), prods = outs * limbs;
  const u32 region = limbs == 1 ? rows : rows + prods, p0 = limbs == 1 ? 0 : rows;
  Cx* tw = fourier_shared;
  Cx* spectra = tw + half;                                                     // [c][region][half]
  T* acc = reinterpret_cast<T*>(spectra + C * region * half);                  // [c][out][N]
  std::uint16_t* exps = reinterpret_cast<std::uint16_t*>(acc + C * outs * N);  // [c][n]
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * C;
  wait_for_previous_kernels();
  const Cx* gtw = static_cast<const Cx*>(bsk.forward);
  for (u32 j = threadIdx.x; j < half; j += blockDim.x) tw[tw_swz(j)] = gtw[j];
  constexpr int log2_2n = kLog + 2;
  for (u32 w = threadIdx.x; w < C * outs * N; w += blockDim.x) {
    const u32 c = w / (outs * N), r = w % (outs * N), o = r / N, j = r % N;
    T v = 0;
    if (o == k && first + c < count) {
      const u32 b = cg::mod_switch(in[(first + c) * (s.n + 1) + s.n], log2_2n);
      v = rotated_word(test + (first + c) * test_stride, N, (2 * N - b) % (2 * N), j);
    }
    acc[w] = v;
  }
  // Every CMux's exponent up front: one coalesced read instead of a global load per step.
  for (u32 w = threadIdx.x; w < C * n_small; w += blockDim.x) {
    const u32 c = w / n_small, i = w % n_small;
    exps[w] =
        first + c < count
            ? static_cast<std::uint16_t>(cg::mod_switch(in[(first + c) * (s.n + 1) + i], log2_2n))
            : std::uint16_t{0};
  }
  __syncthreads();
  const Cx* key_base = static_cast<const Cx*>(bsk.ggsw);
  const u32 key_values = rows * prods * half;
  const auto prod_rows = [region, p0, prods](u32 r) {
    return ((r / prods) * region + p0 + r % prods) << kLog;
  };
  for (u32 i = 0; i < n_small; ++i) {
    u32 e[C];
    bool any = false;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      e[c] = exps[c * n_small + i];
      any |= e[c] != 0;
    }
    if (!any) continue;  // X^0 for all: the CMuxes add nothing (uniform over the block)
    const Cx* key = key_base + static_cast<std::size_t>(i) * key_values;
    if (limbs == 1) {
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const u32 item = threadIdx.x + q * blockDim.x, o = item >> kLog, f = item & (half - 1);
        if (o < outs)
          for (u32 r = 0; r < rows; ++r) prefetch_l1(key + (r * outs + o) * half + f);
      }
    }
    for (u32 w = threadIdx.x; w < C * outs * half; w += blockDim.x) {
      const u32 c = w / (outs * half), r = w % (outs * half), p = r >> kLog, j = r & (half - 1);
      u32 ec = e[0];
#pragma unroll
      for (int q = 1; q < C; ++q)
        if (c == static_cast<u32>(q)) ec = e[q];
      fold_digits<Plan, kLog>(spectra + ((c * region + p * L) << kLog), acc + (c * outs + p) * N,
                              ec, j, s.bk_base_log, s.bk_levels);
    }
    __syncthreads();
    const auto digit_rows = [region, rows](u32 r) {
      return ((r / rows) * region + r % rows) << kLog;
    };
    block_fft_forward<kLog>(spectra, C * rows, digit_rows, tw);
    // Products with the key: item (output x limb, f) sums over the rows for all C ciphertexts,
    // each key value read once.
    for (u32 base = 0; base < prods * half; base += kItems * blockDim.x) {
      Cx prod[kItems][C];
#pragma unroll
      for (int q = 0; q < kItems; ++q)
#pragma unroll
        for (int c = 0; c < C; ++c) prod[q][c] = Cx{0.0, 0.0};
#pragma unroll 2
      for (u32 r = 0; r < rows; ++r) {
        Cx kv[kItems];
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
          const u32 item = base + threadIdx.x + q * blockDim.x, oc = item >> kLog,
                    f = item & (half - 1);
          kv[q] = oc < prods ? key[(r * prods + oc) * half + f] : Cx{0.0, 0.0};
        }
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
          const u32 item = base + threadIdx.x + q * blockDim.x, f = item & (half - 1);
          if ((item >> kLog) >= prods) continue;
#pragma unroll
          for (int c = 0; c < C; ++c)
            prod[q][c] =
                cg::cx_mac(prod[q][c], spectra[((c * region + r) << kLog) + Plan::swz(f)], kv[q]);
        }
      }
      if (limbs == 1) __syncthreads();  // the products replace digit rows still being read
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const u32 item = base + threadIdx.x + q * blockDim.x, oc = item >> kLog,
                  f = item & (half - 1);
        if (oc >= prods) continue;
#pragma unroll
        for (int c = 0; c < C; ++c)
          spectra[((c * region + p0 + oc) << kLog) + Plan::swz(f)] = prod[q][c];
      }
    }
    __syncthreads();
    block_fft_inverse<kLog>(spectra, C * prods, prod_rows, tw);
    for (u32 w = threadIdx.x; w < C * outs * half; w += blockDim.x) {
      const u32 c = w / (outs * half), r = w % (outs * half), o = r >> kLog, j = r & (half - 1);
      add_rounded_limbs<kLog>(acc + (c * outs + o) * N, j,
                              spectra + ((c * region + p0 + o * limbs) << kLog) + Plan::swz(j),
                              limbs, s.limb_bits);
    }
    __syncthreads();
  }
  // Sample extraction of the constant coefficient (cg::sample_extract, one word per thread).
  for (u32 w = threadIdx.x; w < C * (k * N + 1); w += blockDim.x) {
    const u32 c = w / (k * N + 1), t = w % (k * N + 1);
    if (first + c >= count) continue;
    const T* a = acc + c * outs * N;
    T* o = out + (first + c) * (k * N + 1);
    if (t == k * N) {
      o[t] = a[k * N];
    } else {
      const u32 p = t / N, j = t % N;
      o[t] = j == 0 ? a[p * N] : static_cast<T>(T{0} - a[p * N + N - j]);
    }
  }
}

/// Most stages per FFT pass of the cluster rotation: its blocks transform only L rows (or a
/// few), so shorter passes put more threads to work on the serial chain.
inline constexpr int kClusterStages = 3;

/// Shared memory of one block of a cluster rotation: twiddles, two buffers of the block's L
/// digit rows, its limbs' product rows, (when `staged`) the key's rows of its output, its
/// polynomial of the accumulator, the exponents, the key copy's barrier.
inline std::size_t fourier_cluster_smem(const CggiShape& s, bool staged) {
  const std::size_t half = s.N / 2;
  const std::size_t keys = staged ? s.rows() * s.limbs * half : 0;
  return (half + 2 * s.bk_levels * half + s.limbs * half + keys) * sizeof(Cx) +
         s.N * s.word_bytes() + (s.n * sizeof(std::uint16_t) + 15) / 16 * 16 + 16;
}

// The Hopper bulk copy (TMA) of the key's rows into shared memory, completed on an mbarrier.
__device__ __forceinline__ u32 shared_address(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
/// Announces `bytes` of bulk copies to complete the barrier's current phase (one arrival).
__device__ __forceinline__ void mbarrier_expect(std::uint64_t* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, u32 bytes,
                                                    std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, u32 parity) {
  u32 done = 0;
  while (!done)
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, "
        "p; }"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
}

/// One ciphertext per cluster of k+1 blocks (latency: the bootstrapping key's reads and the
/// work of a CMux spread over k+1 SMs). Block o owns polynomial o of the accumulator: it
/// decomposes X^e acc_o - acc_o into L digit rows and transforms them; after a cluster barrier
/// it sums, for output o and each key limb, the products of all (k+1) L rows (read from their
/// owners' shared memory, in row order: the CPU's sums) by the key, inverse-transforms them and
/// adds them to acc_o. The digit rows alternate between two buffers, so one barrier per CMux
/// suffices: a block overwrites a buffer two CMuxes later, after every block has passed the
/// barrier between. With `staged`, the key rows of the next CMux are bulk-copied into shared
/// memory during the current one. Threads: N / 4 (two frequencies each).
template <class T, int kLog>
__global__ void __launch_bounds__(512)
    cggi_blind_rotate_fourier_cluster_kernel(T* out, const T* in, const T* test,
                                             std::size_t test_stride, CggiShape s,
                                             BootstrapKeyView bsk, bool staged) {
  namespace coop = cooperative_groups;
  using Plan = FourierPlan<kLog, kClusterStages>;
  constexpr int kItems = 2;
  extern __shared__ Cx fourier_shared[];
  constexpr u32 half = 1u << kLog, N = 2 * half;
  const u32 k = static_cast<u32>(s.k), L = static_cast<u32>(s.bk_levels);
  const u32 rows = (k + 1) * L, outs = k + 1, n_small = static_cast<u32>(s.n);
  const u32 limbs = static_cast<u32>(s.limbs), prods = outs * limbs;
  coop::cluster_group cluster = coop::this_cluster();
  const u32 o = cluster.block_rank();
  const std::size_t ct = blockIdx.x / outs;
  Cx* tw = fourier_shared;
  Cx* spectra = tw + half;            // [2][L][half]
  Cx* sums = spectra + 2 * L * half;  // [limbs][half]
  Cx* keys = sums + limbs * half;     // [rows][limbs][half] when staged
  T* acc = reinterpret_cast<T*>(keys + (staged ? rows * limbs * half : 0));
  std::uint16_t* exps = reinterpret_cast<std::uint16_t*>(acc + N);
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(
      reinterpret_cast<char*>(exps) + (n_small * sizeof(std::uint16_t) + 15) / 16 * 16);
  wait_for_previous_kernels();
  const Cx* gtw = static_cast<const Cx*>(bsk.forward);
  for (u32 j = threadIdx.x; j < half; j += blockDim.x) tw[tw_swz(j)] = gtw[j];
  constexpr int log2_2n = kLog + 2;
  const T* x = in + ct * (s.n + 1);
  const u32 b = cg::mod_switch(x[s.n], log2_2n);
  for (u32 j = threadIdx.x; j < N; j += blockDim.x)
    acc[j] = o == k ? rotated_word(test + ct * test_stride, N, (2 * N - b) % (2 * N), j) : T{0};
  for (u32 i = threadIdx.x; i < n_small; i += blockDim.x)
    exps[i] = static_cast<std::uint16_t>(cg::mod_switch(x[i], log2_2n));
  if (threadIdx.x == 0) mbarrier_init(bar);
  __syncthreads();
  cluster.sync();  // every block runs before any reads another's shared memory
  const Cx* key_base = static_cast<const Cx*>(bsk.ggsw);
  const u32 key_values = rows * prods * half;
  const auto all_rows = [](u32 r) { return r << kLog; };
  // Thread 0 copies the key rows of the next CMux that adds something (from `from` on) while
  // the block works on the current one: the DRAM latency leaves the serial chain.
  const auto fetch_key = [&](u32 from) {
    while (from < n_small && exps[from] == 0) ++from;
    if (from == n_small) return;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // after the reads of `keys`
    const u32 bytes = limbs * half * static_cast<u32>(sizeof(Cx));
    mbarrier_expect(bar, rows * bytes);
    const Cx* key = key_base + static_cast<std::size_t>(from) * key_values;
    for (u32 r = 0; r < rows; ++r)
      bulk_copy_to_shared(keys + r * limbs * half, key + (r * prods + o * limbs) * half, bytes,
                          bar);
  };
  if (staged && threadIdx.x == 0) fetch_key(0);
  u32 buffer = 0, parity = 0;
  for (u32 i = 0; i < n_small; ++i) {
    const u32 e = exps[i];
    if (e == 0) continue;  // the same for the whole cluster
    Cx* mine = spectra + buffer * L * half;
    for (u32 j = threadIdx.x; j < half; j += blockDim.x)
      fold_digits<Plan, kLog>(mine, acc, e, j, s.bk_base_log, s.bk_levels);
    __syncthreads();
    block_fft_forward<kLog, kClusterStages>(mine, L, all_rows, tw);
    cluster.sync();  // every block's rows are transformed
    // The key rows of output o: staged in shared memory, or read where they are.
    const Cx* kbase =
        staged ? keys : key_base + static_cast<std::size_t>(i) * key_values + o * limbs * half;
    const u32 kstride = staged ? limbs : prods;  // rows apart, in polynomials
    if (staged) {
      mbarrier_wait(bar, parity);  // this CMux's key rows have arrived
      parity ^= 1;
    }
    for (u32 c = 0; c < limbs; ++c) {
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const u32 f = threadIdx.x + q * blockDim.x;
        Cx a{0.0, 0.0};
#pragma unroll 2
        for (u32 r = 0; r < rows; ++r) {
          const Cx* owner = cluster.map_shared_rank(mine, r / L);
          a = cg::cx_mac(a, owner[((r % L) << kLog) + Plan::swz(f)],
                         kbase[(r * kstride + c) * half + f]);
        }
        sums[(c << kLog) + Plan::swz(f)] = a;
      }
    }
    __syncthreads();
    if (staged && threadIdx.x == 0) fetch_key(i + 1);
    block_fft_inverse<kLog, kClusterStages>(sums, limbs, all_rows, tw);
    for (u32 j = threadIdx.x; j < half; j += blockDim.x) {
      add_rounded_limbs<kLog>(acc, j, sums + Plan::swz(j), limbs, s.limb_bits);
    }
    __syncthreads();
    buffer ^= 1;
  }
  // Sample extraction: block o < k writes its mask polynomial's words, block k the body.
  T* dst = out + ct * (k * N + 1);
  if (o < k) {
    for (u32 j = threadIdx.x; j < N; j += blockDim.x)
      dst[o * N + j] = j == 0 ? acc[0] : static_cast<T>(T{0} - acc[N - j]);
  } else if (threadIdx.x == 0) {
    dst[k * N] = acc[0];
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
}

}  // namespace ember::cuda::kernels
