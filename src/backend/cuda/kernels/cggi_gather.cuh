// The CGGI gather kernel: an indexed copy of LWE ciphertexts with optional negation (the circuit
// scheduler's operand gather and result scatter), one block per ciphertext.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dependent_launch.cuh"

namespace ember::cuda::kernels {

/// Block i: out[o_i] = (-1)^(l_i & 1) src[l_i >> 1] over `words` words, l_i = src_lits[i] (2 i
/// when null), o_i = out_index[i] (i when null); ciphertexts first + blockIdx.x.
template <class T>
__global__ void cggi_gather_kernel(T* out, const std::uint32_t* out_index, const T* src,
                                   const std::uint32_t* src_lits, std::size_t words,
                                   std::size_t first) {
  const std::size_t i = first + blockIdx.x;
  wait_for_previous_kernels();
  const std::uint32_t lit = src_lits ? src_lits[i] : static_cast<std::uint32_t>(2 * i);
  const T* from = src + static_cast<std::size_t>(lit >> 1) * words;
  T* to = out + (out_index ? static_cast<std::size_t>(out_index[i]) : i) * words;
  const T sign = (lit & 1) ? static_cast<T>(~T{0}) : T{0};  // -1 or 0: x ^ sign - sign = +-x
  for (std::size_t w = threadIdx.x; w < words; w += blockDim.x)
    to[w] = static_cast<T>((from[w] ^ sign) - sign);
}

}  // namespace ember::cuda::kernels
