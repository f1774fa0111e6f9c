// The CUDA backend's CGGI family: launchers of kernels/cggi.cuh, with the shapes checked against
// what the kernels hold (levels, limbs, shared memory).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "ember/core/errors.h"
#include "kernels/cggi.cuh"
#include "kernels/cggi_fourier.cuh"
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
  CudaCggi(cuda::DeviceContext& ctx, const Backend& owner) : ctx_(ctx), owner_(owner) {}

  void bootstrap_key_transform_async(void* out, const void* ggsw, std::size_t count,
                                     const CggiShape& s, const void* forward, u64 n_inv,
                                     Stream stream) override {
    check(s);
    const std::size_t polys = count * s.rows() * (s.k + 1);
    if (polys == 0) return;
    ctx_.activate();
    if (s.fourier) {
      const unsigned threads = 128;
      cuda::launch(k::cggi_key_to_fourier_kernel,
                   dim3(static_cast<unsigned>((polys + threads - 1) / threads)), threads, 0,
                   raw(stream), "cggi_key_to_fourier_kernel", static_cast<k::Cx*>(out),
                   static_cast<const u32*>(ggsw), polys, s.N / 2,
                   static_cast<const k::Cx*>(forward));
      return;
    }
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      auto* kernel = k::cggi_key_to_ntt_kernel<T>;
      const std::size_t smem = s.limbs * s.N * sizeof(u64);
      allow_smem(kernel, smem);
      for (std::size_t first = 0; first < polys; first += kMaxBlocks) {
        const std::size_t blocks = std::min(polys - first, kMaxBlocks);
        cuda::launch(
            kernel, dim3(static_cast<unsigned>(blocks)), transform_threads(s), smem, raw(stream),
            "cggi_key_to_ntt_kernel", static_cast<u64*>(out) + first * s.limbs * s.N,
            static_cast<const T*>(ggsw) + first * s.N, s, static_cast<const u64*>(forward), n_inv);
      }
    });
  }

  void blind_rotate_extract_async(void* out, const void* in, const void* test_polys,
                                  std::size_t test_stride, std::size_t count, const CggiShape& s,
                                  const BootstrapKeyView& bsk, Stream stream) override {
    check(s);
    if (count == 0) return;
    ctx_.activate();
    if (s.fourier) return rotate_fourier(out, in, test_polys, test_stride, count, s, bsk, stream);
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
      // Few tiles leave SMs idle behind a block's serial loop over k N input words: split those
      // words into slices (about 4 blocks per SM in all), their sums added atomically.
      const std::size_t big = s.big_dim(), blocks_per_split = tiles * columns,
                        want = 4 * static_cast<std::size_t>(sm_count());
      std::size_t splits = 1;
      if (blocks_per_split < want / 2) {
        const std::size_t chunks = (big + k::kKeySwitchChunk - 1) / k::kKeySwitchChunk;
        splits = std::min(chunks, (want + blocks_per_split - 1) / blocks_per_split);
      }
      const std::size_t chunks_per_split =
          ((big + k::kKeySwitchChunk - 1) / k::kKeySwitchChunk + splits - 1) / splits;
      const std::size_t per_split = chunks_per_split * k::kKeySwitchChunk;
      splits = (big + per_split - 1) / per_split;
      if (splits > 1)
        cuda::check(cudaMemsetAsync(out, 0, count * (s.n + 1) * sizeof(T), raw(stream)),
                    "cudaMemsetAsync");
      const std::size_t per_launch = 65535;
      for (std::size_t first = 0; first < tiles; first += per_launch) {
        const std::size_t blocks = std::min(tiles - first, per_launch);
        const std::size_t ct = first * k::kKeySwitchTile;
        cuda::launch(k::cggi_key_switch_kernel<T>,
                     dim3(static_cast<unsigned>(blocks), columns, static_cast<unsigned>(splits)),
                     threads, 0, raw(stream), "cggi_key_switch_kernel",
                     static_cast<T*>(out) + ct * (s.n + 1),
                     static_cast<const T*>(in) + ct * (s.big_dim() + 1), static_cast<const T*>(ksk),
                     count - ct, s, per_split);
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
    const int sms = sm_count();
    const std::size_t butterflies = s.rows() * s.N / 2;
    const std::size_t want = count <= 2 * static_cast<std::size_t>(sms) ? 512 : 256;
    return static_cast<unsigned>(std::clamp<std::size_t>(std::min(want, butterflies), 64, 512));
  }

  /// The Fourier rotation: a batch that leaves most SMs idle takes one cluster of k+1 blocks per
  /// ciphertext (latency); otherwise `group` ciphertexts per block share the key's reads
  /// (backend option cggi_rotation_group, or automatic as below). One ciphertext per block with
  /// few ciphertexts gives each block twice the threads (two products each instead of four).
  void rotate_fourier(void* out, const void* in, const void* test_polys, std::size_t test_stride,
                      std::size_t count, const CggiShape& s, const BootstrapKeyView& bsk,
                      Stream stream) {
    const int log = s.log2_n - 1;
    if (log < k::kFourierMinLog || log > k::kFourierMaxLog)
      throw ParameterError("CGGI on the GPU: the Fourier blind rotation takes N from 256 to 2048");
    int group = owner_.options().cggi_rotation_group;
    // Batches that leave most SMs idle: one cluster of k+1 blocks per ciphertext.
    if (group == 0 && count * (s.k + 1) <= static_cast<std::size_t>(sm_count()) && s.k + 1 <= 8)
      return rotate_fourier_clusters(out, in, test_polys, test_stride, count, s, bsk, stream, log);
    // Otherwise two ciphertexts per block where two such blocks still fit an SM (bool_128:
    // 42,000 against 32,000 gates per second at batch 65536 on an H100), else one (the TFHE
    // library's set: 41,000 against 32,000).
    if (group == 0)
      group =
          count > static_cast<std::size_t>(sm_count()) && k::fourier_rotate_smem(s, 2) <= 113 * 1024
              ? 2
              : 1;
    const bool few = count <= 2 * static_cast<std::size_t>(sm_count());
    const int items = group == 1 && few && k::fourier_rotate_threads(s, 2) <= 512 ? 2 : 4;
    const std::size_t threads = k::fourier_rotate_threads(s, items);
    if (threads < 32 || threads > 512)
      throw ParameterError("CGGI on the GPU: the Fourier blind rotation takes (k + 1) N from " +
                           std::string("256 to 4096"));
    const auto run = [&](auto log_c, auto group_c, auto items_c) {
      constexpr int L = decltype(log_c)::value, C = decltype(group_c)::value,
                    I = decltype(items_c)::value;
      launch_fourier(k::cggi_blind_rotate_fourier_kernel<L, C, I>, C, out, in, test_polys,
                     test_stride, count, s, bsk, stream, threads);
    };
    const auto by_group = [&](auto log_c) {
      using std::integral_constant;
      if (group == 4) return run(log_c, integral_constant<int, 4>{}, integral_constant<int, 4>{});
      if (group == 2) return run(log_c, integral_constant<int, 2>{}, integral_constant<int, 4>{});
      if (items == 2) return run(log_c, integral_constant<int, 1>{}, integral_constant<int, 2>{});
      run(log_c, integral_constant<int, 1>{}, integral_constant<int, 4>{});
    };
    switch (log) {
      case 7:
        return by_group(std::integral_constant<int, 7>{});
      case 8:
        return by_group(std::integral_constant<int, 8>{});
      case 9:
        return by_group(std::integral_constant<int, 9>{});
      default:
        return by_group(std::integral_constant<int, 10>{});
    }
  }

  void rotate_fourier_clusters(void* out, const void* in, const void* test_polys,
                               std::size_t test_stride, std::size_t count, const CggiShape& s,
                               const BootstrapKeyView& bsk, Stream stream, int log) {
    const auto run = [&](auto log_c) {
      constexpr int L = decltype(log_c)::value;
      auto* kernel = k::cggi_blind_rotate_fourier_cluster_kernel<L>;
      const std::size_t smem = k::fourier_cluster_smem(s);
      allow_smem(kernel, smem);
      const unsigned outs = static_cast<unsigned>(s.k + 1);
      cuda::launch_in_clusters(
          kernel, dim3(static_cast<unsigned>(count) * outs), static_cast<unsigned>(s.N / 4), smem,
          raw(stream), outs, "cggi_blind_rotate_fourier_cluster_kernel", static_cast<u32*>(out),
          static_cast<const u32*>(in), static_cast<const u32*>(test_polys), test_stride, s, bsk);
    };
    switch (log) {
      case 7:
        return run(std::integral_constant<int, 7>{});
      case 8:
        return run(std::integral_constant<int, 8>{});
      case 9:
        return run(std::integral_constant<int, 9>{});
      default:
        return run(std::integral_constant<int, 10>{});
    }
  }

  template <class Kernel>
  void launch_fourier(Kernel* kernel, int C, void* out, const void* in, const void* test_polys,
                      std::size_t test_stride, std::size_t count, const CggiShape& s,
                      const BootstrapKeyView& bsk, Stream stream, std::size_t threads) {
    const std::size_t smem = k::fourier_rotate_smem(s, C);
    allow_smem(kernel, smem);
    const std::size_t in_words = s.n + 1, out_words = s.big_dim() + 1;
    const std::size_t per_launch = kMaxBlocks * C;
    for (std::size_t first = 0; first < count; first += per_launch) {
      const std::size_t cts = std::min(count - first, per_launch);
      cuda::launch(kernel, dim3(static_cast<unsigned>((cts + C - 1) / C)),
                   static_cast<unsigned>(threads), smem, raw(stream),
                   "cggi_blind_rotate_fourier_kernel", static_cast<u32*>(out) + first * out_words,
                   static_cast<const u32*>(in) + first * in_words,
                   static_cast<const u32*>(test_polys) + first * test_stride, test_stride, cts, s,
                   bsk);
    }
  }

  int sm_count() {
    if (sms_ == 0)
      cuda::check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, ctx_.index()),
                  "cudaDeviceGetAttribute");
    return sms_;
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
  const Backend& owner_;  // its options choose the rotation group
  int sms_ = 0;
};

}  // namespace

std::unique_ptr<CggiOps> make_cuda_cggi(cuda::DeviceContext& ctx, const Backend& owner) {
  return std::make_unique<CudaCggi>(ctx, owner);
}

}  // namespace ember::backend
