// The backend interface: a device's runtime (runtime.h) with every operation family (ring_ops.h,
// key_switch_ops.h, cggi_ops.h, ckks_encode_ops.h, integer_encode_ops.h, big_int_ops.h),
// implemented by cpu and cuda.
//
// Everything above `ring` is backend-neutral; a backend is the only code that knows where memory
// lives. A scheme with operations of its own adds a family (its own interface and a base here)
// instead of widening an existing one.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ember/backend/big_int_ops.h"
#include "ember/backend/cggi_ops.h"
#include "ember/backend/ckks_encode_ops.h"
#include "ember/backend/integer_encode_ops.h"
#include "ember/backend/key_switch_ops.h"
#include "ember/backend/options.h"
#include "ember/backend/ring_ops.h"
#include "ember/backend/runtime.h"

namespace ember::backend {

/// One device's backend: its runtime and every operation family. The compositions below are
/// the defaults of the operations KeySwitchOps lets a backend fuse with ring operations.
class Backend : public Runtime, public RingOps, public KeySwitchOps {
 public:
  /// This backend's options (see options.h): a snapshot that stays valid while the backend lives.
  const BackendOptions& options() const noexcept { return options_.get(); }
  /// Replaces the options for later operations; set them between operations. Throws
  /// ParameterError, changing nothing, for an NTT variant or table row this backend lacks.
  void set_options(const BackendOptions& options);
  /// The CGGI family (cggi_ops.h): its own interface, not methods of the RLWE families.
  virtual CggiOps& cggi() = 0;
  /// The CKKS encoding family (ckks_encode_ops.h): slot values <-> coefficients on the device.
  virtual CkksEncodeOps& ckks_encode() = 0;
  /// The BFV/BGV encoding family (integer_encode_ops.h): integers <-> coefficients modulo t.
  virtual IntegerEncodeOps& integer_encode() = 0;
  /// The big-integer family (big_int_ops.h): HEAAN's multi-word coefficients.
  virtual BigIntOps& big_int() = 0;

  // The default compositions of KeySwitchOps's fusable operations (documented there).
  void ntt_forward_affine_sub_async(u64* const* out, const u64* const* a, u64* c, const u64* mul,
                                    const u64* mul_companion, const u64* const* addends,
                                    std::size_t count, const BasisView& b, Stream stream) override {
    ntt_forward_async(c, b, count, stream);
    affine_sub_async(out, a, c, mul, mul_companion, addends, count, b, stream);
  }
  void ntt_forward_affine_sub_async(u32* const* out, const u32* const* a, u32* c, const u32* mul,
                                    const u32* mul_companion, const u32* const* addends,
                                    std::size_t count, const BasisView32& b,
                                    Stream stream) override {
    ntt_forward_async(c, b, count, stream);
    affine_sub_async(out, a, c, mul, mul_companion, addends, count, b, stream);
  }
  void convert_ntt_affine_sub_async(const std::vector<ConvJob>& jobs, u64* const* out,
                                    const u64* const* a, u64* c, const u64* mul,
                                    const u64* mul_companion, const u64* const* addends,
                                    const BasisView& b, Stream stream,
                                    const u64* sub = nullptr) override {
    base_convert_many_async(jobs, stream);
    const std::size_t words = b.limbs * b.ring->n;
    if (sub)
      for (std::size_t k = 0; k < jobs.size(); ++k)
        sub_async(c + k * words, c + k * words, sub + k * words, b, stream);
    ntt_forward_affine_sub_async(out, a, c, mul, mul_companion, addends, jobs.size(), b, stream);
  }
  void convert_affine_sub_async(const std::vector<ConvJob>& jobs, u64* const* out,
                                const u64* const* a, u64* c, const u64* mul,
                                const u64* mul_companion, const u64* const* addends,
                                u64 addend_galois, const BasisView& b, Stream stream) override {
    base_convert_many_async(jobs, stream);
    const std::size_t words = b.limbs * b.ring->n, count = jobs.size();
    if (addend_galois <= 1 || !addends) {
      affine_sub_async(out, a, c, mul, mul_companion, addends, count, b, stream);
      return;
    }
    // The addends' automorphisms first (stream-ordered scratch), then the map with them.
    u64* rotated = static_cast<u64*>(allocate(count * words * sizeof(u64), stream));
    std::vector<const u64*> adds(count, nullptr);
    for (std::size_t k = 0; k < count; ++k)
      if (addends[k]) {
        automorphism_async(rotated + k * words, addends[k], addend_galois, false, b, stream);
        adds[k] = rotated + k * words;
      }
    affine_sub_async(out, a, c, mul, mul_companion, adds.data(), count, b, stream);
    deallocate(rotated, count * words * sizeof(u64), stream);
  }
  void ntt_key_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                             const LiftedRows& lift, const BasisView& ext_basis,
                             const BasisView& qlp, Stream stream) override {
    u64* ext = const_cast<u64*>(kp.ext);
    if (lift.rows_per_source)
      ntt_forward_lifted_async(ext, lift, ext_basis, stream);
    else
      ntt_forward_async(ext, ext_basis, 1, stream);
    key_inner_product_async(q0, q1, p0, p1, kp, qlp, stream);
  }
  void ntt_key_product_async(u32* q0, u32* q1, u32* p0, u32* p1, const KeyProductView32& kp,
                             const BasisView32& ext_basis, const BasisView32& qlp,
                             Stream stream) override {
    ntt_forward_async(const_cast<u32*>(kp.ext), ext_basis, 1, stream);
    key_inner_product_async(q0, q1, p0, p1, kp, qlp, stream);
  }

 private:
  // Per backend, seeded from the environment when the backend is created.
  OptionsCell options_{BackendOptions::from_environment()};
};

/// The backend for a device. Throws DeviceError when the device does not exist or its backend
/// was not compiled in.
Backend& backend_for(const Device& device);

/// Copies `bytes` from `src` (memory of src_be, written by work queued on src_stream) to `dst`
/// (memory of dst_be), ordered after that work and before later work on dst_stream, and with
/// src_stream's later work (a release of src) ordered after the copy. GPU to GPU: peer to peer
/// (events order the two streams, the host does not wait); between the CPU and a GPU: through the
/// GPU's copy engine, and the host waits for it; CPU to CPU: a memcpy.
void copy_between_devices(Backend& dst_be, void* dst, Stream dst_stream, Backend& src_be,
                          const void* src, Stream src_stream, std::size_t bytes);

/// Threads of the CPU backend's parallel regions: n >= 1, or 0 for OpenMP's default
/// (OMP_NUM_THREADS, else one per core). For processes that share a machine. Throws
/// ParameterError for n < 0. In a process forked after the CPU backend ran a team of several
/// threads, its work runs on one thread whatever this says (GNU OpenMP's pool does not survive
/// a fork).
void set_cpu_threads(int n);
/// The CPU backend's thread count: set_cpu_threads's setting, or OpenMP's default for 0.
int cpu_threads();

/// Parses "cpu", "cpu:1", "cuda", "cuda:1" or "auto" (first GPU when there is one, else cpu).
Device parse_device(const std::string& spec);

/// Description of one visible GPU.
struct GpuInfo {
  int index = 0;
  std::string name;
  std::size_t memory_bytes = 0;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  double memory_bandwidth_gbs = 0;  // peak: two transfers per memory clock over the bus width
};

bool cuda_compiled();
std::vector<GpuInfo> cuda_devices();

}  // namespace ember::backend
