// CKKS encoding on the GPU: slot loading, the special FFT's stages (one launch a stage), rounding
// to residues and the two-prime decoding, each element computed by backend/ckks_fft.h's
// functions, so that every result equals the CPU backend's bit for bit.
#pragma once

#include <cstddef>

#include "ember/backend/ckks_fft.h"
#include "kernels/dependent_launch.cuh"

namespace ember::cuda::kernels {

namespace ck = backend::ckks;

/// The primes of a basis as the kernels of this file see them (ring_ops.cuh's LimbMap, not
/// included here: its kernels are defined in cuda_backend.cu's translation unit).
struct CkksLimbs {
  const Modulus* moduli;
  const u32* ids;
  u32 log_n;
  u32 limbs;
  __device__ __forceinline__ const Modulus& mod(u32 limb) const { return moduli[ids[limb]]; }
};

/// Grid-stride loop helpers of this file.
#define EMBER_CKKS_FOR(i, total)                                                        \
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < (total); \
       i += std::size_t{gridDim.x} * blockDim.x)

__global__ void ckks_load_slots_kernel(ck::Cx* slots, const void* values, ck::SlotType type,
                                       std::size_t count, bool repeat, std::size_t n,
                                       unsigned long long* flags) {
  wait_for_previous_kernels();
  const std::size_t read = repeat ? count : (count < n ? count : n);
  unsigned long long f = 0, largest = 0;
  EMBER_CKKS_FOR(i, read) {
    const ck::Cx z = ck::load_value(values, type, i);
    f |= ck::value_flags(z);
    const unsigned long long bits = ck::double_bits(ck::value_magnitude(z));
    largest = bits > largest ? bits : largest;
  }
  EMBER_CKKS_FOR(s, n) slots[s] = ck::slot_value(values, type, count, repeat, s);
  if (f) atomicOr(flags, f);
  if (largest) atomicMax(flags + 2, largest);
}

__global__ void ckks_fft_stage_kernel(ck::Cx* a, std::size_t n, std::size_t len, const ck::Cx* tw,
                                      bool inverse) {
  wait_for_previous_kernels();
  EMBER_CKKS_FOR(t, n / 2) ck::special_butterfly(a, len, t, tw, inverse);
}

__global__ void ckks_round_kernel(u64* out, const ck::Cx* w, double scale, double bound,
                                  CkksLimbs map, unsigned long long* flags) {
  wait_for_previous_kernels();
  const std::size_t big_n = std::size_t{1} << map.log_n, n = big_n / 2;
  const int log_n = static_cast<int>(map.log_n) - 1;
  EMBER_CKKS_FOR(k, big_n) {
    const double x = ck::f_mul(ck::encoded_coefficient(w, n, log_n, k), scale);
    const double v = ck::round_even(x);
    if (!(ck::m_fabs(v) <= bound)) {
      atomicOr(flags, static_cast<unsigned long long>(ck::kTooLarge));
      atomicExch(flags + 1, static_cast<unsigned long long>(ck::double_bits(x)));
      continue;
    }
    for (u32 l = 0; l < map.limbs; ++l) out[l * big_n + k] = ck::residue_of_rounded(v, map.mod(l));
  }
}

__global__ void ckks_two_prime_slots_kernel(ck::Cx* slots, const u64* a, u64 q0_inv, double scale,
                                            bool check, CkksLimbs map, unsigned long long* flags) {
  wait_for_previous_kernels();
  const std::size_t big_n = std::size_t{1} << map.log_n, n = big_n / 2;
  const int log_n = static_cast<int>(map.log_n) - 1;
  const bool two_rows = map.limbs > 1;
  const Modulus& m0 = map.mod(0);
  const Modulus& m1 = map.mod(two_rows ? 1 : 0);
  bool any_wrapped = false;
  EMBER_CKKS_FOR(k, n) {
    bool w0 = false, w1 = false;
    const double re = ck::two_prime_coefficient(a, big_n, k, m0, m1, two_rows, q0_inv, scale, w0);
    const double im =
        ck::two_prime_coefficient(a, big_n, k + n, m0, m1, two_rows, q0_inv, scale, w1);
    any_wrapped = any_wrapped || w0 || w1;
    slots[ck::bit_reverse(k, log_n)] = ck::Cx{re, im};
  }
  if (check && any_wrapped) atomicOr(flags, static_cast<unsigned long long>(ck::kWrapped));
}

__global__ void ckks_coefficient_slots_kernel(ck::Cx* slots, const double* coeffs, std::size_t n,
                                              int log_n) {
  wait_for_previous_kernels();
  EMBER_CKKS_FOR(k, n) slots[ck::bit_reverse(k, log_n)] = ck::Cx{coeffs[k], coeffs[k + n]};
}

__global__ void ckks_store_slots_kernel(void* out, const ck::Cx* slots, ck::SlotType type,
                                        std::size_t count) {
  wait_for_previous_kernels();
  EMBER_CKKS_FOR(i, count) {
    if (type == ck::SlotType::c128)
      static_cast<ck::Cx*>(out)[i] = slots[i];
    else
      static_cast<double*>(out)[i] = slots[i].re;
  }
}

#undef EMBER_CKKS_FOR

}  // namespace ember::cuda::kernels
