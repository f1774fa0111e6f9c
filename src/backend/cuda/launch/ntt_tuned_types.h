// The types of the CUDA NTT autotune tables: one row per measured size, one table per GPU.
#pragma once

#include <cstddef>
#include <iterator>

namespace ember::cuda {

/// The measured fastest schedule per direction for `limbs` limbs of size 2^log_n in one launch.
struct TunedNtt {
  int log_n;
  int limbs;
  const char* forward;
  const char* inverse;
};

/// The tables measured on one GPU (bench/make_ntt_table.py writes one header per GPU). Its
/// multiprocessor count and memory bandwidth place other GPUs near it (tuned_gpu()).
struct TunedGpu {
  const char* name;  // cudaDeviceProp::name of the GPU measured
  int multiprocessors;
  double bandwidth_gbs;  // peak, from the memory clock and bus width
  const TunedNtt* fp64;  // batches with a prime of at most 50 bits
  std::size_t fp64_rows;
  const TunedNtt* integer;  // the others
  std::size_t integer_rows;
};

}  // namespace ember::cuda
