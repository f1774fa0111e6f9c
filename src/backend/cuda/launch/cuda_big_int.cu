// The CUDA backend's big-integer family: launchers of kernels/big_int.cuh, a thread a coefficient.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "ember/core/errors.h"
#include "kernels/big_int.cuh"
#include "launch/cuda_big_int.h"
#include "runtime/launch.h"

namespace ember::backend {

namespace {

namespace k = cuda::kernels;

class CudaBigInt final : public BigIntOps {
 public:
  explicit CudaBigInt(cuda::DeviceContext& ctx) : ctx_(ctx) {}

  void big_add_async(u64* out, const u64* a, const u64* b, const BigShape& s, bool subtract,
                     Stream stream) override {
    run_staged(s.n, 2 * s.words, stream, k::big_add_kernel, "big_add_kernel", out, a, b, s,
               subtract);
  }
  void big_negate_async(u64* out, const u64* a, const BigShape& s, Stream stream) override {
    run_staged(s.n, s.words, stream, k::big_negate_kernel, "big_negate_kernel", out, a, s);
  }
  void big_shift_async(u64* out, const BigShape& o, const u64* a, const BigShape& i, int left,
                       int right, Stream stream) override {
    run_staged(o.n, o.words + i.words, stream, k::big_shift_kernel, "big_shift_kernel", out, o, a,
               i, left, right);
  }
  void big_automorphism_async(u64* out, const u64* a, const BigShape& s, u64 galois,
                              Stream stream) override {
    run(s.n, stream, k::big_automorphism_kernel, "big_automorphism_kernel", out, a, s,
        backend::big::odd_inverse(galois));
  }
  void big_encode_slots_async(u64* out, const BigShape& o, const void* slots, double scale,
                              double bound, u64* flags, Stream stream) override {
    int log_n = 0;
    while ((std::size_t{1} << log_n) < o.n / 2) ++log_n;
    run(o.n, stream, k::big_encode_slots_kernel, "big_encode_slots_kernel", out, o,
        static_cast<const ckks::Cx*>(slots), log_n, scale, bound,
        reinterpret_cast<unsigned long long*>(flags));
  }
  void big_to_doubles_async(double* out, const u64* a, const BigShape& s, int scale_bits,
                            Stream stream) override {
    run(s.n, stream, k::big_to_doubles_kernel, "big_to_doubles_kernel", out, a, s, scale_bits);
  }
  void big_to_rns_async(u32* out, const u64* words, const BigShape& in, const BigRnsView& v,
                        Stream stream) override {
    if (!v.byte_planes)
      throw ParameterError("the CRT on the GPU needs its byte planes (ring::BigMultiplier's)");
    if (in.n == 0) return;
    launch_bytes(
        v.byte_blocks, 4, 0, in.n, stream, "big_to_rns_bytes_kernel",
        [&](auto pairs) { return &k::big_to_rns_bytes_kernel<decltype(pairs)::value>; }, out, words,
        in, v);
  }
  void big_from_rns_async(u64* out, const BigShape& o, const u32* residues, const BigCrtView& v,
                          Stream stream) override {
    if (!v.byte_matrix)
      throw ParameterError(
          "the inverse CRT on the GPU needs its byte matrix (ring::BigMultiplier's)");
    if (o.words > kMaxOutputWords)
      throw ParameterError("the inverse CRT on the GPU writes at most " +
                           std::to_string(kMaxOutputWords) + " words a coefficient, got " +
                           std::to_string(o.words));
    if (o.n == 0) return;
    launch_bytes(
        v.byte_blocks, 1, o.words, o.n, stream, "big_from_rns_bytes_kernel",
        [&](auto pairs) { return &k::big_from_rns_bytes_kernel<decltype(pairs)::value>; }, out, o,
        residues, v);
  }
  void big_from_residues_async(u64* out, const BigShape& o, const u64* residues, u64 q,
                               Stream stream) override {
    run(o.n, stream, k::big_from_residues_kernel, "big_from_residues_kernel", out, o, residues, q);
  }
  void big_sample_uniform_async(u64* out, const BigShape& o, const ChaChaKey& key, u64 nonce,
                                Stream stream) override {
    run(o.n, stream, k::big_uniform_kernel, "big_uniform_kernel", out, o, key, nonce);
  }

 private:
  /// Output words of the inverse CRT (staged in shared memory).
  static constexpr std::size_t kMaxOutputWords = 80;

  /// Launches the instance of a byte-matrix kernel (kernel_for(std::integral_constant<int, K>))
  /// with the fewest pairs K of blocks of 32 input bytes that hold `blocks`, a warp for 16
  /// coefficients, and the shared memory of its staged tiles (`planes` byte planes) and output
  /// words (`words`, for the inverse CRT).
  template <class KernelFor, class... Args>
  void launch_bytes(u32 blocks, std::size_t planes, std::size_t words, std::size_t n, Stream stream,
                    const char* name, KernelFor kernel_for, Args... args) {
    ctx_.activate();
    const dim3 grid(static_cast<unsigned>((n + kCoefficientsPerBlock - 1) / kCoefficientsPerBlock));
    const std::size_t smem = k::big_bytes_smem((blocks + 1) / 2, planes, words);
    const auto go = [&](auto instance) {
      const auto kernel = kernel_for(instance);
      if (smem > 48 * 1024)
        cuda::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem)),
                    "cudaFuncSetAttribute(big-integer CRT kernel)");
      cuda::launch(kernel, grid, k::kBigBytesThreads, smem, raw(stream), name, args...);
    };
    const u32 pairs = (blocks + 1) / 2;
    if (pairs <= 2)
      go(std::integral_constant<int, 2>{});
    else if (pairs <= 3)
      go(std::integral_constant<int, 3>{});
    else if (pairs <= 6)
      go(std::integral_constant<int, 6>{});
    else if (pairs <= 8)
      go(std::integral_constant<int, 8>{});
    else if (pairs <= 11)
      go(std::integral_constant<int, 11>{});
    else
      throw ParameterError(std::string(name) + ": at most 22 blocks of 32 bytes (160 primes or " +
                           "limbs) on the GPU, got " + std::to_string(blocks));
  }
  static constexpr std::size_t kCoefficientsPerBlock = k::kBigBytesThreads / 32 * 16;

  /// Launches a staged kernel (kernels::kBigStagedCoefficients a block) whose coefficients take
  /// `words` words of shared memory each.
  template <class Kernel, class... Args>
  void run_staged(std::size_t n, std::size_t words, Stream stream, Kernel* kernel, const char* name,
                  Args... args) {
    if (n == 0) return;
    ctx_.activate();
    const std::size_t smem = k::big_staged_smem(words);
    if (smem > 227 * 1024)  // Hopper's most shared memory a block
      throw ParameterError(std::string(name) + ": coefficients of " + std::to_string(words) +
                           " words in all do not fit shared memory; the GPU takes at most " +
                           std::to_string(227 * 1024 / k::big_staged_smem(1)) + " words");
    if (smem > 48 * 1024)
      cuda::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem)),
                  "cudaFuncSetAttribute(staged big-integer kernel)");
    const auto per_block = k::kBigStagedCoefficients;
    cuda::launch(kernel, dim3(static_cast<unsigned>((n + per_block - 1) / per_block)), per_block,
                 smem, raw(stream), name, args...);
  }

  template <class Kernel, class... Args>
  void run(std::size_t n, Stream stream, Kernel* kernel, const char* name, Args... args) {
    if (n == 0) return;
    ctx_.activate();
    const unsigned threads = 128;
    cuda::launch(kernel, dim3(static_cast<unsigned>((n + threads - 1) / threads)), threads, 0,
                 raw(stream), name, args...);
  }

  cudaStream_t raw(Stream s) const {
    return s.handle ? static_cast<cudaStream_t>(s.handle) : ctx_.stream();
  }

  cuda::DeviceContext& ctx_;
};

}  // namespace

std::unique_ptr<BigIntOps> make_cuda_big_int(cuda::DeviceContext& ctx) {
  return std::make_unique<CudaBigInt>(ctx);
}

}  // namespace ember::backend
