// CGGI kernels besides the blind rotation (cggi_fourier.cuh): tiled LWE key switching and the
// gates' linear step. All arithmetic comes from backend/cggi_rows.h, the CPU backend's too:
// every result equals the CPU's bit for bit.
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

template <class T>
__global__ void cggi_add_messages_kernel(T* words, const std::uint8_t* values, T scale, T offset,
                                         std::uint8_t limit, std::uint32_t* bad, std::size_t dim,
                                         std::size_t count) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  wait_for_previous_kernels();
  if (i >= count) return;
  if (values[i] >= limit) *bad = 1;
  T& body = words[i * (dim + 1) + dim];
  body = backend::cggi::plus_message(body, values[i], scale, offset);
}

template <class T>
__global__ void cggi_decode_messages_kernel(std::uint8_t* out, const T* words,
                                            const std::uint8_t* key, std::size_t dim,
                                            std::size_t count, int message_bits) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  wait_for_previous_kernels();
  if (i >= count) return;
  out[i] = backend::cggi::message_of_phase(
      backend::cggi::lwe_phase(words + i * (dim + 1), key, dim), message_bits);
}

}  // namespace ember::cuda::kernels
