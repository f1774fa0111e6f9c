// The CUDA kernel of the collectives' modular row sum (after an NCCL sum, or of staged copies).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "../sum_mod.h"
#include "ember/core/errors.h"
#include "ember/core/modarith.h"
#include "runtime/cuda_check.h"

namespace ember::dist {

namespace {

struct SumInputs {
  const u64* in[kMaxSumInputs];
  u32 count;
};

/// Row blockIdx.y of the block: out = sum of the inputs mod the row's prime, grid-stride along it.
__global__ void sum_mod_rows_kernel(u64* out, SumInputs in, const Modulus* moduli, const u32* ids,
                                    u32 row0, std::size_t n) {
  const std::size_t row = blockIdx.y;
  const Modulus m = moduli[ids[row0 + row]];
  const std::size_t base = row * n;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    u64 sum = 0;
    for (u32 j = 0; j < in.count; ++j) sum += in.in[j][base + i];
    out[base + i] = barrett_reduce_64(sum, m);
  }
}

}  // namespace

void launch_sum_mod_rows(int device, u64* out, const std::vector<const u64*>& in, std::size_t rows,
                         std::size_t n, const backend::BasisView& b, std::size_t row0,
                         backend::Stream s) {
  if (!rows || !n) return;
  if (rows > 65535) throw ParameterError("sum_mod_rows: at most 65535 rows");
  SumInputs args{};
  for (std::size_t j = 0; j < in.size(); ++j) args.in[j] = in[j];
  args.count = static_cast<u32>(in.size());
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  constexpr unsigned kThreads = 256;
  const unsigned blocks_x = static_cast<unsigned>(
      std::clamp<std::size_t>(n / (4 * kThreads), 1, 64));  // about 4 words a thread
  sum_mod_rows_kernel<<<dim3(blocks_x, static_cast<unsigned>(rows)), kThreads, 0,
                        static_cast<cudaStream_t>(s.handle)>>>(out, args, b.ring->moduli, b.ids,
                                                               static_cast<u32>(row0), n);
  cuda::check_launch("sum_mod_rows_kernel");
}

}  // namespace ember::dist
