// The CUDA backend's CGGI family: launchers of kernels/cggi.cuh and cggi_fourier.cuh, with the
// shapes checked against what the kernels hold (levels, N, shared memory).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "ember/core/errors.h"
#include "kernels/cggi.cuh"
#include "kernels/cggi_fourier.cuh"
#include "kernels/cggi_gather.cuh"
#include "launch/cuda_cggi.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.h"

namespace ember::backend {

namespace {

namespace k = cuda::kernels;

class CudaCggi final : public CggiOps {
 public:
  CudaCggi(cuda::DeviceContext& ctx, const Backend& owner) : ctx_(ctx), owner_(owner) {}

  void bootstrap_key_transform_async(void* out, const void* ggsw, std::size_t count,
                                     const CggiShape& s, const void* forward,
                                     Stream stream) override {
    check(s);
    const std::size_t polys = count * s.rows() * (s.k + 1);
    if (polys == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      const unsigned threads = 128;
      cuda::launch(k::cggi_key_to_fourier_kernel<T>,
                   dim3(static_cast<unsigned>((polys + threads - 1) / threads)), threads, 0,
                   raw(stream), "cggi_key_to_fourier_kernel", static_cast<k::Cx*>(out),
                   static_cast<const T*>(ggsw), polys, s.N / 2, static_cast<const k::Cx*>(forward),
                   s.limb_bits, s.limbs);
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
      rotate<T>(static_cast<T*>(out), static_cast<const T*>(in), static_cast<const T*>(test_polys),
                test_stride, count, s, bsk, stream);
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

  void add_messages_async(void* words, const std::uint8_t* values, u64 scale, u64 offset,
                          std::uint8_t limit, std::uint32_t* bad, std::size_t dim,
                          std::size_t count, const CggiShape& s, Stream stream) override {
    if (count == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      cuda::launch(k::cggi_add_messages_kernel<T>, dim3(static_cast<unsigned>((count + 255) / 256)),
                   256, 0, raw(stream), "cggi_add_messages_kernel", static_cast<T*>(words), values,
                   static_cast<T>(scale), static_cast<T>(offset), limit, bad, dim, count);
    });
  }
  void decode_messages_async(std::uint8_t* out, const void* words, const std::uint8_t* key,
                             std::size_t dim, std::size_t count, int message_bits,
                             const CggiShape& s, Stream stream) override {
    if (count == 0) return;
    ctx_.activate();
    with_torus(s.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      cuda::launch(k::cggi_decode_messages_kernel<T>,
                   dim3(static_cast<unsigned>((count + 127) / 128)), 128, 0, raw(stream),
                   "cggi_decode_messages_kernel", out, static_cast<const T*>(words), key, dim,
                   count, message_bits);
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

  /// The blind rotation: a batch that leaves most SMs idle takes one cluster of k+1 blocks per
  /// ciphertext (latency); otherwise `group` ciphertexts per block share the key's reads
  /// (backend option cggi_rotation_group, or automatic as below). One ciphertext per block with
  /// few ciphertexts gives each block twice the threads (two products each instead of four).
  template <class T>
  void rotate(T* out, const T* in, const T* test, std::size_t test_stride, std::size_t count,
              const CggiShape& s, const BootstrapKeyView& bsk, Stream stream) {
    const int log = s.log2_n - 1;
    int group = owner_.options().cggi_rotation_group;
    if (group == 0 && count * (s.k + 1) <= static_cast<std::size_t>(sm_count()) && s.k + 1 <= 8)
      return with_log(log, [&](auto log_c) {
        rotate_clusters<T, decltype(log_c)::value>(out, in, test, test_stride, count, s, bsk,
                                                   stream);
      });
    // Otherwise two ciphertexts per block where two such blocks still fit an SM (bool_128:
    // 42,000 against 32,000 gates per second at batch 65536 on an H100), else one (the TFHE
    // library's set: 41,000 against 32,000). A 64-bit torus takes one (its limbs fill an SM).
    if (group == 0)
      group =
          count > static_cast<std::size_t>(sm_count()) && k::fourier_rotate_smem(s, 2) <= 113 * 1024
              ? 2
              : 1;
    if (sizeof(T) == 8) group = 1;
    const bool few = count <= 2 * static_cast<std::size_t>(sm_count());
    const int items = group == 1 && few && k::fourier_rotate_threads(s, 2) <= 512 ? 2 : 4;
    const std::size_t threads = k::fourier_rotate_threads(s, items);
    if (threads < 32 || threads > 512)
      throw ParameterError("CGGI on the GPU: the blind rotation takes (k + 1) N from 256 to " +
                           std::string("4096"));
    with_log(log, [&](auto log_c) {
      constexpr int L = decltype(log_c)::value;
      if constexpr (sizeof(T) == 4) {
        if (group == 4)
          return launch_grouped(k::cggi_blind_rotate_fourier_kernel<T, L, 4, 4>, 4, out, in, test,
                                test_stride, count, s, bsk, stream, threads);
        if (group == 2)
          return launch_grouped(k::cggi_blind_rotate_fourier_kernel<T, L, 2, 4>, 2, out, in, test,
                                test_stride, count, s, bsk, stream, threads);
      }
      if (items == 2)
        return launch_grouped(k::cggi_blind_rotate_fourier_kernel<T, L, 1, 2>, 1, out, in, test,
                              test_stride, count, s, bsk, stream, threads);
      launch_grouped(k::cggi_blind_rotate_fourier_kernel<T, L, 1, 4>, 1, out, in, test, test_stride,
                     count, s, bsk, stream, threads);
    });
  }

  /// Calls f(std::integral_constant<int, log>) for the transform sizes the kernels are built
  /// for (log2 N / 2 from 7 to 10).
  template <class F>
  static void with_log(int log, F&& f) {
    switch (log) {
      case 7:
        return f(std::integral_constant<int, 7>{});
      case 8:
        return f(std::integral_constant<int, 8>{});
      case 9:
        return f(std::integral_constant<int, 9>{});
      case 10:
        return f(std::integral_constant<int, 10>{});
      default:
        throw ParameterError("CGGI on the GPU: the blind rotation takes N from 256 to 2048");
    }
  }

  template <class T, int L>
  void rotate_clusters(T* out, const T* in, const T* test, std::size_t test_stride,
                       std::size_t count, const CggiShape& s, const BootstrapKeyView& bsk,
                       Stream stream) {
    auto* kernel = k::cggi_blind_rotate_fourier_cluster_kernel<T, L>;
    const bool staged = k::fourier_cluster_smem(s, true) <= static_cast<std::size_t>(smem_limit());
    const std::size_t smem = k::fourier_cluster_smem(s, staged);
    allow_smem(kernel, smem);
    const unsigned outs = static_cast<unsigned>(s.k + 1);
    cuda::launch_in_clusters(kernel, dim3(static_cast<unsigned>(count) * outs),
                             static_cast<unsigned>(s.N / 4), smem, raw(stream), outs,
                             "cggi_blind_rotate_fourier_cluster_kernel", out, in, test, test_stride,
                             s, bsk, staged);
  }

  template <class T, class Kernel>
  void launch_grouped(Kernel* kernel, int C, T* out, const T* in, const T* test,
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
                   "cggi_blind_rotate_fourier_kernel", out + first * out_words,
                   in + first * in_words, test + first * test_stride, test_stride, cts, s, bsk);
    }
  }

  int smem_limit() {
    int limit = 0;
    cuda::check(
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx_.index()),
        "cudaDeviceGetAttribute");
    return limit;
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
    if (s.N < 256 || s.N > 2048)
      throw ParameterError("CGGI on the GPU: the blind rotation takes N from 256 to 2048");
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

std::unique_ptr<CggiOps> make_cuda_cggi(cuda::DeviceContext& ctx, const Backend& owner) {
  return std::make_unique<CudaCggi>(ctx, owner);
}

}  // namespace ember::backend
