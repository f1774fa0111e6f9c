// The big-integer kernels: one thread per coefficient running big_int_rows.h, the CPU's code.
#pragma once

#include <cstddef>

#include "ember/backend/big_int_rows.h"
#include "kernels/dependent_launch.cuh"

namespace ember::cuda::kernels {

using backend::BigShape;

/// The coefficient this thread handles, or n when it has none.
__device__ __forceinline__ std::size_t big_coefficient() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__global__ void big_add_kernel(u64* out, const u64* a, const u64* b, BigShape s, bool subtract) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c >= s.n) return;
  const std::size_t o = c * s.words;
  backend::big::add(out + o, a + o, b + o, s, subtract);
}

__global__ void big_negate_kernel(u64* out, const u64* a, BigShape s) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c < s.n) backend::big::negate(out + c * s.words, a + c * s.words, s);
}

__global__ void big_shift_kernel(u64* out, BigShape o, const u64* a, BigShape i, int left,
                                 int right) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c < o.n) backend::big::shift(out + c * o.words, o, a + c * i.words, i, left, right);
}

__global__ void big_centered_kernel(u64* out, BigShape o, const u64* v, const u64* p,
                                    const u64* half, std::size_t p_words) {
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c < o.n) backend::big::centered(out + c * o.words, o, v + c * p_words, p, half, p_words);
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
