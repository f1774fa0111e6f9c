// BFV/BGV encoding on the GPU: loading integer values with the range check, multiplying by a
// constant modulo t, the centered lift, a decryption's message and the centered store, each
// element computed by backend/integer_plain.h's functions, so that every result equals the CPU
// backend's bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/backend/integer_plain.h"
#include "kernels/dependent_launch.cuh"

namespace ember::cuda::kernels {

namespace ip = backend::integer;

/// Grid-stride loop of this file's kernels.
#define EMBER_INTEGER_FOR(i, total)                                                     \
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < (total); \
       i += std::size_t{gridDim.x} * blockDim.x)

__global__ void integer_load_plain_kernel(u64* out, const void* values, ip::IntType type,
                                          std::size_t count, std::size_t n, u64 t, const u32* index,
                                          unsigned long long* flag) {
  wait_for_previous_kernels();
  bool all_in_range = true;
  EMBER_INTEGER_FOR(i, n) {
    bool in_range = true;
    const u64 v = i < count ? ip::load_reduced(values, type, i, t, in_range) : 0;
    all_in_range = all_in_range && in_range;
    out[index ? index[i] : i] = v;
  }
  if (!all_in_range) atomicOr(flag, 1ull);
}

__global__ void integer_multiply_plain_kernel(u64* out, const u64* m, u64 k, Modulus t,
                                              std::size_t n) {
  wait_for_previous_kernels();
  EMBER_INTEGER_FOR(i, n) out[i] = mul_mod(m[i], k, t);
}

__global__ void integer_lift_plain_kernel(u64* out, const u64* m, u64 t, const Modulus* moduli,
                                          const u32* ids, std::size_t limbs, std::size_t n) {
  wait_for_previous_kernels();
  EMBER_INTEGER_FOR(j, limbs * n) {
    const std::size_t l = j / n, i = j % n;
    out[j] = ip::centered_residue(m[i], t, moduli[ids[l]].value);
  }
}

__global__ void integer_message_kernel(u64* out, const u64* v, u64 q, Modulus t, u64 factor_inv,
                                       std::size_t n) {
  wait_for_previous_kernels();
  EMBER_INTEGER_FOR(i, n) out[i] = ip::message_of(v[i], q, t, factor_inv);
}

__global__ void integer_store_plain_kernel(std::int64_t* out, const u64* m, u64 t, const u32* index,
                                           std::size_t count) {
  wait_for_previous_kernels();
  EMBER_INTEGER_FOR(i, count) out[i] = ip::centered(m[index ? index[i] : i], t);
}

#undef EMBER_INTEGER_FOR

}  // namespace ember::cuda::kernels
