// The CUDA backend's BFV/BGV encoding family: launchers of kernels/integer_encode.cuh.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/integer_encode.cuh"
#include "launch/cuda_integer_encode.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.h"

namespace ember::backend {

namespace {

namespace k = cuda::kernels;

constexpr unsigned kThreads = 256;

dim3 grid_of(std::size_t items) {
  const std::size_t blocks = (items + kThreads - 1) / kThreads;
  return dim3(
      static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 65535u * 8)));
}

class CudaIntegerEncode final : public IntegerEncodeOps {
 public:
  explicit CudaIntegerEncode(cuda::DeviceContext& ctx) : ctx_(ctx) {}

  void load_plain_async(u64* out, const void* values, integer::IntType type, std::size_t count,
                        std::size_t n, u64 t, const u32* index, u64* flag, Stream s) override {
    ctx_.activate();
    cuda::launch(k::integer_load_plain_kernel, grid_of(n), kThreads, 0, raw(s),
                 "integer_load_plain_kernel", out, values, type, count, n, t, index,
                 reinterpret_cast<unsigned long long*>(flag));
  }

  void multiply_plain_async(u64* out, const u64* m, u64 k, const Modulus& t, std::size_t n,
                            Stream s) override {
    ctx_.activate();
    cuda::launch(k::integer_multiply_plain_kernel, grid_of(n), kThreads, 0, raw(s),
                 "integer_multiply_plain_kernel", out, m, k, t, n);
  }

  void lift_plain_async(u64* out, const u64* m, u64 t, const BasisView& b, Stream s) override {
    ctx_.activate();
    const std::size_t n = b.ring->n;
    cuda::launch(k::integer_lift_plain_kernel, grid_of(b.limbs * n), kThreads, 0, raw(s),
                 "integer_lift_plain_kernel", out, m, t, b.ring->moduli, b.ids, b.limbs, n);
  }

  void message_async(u64* out, const u64* v, u64 q, const Modulus& t, u64 factor_inv, std::size_t n,
                     Stream s) override {
    ctx_.activate();
    cuda::launch(k::integer_message_kernel, grid_of(n), kThreads, 0, raw(s),
                 "integer_message_kernel", out, v, q, t, factor_inv, n);
  }

  void store_plain_async(std::int64_t* out, const u64* m, u64 t, const u32* index,
                         std::size_t count, Stream s) override {
    ctx_.activate();
    cuda::launch(k::integer_store_plain_kernel, grid_of(count), kThreads, 0, raw(s),
                 "integer_store_plain_kernel", out, m, t, index, count);
  }

 private:
  cudaStream_t raw(Stream s) const {
    return s.handle ? static_cast<cudaStream_t>(s.handle) : ctx_.stream();
  }

  cuda::DeviceContext& ctx_;
};

}  // namespace

std::unique_ptr<IntegerEncodeOps> make_cuda_integer_encode(cuda::DeviceContext& ctx) {
  return std::make_unique<CudaIntegerEncode>(ctx);
}

}  // namespace ember::backend
