// CGGI's Fourier blind rotation (32-bit torus): C ciphertexts per block share every read of the
// bootstrapping key; the accumulators, the CMux's folded digit spectra and their products live
// in shared memory; FFT passes of up to 16 points run in registers, with the transform's size a
// compile-time constant so that index arithmetic folds away. All arithmetic comes from
// backend/cggi_fft.h in the CPU backend's order, so every result equals the CPU's bit for bit.
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

/// One unscaled inverse pass (fft_inverse_unscaled's stages t = 2^log_t0 .. ).
template <class Plan, int kLog, int kStages, class RowOffset>
__device__ __forceinline__ void fourier_gs_pass(Cx* a, u32 rows, RowOffset row_offset, int log_t0,
                                                const Cx* itw) {
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
        cg::cx_gs(v[q], v[q + step], itw[tw_swz(h + ((pos0 + (q << log_t0)) >> (log_t + 1)))]);
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
__device__ __forceinline__ void block_fft_inverse(Cx* a, u32 rows, RowOffset off, const Cx* itw,
                                                  int log_t0 = 0) {
  using Plan = FourierPlan<kLog, kMax>;
  if constexpr (kPass >= 0) {
    constexpr int stages = Plan::stages(kPass);
    fourier_gs_pass<Plan, kLog, stages>(a, rows, off, log_t0, itw);
    __syncthreads();
    block_fft_inverse<kLog, kMax, kPass - 1>(a, rows, off, itw, log_t0 + stages);
  }
}

/// Shared memory of a Fourier rotation of C ciphertexts: the two twiddle tables, C x rows
/// spectra of N / 2 values, C accumulators of (k+1) N words, C x n CMux exponents (u16).
inline std::size_t fourier_rotate_smem(const CggiShape& s, int C) {
  const std::size_t half = s.N / 2;
  return (2 * half + C * s.rows() * half) * sizeof(Cx) + C * (s.k + 1) * s.N * sizeof(u32) +
         (C * s.n * sizeof(std::uint16_t) + 15) / 16 * 16;
}

/// Threads of a Fourier rotation's block when each takes `items` products (output
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
__device__ __forceinline__ u32 rotated_word(const u32* p, u32 n, u32 e, u32 j) {
  const bool flip = e >= n;
  const u32 s = flip ? e - n : e;
  const bool wrap = j < s;
  const u32 v = p[wrap ? j + n - s : j - s];
  return (wrap != flip) ? 0u - v : v;
}

/// One key polynomial per thread to the Fourier domain (cggi::fourier_key_polynomial, in place
/// in `out`): a one-time transform, kept to the CPU's very function.
__global__ void cggi_key_to_fourier_kernel(Cx* out, const u32* in, std::size_t polys,
                                           std::size_t half, const Cx* tw) {
  const std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  wait_for_previous_kernels();
  if (t >= polys) return;
  cg::fourier_key_polynomial(out + t * half, in + t * 2 * half, half, tw);
}

/// Block b rotates ciphertexts [b C, b C + C) (those past `count` ride along on zeros): acc =
/// X^-b test, then for each i a CMux by GGSW i (digits of X^e acc - acc folded, forward FFTs,
/// products with the key summed over the rows in row order, unscaled inverse FFTs, nearest
/// integers added), then the constant coefficient's extraction. N = 2^(kLog + 1); threads:
/// (k+1) N / 2 / kItems, each taking kItems products.
template <int kLog, int C, int kItems>
__global__ void __launch_bounds__(512)
    cggi_blind_rotate_fourier_kernel(u32* out, const u32* in, const u32* test,
                                     std::size_t test_stride, std::size_t count, CggiShape s,
                                     BootstrapKeyView bsk) {
  using Plan = FourierPlan<kLog>;
  extern __shared__ Cx fourier_shared[];
  constexpr u32 half = 1u << kLog, N = 2 * half;
  const u32 k = static_cast<u32>(s.k), L = static_cast<u32>(s.bk_levels);
  const u32 rows = (k + 1) * L, outs = k + 1, n_small = static_cast<u32>(s.n);
  Cx* tw = fourier_shared;
  Cx* itw = tw + half;
  Cx* spectra = itw + half;                                                    // [c][row][half]
  u32* acc = reinterpret_cast<u32*>(spectra + C * rows * half);                // [c][out][N]
  std::uint16_t* exps = reinterpret_cast<std::uint16_t*>(acc + C * outs * N);  // [c][n]
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * C;
  wait_for_previous_kernels();
  const Cx* gtw = static_cast<const Cx*>(bsk.forward);
  const Cx* gitw = static_cast<const Cx*>(bsk.inverse);
  for (u32 j = threadIdx.x; j < half; j += blockDim.x) {
    tw[tw_swz(j)] = gtw[j];
    itw[tw_swz(j)] = gitw[j];
  }
  constexpr int log2_2n = kLog + 2;
  for (u32 w = threadIdx.x; w < C * outs * N; w += blockDim.x) {
    const u32 c = w / (outs * N), r = w % (outs * N), o = r / N, j = r % N;
    u32 v = 0;
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
  const u32 key_values = rows * outs * half;
  const auto all_rows = [](u32 r) { return r << kLog; };
  const auto sum_rows = [rows, outs](u32 r) { return ((r / outs) * rows + r % outs) << kLog; };
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
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
      const u32 item = threadIdx.x + q * blockDim.x, o = item >> kLog, f = item & (half - 1);
      if (o < outs)
        for (u32 r = 0; r < rows; ++r) prefetch_l1(key + (r * outs + o) * half + f);
    }
    // Digits of X^e acc - acc, coefficients j and j + N/2 folded into one complex value.
    for (u32 w = threadIdx.x; w < C * outs * half; w += blockDim.x) {
      const u32 c = w / (outs * half), r = w % (outs * half), p = r >> kLog, j = r & (half - 1);
      const u32* a = acc + (c * outs + p) * N;
      u32 ec = e[0];
#pragma unroll
      for (int q = 1; q < C; ++q)
        if (c == static_cast<u32>(q)) ec = e[q];
      const u32 lo = rotated_word(a, N, ec, j) - a[j];
      const u32 hi = rotated_word(a, N, ec, j + half) - a[j + half];
      Cx* dst = spectra + ((c * rows + p * L) << kLog) + Plan::swz(j);
      cg::decompose_pair_each(lo, hi, s.bk_base_log, s.bk_levels, [&](int l, cg::i64 a, cg::i64 b) {
        dst[l << kLog] = Cx{static_cast<double>(a), static_cast<double>(b)};
      });
    }
    __syncthreads();
    block_fft_forward<kLog>(spectra, C * rows, all_rows, tw);
    // Products with the key: item (o, f) sums over the rows for all C ciphertexts, each key
    // value read once; the sums replace rows 0..k of each ciphertext's spectra after a barrier.
    Cx prod[kItems][C];
#pragma unroll
    for (int q = 0; q < kItems; ++q)
#pragma unroll
      for (int c = 0; c < C; ++c) prod[q][c] = Cx{0.0, 0.0};
        // Row by row, the items' key values loaded together (several loads in flight), each
        // ciphertext's sum still in row order.
#pragma unroll 2
    for (u32 r = 0; r < rows; ++r) {
      Cx kv[kItems];
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const u32 item = threadIdx.x + q * blockDim.x, o = item >> kLog, f = item & (half - 1);
        kv[q] = o < outs ? key[(r * outs + o) * half + f] : Cx{0.0, 0.0};
      }
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const u32 item = threadIdx.x + q * blockDim.x, o = item >> kLog, f = item & (half - 1);
        if (o >= outs) continue;
#pragma unroll
        for (int c = 0; c < C; ++c)
          prod[q][c] =
              cg::cx_mac(prod[q][c], spectra[((c * rows + r) << kLog) + Plan::swz(f)], kv[q]);
      }
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
      const u32 item = threadIdx.x + q * blockDim.x, o = item >> kLog, f = item & (half - 1);
      if (o >= outs) continue;
#pragma unroll
      for (int c = 0; c < C; ++c) spectra[((c * rows + o) << kLog) + Plan::swz(f)] = prod[q][c];
    }
    __syncthreads();
    block_fft_inverse<kLog>(spectra, C * outs, sum_rows, itw);
    for (u32 w = threadIdx.x; w < C * outs * half; w += blockDim.x) {
      const u32 c = w / (outs * half), r = w % (outs * half), o = r >> kLog, j = r & (half - 1);
      const Cx v = spectra[((c * rows + o) << kLog) + Plan::swz(j)];
      u32* a = acc + (c * outs + o) * N;
      a[j] += cg::torus_from_double<u32>(v.re);
      a[j + half] += cg::torus_from_double<u32>(v.im);
    }
    __syncthreads();
  }
  // Sample extraction of the constant coefficient (cg::sample_extract, one word per thread).
  for (u32 w = threadIdx.x; w < C * (k * N + 1); w += blockDim.x) {
    const u32 c = w / (k * N + 1), t = w % (k * N + 1);
    if (first + c >= count) continue;
    const u32* a = acc + c * outs * N;
    u32* o = out + (first + c) * (k * N + 1);
    if (t == k * N) {
      o[t] = a[k * N];
    } else {
      const u32 p = t / N, j = t % N;
      o[t] = j == 0 ? a[p * N] : 0u - a[p * N + N - j];
    }
  }
}

/// Shared memory of one block of a cluster rotation: twiddles, two buffers of the block's L
/// digit rows, the product row, the key's rows for this block's output, its polynomial of the
/// accumulator, the exponents, the key copy's barrier.
inline std::size_t fourier_cluster_smem(const CggiShape& s) {
  const std::size_t half = s.N / 2;
  return (2 * half + 2 * s.bk_levels * half + half + s.rows() * half) * sizeof(Cx) +
         s.N * sizeof(u32) + (s.n * sizeof(std::uint16_t) + 15) / 16 * 16 + 16;
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

/// Most stages per FFT pass of the cluster rotation: its blocks transform only L rows (or one),
/// so shorter passes put more threads to work on the serial chain.
inline constexpr int kClusterStages = 3;

/// One ciphertext per cluster of k+1 blocks (latency: the bootstrapping key's reads and the
/// work of a CMux spread over k+1 SMs). Block o owns polynomial o of the accumulator: it
/// decomposes X^e acc_o - acc_o into L digit rows and transforms them; after a cluster barrier
/// it sums, for output o, the products of all (k+1) L rows (read from their owners' shared
/// memory, in row order: the CPU's sums) by the key, inverse-transforms and adds them to acc_o.
/// The digit rows alternate between two buffers, so one barrier per CMux suffices: a block
/// overwrites a buffer two CMuxes later, after every block has passed the barrier between.
/// Threads: N / 4 (two products each).
template <int kLog>
__global__ void __launch_bounds__(512)
    cggi_blind_rotate_fourier_cluster_kernel(u32* out, const u32* in, const u32* test,
                                             std::size_t test_stride, CggiShape s,
                                             BootstrapKeyView bsk) {
  namespace coop = cooperative_groups;
  using Plan = FourierPlan<kLog, kClusterStages>;
  constexpr int kItems = 2;
  extern __shared__ Cx fourier_shared[];
  constexpr u32 half = 1u << kLog, N = 2 * half;
  const u32 k = static_cast<u32>(s.k), L = static_cast<u32>(s.bk_levels);
  const u32 rows = (k + 1) * L, outs = k + 1, n_small = static_cast<u32>(s.n);
  coop::cluster_group cluster = coop::this_cluster();
  const u32 o = cluster.block_rank();
  const std::size_t ct = blockIdx.x / outs;
  Cx* tw = fourier_shared;
  Cx* itw = tw + half;
  Cx* spectra = itw + half;  // [2][L][half]
  Cx* sum = spectra + 2 * L * half;
  Cx* keys = sum + half;  // [rows][half]: this block's output's key rows of the coming CMux
  u32* acc = reinterpret_cast<u32*>(keys + rows * half);
  std::uint16_t* exps = reinterpret_cast<std::uint16_t*>(acc + N);
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(
      reinterpret_cast<char*>(exps) + (n_small * sizeof(std::uint16_t) + 15) / 16 * 16);
  wait_for_previous_kernels();
  const Cx* gtw = static_cast<const Cx*>(bsk.forward);
  const Cx* gitw = static_cast<const Cx*>(bsk.inverse);
  for (u32 j = threadIdx.x; j < half; j += blockDim.x) {
    tw[tw_swz(j)] = gtw[j];
    itw[tw_swz(j)] = gitw[j];
  }
  constexpr int log2_2n = kLog + 2;
  const u32* x = in + ct * (s.n + 1);
  const u32 b = cg::mod_switch(x[s.n], log2_2n);
  for (u32 j = threadIdx.x; j < N; j += blockDim.x)
    acc[j] = o == k ? rotated_word(test + ct * test_stride, N, (2 * N - b) % (2 * N), j) : 0u;
  for (u32 i = threadIdx.x; i < n_small; i += blockDim.x)
    exps[i] = static_cast<std::uint16_t>(cg::mod_switch(x[i], log2_2n));
  if (threadIdx.x == 0) mbarrier_init(bar);
  __syncthreads();
  cluster.sync();  // every block runs before any reads another's shared memory
  const Cx* key_base = static_cast<const Cx*>(bsk.ggsw);
  const u32 key_values = rows * outs * half;
  const auto all_rows = [](u32 r) { return r << kLog; };
  // Thread 0 copies the key rows of the next CMux that adds something (from `from` on) while
  // the block works on the current one: the DRAM latency leaves the serial chain.
  const auto fetch_key = [&](u32 from) {
    while (from < n_small && exps[from] == 0) ++from;
    if (from == n_small) return;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // after the reads of `keys`
    mbarrier_expect(bar, rows * half * static_cast<u32>(sizeof(Cx)));
    const Cx* key = key_base + static_cast<std::size_t>(from) * key_values;
    for (u32 r = 0; r < rows; ++r)
      bulk_copy_to_shared(keys + r * half, key + (r * outs + o) * half,
                          half * static_cast<u32>(sizeof(Cx)), bar);
  };
  if (threadIdx.x == 0) fetch_key(0);
  u32 buffer = 0, parity = 0;
  for (u32 i = 0; i < n_small; ++i) {
    const u32 e = exps[i];
    if (e == 0) continue;  // the same for the whole cluster
    Cx* mine = spectra + buffer * L * half;
    for (u32 j = threadIdx.x; j < half; j += blockDim.x) {
      const u32 lo = rotated_word(acc, N, e, j) - acc[j];
      const u32 hi = rotated_word(acc, N, e, j + half) - acc[j + half];
      Cx* dst = mine + Plan::swz(j);
      cg::decompose_pair_each(lo, hi, s.bk_base_log, s.bk_levels, [&](int l, cg::i64 a, cg::i64 c) {
        dst[l << kLog] = Cx{static_cast<double>(a), static_cast<double>(c)};
      });
    }
    __syncthreads();
    block_fft_forward<kLog, kClusterStages>(mine, L, all_rows, tw);
    cluster.sync();              // every block's rows are transformed
    mbarrier_wait(bar, parity);  // this CMux's key rows have arrived
    parity ^= 1;
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
      const u32 f = threadIdx.x + q * blockDim.x;
      Cx a{0.0, 0.0};
#pragma unroll 2
      for (u32 r = 0; r < rows; ++r) {
        const Cx* owner = cluster.map_shared_rank(mine, r / L);
        a = cg::cx_mac(a, owner[((r % L) << kLog) + Plan::swz(f)], keys[(r << kLog) + f]);
      }
      sum[Plan::swz(f)] = a;
    }
    __syncthreads();
    if (threadIdx.x == 0) fetch_key(i + 1);
    block_fft_inverse<kLog, kClusterStages>(sum, 1, all_rows, itw);
    for (u32 j = threadIdx.x; j < half; j += blockDim.x) {
      const Cx v = sum[Plan::swz(j)];
      acc[j] += cg::torus_from_double<u32>(v.re);
      acc[j + half] += cg::torus_from_double<u32>(v.im);
    }
    __syncthreads();
    buffer ^= 1;
  }
  // Sample extraction: block o < k writes its mask polynomial's words, block k the body.
  u32* dst = out + ct * (k * N + 1);
  if (o < k) {
    for (u32 j = threadIdx.x; j < N; j += blockDim.x)
      dst[o * N + j] = j == 0 ? acc[0] : 0u - acc[N - j];
  } else if (threadIdx.x == 0) {
    dst[k * N] = acc[0];
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
}

}  // namespace ember::cuda::kernels
