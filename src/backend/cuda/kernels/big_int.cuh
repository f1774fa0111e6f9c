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

/// The CRT's block: kBigCrtThreads coefficients, their limbs loaded together (coalesced) and
/// transposed into shared memory, then each thread's residues written row by row (coalesced).
inline constexpr std::size_t kBigRnsMaxLimbs = 160;

__global__ void __launch_bounds__(64)
    big_to_rns_kernel(u32* out, const u64* words, BigShape in, backend::BigRnsView v) {
  constexpr unsigned T = 64;
  __shared__ u32 limbs[kBigRnsMaxLimbs * T];
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * T;
  const std::size_t count = in.n - first < T ? in.n - first : T;
  wait_for_previous_kernels();
  for (std::size_t k = threadIdx.x; k < count * in.words; k += T) {
    const u64 w = words[first * in.words + k];
    const std::size_t coef = k / in.words, word = k % in.words;
    limbs[(2 * word) * T + coef] = static_cast<u32>(w);
    limbs[(2 * word + 1) * T + coef] = static_cast<u32>(w >> 32);
  }
  __syncthreads();
  if (threadIdx.x >= count) return;
  const auto limb = [&](std::size_t j) { return limbs[j * T + threadIdx.x]; };
  const bool negative = backend::big::reads_negative(limb, v);
  for (std::size_t i = 0; i < v.primes; i += backend::big::kBigBlock) {
    u32 r[backend::big::kBigBlock];
    backend::big::rns_residues(limb, v, i, negative, r);
    for (std::size_t k = i; k < v.primes && k < i + backend::big::kBigBlock; ++k)
      out[k * in.n + first + threadIdx.x] = r[k - i];
  }
}

/// The inverse CRT's block: kBigCrtThreads coefficients, their digits y_i in shared memory
/// (a column a thread), the tables read by every thread of a warp at once (broadcasts).
inline constexpr unsigned kBigCrtThreads = 64;
inline constexpr std::size_t kBigCrtMaxPrimes = 160;

__global__ void __launch_bounds__(kBigCrtThreads)
    big_from_rns_kernel(u64* out, BigShape o, const u32* residues, backend::BigCrtView v) {
  __shared__ u32 y[kBigCrtMaxPrimes * kBigCrtThreads];  // digits are below the primes, < 2^31
  const std::size_t c = big_coefficient();
  wait_for_previous_kernels();
  if (c >= o.n) return;
  for (std::size_t i = 0; i < v.primes; ++i)
    y[i * kBigCrtThreads + threadIdx.x] =
        static_cast<u32>(backend::big::crt_digit(residues[i * o.n + c], v, i));
  const auto digit = [&](std::size_t i) { return u64{y[i * kBigCrtThreads + threadIdx.x]}; };
  backend::big::crt_combine(out + c * o.words, o, digit, backend::big::crt_multiple(digit, v), v);
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
