// CGGI kernels: the bootstrapping key's transform, batched blind rotation with sample extraction
// (one block per ciphertext, the accumulator and the CMux's digits in shared memory), tiled LWE
// key switching and the gates' linear step. All arithmetic comes from backend/cggi_rows.h, the
// CPU backend's too: every result equals the CPU's bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/backend/cggi_ops.h"
#include "ember/backend/cggi_rows.h"
#include "kernels/dependent_launch.cuh"

namespace ember::cuda::kernels {

namespace cg = backend::cggi;
using backend::BootstrapKeyView;
using backend::CggiShape;

/// Most decomposition levels a kernel handles (digits kept in registers).
inline constexpr int kMaxCggiLevels = 16;

/// Where element `pos` of a transformed row sits in shared memory: the low three bits XORed with
/// the next three, so that the passes whose groups are 8 apart (the forward transform's last, the
/// inverse's first) read 8 different banks instead of one (64-bit words 64 bytes apart).
__device__ __forceinline__ u32 swz(u32 pos) { return pos ^ ((pos >> 3) & 7u); }

/// One pass of a forward transform in shared memory: the R = 2^kLog stages from stage log_m0
/// (gl_ntt_forward's stages m = 2^log_m0 .. 2^(log_m0 + kLog - 1)), each thread taking groups of R
/// elements into registers and running the pass's butterflies there, so that a transform of
/// 2^log_n elements takes ceil(log_n / 3) passes (and barriers) instead of log_n. Each butterfly
/// is gl_ntt_forward's, with its twiddle: the same values in any order (exact arithmetic).
template <int kLog>
__device__ __forceinline__ void ct_pass(u64* a, u32 rows, u32 log_n, u32 log_m0,
                                        const u64* psi_rev) {
  constexpr u32 R = 1u << kLog;
  const u32 log_t0 = log_n - 1 - log_m0, log_s = log_t0 + 1 - kLog;
  const u32 log_groups = log_n - kLog, total = rows << log_groups;
  for (u32 w = threadIdx.x; w < total; w += blockDim.x) {
    const u32 row = w >> log_groups, g = w & ((1u << log_groups) - 1);
    const u32 pos0 = ((g >> log_s) << (log_t0 + 1)) + (g & ((1u << log_s) - 1));
    u64* x = a + (row << log_n);
    u64 v[R];
#pragma unroll
    for (u32 q = 0; q < R; ++q) v[q] = x[swz(pos0 + (q << log_s))];
#pragma unroll
    for (u32 u = 0; u < kLog; ++u) {
      const u32 half = R >> (u + 1), log_t = log_t0 - u, m = 1u << (log_m0 + u);
#pragma unroll
      for (u32 q = 0; q < R; ++q) {
        if (q & half) continue;
        const u32 pos = pos0 + (q << log_s);
        const u64 lo = v[q], hi = cg::gl_mul(v[q + half], psi_rev[m + (pos >> (log_t + 1))]);
        v[q] = cg::gl_add(lo, hi);
        v[q + half] = cg::gl_sub(lo, hi);
      }
    }
#pragma unroll
    for (u32 q = 0; q < R; ++q) x[swz(pos0 + (q << log_s))] = v[q];
  }
}

/// One pass of an inverse transform (gl_ntt_inverse_unscaled's stages t = 2^log_t0 ..
/// 2^(log_t0 + kLog - 1)), groups of R elements in registers as in ct_pass.
template <int kLog>
__device__ __forceinline__ void gs_pass(u64* a, u32 rows, u32 log_n, u32 log_t0,
                                        const u64* psi_inv_rev) {
  constexpr u32 R = 1u << kLog;
  const u32 log_groups = log_n - kLog, total = rows << log_groups;
  for (u32 w = threadIdx.x; w < total; w += blockDim.x) {
    const u32 row = w >> log_groups, g = w & ((1u << log_groups) - 1);
    const u32 pos0 = ((g >> log_t0) << (log_t0 + kLog)) + (g & ((1u << log_t0) - 1));
    u64* x = a + (row << log_n);
    u64 v[R];
#pragma unroll
    for (u32 q = 0; q < R; ++q) v[q] = x[swz(pos0 + (q << log_t0))];
#pragma unroll
    for (u32 u = 0; u < kLog; ++u) {
      const u32 step = 1u << u, log_t = log_t0 + u, h = 1u << (log_n - 1 - log_t);
#pragma unroll
      for (u32 q = 0; q < R; ++q) {
        if (q & step) continue;
        const u32 pos = pos0 + (q << log_t0);
        const u64 lo = v[q], hi = v[q + step];
        v[q] = cg::gl_add(lo, hi);
        v[q + step] = cg::gl_mul(cg::gl_sub(lo, hi), psi_inv_rev[h + (pos >> (log_t + 1))]);
      }
    }
#pragma unroll
    for (u32 q = 0; q < R; ++q) x[swz(pos0 + (q << log_t0))] = v[q];
  }
}

/// Forward negacyclic NTTs of `rows` rows of n = 2^log_n residues in shared memory (the values
/// of gl_ntt_forward; element pos of a row at swz(pos)), in passes of up to three stages; ends
/// with a barrier.
__device__ __forceinline__ void block_ntt_forward(u64* a, u32 rows, u32 log_n, const u64* psi_rev) {
  for (u32 log_m0 = 0; log_m0 < log_n;) {
    const u32 r = log_n - log_m0 >= 3 ? 3 : log_n - log_m0;
    if (r == 3)
      ct_pass<3>(a, rows, log_n, log_m0, psi_rev);
    else if (r == 2)
      ct_pass<2>(a, rows, log_n, log_m0, psi_rev);
    else
      ct_pass<1>(a, rows, log_n, log_m0, psi_rev);
    __syncthreads();
    log_m0 += r;
  }
}

/// Inverse transforms without the 1/n (gl_ntt_inverse_unscaled's values), `rows` rows; ends with
/// a barrier.
__device__ __forceinline__ void block_ntt_inverse_unscaled(u64* a, u32 rows, u32 log_n,
                                                           const u64* psi_inv_rev) {
  for (u32 log_t0 = 0; log_t0 < log_n;) {
    const u32 r = log_n - log_t0 >= 3 ? 3 : log_n - log_t0;
    if (r == 3)
      gs_pass<3>(a, rows, log_n, log_t0, psi_inv_rev);
    else if (r == 2)
      gs_pass<2>(a, rows, log_n, log_t0, psi_inv_rev);
    else
      gs_pass<1>(a, rows, log_n, log_t0, psi_inv_rev);
    __syncthreads();
    log_t0 += r;
  }
}

/// Coefficient j of X^e p (negacyclic, n coefficients, e in [0, 2n)).
template <class T>
__device__ __forceinline__ T rotated_coefficient(const T* p, std::size_t n, std::size_t e,
                                                 std::size_t j) {
  const bool flip = e >= n;
  const std::size_t s = flip ? e - n : e;
  const bool wrap = j < s;
  const T v = p[wrap ? j + n - s : j - s];
  return (wrap != flip) ? static_cast<T>(T{0} - v) : v;
}

/// One block per polynomial of the bootstrapping key: limb split, lift to Z_p, forward NTT,
/// times n_inv (the CPU's bootstrap_key_transform_async). Shared memory: limbs x N words.
template <class T>
__global__ void cggi_key_to_ntt_kernel(u64* out, const T* in, CggiShape s, const u64* psi_rev,
                                       u64 n_inv) {
  extern __shared__ u64 cggi_shared[];
  const std::size_t N = s.N, poly = blockIdx.x;
  wait_for_previous_kernels();
  const T* src = in + poly * N;
  for (std::size_t j = threadIdx.x; j < N; j += blockDim.x) {
    cg::i64 limbs[4];
    cg::split_limbs(src[j], s.limb_bits, s.limbs, limbs);
    for (int c = 0; c < s.limbs; ++c)
      cggi_shared[c * N + swz(static_cast<u32>(j))] = cg::gl_from_signed(limbs[c]);
  }
  __syncthreads();
  block_ntt_forward(cggi_shared, static_cast<u32>(s.limbs), static_cast<u32>(s.log2_n), psi_rev);
  u64* dst = out + poly * s.limbs * N;
  for (std::size_t w = threadIdx.x; w < s.limbs * N; w += blockDim.x) {
    const std::size_t c = w / N, j = w % N;
    dst[w] = cg::gl_mul(cggi_shared[c * N + swz(static_cast<u32>(j))], n_inv);
  }
}

/// Shared memory of one blind rotation: the two twiddle tables, the accumulator, the CMux's
/// digit rows and the key products' sums.
template <class T>
inline std::size_t blind_rotate_smem(const CggiShape& s) {
  const std::size_t tables = 2 * s.N * sizeof(u64);
  const std::size_t acc = ((s.k + 1) * s.N * sizeof(T) + 15) / 16 * 16;
  const std::size_t digits = s.rows() * s.N * sizeof(u64);
  const std::size_t sums = (s.k + 1) * s.limbs * s.N * sizeof(u64);
  return tables + acc + digits + sums;
}

/// One block per ciphertext: acc = X^-b test, then for each i a CMux by the i-th GGSW of the key
/// (digits of X^e acc - acc, their NTTs, the products with the key summed exactly in 192 bits,
/// inverse NTTs, back to the torus), then the constant coefficient's extraction. The same
/// operations as the CPU's blind_rotate_one, each butterfly and sum in its order-free exact form.
template <class T>
__global__ void cggi_blind_rotate_kernel(T* out, const T* in, const T* test,
                                         std::size_t test_stride, CggiShape s,
                                         BootstrapKeyView bsk) {
  extern __shared__ u64 cggi_shared[];
  // (CggiShape's helpers are host code: the sizes spelled out.)
  const std::size_t N = s.N, k = s.k, L = s.bk_levels, rows = (k + 1) * L;
  const std::size_t ct = blockIdx.x, outs = (k + 1) * s.limbs;
  const u32 log_n = static_cast<u32>(s.log2_n), mask = (1u << log_n) - 1;
  u64* psi = cggi_shared;
  u64* psi_inv = psi + N;
  T* acc = reinterpret_cast<T*>(psi_inv + N);
  u64* digits = psi_inv + N + ((k + 1) * N * sizeof(T) + 15) / 16 * 2;
  u64* sums = digits + rows * N;
  wait_for_previous_kernels();
  for (std::size_t j = threadIdx.x; j < N; j += blockDim.x) {
    psi[j] = static_cast<const u64*>(bsk.forward)[j];
    psi_inv[j] = static_cast<const u64*>(bsk.inverse)[j];
  }
  const T* x = in + ct * (s.n + 1);
  const int log2_2n = s.log2_n + 1;
  const std::size_t two_n = 2 * N;
  const std::size_t b = cg::mod_switch(x[s.n], log2_2n);
  const T* tp = test + ct * test_stride;
  for (std::size_t j = threadIdx.x; j < k * N; j += blockDim.x) acc[j] = T{0};
  for (std::size_t j = threadIdx.x; j < N; j += blockDim.x)
    acc[k * N + j] = rotated_coefficient(tp, N, (two_n - b) % two_n, j);
  __syncthreads();
  const std::size_t key_words = rows * outs * N;  // CggiShape::ggsw_ntt_words
  for (std::size_t i = 0; i < s.n; ++i) {
    const std::size_t e = cg::mod_switch(x[i], log2_2n);
    if (e == 0) continue;  // X^0: the CMux adds nothing (uniform over the block)
    for (u32 w = threadIdx.x; w < (k + 1) * N; w += blockDim.x) {
      const u32 p = w >> log_n, j = w & mask;
      const T* a = acc + p * N;
      const T diff = static_cast<T>(rotated_coefficient(a, N, e, j) - a[j]);
      cg::i64 d[kMaxCggiLevels];
      cg::decompose(diff, s.bk_base_log, s.bk_levels, d);
      for (std::size_t l = 0; l < L; ++l)
        digits[(p * L + l) * N + swz(j)] = cg::gl_from_signed(d[l]);
    }
    __syncthreads();
    block_ntt_forward(digits, static_cast<u32>(rows), log_n, psi);
    // sums[oc] = sum_r digits_r * key_r[oc], oc = output polynomial x limb.
    const u64* key = static_cast<const u64*>(bsk.ggsw) + i * key_words;
    for (u32 w = threadIdx.x; w < outs * N; w += blockDim.x) {
      const u32 oc = w >> log_n, j = w & mask;
      cg::GlAcc sum;
      for (std::size_t r = 0; r < rows; ++r)
        cg::gl_mac(sum, digits[r * N + swz(j)], key[(r * outs + oc) * N + j]);
      sums[oc * N + swz(j)] = cg::gl_acc_reduce(sum);
    }
    __syncthreads();
    block_ntt_inverse_unscaled(sums, static_cast<u32>(outs), log_n, psi_inv);
    for (u32 w = threadIdx.x; w < (k + 1) * N; w += blockDim.x) {
      const u32 o = w >> log_n, j = w & mask;
      T v = acc[w];
      for (int c = 0; c < s.limbs; ++c)
        v = static_cast<T>(
            v + cg::torus_from_limb<T>(sums[(o * s.limbs + c) * N + swz(j)], c * s.limb_bits));
      acc[w] = v;
    }
    __syncthreads();
  }
  // Sample extraction of the constant coefficient (cg::sample_extract, one word per thread).
  T* o = out + ct * (k * N + 1);
  for (u32 w = threadIdx.x; w < k * N; w += blockDim.x) {
    const u32 p = w >> log_n, j = w & mask;
    const T* a = acc + p * N;
    o[w] = j == 0 ? a[0] : static_cast<T>(T{0} - a[N - j]);
  }
  if (threadIdx.x == 0) o[k * N] = acc[k * N];
}

/// Ciphertexts per block of the key switch: each thread keeps this many sums of one output word,
/// so every key word read serves them all.
inline constexpr int kKeySwitchTile = 32;
/// Input words whose digits a block decomposes per step.
inline constexpr int kKeySwitchChunk = 8;

/// Tiled LWE key switch: block (x, y, z) computes output words [y blockDim, (y + 1) blockDim)
/// of ciphertexts [x kKeySwitchTile, ...) over input words [z per_split, (z + 1) per_split):
/// out = (0, .., 0, body) - sum_i sum_j d_ij ksk_ij, the digits of each input word decomposed
/// once per block into shared memory (key_switch_row's arithmetic: wrapping products mod 2^W).
/// With several splits (few ciphertexts: the input words spread over the GPU instead of one
/// block's serial loop) each adds its part atomically to a zeroed `out`: integer sums mod 2^W,
/// the same words in any order.
template <class T>
__global__ void cggi_key_switch_kernel(T* out, const T* in, const T* ksk, std::size_t count,
                                       CggiShape s, std::size_t per_split) {
  __shared__ T digits[kKeySwitchChunk][kKeySwitchTile][kMaxCggiLevels];
  const std::size_t big = s.k * s.N, n = s.n, L = s.ks_levels;
  const std::size_t first = blockIdx.x * kKeySwitchTile;
  const std::size_t c = blockIdx.y * blockDim.x + threadIdx.x;  // output word
  const std::size_t row = L * (n + 1);
  T sum[kKeySwitchTile];
  for (int t = 0; t < kKeySwitchTile; ++t) sum[t] = T{0};
  wait_for_previous_kernels();
  const std::size_t begin = blockIdx.z * per_split,
                    end = begin + per_split < big ? begin + per_split : big;
  for (std::size_t i0 = begin; i0 < end; i0 += kKeySwitchChunk) {
    const std::size_t chunk = end - i0 < kKeySwitchChunk ? end - i0 : kKeySwitchChunk;
    __syncthreads();  // the previous chunk's digits are read
    for (std::size_t w = threadIdx.x; w < chunk * kKeySwitchTile; w += blockDim.x) {
      const std::size_t ii = w / kKeySwitchTile, t = w % kKeySwitchTile;
      cg::i64 d[kMaxCggiLevels];
      if (first + t < count) {
        cg::decompose(in[(first + t) * (big + 1) + i0 + ii], s.ks_base_log, s.ks_levels, d);
      } else {
        for (std::size_t l = 0; l < L; ++l) d[l] = 0;
      }
      for (std::size_t l = 0; l < L; ++l) digits[ii][t][l] = static_cast<T>(d[l]);
    }
    __syncthreads();
    if (c > n) continue;
    for (std::size_t ii = 0; ii < chunk; ++ii) {
      const T* r = ksk + (i0 + ii) * row + c;
      for (std::size_t l = 0; l < L; ++l) {
        const T kw = r[l * (n + 1)];
#pragma unroll
        for (int t = 0; t < kKeySwitchTile; ++t)
          sum[t] = static_cast<T>(sum[t] - digits[ii][t][l] * kw);
      }
    }
  }
  if (c > n) return;
  for (int t = 0; t < kKeySwitchTile; ++t) {
    const std::size_t ct = first + t;
    if (ct >= count) break;
    const T body = c == n && blockIdx.z == 0 ? in[ct * (big + 1) + big] : T{0};
    T* dst = out + ct * (n + 1) + c;
    if (gridDim.z == 1) {
      *dst = static_cast<T>(body + sum[t]);
    } else if constexpr (sizeof(T) == 4) {
      atomicAdd(reinterpret_cast<unsigned*>(dst), static_cast<unsigned>(body + sum[t]));
    } else {
      atomicAdd(reinterpret_cast<unsigned long long*>(dst),
                static_cast<unsigned long long>(body + sum[t]));
    }
  }
}

/// out[w] = ca a[w] + cb b[w] (+ constant on each body word), wrapping mod 2^W.
template <class T>
__global__ void cggi_linear_kernel(T* out, const T* a, const T* b, T ca, T cb, T constant,
                                   std::size_t words, std::size_t total) {
  const std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  wait_for_previous_kernels();
  if (w >= total) return;
  T v = static_cast<T>(ca * a[w]);
  if (b) v = static_cast<T>(v + cb * b[w]);
  if (w % words == words - 1) v = static_cast<T>(v + constant);
  out[w] = v;
}

}  // namespace ember::cuda::kernels
