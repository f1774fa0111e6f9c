// The CUDA backend's CKKS encoding family: launchers of kernels/ckks_encode.cuh.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/ckks_encode.cuh"
#include "launch/cuda_ckks_encode.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.h"

namespace ember::backend {

namespace {

namespace k = cuda::kernels;
using ckks::Cx;

constexpr unsigned kThreads = 256;

dim3 grid_of(std::size_t items) {
  const std::size_t blocks = (items + kThreads - 1) / kThreads;
  return dim3(
      static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 65535u * 8)));
}

int log2_of(std::size_t n) {
  int l = 0;
  while ((std::size_t{1} << l) < n) ++l;
  return l;
}

class CudaCkksEncode final : public CkksEncodeOps {
 public:
  explicit CudaCkksEncode(cuda::DeviceContext& ctx) : ctx_(ctx) {}

  void load_slots_async(void* slots, const void* values, ckks::SlotType type, std::size_t count,
                        bool repeat, std::size_t n, u64* flags, Stream s) override {
    ctx_.activate();
    cuda::launch(k::ckks_load_slots_kernel, grid_of(n), kThreads, 0, raw(s),
                 "ckks_load_slots_kernel", static_cast<Cx*>(slots), values, type, count, repeat, n,
                 reinterpret_cast<unsigned long long*>(flags));
  }

  void special_fft_async(void* slots, std::size_t n, const void* twiddles, bool inverse,
                         Stream s) override {
    ctx_.activate();
    Cx* a = static_cast<Cx*>(slots);
    const Cx* tw = static_cast<const Cx*>(twiddles);
    // One launch a stage, in ckks::special_fft_stages's order (a stage reads the previous one's
    // whole output).
    if (!inverse) {
      for (std::size_t len = 2; len <= n; len <<= 1) stage(a, n, len, tw, false, s);
    } else {
      for (std::size_t len = n; len >= 2; len >>= 1) stage(a, n, len, tw, true, s);
    }
  }

  void round_to_residues_async(u64* out, const void* slots, double scale, double bound,
                               const BasisView& b, u64* flags, Stream s) override {
    ctx_.activate();
    cuda::launch(k::ckks_round_kernel, grid_of(b.ring->n), kThreads, 0, raw(s), "ckks_round_kernel",
                 out, static_cast<const Cx*>(slots), scale, bound, map_of(b),
                 reinterpret_cast<unsigned long long*>(flags));
  }

  void two_prime_slots_async(void* slots, const u64* a, u64 q0_inv, double scale, bool check,
                             const BasisView& b, u64* flags, Stream s) override {
    ctx_.activate();
    cuda::launch(k::ckks_two_prime_slots_kernel, grid_of(b.ring->n / 2), kThreads, 0, raw(s),
                 "ckks_two_prime_slots_kernel", static_cast<Cx*>(slots), a, q0_inv, scale, check,
                 map_of(b), reinterpret_cast<unsigned long long*>(flags));
  }

  void coefficient_slots_async(void* slots, const double* coeffs, std::size_t n,
                               Stream s) override {
    ctx_.activate();
    cuda::launch(k::ckks_coefficient_slots_kernel, grid_of(n), kThreads, 0, raw(s),
                 "ckks_coefficient_slots_kernel", static_cast<Cx*>(slots), coeffs, n, log2_of(n));
  }

  void store_slots_async(void* out, const void* slots, ckks::SlotType type, std::size_t count,
                         Stream s) override {
    ctx_.activate();
    cuda::launch(k::ckks_store_slots_kernel, grid_of(count), kThreads, 0, raw(s),
                 "ckks_store_slots_kernel", out, static_cast<const Cx*>(slots), type, count);
  }

 private:
  void stage(Cx* a, std::size_t n, std::size_t len, const Cx* tw, bool inverse, Stream s) {
    cuda::launch(k::ckks_fft_stage_kernel, grid_of(n / 2), kThreads, 0, raw(s),
                 "ckks_fft_stage_kernel", a, n, len, tw, inverse);
  }
  static k::CkksLimbs map_of(const BasisView& b) {
    return k::CkksLimbs{b.ring->moduli, b.ids, static_cast<u32>(b.ring->log_n),
                        static_cast<u32>(b.limbs)};
  }
  cudaStream_t raw(Stream s) const {
    return s.handle ? static_cast<cudaStream_t>(s.handle) : ctx_.stream();
  }

  cuda::DeviceContext& ctx_;
};

}  // namespace

std::unique_ptr<CkksEncodeOps> make_cuda_ckks_encode(cuda::DeviceContext& ctx) {
  return std::make_unique<CudaCkksEncode>(ctx);
}

}  // namespace ember::backend
