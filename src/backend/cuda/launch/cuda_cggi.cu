// The CUDA backend's CGGI family: launchers of kernels/cggi.cuh, with the shapes checked against
// what the kernels hold (levels, limbs, shared memory).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "ember/core/errors.h"
#include "kernels/cggi.cuh"
#include "kernels/cggi_gather.cuh"
#include "launch/cuda_cggi.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.h"

namespace ember::backend {

namespace {

namespace k = cuda::kernels;

/// Threads of a key transform's block: one row's butterflies (N / 2), at most 512.
unsigned transform_threads(const CggiShape& s) {
  return static_cast<unsigned>(std::clamp<std::size_t>(s.N / 2, 64, 512));
}

class CudaCggi final : public CggiOps {
 public:
  explicit CudaCggi(cuda::DeviceContext& ctx) : ctx_(ctx) {}

  void bootstrap_key_to_ntt_async(u64* out, const void* ggsw, std::size_t count, const CggiShape& s,
                                  const u64* psi_rev, u64 n_inv, Stream stream) override {
    check(s);
    const std::size_t polys = count * s.rows() * (s.k + 1);
    if (polys == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      auto* kernel = k::cggi_key_to_ntt_kernel<T>;
      const std::size_t smem = s.limbs * s.N * sizeof(u64);
      allow_smem(kernel, smem);
      for (std::size_t first = 0; first < polys; first += kMaxBlocks) {
        const std::size_t blocks = std::min(polys - first, kMaxBlocks);
        cuda::launch(kernel, dim3(static_cast<unsigned>(blocks)), transform_threads(s), smem,
                     raw(stream), "cggi_key_to_ntt_kernel", out + first * s.limbs * s.N,
                     static_cast<const T*>(ggsw) + first * s.N, s, psi_rev, n_inv);
      }
    });
  }

  void blind_rotate_extract_async(void* out, const void* in, const void* test_polys,
                                  std::size_t test_stride, std::size_t count, const CggiShape& s,
                                  const BootstrapKeyView& bsk, Stream stream) override {
    check(s);
    if (count == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      auto* kernel = k::cggi_blind_rotate_kernel<T>;
      const std::size_t smem = k::blind_rotate_smem<T>(s);
      allow_smem(kernel, smem);
      const std::size_t in_words = s.n + 1, out_words = s.big_dim() + 1;
      for (std::size_t first = 0; first < count; first += kMaxBlocks) {
        const std::size_t blocks = std::min(count - first, kMaxBlocks);
        cuda::launch(kernel, dim3(static_cast<unsigned>(blocks)), rotation_threads(s, count), smem,
                     raw(stream), "cggi_blind_rotate_kernel",
                     static_cast<T*>(out) + first * out_words,
                     static_cast<const T*>(in) + first * in_words,
                     static_cast<const T*>(test_polys) + first * test_stride, test_stride, s, bsk);
      }
    });
  }

  void key_switch_async(void* out, const void* in, const void* ksk, std::size_t count,
                        const CggiShape& s, Stream stream) override {
    check(s);
    if (count == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      constexpr unsigned threads = 128;
      const std::size_t tiles = (count + k::kKeySwitchTile - 1) / k::kKeySwitchTile;
      const unsigned columns = static_cast<unsigned>((s.n + 1 + threads - 1) / threads);
      const std::size_t per_launch = 65535;
      for (std::size_t first = 0; first < tiles; first += per_launch) {
        const std::size_t blocks = std::min(tiles - first, per_launch);
        const std::size_t ct = first * k::kKeySwitchTile;
        cuda::launch(k::cggi_key_switch_kernel<T>, dim3(static_cast<unsigned>(blocks), columns),
                     threads, 0, raw(stream), "cggi_key_switch_kernel",
                     static_cast<T*>(out) + ct * (s.n + 1),
                     static_cast<const T*>(in) + ct * (s.big_dim() + 1), static_cast<const T*>(ksk),
                     count - ct, s);
      }
    });
  }

  void linear_async(void* out, const void* a, const void* b, std::int64_t ca, std::int64_t cb,
                    u64 constant, std::size_t dim, std::size_t count, const CggiShape& s,
                    Stream stream) override {
    const std::size_t total = count * (dim + 1);
    if (total == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      const std::size_t blocks = (total + 255) / 256;
      if (blocks > 0x7fffffffu) throw ParameterError("CGGI linear step: batch too large");
      cuda::launch(k::cggi_linear_kernel<T>, dim3(static_cast<unsigned>(blocks)), 256, 0,
                   raw(stream), "cggi_linear_kernel", static_cast<T*>(out),
                   static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T>(ca),
                   static_cast<T>(cb), static_cast<T>(constant), dim + 1, total);
    });
  }

 private:
  /// Blocks per launch (one ciphertext or key polynomial each): a 1-D grid's limit, kept well
  /// below 2^31 so that offsets stay small.
  static constexpr std::size_t kMaxBlocks = std::size_t{1} << 24;

  /// Threads of a blind rotation's block. A few ciphertexts leave most SMs idle: each block then
  /// takes 512 threads (at most one per butterfly of a stage; 1024 would exceed the registers of
  /// an SM at the kernel's 72 per thread) so that its own SM hides more of the latency of the
  /// serial CMux chain; a full GPU runs 256-thread blocks, three per SM.
  unsigned rotation_threads(const CggiShape& s, std::size_t count) {
    if (sms_ == 0)
      cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, ctx_.index()),
                  "cudaDeviceGetAttribute");
    const std::size_t butterflies = s.rows() * s.N / 2;
    const std::size_t want = count <= 2 * static_cast<std::size_t>(sms_) ? 512 : 256;
    return static_cast<unsigned>(std::clamp<std::size_t>(std::min(want, butterflies), 64, 512));
  }

  cudaStream_t raw(Stream s) const {
    return s.handle ? static_cast<cudaStream_t>(s.handle) : ctx_.stream();
  }

  static void check(const CggiShape& s) {
    if (s.bk_levels > k::kMaxCggiLevels || s.ks_levels > k::kMaxCggiLevels)
      throw ParameterError("CGGI on the GPU: at most " + std::to_string(k::kMaxCggiLevels) +
                           " decomposition levels");
    if (s.limbs > 4) throw ParameterError("CGGI on the GPU: at most 4 key limbs");
    if (s.N < 128 || (s.N & (s.N - 1)) != 0)
      throw ParameterError("CGGI on the GPU: N must be a power of two of at least 128");
  }

  /// Lets `kernel` use `bytes` of dynamic shared memory (DeviceMemoryError when the GPU has less).
  template <class K>
  void allow_smem(K* kernel, std::size_t bytes) {
    int device = ctx_.index(), limit = 0;
    cuda::check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                "cudaDeviceGetAttribute");
    if (bytes > static_cast<std::size_t>(limit))
      throw DeviceMemoryError("CGGI on the GPU: a blind rotation needs " + std::to_string(bytes) +
                              " bytes of shared memory per block, the GPU has " +
                              std::to_string(limit));
    cuda::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)),
                "cudaFuncSetAttribute");
  }

  cuda::DeviceContext& ctx_;
  int sms_ = 0;

 public:
  void gather_async(void* out, const std::uint32_t* out_index, const void* src,
                    const std::uint32_t* src_lits, std::size_t dim, std::size_t count,
                    const CggiShape& s, Stream stream) override {
    if (count == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      // One block per ciphertext; 128 threads stride over its k N + 1 words.
      for (std::size_t first = 0; first < count; first += kMaxBlocks) {
        const std::size_t blocks = std::min(count - first, kMaxBlocks);
        cuda::launch(k::cggi_gather_kernel<T>, dim3(static_cast<unsigned>(blocks)), 128, 0,
                     raw(stream), "cggi_gather_kernel", static_cast<T*>(out), out_index,
                     static_cast<const T*>(src), src_lits, dim + 1, first);
      }
    });
  }
};

}  // namespace

std::unique_ptr<CggiOps> make_cuda_cggi(cuda::DeviceContext& ctx) {
  return std::make_unique<CudaCggi>(ctx);
}

}  // namespace ember::backend
