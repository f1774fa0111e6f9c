// sum_mod_rows_async: the modular sum of a few row blocks on one device (CPU loop or CUDA kernel).
#pragma once

#include <cstddef>
#include <vector>

#include "ember/backend/backend.h"

namespace ember::dist {

/// The most inputs one sum_mod_rows_async call adds (kMaxReduceDevices).
inline constexpr std::size_t kMaxSumInputs = 8;

/// out[r * n + i] = (sum_j in[j][r * n + i]) mod q, q the prime of row row0 + r of `b`, for
/// r < rows: the reduction after an exact 64-bit sum (every word below 2^61, at most 8 inputs).
/// Pointers in be's memory; out may alias in[0]. Stream-ordered on `s`.
void sum_mod_rows_async(backend::Backend& be, u64* out, const std::vector<const u64*>& in,
                        std::size_t rows, std::size_t n, const backend::BasisView& b,
                        std::size_t row0, backend::Stream s);

#if defined(EMBER_WITH_CUDA)
/// The CUDA kernel's launcher (src/dist/cuda/sum_mod.cu), on GPU `device`.
void launch_sum_mod_rows(int device, u64* out, const std::vector<const u64*>& in, std::size_t rows,
                         std::size_t n, const backend::BasisView& b, std::size_t row0,
                         backend::Stream s);
#endif

}  // namespace ember::dist
