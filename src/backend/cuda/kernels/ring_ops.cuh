// CUDA kernels of the pointwise ring primitives, automorphisms, base conversion, CRT and sampling.
// Each kernel is a thin loop around the shared row functions in ember/backend/rows.h.
#pragma once

#include "ember/backend/backend.h"
#include "ember/backend/rows.h"
#include "kernels/affine_args.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/mma_bytes.cuh"

namespace ember::cuda::kernels {

using backend::BaseConvView;
using backend::CrtView;
using backend::RingTablesView;
using backend::SmallSampler;

/// A basis as the kernels read it: moduli table, limb -> prime id, N (moduli of 64- or 32-bit
/// words).
template <class W>
struct LimbMapT {
  const ModulusT<W>* moduli;
  const u32* ids;
  u32 log_n;
  u32 limbs;
  __device__ __forceinline__ const ModulusT<W>& mod(u32 limb) const { return moduli[ids[limb]]; }
};
using LimbMap = LimbMapT<u64>;

enum class PointwiseOp { add, sub, negate, multiply, multiply_accumulate, multiply_scalar };

/// The pointwise primitives on 64- or 32-bit words (W), one code for both.
template <PointwiseOp kOp, class W = u64>
__global__ void pointwise_kernel(W* out, const W* a, const W* b, const W* scalars,
                                 const W* scalars_shoup, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 limb = static_cast<u32>(i >> map.log_n);
    const ModulusT<W>& m = map.mod(limb);
    if constexpr (kOp == PointwiseOp::add) out[i] = add_mod<W>(a[i], b[i], m.value);
    if constexpr (kOp == PointwiseOp::sub) out[i] = sub_mod<W>(a[i], b[i], m.value);
    if constexpr (kOp == PointwiseOp::negate) out[i] = neg_mod<W>(a[i], m.value);
    if constexpr (kOp == PointwiseOp::multiply) out[i] = mul_mod<W>(a[i], b[i], m);
    if constexpr (kOp == PointwiseOp::multiply_accumulate)
      out[i] = add_mod<W>(out[i], mul_mod<W>(a[i], b[i], m), m.value);
    if constexpr (kOp == PointwiseOp::multiply_scalar)
      out[i] = mul_shoup<W>(a[i], scalars[limb], scalars_shoup[limb], m.value);
  }
}

template <class W>
__global__ void automorphism_eval_kernel(W* out, const W* a, u64 k, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  const u32 mask = (1u << map.log_n) - 1;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t row = i & ~static_cast<std::size_t>(mask);
    out[i] =
        a[row + backend::rows::automorphism_eval_source(static_cast<u32>(i & mask), k, map.log_n)];
  }
}

template <class W>
__global__ void automorphism_coeff_kernel(W* out, const W* a, u64 k, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  const u32 mask = (1u << map.log_n) - 1;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t row = i & ~static_cast<std::size_t>(mask);
    const u32 limb = static_cast<u32>(i >> map.log_n);
    bool neg;
    const u32 d =
        backend::rows::automorphism_coeff_dest(static_cast<u32>(i & mask), k, map.log_n, neg);
    out[row + d] = neg ? neg_mod<W>(a[i], map.mod(limb).value) : a[i];
  }
}

/// out[i] = a[i] between word widths (values below 2^32 when narrowing).
template <class To, class From>
__global__ void convert_words_kernel(To* out, const From* a, std::size_t count) {
  wait_for_previous_kernels();
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<To>(a[i]);
}

/// y[i][c] = a[i][c] * qhat_inv[i] mod q_i (first half of a fast base conversion, on words W).
template <class W>
__global__ void bconv_scale_kernel(W* y, const W* a, const W* sub, backend::BaseConvViewT<W> conv,
                                   LimbMapT<W> from) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(from.limbs) << from.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 limb = static_cast<u32>(i >> from.log_n);
    const W q = from.mod(limb).value;
    y[i] = backend::rows::conversion_input<W>(backend::rows::conversion_word<W>(a, sub, i, q), limb,
                                              conv, q);
  }
}

/// Up to kMaxConvJobs32 32-bit conversions, passed by value: job k reads its from.limbs rows of
/// `in`, scales them into `y` (scratch) and sums them into its to.limbs rows of `out`. The
/// launches' rows run over every job's rows back to back (first_from / first_to: where job k's
/// start).
inline constexpr int kMaxConvJobs32 = 16;
struct ConvJobs32 {
  struct Job {
    backend::BaseConvView32 conv;
    const u32* in;
    u32* out;
    u32* y;
    LimbMapT<u32> from, to;
    u32 first_from, first_to;
  } jobs[kMaxConvJobs32];
  u32 count;
};

__device__ __forceinline__ const ConvJobs32::Job& conv_job_of(const ConvJobs32& args, u32 row,
                                                              bool source) {
  u32 k = 0;
  while (k + 1 < args.count &&
         (source ? args.jobs[k + 1].first_from : args.jobs[k + 1].first_to) <= row)
    ++k;
  return args.jobs[k];
}

/// The scaling pass of every job: grid (N / 256, all source rows).
__global__ void bconv_scale_many_kernel(const __grid_constant__ ConvJobs32 args) {
  wait_for_previous_kernels();
  const ConvJobs32::Job& job = conv_job_of(args, blockIdx.y, true);
  const u32 limb = blockIdx.y - job.first_from;
  const std::size_t n = std::size_t{1} << job.from.log_n;
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= n) return;
  const std::size_t i = limb * n + c;
  const u32 q = job.from.mod(limb).value;
  job.y[i] = backend::rows::conversion_input<u32>(
      backend::rows::conversion_word<u32>(job.in, nullptr, i, q), limb, job.conv, q);
}

/// The summing pass of every job: grid (N / 256, all target rows).
__global__ void bconv_sum_many_kernel(const __grid_constant__ ConvJobs32 args) {
  wait_for_previous_kernels();
  const ConvJobs32::Job& job = conv_job_of(args, blockIdx.y, false);
  const u32 j = blockIdx.y - job.first_to;
  const std::size_t n = std::size_t{1} << job.to.log_n;
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= n) return;
  const u32 overflow = job.conv.inv_q ? backend::rows::conversion_overflow<u32>(
                                            job.y + c, n, job.conv.from_limbs, job.conv.inv_q)
                                      : 0;
  job.out[j * n + c] =
      backend::rows::convert_row<u32>(job.y + c, n, job.conv, j, overflow, job.to.mod(j));
}

/// Every job of a 32-bit batch on the integer tensor cores, for jobs with byte planes
/// (BaseConvView32::byte_planes, at most kBlocks blocks of 32 rows): one warp converts 16
/// coefficients of one job (grid: (N / 64, jobs), four warps a block). y_i's word is its four
/// bytes, so the A fragment register of lane (g, t) at block kb, half h, row r is y of source
/// 8 kb + 4 h + t at coefficient g + 8 r: a lane scales the sources i = t mod 4 of its two
/// coefficients. An exact conversion's overflow (sum of y_i / q_i in the CPU's order, the terms
/// from lane t = i mod 4 of the same row) enters as input 4 from_limbs. Per tile of eight targets,
/// four planes of products joined at their byte offsets (below 2^47) and reduced once: the words
/// equal the CPU backend's.
template <int kBlocks>
__global__ void __launch_bounds__(128)
    bconv_bytes32_kernel(const __grid_constant__ ConvJobs32 args) {
  constexpr int kSlots = 2 * kBlocks;  // sources 4 m + t of the lane, m < kSlots
  wait_for_previous_kernels();
  const ConvJobs32::Job& job = args.jobs[blockIdx.y];
  const backend::BaseConvView32& conv = job.conv;
  const std::size_t n = std::size_t{1} << job.to.log_n;
  const std::size_t c0 = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) / 32 * 16;
  if (c0 >= n) return;  // whole warps
  const u32 lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const u32 count = job.from.limbs, blocks = conv.byte_blocks;
  u32 y[kSlots][2];
#pragma unroll
  for (int m = 0; m < kSlots; ++m) {  // every load first: they overlap
    const u32 i = 4 * m + t;
    const std::size_t at = (i < count ? i : count - 1) * n + c0 + g;
    y[m][0] = job.in[at];
    y[m][1] = job.in[at + 8];
  }
#pragma unroll
  for (int m = 0; m < kSlots; ++m) {
    const u32 i = 4 * m + t;
    const u32 q = job.from.mod(i < count ? i : count - 1).value;
#pragma unroll
    for (int r = 0; r < 2; ++r)
      y[m][r] = i < count ? backend::rows::conversion_input<u32>(y[m][r], i, conv, q) : 0u;
  }
  if (conv.inv_q) {
    double sum[2] = {0.0, 0.0};
#pragma unroll
    for (int m = 0; m < kSlots; ++m) {
      if (4 * m >= count) break;  // warp-uniform
      // The lane's own term y_i / q_i (i = 4 m + t), then the four lanes' terms of the slot in
      // source order: the same sum, in the same order, as the CPU's.
      const u32 mine_i = 4 * m + t;
      const double inv = conv.inv_q[mine_i < count ? mine_i : count - 1];
      double mine[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) mine[r] = __dmul_rn(static_cast<double>(y[m][r]), inv);
#pragma unroll
      for (u32 s = 0; s < 4; ++s) {
        if (4 * m + s >= count) break;  // warp-uniform
#pragma unroll
        for (int r = 0; r < 2; ++r)
          sum[r] = __dadd_rn(sum[r], __shfl_sync(0xffffffffu, mine[r], 4 * g + s));
      }
    }
#pragma unroll
    for (int m = 0; m < kSlots; ++m)
      if (4 * m + t == count)
#pragma unroll
        for (int r = 0; r < 2; ++r) y[m][r] = static_cast<u32>(sum[r]);
  }
  u32 frag[kBlocks][4];
#pragma unroll
  for (int kb = 0; kb < kBlocks; ++kb)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int r = 0; r < 2; ++r) frag[kb][2 * h + r] = y[2 * kb + h][r];
  const u32 tiles = (job.to.limbs + 7) / 8;
  for (u32 tile = 0; tile < tiles; ++tile) {
    u32 d[4][4] = {};
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const u32* mine =
          conv.byte_planes + ((b * tiles + tile) * 8 + g) * 8 * blocks + 2 * blocks * t;
#pragma unroll
      for (int kb = 0; kb < kBlocks; ++kb) {
        if (kb >= static_cast<int>(blocks)) break;
        const uint2 w = __ldg(reinterpret_cast<const uint2*>(mine + 2 * kb));
        mma_bytes_16x8x32(d[b], frag[kb], w.x, w.y);
      }
    }
#pragma unroll
    for (int col = 0; col < 2; ++col) {
      const u32 j = tile * 8 + 2 * t + col;
      if (j >= job.to.limbs) continue;
      const ModulusT<u32> m = job.to.mod(j);
      const u32 add = conv.out_add ? conv.out_add[j] : 0u;
      // The joined sums stay below 96 * 255^2 * (1 + 2^8 + 2^16 + 2^24) < 2^47: one high
      // product reduces them for primes of 17 bits or more (reduce_product: below 2^(k + 30)).
      const bool one_product = bit_length<u32>(m.value) >= 17;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int e = 2 * r + col;  // D's register: row g + 8 r, column 2 t + col
        const u64 v =
            u64{d[0][e]} + (u64{d[1][e]} << 8) + (u64{d[2][e]} << 16) + (u64{d[3][e]} << 24);
        u32 x = one_product ? reduce_product<u32>(static_cast<u32>(v >> 32), static_cast<u32>(v), m)
                            : backend::rows::Wide32{v}.reduce(m);
        if (conv.out_add) x = add_mod<u32>(x, add, m.value);
        job.out[j * n + c0 + g + 8 * r] = x;
      }
    }
  }
}

/// Fused base conversion from `count` <= kMax source primes: each thread reads its
/// coefficient's residues once, scales them in registers (unrolled over kMax with guards, so
/// nothing spills to local memory) and writes kRows output rows. The 128-bit accumulator cannot
/// overflow for up to 64 terms (each < 2^122); the sum, the overflow estimate (same operation order
/// as rows::conversion_overflow) and the reductions equal the CPU backend's bit for bit.
template <int kMax, int kRows>
__device__ __forceinline__ void bconv_fused_block(u64* out, const u64* a, const u64* sub,
                                                  const BaseConvView& conv, const LimbMap& from,
                                                  const LimbMap& to, u32 count) {
  const std::size_t n = std::size_t{1} << to.log_n;
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= n) return;
  u64 y[kMax];
#pragma unroll
  for (int i = 0; i < kMax; ++i)
    if (i < count) {
      const u64 q = from.mod(i).value;
      y[i] = backend::rows::conversion_input(backend::rows::conversion_word(a, sub, i * n + c, q),
                                             i, conv, q);
    }
  u64 overflow = 0;
  if (conv.inv_q) {
    double sum = 0.0;
#pragma unroll
    for (int i = 0; i < kMax; ++i)
      if (i < count) sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(y[i]), conv.inv_q[i]));
    overflow = static_cast<u64>(sum);
  }
  const u32 j0 = blockIdx.y * kRows;
  const u32 j1 = j0 + kRows < to.limbs ? j0 + kRows : to.limbs;
  for (u32 j = j0; j < j1; ++j) {
    const Modulus& m = to.mod(j);
    u64 v;
    if constexpr (kMax == 1) {
      v = barrett_reduce_64(y[0], m);  // one source prime: qhat = 1, the sum is y itself
    } else {
      u64 hi = 0, lo = 0;
#pragma unroll
      for (int i = 0; i < kMax; ++i) {
        if (i < count) {
          u64 h, l;
          mul_wide(y[i], __ldg(conv.qhat_mod_p + i * conv.to_limbs + j), h, l);
          lo += l;
          hi += h + (lo < l);
        }
      }
      v = barrett_reduce_128(hi, lo, m);
    }
    if (conv.inv_q)
      v = sub_mod(v, mul_mod(barrett_reduce_64(overflow, m), conv.q_mod_p[j], m), m.value);
    out[j * n + c] = backend::rows::conversion_output(v, j, conv, m.value);
  }
}

template <int kMax, int kRows>
__global__ void bconv_fused_kernel(u64* out, const u64* a, const u64* sub, BaseConvView conv,
                                   LimbMap from, LimbMap to, u32 count) {
  wait_for_previous_kernels();
  bconv_fused_block<kMax, kRows>(out, a, sub, conv, from, to, count);
}

/// A batch of conversions (blockIdx.z picks the job) passed by value: ModUp's digits in one launch.
inline constexpr int kMaxConvJobs = 64;
struct ConvJobArgs {
  struct Job {
    BaseConvView conv;
    const u64* in;
    const u64* in_sub;  // see backend::ConvJob
    u64* out;
    const u32* from_ids;
    const u32* to_ids;
    u32 from_limbs, to_limbs;
  } jobs[kMaxConvJobs];
  const Modulus* moduli;
  u32 log_n;
};

template <int kMax, int kRows>
__global__ void bconv_many_kernel(const __grid_constant__ ConvJobArgs args) {
  wait_for_previous_kernels();
  const ConvJobArgs::Job& job = args.jobs[blockIdx.z];
  if (blockIdx.y * kRows >= job.to_limbs) return;
  const LimbMap from{args.moduli, job.from_ids, args.log_n, job.from_limbs};
  const LimbMap to{args.moduli, job.to_ids, args.log_n, job.to_limbs};
  bconv_fused_block<kMax, kRows>(job.out, job.in, job.in_sub, job.conv, from, to, job.from_limbs);
}

/// The column tiles of bconv_bytes_warp: A fragments times each byte plane's B fragments (this
/// lane's words of a column sit together: rows::byte_plane_slot), the planes joined, reduced and
/// stored. kFull: the job's rows have all kBlocks blocks (else fewer; its A fragments past them
/// are zero).
template <int kBlocks, bool kFull>
__device__ __forceinline__ void bconv_bytes_tiles(u64* out, const BaseConvView& conv,
                                                  const LimbMap& to, const u32 (&frag)[kBlocks][4],
                                                  std::size_t c0) {
  const u32 lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const std::size_t n = std::size_t{1} << to.log_n;
  const u32 tiles = (to.limbs + 7) / 8, blocks = kFull ? kBlocks : conv.byte_blocks;
  for (u32 tile = 0; tile < tiles; ++tile) {
    u64 low[4] = {0, 0, 0, 0}, high[4] = {0, 0, 0, 0};
#pragma unroll
    for (int pair = 0; pair < 4; ++pair) {
      u32 d[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const u32* mine = conv.byte_planes +
                          (((2 * pair + e) * tiles + tile) * 8 + g) * 8 * blocks + 2 * blocks * t;
        if constexpr (kFull && kBlocks % 2 == 0) {  // 16-byte aligned pairs of blocks
#pragma unroll
          for (int kb = 0; kb < kBlocks; kb += 2) {
            const uint4 w = __ldg(reinterpret_cast<const uint4*>(mine + 2 * kb));
            mma_bytes_16x8x32(d[e], frag[kb], w.x, w.y);
            mma_bytes_16x8x32(d[e], frag[kb + 1], w.z, w.w);
          }
        } else {
#pragma unroll
          for (int kb = 0; kb < kBlocks; ++kb) {
            if (!kFull && kb >= blocks) break;
            const uint2 w = __ldg(reinterpret_cast<const uint2*>(mine + 2 * kb));
            mma_bytes_16x8x32(d[e], frag[kb], w.x, w.y);
          }
        }
      }
#pragma unroll
      for (int q = 0; q < 4; ++q)
        backend::rows::add_byte_plane_pair(low[q], high[q], d[0][q], d[1][q], pair);
    }
#pragma unroll
    for (int col = 0; col < 2; ++col) {
      const u32 j = tile * 8 + 2 * t + col;
      if (j >= to.limbs) continue;
      const backend::ByteTarget target = conv.byte_targets[j];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        u64 hi, lo;
        backend::rows::join_byte_planes(low[2 * r + col], high[2 * r + col], hi, lo);
        const u64 v = backend::rows::reduce_small_quotient(hi, lo, target.prime, target.inv_prime);
        out[j * n + c0 + g + 8 * r] = add_mod(v, target.out_add, target.prime);
      }
    }
  }
}

/// The scaled input y_i = x_i qhat_inv_i + y_add_i (mod q_i) of a byte-matrix conversion from its
/// source word x_i, with src = byte_sources[i].
__device__ __forceinline__ u64 byte_input(u64 x, const backend::ByteSource& src) {
  const u64 y = mul_shoup(x, src.qhat_inv, src.qhat_inv_shoup, src.prime);
  return add_mod(y, src.y_add, src.prime);
}

/// One warp converts coefficients c0 .. c0 + 15 of a conversion with byte planes
/// (BaseConvView::byte_planes, at most kBlocks blocks of 32 bytes per row) on the integer tensor
/// cores: the bytes of y (and of the overflow, an extra input) times the byte matrix, eight planes
/// of products joined at their byte offsets and reduced once. The result equals the CPU backend's
/// bit for bit.
///
/// The A fragment register (kb, h, r) of lane (g, t) holds row g + 8 r, input 4 kb + 2 h + t / 2,
/// half t % 2: each lane needs the inputs of one parity (t / 2) for two rows. So lane (g, t)
/// computes y only for row g + 8 (t % 2) and inputs of parity t / 2 (each y once in the warp,
/// half the inputs per lane), loads them coalesced (16 coefficients of two rows per load), and
/// trades with lane t ^ 1 (the other row, same inputs) the half each needs. An exact conversion's
/// overflow sums y_i / q_i over every input in the CPU's order: the terms of the other parity
/// come from lane t ^ 2 (same row), so both lanes of a row hold the same sum.
template <int kBlocks>
__device__ __forceinline__ void bconv_bytes_warp(u64* out, const u64* a, const u64* sub,
                                                 const BaseConvView& conv, const LimbMap& to,
                                                 u32 count, std::size_t c0) {
  constexpr int kSlots = 2 * kBlocks;  // inputs of one parity: 4 kBlocks inputs in all
  const u32 lane = threadIdx.x & 31, t = lane & 3, parity = t >> 1, high = t & 1;
  const std::size_t n = std::size_t{1} << to.log_n;
  const std::size_t c = c0 + (lane >> 2) + 8 * high;
  const bool exact = conv.inv_q != nullptr;
  // Every source word is loaded first (slots past the inputs read the last one again, unused):
  // loads behind a branch per input waited for each other (L1TEX stalls, half the cycles).
  u64 v[kSlots], s[kSlots];
#pragma unroll
  for (int m = 0; m < kSlots; ++m) {
    const std::size_t at = min(2 * m + parity, count - 1) * n + c;
    v[m] = a[at];
    s[m] = sub ? sub[at] : 0;
  }
#pragma unroll
  for (int m = 0; m < kSlots; ++m) {
    const u32 i = 2 * m + parity;
    const backend::ByteSource& src = conv.byte_sources[min(i, count - 1)];
    const u64 y = byte_input(sub ? sub_mod(v[m], s[m], src.prime) : v[m], src);
    v[m] = i < count ? y : 0;
  }
  if (exact) {
    double sum = 0.0;
#pragma unroll
    for (int m = 0; m < kSlots; ++m) {
      if (2 * m >= count) break;  // warp-uniform
      const u32 i = 2 * m + parity;
      const double mine =
          i < count ? __dmul_rn(static_cast<double>(v[m]), conv.byte_sources[i].inv_q) : 0.0;
      const double other = __shfl_xor_sync(0xffffffffu, mine, 2);
      // Terms 2 m then 2 m + 1 (adding 0.0 past the last input changes nothing).
      sum = __dadd_rn(sum, parity ? other : mine);
      sum = __dadd_rn(sum, parity ? mine : other);
    }
    const u64 overflow = static_cast<u64>(sum);  // input `count`
#pragma unroll
    for (int m = 0; m < kSlots; ++m)
      if (2 * m + parity == count) v[m] = overflow;
  }
  u32 frag[kBlocks][4];
#pragma unroll
  for (int kb = 0; kb < kBlocks; ++kb)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const u64 w = v[2 * kb + h];
      const u32 lo = static_cast<u32>(w), hi = static_cast<u32>(w >> 32);
      const u32 mine = high ? hi : lo;  // this lane's row, the half it needs
      const u32 other = __shfl_xor_sync(0xffffffffu, high ? lo : hi, 1);  // the other row's
      frag[kb][2 * h + 0] = high ? other : mine;
      frag[kb][2 * h + 1] = high ? mine : other;
    }
  // Straight-line tile loops (the tensor-core products interleave with the previous plane's
  // joins): one for jobs with all kBlocks blocks, one for jobs with fewer.
  if (conv.byte_blocks == kBlocks)
    bconv_bytes_tiles<kBlocks, true>(out, conv, to, frag, c0);
  else
    bconv_bytes_tiles<kBlocks, false>(out, conv, to, frag, c0);
}

/// Blocks of bconv_bytes_kernel<kBlocks> per SM (register shares of 65536 / 128 / blocks),
/// measured on an H200 with the source loads issued together: kBlocks = 3 at 7 blocks (72
/// registers) beat 8 blocks (64 registers, 24 bytes spilled) by 2 % on BFV N15 (496) products;
/// kBlocks = 4 at 6 blocks (80 registers, 28 bytes spilled) beat 5 blocks (96 registers) by 4 %
/// on N15 (880).
constexpr int bytes_min_blocks(int blocks) {
  return blocks == 2 || blocks == 3 ? 7 : blocks == 4 ? 6 : 8;
}

/// A batch of byte-matrix conversions (blockIdx.z picks the job), 16 coefficients per warp.
template <int kBlocks>
__global__ void __launch_bounds__(128, bytes_min_blocks(kBlocks))
    bconv_bytes_kernel(const __grid_constant__ ConvJobArgs args) {
  wait_for_previous_kernels();
  const ConvJobArgs::Job& job = args.jobs[blockIdx.z];
  const std::size_t c0 = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) / 32 * 16;
  if (c0 >= (std::size_t{1} << args.log_n)) return;  // whole warps
  const LimbMap to{args.moduli, job.to_ids, args.log_n, job.to_limbs};
  bconv_bytes_warp<kBlocks>(job.out, job.in, job.in_sub, job.conv, to, job.from_limbs, c0);
}

/// The terms of a plaintext inner product (dot_plain), passed by value.
template <class W>
struct DotPlainArgs {
  const W* a0[backend::Backend::kMaxDotTerms];
  const W* a1[backend::Backend::kMaxDotTerms];
  const W* p[backend::Backend::kMaxDotTerms];
  u32 terms;
};

/// out0 = sum_t a0[t] p[t] (+ add0), out1 = sum_t a1[t] p[t] (+ add1): one pass.
template <class W>
__global__ void dot_plain_kernel(W* out0, W* out1, const W* add0, const W* add1,
                                 const __grid_constant__ DotPlainArgs<W> args, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const ModulusT<W>& m = map.mod(static_cast<u32>(i >> map.log_n));
    backend::rows::WideOf<W> s0, s1;
    for (u32 t = 0; t < args.terms; ++t) {
      const W p = args.p[t][i];
      s0.add_product(args.a0[t][i], p);
      s1.add_product(args.a1[t][i], p);
      backend::rows::fold_every(t, m, s0, s1);
    }
    const W r0 = s0.reduce(m), r1 = s1.reduce(m);
    out0[i] = add0 ? add_mod<W>(r0, add0[i], m.value) : r0;
    out1[i] = add1 ? add_mod<W>(r1, add1[i], m.value) : r1;
  }
}

/// Tensor product of two degree-1 ciphertexts, one pass.
/// The operands of tensor_kernel: limbs below `split` read a0 .. b1, the others upper_a0 ..
/// upper_b1 from their limb `split` on (see Backend::tensor_async).
template <class W>
struct TensorOperands {
  const W *a0, *a1, *b0, *b1;
  const W *upper_a0, *upper_a1, *upper_b0, *upper_b1;
  u32 split;
};

template <class W>
__global__ void tensor_kernel(W* d0, W* d1, W* d2, TensorOperands<W> in, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 limb = static_cast<u32>(i >> map.log_n);
    const ModulusT<W>& m = map.mod(limb);
    const bool up = limb >= in.split;
    const std::size_t at = up ? i - (static_cast<std::size_t>(in.split) << map.log_n) : i;
    const W x0 = (up ? in.upper_a0 : in.a0)[at], x1 = (up ? in.upper_a1 : in.a1)[at];
    const W y0 = (up ? in.upper_b0 : in.b0)[at], y1 = (up ? in.upper_b1 : in.b1)[at];
    d0[i] = mul_mod<W>(x0, y0, m);
    d1[i] = backend::rows::mul_add_mul<W>(x0, y1, x1, y0, m);
    d2[i] = mul_mod<W>(x1, y1, m);
  }
}

/// out[j][c] = sum_i y[i][c] * qhat_mod_p[i][j] mod p_j (on words W).
template <class W>
__global__ void bconv_sum_kernel(W* out, const W* y, backend::BaseConvViewT<W> conv,
                                 LimbMapT<W> to) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << to.log_n;
  const std::size_t total = static_cast<std::size_t>(to.limbs) << to.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 j = static_cast<u32>(i >> to.log_n);
    const std::size_t c = i & (n - 1);
    const W overflow =
        conv.inv_q ? backend::rows::conversion_overflow<W>(y + c, n, conv.from_limbs, conv.inv_q)
                   : 0;
    out[i] = backend::rows::convert_row<W>(y + c, n, conv, j, overflow, to.mod(j));
  }
}

/// out = a + c[limb] (per-limb constant add, used for the rounding offset of ModDown).
/// The terms of a linear combination with per-limb scalars (reduced), passed by value (about
/// 9 KB: kernels take up to 32 KB of parameters since CUDA 12.1).
template <class W>
struct LinearArgs {
  const W* a0[backend::Backend::kMaxLinearTerms];
  const W* a1[backend::Backend::kMaxLinearTerms];
  W scalar[backend::Backend::kMaxLinearTerms][backend::Backend::kMaxLinearLimbs];
  W constant[backend::Backend::kMaxLinearLimbs];
  u32 terms;
  u32 constant_coeff;  // 1: the constant at coefficient 0 only (a coefficient-form constant)
};

/// out0 = sum_t a0[t] s[t] + c, out1 = sum_t a1[t] s[t], per limb: one pass.
template <class W>
__global__ void linear_combination_kernel(W* out0, W* out1,
                                          const __grid_constant__ LinearArgs<W> args,
                                          LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 limb = static_cast<u32>(i >> map.log_n);
    const ModulusT<W>& m = map.mod(limb);
    backend::rows::WideOf<W> s0, s1;
    const bool first = (i & ((std::size_t{1} << map.log_n) - 1)) == 0;
    if (!args.constant_coeff || first) s0.add_product(args.constant[limb], 1);
    for (u32 t = 0; t < args.terms; ++t) {
      const W s = args.scalar[t][limb];
      s0.add_product(args.a0[t][i], s);
      s1.add_product(args.a1[t][i], s);
      backend::rows::fold_every(t, m, s0, s1);
    }
    out0[i] = s0.reduce(m);
    out1[i] = s1.reduce(m);
  }
}

/// linear_map_kernel's tile: each thread holds kMapOutputs outputs of one coefficient, and the
/// block stages the weights of kMapStage inputs for them in shared memory (one word per thread).
inline constexpr u32 kMapOutputs = 8;
inline constexpr u32 kMapStage = 32;
inline constexpr u32 kMapThreads = kMapOutputs * kMapStage;

/// out0[j] = sum_i a0[i] w[j][i] + c[j], out1[j] = sum_i a1[i] w[j][i] per limb, for the
/// outputs j of blockIdx.y's tile. Grid: (limbs N / kMapThreads, tiles); a block covers
/// kMapThreads consecutive coefficients of one limb (N >= 1024), so each input word is read
/// once per tile, coalesced, and the weights come from shared memory. weights [outputs][inputs]
/// [limbs] and constants [outputs][limbs] are reduced modulo their limb's prime.
template <class W>
__global__ void linear_map_kernel(W* const* out0, W* const* out1, const W* const* a0,
                                  const W* const* a1, const u64* weights, const u64* constants,
                                  u32 inputs, u32 outputs, u32 constant_coeff, LimbMapT<W> map) {
  wait_for_previous_kernels();
  __shared__ W w[kMapOutputs][kMapStage];
  const std::size_t begin = std::size_t{blockIdx.x} * kMapThreads;
  const std::size_t i = begin + threadIdx.x;
  const u32 limb = static_cast<u32>(begin >> map.log_n);
  const u32 j0 = blockIdx.y * kMapOutputs;
  const u32 tile = min(kMapOutputs, outputs - j0);
  const ModulusT<W>& m = map.mod(limb);
  const bool first = (i & ((std::size_t{1} << map.log_n) - 1)) == 0;
  // Running sums: reduced to one residue after every stage of kMapStage products (< 2^120 on
  // 64-bit words; on 32-bit words folded every kWideTerms products as well).
  backend::rows::WideOf<W> s0[kMapOutputs], s1[kMapOutputs];
  for (u32 j = 0; j < tile; ++j)
    if (!constant_coeff || first)
      s0[j].add_product(static_cast<W>(constants[std::size_t{j0 + j} * map.limbs + limb]), 1);
  for (u32 at = 0; at < inputs; at += kMapStage) {
    const u32 count = min(kMapStage, inputs - at);
    const u32 sj = threadIdx.x / kMapStage, si = threadIdx.x % kMapStage;
    __syncthreads();
    w[sj][si] =
        sj < tile && si < count
            ? static_cast<W>(weights[(std::size_t{j0 + sj} * inputs + at + si) * map.limbs + limb])
            : 0;
    __syncthreads();
    for (u32 k = 0; k < count; ++k) {
      const W x0 = a0[at + k][i], x1 = a1[at + k][i];
#pragma unroll
      for (u32 j = 0; j < kMapOutputs; ++j) {
        s0[j].add_product(x0, w[j][k]);
        s1[j].add_product(x1, w[j][k]);
      }
      if constexpr (sizeof(W) == 4) {
        if (k % backend::rows::kWideTerms<W> == backend::rows::kWideTerms<W> - 1) {
#pragma unroll
          for (u32 j = 0; j < kMapOutputs; ++j) {
            s0[j].fold(m);
            s1[j].fold(m);
          }
        }
      }
    }
#pragma unroll
    for (u32 j = 0; j < kMapOutputs; ++j) {
      s0[j].fold(m);
      s1[j].fold(m);
    }
  }
  for (u32 j = 0; j < tile; ++j) {
    out0[j0 + j][i] = s0[j].reduce(m);
    out1[j0 + j][i] = s1[j].reduce(m);
  }
}

/// Per-limb scalars passed by value (no upload before the launch) for up to kMaxScalarLimbs limbs.
inline constexpr int kMaxScalarLimbs = 64;
template <class W = u64>
struct ScalarArgs {
  W value[kMaxScalarLimbs];
  W shoup[kMaxScalarLimbs];
};

/// out += scalar[limb] * a(X^k) (evaluation form) with the scalars in the kernel's arguments.
template <class W>
__global__ void automorphism_accumulate_kernel(W* out, const W* a, u64 k, ScalarArgs<W> sc,
                                               LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  const u32 mask = (1u << map.log_n) - 1;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t row = i & ~static_cast<std::size_t>(mask);
    const u32 limb = static_cast<u32>(i >> map.log_n);
    const W q = map.mod(limb).value;
    const W v =
        a[row + backend::rows::automorphism_eval_source(static_cast<u32>(i & mask), k, map.log_n)];
    out[i] = add_mod<W>(out[i], mul_shoup<W>(v, sc.value[limb], sc.shoup[limb], q), q);
  }
}

/// out = a * scalar[limb] with the scalars in the kernel's arguments.
template <class W = u64>
__global__ void multiply_scalar_args_kernel(W* out, const W* a, ScalarArgs<W> sc, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 limb = static_cast<u32>(i >> map.log_n);
    out[i] = mul_shoup<W>(a[i], sc.value[limb], sc.shoup[limb], map.mod(limb).value);
  }
}

/// out[limb][i] = round(Q m[i] / t) mod q_limb (BFV plaintext scaling): thread per coefficient,
/// the prime-independent remainder computed once.
__global__ void scale_plain_kernel(u64* out, const u64* m, u64 t, u64 q_mod_t, const u64* q_div_t,
                                   LimbMap map) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  for (std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; c < n;
       c += std::size_t{gridDim.x} * blockDim.x) {
    const u64 mc = m[c];
    const u64 rem = backend::rows::scale_plain_remainder(mc, t, q_mod_t);
    for (u32 l = 0; l < map.limbs; ++l)
      out[l * n + c] = backend::rows::scale_plain_value(mc, rem, q_div_t[l], map.mod(l));
  }
}

/// Fused key inner product: thread per (row, coefficient) of Q_l u P, looping over the digits
/// (on words W).
template <class W>
__global__ void key_inner_product_kernel(W* q0, W* q1, W* p0, W* p1,
                                         const __grid_constant__ backend::KeyProductViewT<W> kp,
                                         LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 r = static_cast<u32>(i >> map.log_n);
    const std::size_t c = i & (n - 1);
    const std::size_t src = kp.galois ? backend::rows::automorphism_eval_source(
                                            static_cast<u32>(c), kp.galois, map.log_n)
                                      : c;
    const std::size_t dst =
        r < kp.q_rows ? i : i - (static_cast<std::size_t>(kp.q_rows) << map.log_n);
    W* o0 = r < kp.q_rows ? q0 : p0;
    W* o1 = r < kp.q_rows ? q1 : p1;
    backend::rows::key_product_row<W>(kp, n, r, c, src, map.mod(r), o0[dst], o1[dst]);
  }
}

/// The giant-step sums of a double-hoisted linear transform (BabyGiantView), one pass; kGiants
/// >= v.giants sizes the sums, so small transforms keep more warps per SM (the kernel waits on
/// the babies' scattered digit reads).
template <u32 kGiants, class W = u64>
__global__ void __launch_bounds__(128, kGiants <= 4 ? 6 : 4)
    baby_giant_sums_kernel(const __grid_constant__ backend::BabyGiantViewT<W> v, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 r = static_cast<u32>(i >> map.log_n);
    backend::rows::baby_giant_row<kGiants, W>(v, n, map.log_n, r, i & (n - 1), map.mod(r));
  }
}

/// out = (a - c) * mul[limb] (+ addend) (ModDown, rescale).
/// The polynomials of one affine_sub launch, passed by value.
/// out[k] = (a[k] - c[k]) * mul[limb] (+ addend[k]) for every polynomial k: one pass.
template <class W>
__global__ void affine_sub_kernel(const __grid_constant__ AffineArgsT<W> args, const W* c,
                                  const W* mul, const W* mul_companion, LimbMapT<W> map) {
  wait_for_previous_kernels();
  const std::size_t words = static_cast<std::size_t>(map.limbs) << map.log_n;
  const std::size_t total = words * args.count;
  for (std::size_t j = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; j < total;
       j += std::size_t{gridDim.x} * blockDim.x) {
    const u32 k = static_cast<u32>(j / words);
    const std::size_t i = j - k * words;
    const u32 limb = static_cast<u32>(i >> map.log_n);
    const W q = map.mod(limb).value;
    const W v = mul_shoup<W>(sub_mod<W>(args.a[k][i], c[j], q), mul[limb], mul_companion[limb], q);
    const W* addend = args.addend[k];
    args.out[k][i] = addend ? add_mod<W>(v, addend[i], q) : v;
  }
}

/// The one-prime sources of convert_affine_sub_kernel: job k's row.
struct ConvertSources {
  const u64* in[backend::Backend::kMaxAffineTerms];
};

/// Backend::convert_affine_sub_async for conversions from one prime, in one pass: out[k] =
/// (a[k] - conv(src[k])) * mul + addend[k](X^galois). The addend is gathered through the
/// inverse automorphism (galois_inv; 0: none): output d takes coefficient e = d galois_inv mod
/// 2N, negated when e >= N. Grid: (coefficients / blockDim, limb, polynomial); the limb's
/// constants are loaded before the kernel waits for the previous one.
__global__ void convert_affine_sub_kernel(const __grid_constant__ AffineArgs args,
                                          const __grid_constant__ ConvertSources src,
                                          const backend::OnePrimeMaps* maps, const u64* mul,
                                          const u64* mul_companion, u64 galois_inv, LimbMap map) {
  const u32 limb = blockIdx.y, k = blockIdx.z;
  const Modulus m = map.mod(limb);
  const ConvertLift convert = ConvertLift::of(*maps, limb, m, nullptr);
  const u64 w = mul[limb], w_companion = mul_companion[limb];
  const std::size_t n = std::size_t{1} << map.log_n;
  const std::size_t row = static_cast<std::size_t>(limb) << map.log_n;
  const u64* a = args.a[k] + row;
  const u64* addend = args.addend[k] ? args.addend[k] + row : nullptr;
  u64* out = args.out[k] + row;
  wait_for_previous_kernels();
#pragma unroll 2
  for (std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; c < n;
       c += std::size_t{gridDim.x} * blockDim.x) {
    u64 v = affine_word(a[c], convert(src.in[k][c], 0), w, w_companion, m.value);
    if (addend) {
      u64 x;
      if (galois_inv) {
        bool negate;
        x = addend[backend::rows::automorphism_coeff_dest(static_cast<u32>(c), galois_inv,
                                                          map.log_n, negate)];
        x = negate ? neg_mod(x, m.value) : x;
      } else {
        x = addend[c];
      }
      v = add_mod(v, x, m.value);
    }
    out[c] = v;
  }
}

__global__ void rns_from_words_kernel(u64* out, const u64* words, CrtView crt, LimbMap map) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 l = static_cast<u32>(i >> map.log_n);
    const std::size_t c = i & (n - 1);
    const Modulus& m = map.mod(l);
    const u64* w = words + c * crt.words;
    u64 acc = 0;
    for (std::size_t k = 0; k < crt.words; ++k)
      acc = add_mod(acc, mul_mod(barrett_reduce_64(w[k], m), crt.pow2_64k[l * crt.words + k], m),
                    m.value);
    out[i] = acc;
  }
}

__global__ void words_from_rns_kernel(u64* out, u64* scratch, const u64* a, CrtView crt,
                                      RingTablesView ring, const u32* ids, u32 limbs, u32 log_n) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << log_n;
  for (std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; c < n;
       c += std::size_t{gridDim.x} * blockDim.x) {
    auto residue = [&](std::size_t l) { return a[l * n + c]; };
    backend::rows::garner_row(residue, ring, ids, limbs, crt.garner_inv, scratch + c * limbs,
                              out + c * limbs, 1);
  }
}

/// One ChaCha20 block per thread: 4 uniform coefficients (two words each), as the CPU backend.
__global__ void sample_uniform_kernel(u64* out, ChaChaKey key, u64 nonce, LimbMap map) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  const std::size_t blocks = (static_cast<std::size_t>(map.limbs) << map.log_n) / 4;
  for (std::size_t blk = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; blk < blocks;
       blk += std::size_t{gridDim.x} * blockDim.x) {
    u64 w[8];
    chacha20_words(key, blk, nonce, w);
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const std::size_t idx = blk * 4 + t;
      out[idx] = backend::rows::uniform_residue(w[2 * t + 1], w[2 * t],
                                                map.mod(static_cast<u32>(idx / n)));
    }
  }
}

/// One ChaCha20 block per thread: 8 small coefficients, written into every limb.
/// Small samples: thread per (ChaCha20 block of 8 coefficients, group of limbs); the block is
/// recomputed per group (cheap) so that the grid fills the GPU even for small N.
__global__ void sample_small_kernel(u64* out, ChaChaKey key, u64 nonce, SmallSampler dist,
                                    LimbMap map, u32 limbs_per_group) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  const std::size_t blocks = n / 8;
  const u32 l0 = blockIdx.y * limbs_per_group;
  const u32 l1 = l0 + limbs_per_group < map.limbs ? l0 + limbs_per_group : map.limbs;
  for (std::size_t blk = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; blk < blocks;
       blk += std::size_t{gridDim.x} * blockDim.x) {
    u64 w[8];
    chacha20_words(key, blk, nonce, w);
    std::int64_t v[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) v[t] = backend::rows::small_from_word(w[t], dist);
    for (u32 l = l0; l < l1; ++l) {
      const u64 q = map.mod(l).value;
#pragma unroll
      for (int t = 0; t < 8; ++t)
        out[l * n + blk * 8 + t] = backend::rows::signed_to_residue(v[t], q);
    }
  }
}

/// Counts (into *count) the coefficients whose value needs more than the first two primes.
__global__ void count_wide_coefficients_kernel(unsigned long long* count, const u64* a, u64 q0_inv,
                                               LimbMap map) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  u32 wide = 0;
  for (std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; c < n;
       c += std::size_t{gridDim.x} * blockDim.x)
    wide += backend::rows::two_prime_value_holds(a, n, c, map.moduli, map.ids, map.limbs, q0_inv)
                ? 0
                : 1;
  wide = __reduce_add_sync(0xffffffffu, wide);
  if ((threadIdx.x & 31) == 0 && wide) atomicAdd(count, static_cast<unsigned long long>(wide));
}

__global__ void embed_signed_kernel(u64* out, const std::int64_t* values, LimbMap map) {
  wait_for_previous_kernels();
  const std::size_t n = std::size_t{1} << map.log_n;
  const std::size_t total = static_cast<std::size_t>(map.limbs) << map.log_n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const u32 limb = static_cast<u32>(i >> map.log_n);
    out[i] = backend::rows::signed_to_residue(values[i & (n - 1)], map.mod(limb).value);
  }
}

}  // namespace ember::cuda::kernels
