// The CUDA backend: implements every Backend primitive by launching the kernels on a stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/core/errors.h"
#include "kernels/ring_ops.cuh"
#include "launch/cuda_big_int.h"
#include "launch/cuda_cggi.h"
#include "launch/cuda_ckks_encode.h"
#include "launch/cuda_integer_encode.h"
#include "launch/ntt.h"
#include "runtime/cuda_check.h"
#include "runtime/device_context.h"
#include "runtime/launch.h"

namespace ember::backend {

namespace {

using cuda::check;
using cuda::check_launch;
namespace k = cuda::kernels;

/// Grid for a grid-stride loop over `items`.
dim3 grid_for(std::size_t items, u32 threads = 256) {
  const std::size_t blocks = (items + threads - 1) / threads;
  return dim3(
      static_cast<u32>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 65535u * 8)));
}

/// Keeps the GPU busy for `cycles` clock cycles, so that the launches queued behind it are
/// timed without the host's launch latency in the gaps.
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index)
      : ctx_(index),
        cggi_(make_cuda_cggi(ctx_, *this)),
        ckks_encode_(make_cuda_ckks_encode(ctx_)),
        integer_encode_(make_cuda_integer_encode(ctx_)),
        big_int_(make_cuda_big_int(ctx_)) {}

  /// A stream's CUDA handle; the null Stream is this GPU's default stream (never CUDA's legacy
  /// stream 0, which would synchronize with every other stream).
  cudaStream_t raw(Stream s) const {
    return s.handle ? static_cast<cudaStream_t>(s.handle) : ctx_.stream();
  }

  Device device() const override { return Device{DeviceKind::cuda, ctx_.index()}; }

  void* allocate(std::size_t bytes, Stream s) override { return ctx_.allocate(bytes, raw(s)); }
  void deallocate(void* p, std::size_t, Stream s) noexcept override { ctx_.deallocate(p, raw(s)); }
  void copy_from_host_async(void* d, const void* src, std::size_t n, Stream s) override {
    ctx_.activate();
    check(cudaMemcpyAsync(d, src, n, cudaMemcpyHostToDevice, raw(s)), "copy to GPU");
  }
  void copy_to_host_async(void* d, const void* src, std::size_t n, Stream s) override {
    ctx_.activate();
    check(cudaMemcpyAsync(d, src, n, cudaMemcpyDeviceToHost, raw(s)), "copy from GPU");
  }
  void copy_async(void* d, const void* src, std::size_t n, Stream s) override {
    ctx_.activate();
    check(cudaMemcpyAsync(d, src, n, cudaMemcpyDeviceToDevice, raw(s)), "copy on GPU");
  }
  void synchronize(Stream s) override {
    ctx_.activate();
    check(cudaStreamSynchronize(raw(s)), "cudaStreamSynchronize");
  }
  Stream default_stream() override { return Stream{ctx_.stream()}; }

  Stream create_stream() override { return Stream{ctx_.take_stream()}; }
  void destroy_stream(Stream s) noexcept override {
    if (s.handle && s.handle != ctx_.stream()) ctx_.give_back_stream(raw(s));
  }
  Event create_event() override {
    ctx_.activate();
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return Event{e};
  }
  void destroy_event(Event e) noexcept override {
    if (e.handle) cudaEventDestroy(static_cast<cudaEvent_t>(e.handle));
  }
  void record_event(Event e, Stream s) override {
    ctx_.activate();
    check(cudaEventRecord(static_cast<cudaEvent_t>(e.handle), raw(s)), "cudaEventRecord");
  }
  void wait_event(Stream s, Event e) override {
    ctx_.activate();
    check(cudaStreamWaitEvent(raw(s), static_cast<cudaEvent_t>(e.handle), 0),
          "cudaStreamWaitEvent");
  }
  void synchronize_event(Event e) override {
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(e.handle)), "cudaEventSynchronize");
  }
  void copy_from_peer_async(void* d, const void* src, const Device& from, std::size_t n,
                            Stream s) override {
    if (from.kind != DeviceKind::cuda)
      throw DeviceError("copy_from_peer_async: " + from.str() + " is not a GPU");
    ctx_.enable_peer(from.index);
    check(cudaMemcpyPeerAsync(d, ctx_.index(), src, from.index, n, raw(s)), "copy between GPUs");
  }
  std::size_t memory_available() override {
    ctx_.activate();
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }
  void* allocate_host(std::size_t bytes) override {
    ctx_.activate();
    void* p = nullptr;
    // Portable: page-locked for every GPU, so that any of them copies it asynchronously.
    if (cudaHostAlloc(&p, std::max<std::size_t>(bytes, 1), cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      throw DeviceMemoryError("out of page-locked host memory allocating " + std::to_string(bytes) +
                              " bytes");
    }
    return p;
  }
  void deallocate_host(void* p, std::size_t) noexcept override {
    if (p) cudaFreeHost(p);
  }

  std::vector<double> time_runs(const std::function<void(Stream)>& fn, int warmup,
                                int iters) override {
    ctx_.activate();
    Stream s = default_stream();
    // Each sample times kBatch back-to-back runs between one pair of events (a single short run
    // would mostly measure the events themselves, about 10 us here), queued behind a spin kernel
    // that outlasts the host's enqueueing of the batch: the samples are device time, not the
    // host's launch latency (Phantom's benchmarks time the same way).
    constexpr int kBatch = 10;
    for (int i = 0; i < warmup; ++i) fn(s);
    check(cudaStreamSynchronize(raw(s)), "cudaStreamSynchronize");
    const auto h0 = std::chrono::steady_clock::now();
    for (int b = 0; b < kBatch; ++b) fn(s);
    const double host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
    check(cudaStreamSynchronize(raw(s)), "cudaStreamSynchronize");
    int khz = 0;
    check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ctx_.index()), "clock rate");
    const double spin_ms = std::max(1.0, 3.0 * host_ms);
    std::vector<cudaEvent_t> ev(2 * iters);
    for (auto& e : ev) check(cudaEventCreate(&e), "cudaEventCreate");
    std::vector<double> ms(iters);
    for (int i = 0; i < iters; ++i) {
      spin_kernel<<<1, 1, 0, raw(s)>>>(static_cast<long long>(khz * spin_ms));
      check_launch("spin_kernel");
      check(cudaEventRecord(ev[2 * i], raw(s)), "cudaEventRecord");
      for (int b = 0; b < kBatch; ++b) fn(s);
      check(cudaEventRecord(ev[2 * i + 1], raw(s)), "cudaEventRecord");
      check(cudaStreamSynchronize(raw(s)), "cudaStreamSynchronize");
      float t = 0;
      check(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
      ms[i] = t / kBatch;
    }
    for (auto& e : ev) cudaEventDestroy(e);
    return ms;
  }

  std::vector<std::string> ntt_variants() const override { return cuda::ntt_variant_names(); }
  std::string ntt_variant_for(std::size_t n, std::size_t limbs, int prime_bits) const override {
    const cuda::NttSchedule sched = schedule();
    if (sched.variant != "auto") return sched.variant;
    const auto paths =
        prime_bits <= static_cast<int>(float_bits()) ? k::NttPaths::kFloat : k::NttPaths::kInt;
    const std::string fwd = sched.pick(n, limbs, true, paths);
    const std::string inv = sched.pick(n, limbs, false, paths);
    return fwd == inv ? fwd : fwd + "/" + inv;
  }

  /// The NTT schedule of the current options (references into their snapshot, no copy).
  cuda::NttSchedule schedule() const {
    const BackendOptions& o = options();
    return {o.ntt_variant, tuned_, o.ntt_table};
  }
  /// Primes of at most this many bits take the FP64 NTT path. options().ntt_fp64 = false keeps
  /// every limb on the integer path (for comparisons); both paths give the same words.
  u32 float_bits() const {
    return options().ntt_fp64 ? static_cast<u32>(kMaxFloatModulusBits) : 0u;
  }
  /// Primes of at most this many bits run forward integer-path transforms without butterfly
  /// reductions. options().ntt_unreduced = false keeps the reductions (comparisons); same words.
  u32 unreduced_bits() const {
    return options().ntt_unreduced ? static_cast<u32>(kUnreducedCtMaxBits) : 0u;
  }

  /// The arithmetic paths of an NTT over basis b's primes.
  k::NttPaths paths_of(const BasisView& b) const {
    const int max_float_bits = static_cast<int>(float_bits());
    std::size_t on_float = 0;
    for (std::size_t i = 0; i < b.limbs; ++i)
      if (bit_length(b.ring->host_moduli[b.host_ids[i]].value) <= max_float_bits) ++on_float;
    return on_float == b.limbs ? k::NttPaths::kFloat
           : on_float == 0     ? k::NttPaths::kInt
                               : k::NttPaths::kMixed;
  }

  /// Whether ModUp's lifted words need a reduction on their first load: not when they are below
  /// 8 times each of b's primes, the range every transform takes (BGV's and BFV's digits, whose
  /// primes differ by a bit or two; CKKS's 60-bit digits lifted to 40-bit primes still reduce).
  static bool lift_needs_reduction(const LiftedRows& src, const BasisView& b) {
    if (src.bound == 0) return true;
    for (std::size_t i = 0; i < b.limbs; ++i)
      if (src.bound / 8 >= b.ring->host_moduli[b.host_ids[i]].value) return true;
    return false;
  }
  /// A forward batch of basis b whose rows only key products read (ModUp's): lifted from src
  /// (see Backend::ntt_forward_lifted_async), or in place when src.rows_per_source is 0. Its
  /// transforms leave their words for the key products (NttBatch::leave_words) unless
  /// options().key_product_words is false, which reduces them to canonical values (same results).
  k::NttBatch lifted_batch(u64* out, const LiftedRows& src, const BasisView& b) const {
    k::NttBatch batch = ntt_batch(out, b, true);
    batch.leave_words = options().key_product_words;
    if (src.rows_per_source) {
      batch.src0 = src.words;
      batch.lift_rows = static_cast<u32>(src.rows_per_source);
      batch.lift_reduce = lift_needs_reduction(src, b);
    }
    return batch;
  }

  /// A batch of basis b's rows on 64- or 32-bit words (W); 32-bit words take the integer path
  /// with its reductions.
  template <class W>
  k::NttBatchT<W> ntt_batch(W* data, const backend::BasisViewT<W>& b, bool forward) const {
    const auto& r = *b.ring;
    constexpr bool kNarrow = sizeof(W) == 4;
    k::NttBatchT<W> batch{data,
                          r.moduli,
                          b.ids,
                          forward ? r.psi_rev : r.psi_inv_rev,
                          forward ? r.psi_rev_shoup : r.psi_inv_rev_shoup,
                          r.n_inv,
                          r.n_inv_shoup,
                          static_cast<u32>(r.n),
                          static_cast<u32>(b.limbs),
                          kNarrow ? 0u : float_bits()};
    if constexpr (kNarrow) {
      batch.unreduced_bits = 0;
      batch.paths = k::NttPaths::kInt;
    } else {
      batch.unreduced_bits = unreduced_bits();
      batch.paths = paths_of(b);
    }
    return batch;
  }

  /// An out-of-place batch reads polynomial k (k < count <= kMaxSources) from srcs[k], the rows
  /// past source_rows (0: none) in place.
  static void set_sources(k::NttBatch& batch, const u64* const* srcs, std::size_t count,
                          std::size_t source_rows) {
    const u64** slots[k::NttBatch::kMaxSources] = {&batch.src0, &batch.src1, &batch.src2,
                                                   &batch.src3};
    for (std::size_t i = 0; i < count; ++i) *slots[i] = srcs[i];
    batch.source_rows = static_cast<u32>(source_rows);
  }

  /// In place (srcs == nullptr) or from srcs[k] (kMaxSources polynomials per launch).
  void ntt(u64* data, const u64* const* srcs, const BasisView& b, std::size_t count, bool forward,
           Stream s, std::size_t source_rows = 0) {
    ctx_.activate();
    const auto& r = *b.ring;
    const cuda::NttSchedule sched = schedule();
    constexpr std::size_t kChunk = k::NttBatch::kMaxSources;
    const std::size_t poly = b.limbs * r.n;
    for (std::size_t first = 0; first < count; first += srcs ? kChunk : count) {
      const std::size_t chunk = srcs ? std::min(kChunk, count - first) : count;
      k::NttBatch batch = ntt_batch(data + first * poly, b, forward);
      // A source equal to its output is the in-place case (each block reads its own words).
      if (srcs) set_sources(batch, srcs + first, chunk, source_rows);
      cuda::launch_ntt(batch, chunk, forward, sched, raw(s));
    }
  }
  void ntt_forward_lifted_async(u64* out, const LiftedRows& src, const BasisView& b,
                                Stream s) override {
    ctx_.activate();
    if (src.rows_per_source == 0 || src.rows_per_source > b.limbs)
      throw ParameterError("ntt_forward_lifted: rows_per_source must be in [1, limbs]");
    cuda::launch_ntt(lifted_batch(out, src, b), 1, true, schedule(), raw(s));
  }
  void ntt_forward_async(u64* data, const BasisView& b, std::size_t count, Stream s) override {
    ntt(data, nullptr, b, count, true, s);
  }
  void ntt_inverse_async(u64* data, const BasisView& b, std::size_t count, Stream s) override {
    ntt(data, nullptr, b, count, false, s);
  }
  void ntt_forward_async(u32* data, const BasisView32& b, std::size_t count, Stream s) override {
    ntt32(data, b, count, true, s);
  }
  void ntt_inverse_async(u32* data, const BasisView32& b, std::size_t count, Stream s) override {
    ntt32(data, b, count, false, s);
  }
  /// The 32-bit-word transforms: the integer path's column and chunk kernels on u32.
  void ntt32(u32* data, const BasisView32& b, std::size_t count, bool forward, Stream s) {
    ctx_.activate();
    const k::NttBatchT<u32> batch = ntt_batch(data, b, forward);
    cuda::launch_ntt32(batch, count, forward, raw(s));
  }
  void ntt_forward_async(u64* out, const u64* const* in, const BasisView& b, std::size_t count,
                         Stream s, std::size_t source_rows) override {
    ntt(out, in, b, count, true, s, source_rows);
  }
  void ntt_inverse_async(u64* out, const u64* const* in, const BasisView& b, std::size_t count,
                         Stream s, std::size_t source_rows) override {
    ntt(out, in, b, count, false, s, source_rows);
  }

  /// Output rows per thread of the fused conversion kernels.
  static constexpr int kConvRows = 4;
  /// ModUp's batched conversions: 8 output rows per thread (each source residue loaded once for
  /// 8 rows) measured 2.4 % faster key switching than 4 at N = 2^16 on an H200 (2, 16: slower).
  static constexpr int kManyConvRows = 8;
  /// Calls launch(std::integral_constant<int, kMax>) with the smallest register bucket holding
  /// `count` source primes (count <= 32).
  template <class Launch>
  static void by_source_count(u32 count, Launch&& launch) {
    if (count <= 1)
      launch(std::integral_constant<int, 1>{});
    else if (count <= 2)
      launch(std::integral_constant<int, 2>{});
    else if (count <= 4)
      launch(std::integral_constant<int, 4>{});
    else if (count <= 8)
      launch(std::integral_constant<int, 8>{});
    else if (count <= 16)
      launch(std::integral_constant<int, 16>{});
    else
      launch(std::integral_constant<int, 32>{});
  }

  template <class W>
  static k::LimbMapT<W> map_of(const backend::BasisViewT<W>& b) {
    return k::LimbMapT<W>{b.ring->moduli, b.ids, static_cast<u32>(b.ring->log_n),
                          static_cast<u32>(b.limbs)};
  }

  /// On 64- or 32-bit words (W).
  template <k::PointwiseOp kOp, class W>
  void pointwise(W* out, const W* a, const Word<W>* c, const Word<W>* sc, const Word<W>* scs,
                 const backend::BasisViewT<W>& b, Stream s) {
    ctx_.activate();
    cuda::launch(k::pointwise_kernel<kOp, W>, grid_for(b.limbs * b.ring->n), 256, 0, raw(s),
                 "pointwise_kernel", out, a, c, sc, scs, map_of(b));
  }

  void tensor_async(u64* d0, u64* d1, u64* d2, const u64* a0, const u64* a1, const u64* b0,
                    const u64* b1, const BasisView& b, Stream s,
                    const TensorUpper* upper) override {
    ctx_.activate();
    k::TensorOperands<u64> in{a0, a1, b0, b1, a0, a1, b0, b1, static_cast<u32>(b.limbs)};
    if (upper)
      in = {a0,        a1,        b0,
            b1,        upper->a0, upper->a1,
            upper->b0, upper->b1, static_cast<u32>(upper->split)};
    cuda::launch(k::tensor_kernel<u64>, grid_for(b.limbs * b.ring->n), 256, 0, raw(s),
                 "tensor_kernel", d0, d1, d2, in, map_of(b));
  }
  void tensor_async(u32* d0, u32* d1, u32* d2, const u32* a0, const u32* a1, const u32* b0,
                    const u32* b1, const BasisView32& b, Stream s) override {
    ctx_.activate();
    const k::TensorOperands<u32> in{a0, a1, b0, b1, a0, a1, b0, b1, static_cast<u32>(b.limbs)};
    cuda::launch(k::tensor_kernel<u32>, grid_for(b.limbs * b.ring->n), 256, 0, raw(s),
                 "tensor_kernel", d0, d1, d2, in, map_of(b));
  }
  void ntt_forward_tensor_async(u64* d0, u64* d1, u64* d2, u64* scratch, const u64* const (&in)[4],
                                const BasisView& b, Stream s, std::size_t source_rows) override {
    ctx_.activate();
    // options().fused_tensor: off runs the transform and the product apart, always fuses them
    // from N = 2^11 on whatever the schedule (tests); auto lets launch_ntt_forward_tensor decide.
    const Fusion fusion = options().fused_tensor;
    if (fusion != Fusion::off) {
      k::NttBatch batch = ntt_batch(scratch, b, true);
      set_sources(batch, in, 4, source_rows);
      if (cuda::launch_ntt_forward_tensor(batch, d0, d1, d2, schedule(), fusion == Fusion::always,
                                          raw(s)))
        return;
    }
    Backend::ntt_forward_tensor_async(d0, d1, d2, scratch, in, b, s, source_rows);
  }
  void dot_plain_async(u64* out0, u64* out1, const std::vector<const u64*>& a0,
                       const std::vector<const u64*>& a1, const std::vector<const u64*>& p,
                       const u64* add0, const u64* add1, const BasisView& b, Stream s) override {
    dot_plain_words(out0, out1, a0, a1, p, add0, add1, b, s);
  }
  void dot_plain_async(u32* out0, u32* out1, const std::vector<const u32*>& a0,
                       const std::vector<const u32*>& a1, const std::vector<const u32*>& p,
                       const u32* add0, const u32* add1, const BasisView32& b, Stream s) override {
    dot_plain_words(out0, out1, a0, a1, p, add0, add1, b, s);
  }
  template <class W>
  void dot_plain_words(W* out0, W* out1, const std::vector<const W*>& a0,
                       const std::vector<const W*>& a1, const std::vector<const W*>& p,
                       const W* add0, const W* add1, const backend::BasisViewT<W>& b, Stream s) {
    if (p.empty() || p.size() > kMaxDotTerms || a0.size() != p.size() || a1.size() != p.size())
      throw ParameterError("dot_plain: 1 to 32 terms, as many ciphertexts as plaintexts");
    ctx_.activate();
    k::DotPlainArgs<W> args{};
    for (std::size_t t = 0; t < p.size(); ++t) {
      args.a0[t] = a0[t];
      args.a1[t] = a1[t];
      args.p[t] = p[t];
    }
    args.terms = static_cast<u32>(p.size());
    cuda::launch(k::dot_plain_kernel<W>, grid_for(b.limbs * b.ring->n), 256, 0, raw(s),
                 "dot_plain_kernel", out0, out1, add0, add1, args, map_of(b));
  }
  void add_async(u64* out, const u64* a, const u64* c, const BasisView& b, Stream s) override {
    pointwise<k::PointwiseOp::add>(out, a, c, nullptr, nullptr, b, s);
  }
  void sub_async(u64* out, const u64* a, const u64* c, const BasisView& b, Stream s) override {
    pointwise<k::PointwiseOp::sub>(out, a, c, nullptr, nullptr, b, s);
  }
  void negate_async(u64* out, const u64* a, const BasisView& b, Stream s) override {
    pointwise<k::PointwiseOp::negate>(out, a, nullptr, nullptr, nullptr, b, s);
  }
  void multiply_async(u64* out, const u64* a, const u64* c, const BasisView& b, Stream s) override {
    pointwise<k::PointwiseOp::multiply>(out, a, c, nullptr, nullptr, b, s);
  }
  void multiply_accumulate_async(u64* out, const u64* a, const u64* c, const BasisView& b,
                                 Stream s) override {
    pointwise<k::PointwiseOp::multiply_accumulate>(out, a, c, nullptr, nullptr, b, s);
  }
  void add_async(u32* out, const u32* a, const u32* c, const BasisView32& b, Stream s) override {
    pointwise<k::PointwiseOp::add, u32>(out, a, c, nullptr, nullptr, b, s);
  }
  void sub_async(u32* out, const u32* a, const u32* c, const BasisView32& b, Stream s) override {
    pointwise<k::PointwiseOp::sub, u32>(out, a, c, nullptr, nullptr, b, s);
  }
  void negate_async(u32* out, const u32* a, const BasisView32& b, Stream s) override {
    pointwise<k::PointwiseOp::negate, u32>(out, a, nullptr, nullptr, nullptr, b, s);
  }
  void multiply_async(u32* out, const u32* a, const u32* c, const BasisView32& b,
                      Stream s) override {
    pointwise<k::PointwiseOp::multiply, u32>(out, a, c, nullptr, nullptr, b, s);
  }
  void multiply_accumulate_async(u32* out, const u32* a, const u32* c, const BasisView32& b,
                                 Stream s) override {
    pointwise<k::PointwiseOp::multiply_accumulate, u32>(out, a, c, nullptr, nullptr, b, s);
  }

  /// Per-limb constants uploaded to a stream-ordered scratch buffer.
  struct Scratch {
    CudaBackend* be;
    void* p;
    std::size_t bytes;
    Stream s;
    ~Scratch() {
      if (p) be->deallocate(p, bytes, s);
    }
    u64* words() const { return static_cast<u64*>(p); }
  };
  Scratch upload(const std::vector<u64>& v, Stream s) {
    Scratch sc{this, allocate(v.size() * sizeof(u64), s), v.size() * sizeof(u64), s};
    copy_from_host_async(sc.p, v.data(), sc.bytes, s);
    return sc;
  }
  Scratch scratch(std::size_t words, Stream s) {
    return Scratch{this, allocate(words * sizeof(u64), s), words * sizeof(u64), s};
  }

  void multiply_scalar_async(u64* out, const u64* a, const std::vector<u64>& scalars,
                             const BasisView& b, Stream s) override {
    std::vector<u64> red(b.limbs), shoup(b.limbs);
    for (std::size_t l = 0; l < b.limbs; ++l) {
      const Modulus& m = host_modulus(b, l);
      red[l] = barrett_reduce_64(scalars[l], m);
      shoup[l] = shoup_precompute(red[l], m.value);
    }
    if (b.limbs <= static_cast<std::size_t>(k::kMaxScalarLimbs)) {
      k::ScalarArgs<> args{};
      std::copy(red.begin(), red.end(), args.value);
      std::copy(shoup.begin(), shoup.end(), args.shoup);
      ctx_.activate();
      cuda::launch(k::multiply_scalar_args_kernel<u64>, grid_for(b.limbs * b.ring->n), 256, 0,
                   raw(s), "multiply_scalar_args_kernel", out, a, args, map_of(b));
      return;
    }
    Scratch sc = upload(red, s), scs = upload(shoup, s);
    pointwise<k::PointwiseOp::multiply_scalar>(out, a, nullptr, sc.words(), scs.words(), b, s);
  }

  void multiply_scalar_async(u32* out, const u32* a, const std::vector<u64>& scalars,
                             const BasisView32& b, Stream s) override {
    if (b.limbs <= static_cast<std::size_t>(k::kMaxScalarLimbs)) {  // scalars by value
      k::ScalarArgs<u32> args{};
      for (std::size_t l = 0; l < b.limbs; ++l) {
        const u32 q = b.ring->host_moduli[b.host_ids[l]].value;
        args.value[l] = static_cast<u32>(scalars[l] % q);
        args.shoup[l] = shoup_precompute<u32>(args.value[l], q);
      }
      ctx_.activate();
      cuda::launch(k::multiply_scalar_args_kernel<u32>, grid_for(b.limbs * b.ring->n), 256, 0,
                   raw(s), "multiply_scalar_args_kernel", out, a, args, map_of(b));
      return;
    }
    std::vector<u32> both(2 * b.limbs);  // the reduced scalars, then their Shoup companions
    for (std::size_t l = 0; l < b.limbs; ++l) {
      const u32 q = b.ring->host_moduli[b.host_ids[l]].value;
      both[l] = static_cast<u32>(scalars[l] % q);
      both[b.limbs + l] = shoup_precompute<u32>(both[l], q);
    }
    Scratch sc = scratch((both.size() + 1) / 2, s);
    copy_from_host_async(sc.p, both.data(), both.size() * sizeof(u32), s);
    const u32* values = reinterpret_cast<const u32*>(sc.words());
    pointwise<k::PointwiseOp::multiply_scalar>(out, a, nullptr, values, values + b.limbs, b, s);
  }

  void automorphism_accumulate_async(u64* out, const u64* a, u64 kk,
                                     const std::vector<u64>& scalars, const BasisView& b,
                                     Stream s) override {
    automorphism_accumulate_words(out, a, kk, scalars, b, s);
  }
  void automorphism_accumulate_async(u32* out, const u32* a, u64 kk,
                                     const std::vector<u64>& scalars, const BasisView32& b,
                                     Stream s) override {
    automorphism_accumulate_words(out, a, kk, scalars, b, s);
  }
  template <class W>
  void automorphism_accumulate_words(W* out, const W* a, u64 kk, const std::vector<u64>& scalars,
                                     const backend::BasisViewT<W>& b, Stream s) {
    ctx_.activate();
    const std::size_t n = b.ring->n;
    // Chunks of kMaxScalarLimbs limbs, each launch with its scalars by value (no upload).
    for (std::size_t at = 0; at < b.limbs; at += k::kMaxScalarLimbs) {
      const std::size_t limbs = std::min<std::size_t>(k::kMaxScalarLimbs, b.limbs - at);
      k::ScalarArgs<W> args{};
      for (std::size_t l = 0; l < limbs; ++l) {
        const W q = b.ring->host_moduli[b.host_ids[at + l]].value;
        args.value[l] = static_cast<W>(scalars[at + l] % q);
        args.shoup[l] = shoup_precompute<W>(args.value[l], q);
      }
      const backend::BasisViewT<W> part{b.ring, b.ids + at, b.host_ids + at, limbs};
      cuda::launch(k::automorphism_accumulate_kernel<W>, grid_for(limbs * n), 256, 0, raw(s),
                   "automorphism_accumulate_kernel", out + at * n, a + at * n, kk, args,
                   map_of(part));
    }
  }
  void automorphism_async(u64* out, const u64* a, u64 kk, bool eval, const BasisView& b,
                          Stream s) override {
    automorphism_words(out, a, kk, eval, b, s);
  }
  void automorphism_async(u32* out, const u32* a, u64 kk, bool eval, const BasisView32& b,
                          Stream s) override {
    automorphism_words(out, a, kk, eval, b, s);
  }
  template <class W>
  void automorphism_words(W* out, const W* a, u64 kk, bool eval, const backend::BasisViewT<W>& b,
                          Stream s) {
    ctx_.activate();
    const auto grid = grid_for(b.limbs * b.ring->n);
    if (eval)
      cuda::launch(k::automorphism_eval_kernel<W>, grid, 256, 0, raw(s), "automorphism_eval_kernel",
                   out, a, kk, map_of(b));
    else
      cuda::launch(k::automorphism_coeff_kernel<W>, grid, 256, 0, raw(s),
                   "automorphism_coeff_kernel", out, a, kk, map_of(b));
  }
  void narrow_words_async(u32* out, const u64* a, std::size_t count, Stream s) override {
    ctx_.activate();
    cuda::launch(k::convert_words_kernel<u32, u64>, grid_for(count), 256, 0, raw(s),
                 "convert_words_kernel", out, a, count);
  }
  void widen_words_async(u64* out, const u32* a, std::size_t count, Stream s) override {
    ctx_.activate();
    cuda::launch(k::convert_words_kernel<u64, u32>, grid_for(count), 256, 0, raw(s),
                 "convert_words_kernel", out, a, count);
  }

  /// Conversions with byte planes run on the tensor cores (whole 64-coefficient blocks), unless
  /// every job has one source prime (a reduction per output: the plain kernel is faster) or
  /// options().bconv_tensor = false asks for the CUDA-core kernels (comparisons; same words).
  bool byte_matrix_fits(const std::vector<ConvJob>& jobs) const {
    if (!options().bconv_tensor) return false;
    bool wide = false;
    for (const auto& j : jobs) {
      if (!j.conv.byte_planes || j.from.ring->n % 64 != 0) return false;
      wide = wide || j.from.limbs > 1;
    }
    return wide;
  }
  static k::ConvJobArgs conv_job_args(const std::vector<ConvJob>& jobs) {
    k::ConvJobArgs args{};
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto& j = jobs[i];
      args.jobs[i] = {j.conv,
                      j.in,
                      j.in_sub,
                      j.out,
                      j.from.ids,
                      j.to.ids,
                      static_cast<u32>(j.from.limbs),
                      static_cast<u32>(j.to.limbs)};
    }
    args.moduli = jobs[0].from.ring->moduli;
    args.log_n = static_cast<u32>(jobs[0].from.ring->log_n);
    return args;
  }
  /// Up to kMaxConvJobs byte-matrix conversions of one ring in one launch (see
  /// bconv_bytes_warp): 64 coefficients per 128-thread block, every output row per warp.
  void launch_byte_conversions(const std::vector<ConvJob>& jobs, Stream s) {
    ctx_.activate();
    u32 blocks = 0;
    for (const auto& j : jobs) blocks = std::max(blocks, j.conv.byte_blocks);
    const k::ConvJobArgs args = conv_job_args(jobs);
    // Every warp converts 16 coefficients to all output rows: splitting the rows over more
    // warps (each recomputing y) measured 1.5x slower for one job of 7 -> 22 primes on an H200.
    const dim3 grid(static_cast<u32>(jobs[0].from.ring->n / 64), 1, static_cast<u32>(jobs.size()));
    const auto launch = [&](auto kernel) {
      cuda::launch(kernel, grid, 128, 0, raw(s), "bconv_bytes_kernel", args);
    };
    if (blocks <= 1)
      launch(k::bconv_bytes_kernel<1>);
    else if (blocks == 2)
      launch(k::bconv_bytes_kernel<2>);
    else if (blocks == 3)
      launch(k::bconv_bytes_kernel<3>);
    else
      launch(k::bconv_bytes_kernel<4>);
  }

  void base_convert_async(u64* out, const u64* a, const BaseConvView& conv, const BasisView& from,
                          const BasisView& to, Stream s) override {
    convert_one(ConvJob{conv, from, to, a, out}, s);
  }
  /// One conversion job on its own (tensor cores where its byte matrix fits).
  void convert_one(const ConvJob& job, Stream s) {
    if (const std::vector<ConvJob> one{job}; byte_matrix_fits(one)) {
      launch_byte_conversions(one, s);
      return;
    }
    ctx_.activate();
    const BaseConvView& conv = job.conv;
    const BasisView &from = job.from, &to = job.to;
    const u64 *a = job.in, *sub = job.in_sub;
    u64* out = job.out;
    const std::size_t n = from.ring->n;
    if (from.limbs <= 32) {
      // One pass: source residues read once per coefficient, kRows output rows per thread.
      const dim3 grid(static_cast<u32>((n + 255) / 256),
                      static_cast<u32>((to.limbs + kConvRows - 1) / kConvRows));
      const u32 count = static_cast<u32>(from.limbs);
      by_source_count(count, [&](auto km) {
        constexpr int kMax = decltype(km)::value;
        cuda::launch(k::bconv_fused_kernel<kMax, kConvRows>, grid, 256, 0, raw(s),
                     "bconv_fused_kernel", out, a, sub, conv, map_of(from), map_of(to), count);
      });
      return;
    }
    convert_two_pass(out, a, sub, conv, from, to, s);
  }

  void base_convert_async(u32* out, const u32* a, const BaseConvView32& conv,
                          const BasisView32& from, const BasisView32& to, Stream s) override {
    base_convert_many_async({backend::ConvJob32{conv, from, to, a, out}}, s);
  }

  /// A conversion in two passes over a scratch buffer of the scaled inputs y (any number of
  /// source primes): the rows code of the CPU backend, a thread a word.
  void convert_two_pass(u64* out, const u64* a, const u64* sub, const BaseConvView& conv,
                        const BasisView& from, const BasisView& to, Stream s) {
    const std::size_t n = from.ring->n;
    Scratch y = scratch(from.limbs * n, s);
    u64* scaled = y.words();
    cuda::launch(k::bconv_scale_kernel<u64>, grid_for(from.limbs * n), 256, 0, raw(s),
                 "bconv_scale_kernel", scaled, a, sub, conv, map_of(from));
    cuda::launch(k::bconv_sum_kernel<u64>, grid_for(to.limbs * n), 256, 0, raw(s),
                 "bconv_sum_kernel", out, static_cast<const u64*>(scaled), conv, map_of(to));
  }

  void base_convert_many_async(const std::vector<backend::ConvJob32>& jobs, Stream s) override {
    if (jobs.empty()) return;
    ctx_.activate();
    const std::size_t n = jobs[0].from.ring->n;
    for (std::size_t first = 0; first < jobs.size(); first += k::kMaxConvJobs32) {
      const std::size_t count = std::min<std::size_t>(k::kMaxConvJobs32, jobs.size() - first);
      std::size_t from_rows = 0, to_rows = 0;
      for (std::size_t t = 0; t < count; ++t) {
        from_rows += jobs[first + t].from.limbs;
        to_rows += jobs[first + t].to.limbs;
      }
      // The tensor cores where every job has its byte matrix (at most 24 source primes, see
      // BaseConvView32::byte_planes); else two passes (the scaled inputs written once, read by
      // every target row).
      u32 byte_blocks = 0;
      bool bytes = true;
      for (std::size_t t = 0; t < count; ++t) {
        bytes = bytes && jobs[first + t].conv.byte_planes != nullptr;
        byte_blocks = std::max(byte_blocks, jobs[first + t].conv.byte_blocks);
      }
      // The scaled inputs of the two-pass kernels (none for the tensor-core kernel).
      Scratch y = bytes ? Scratch{this, nullptr, 0, s} : scratch((from_rows * n + 1) / 2, s);
      k::ConvJobs32 args{};
      args.count = static_cast<u32>(count);
      u32 at_from = 0, at_to = 0;
      for (std::size_t t = 0; t < count; ++t) {
        const backend::ConvJob32& j = jobs[first + t];
        auto& a = args.jobs[t];
        a.conv = j.conv;
        a.in = j.in;
        a.out = j.out;
        a.y = bytes ? nullptr : reinterpret_cast<u32*>(y.words()) + std::size_t{at_from} * n;
        a.from = map_of(j.from);
        a.to = map_of(j.to);
        a.first_from = at_from;
        a.first_to = at_to;
        at_from += static_cast<u32>(j.from.limbs);
        at_to += static_cast<u32>(j.to.limbs);
      }
      if (bytes) {
        const dim3 grid(static_cast<u32>((n + 63) / 64), static_cast<u32>(count));
        const auto launch_bytes = [&](auto kernel) {
          cuda::launch(kernel, grid, 128, 0, raw(s), "bconv_bytes32_kernel", args);
        };
        if (byte_blocks <= 1)
          launch_bytes(k::bconv_bytes32_kernel<1>);
        else if (byte_blocks == 2)
          launch_bytes(k::bconv_bytes32_kernel<2>);
        else
          launch_bytes(k::bconv_bytes32_kernel<3>);
        continue;
      }
      const u32 blocks = static_cast<u32>((n + 255) / 256);
      cuda::launch(k::bconv_scale_many_kernel, dim3(blocks, static_cast<u32>(from_rows)), 256, 0,
                   raw(s), "bconv_scale_many_kernel", args);
      cuda::launch(k::bconv_sum_many_kernel, dim3(blocks, static_cast<u32>(to_rows)), 256, 0,
                   raw(s), "bconv_sum_many_kernel", args);
    }
  }
  void base_convert_many_async(const std::vector<ConvJob>& jobs, Stream s) override {
    if (jobs.empty()) return;
    std::size_t max_from = 0, max_to = 0;
    bool one_ring = true;
    for (const auto& j : jobs) {
      max_from = std::max(max_from, j.from.limbs);
      max_to = std::max(max_to, j.to.limbs);
      one_ring = one_ring && j.from.ring == jobs[0].from.ring && j.to.ring == jobs[0].from.ring;
    }
    if (jobs.size() > static_cast<std::size_t>(k::kMaxConvJobs) || max_from > 32 || !one_ring) {
      for (const auto& j : jobs) convert_one(j, s);
      return;
    }
    if (byte_matrix_fits(jobs)) {
      launch_byte_conversions(jobs, s);
      return;
    }
    ctx_.activate();
    const k::ConvJobArgs args = conv_job_args(jobs);
    const std::size_t n = jobs[0].from.ring->n;
    if (max_from == 1) {
      // One source prime (a division by one prime, ModDown with one special prime): a reduction
      // per output, no sum to share across rows, so one row per thread and more threads in
      // flight.
      const dim3 grid(static_cast<u32>((n + 255) / 256), static_cast<u32>(max_to),
                      static_cast<u32>(jobs.size()));
      cuda::launch(k::bconv_many_kernel<1, 1>, grid, 256, 0, raw(s), "bconv_many_kernel", args);
      return;
    }
    const dim3 grid(static_cast<u32>((n + 255) / 256),
                    static_cast<u32>((max_to + kManyConvRows - 1) / kManyConvRows),
                    static_cast<u32>(jobs.size()));
    by_source_count(static_cast<u32>(max_from), [&](auto km) {
      constexpr int kMax = decltype(km)::value;
      cuda::launch(k::bconv_many_kernel<kMax, kManyConvRows>, grid, 256, 0, raw(s),
                   "bconv_many_kernel", args);
    });
  }

  void linear_combination_async(u64* out0, u64* out1, const std::vector<const u64*>& a0,
                                const std::vector<const u64*>& a1,
                                const std::vector<std::vector<u64>>& scalars,
                                const std::vector<u64>& constant, const BasisView& b, Stream s,
                                bool constant_coeff) override {
    linear_combination_words(out0, out1, a0, a1, scalars, constant, b, s, constant_coeff);
  }
  void linear_combination_async(u32* out0, u32* out1, const std::vector<const u32*>& a0,
                                const std::vector<const u32*>& a1,
                                const std::vector<std::vector<u64>>& scalars,
                                const std::vector<u64>& constant, const BasisView32& b, Stream s,
                                bool constant_coeff) override {
    linear_combination_words(out0, out1, a0, a1, scalars, constant, b, s, constant_coeff);
  }
  template <class W>
  void linear_combination_words(W* out0, W* out1, const std::vector<const W*>& a0,
                                const std::vector<const W*>& a1,
                                const std::vector<std::vector<u64>>& scalars,
                                const std::vector<u64>& constant, const backend::BasisViewT<W>& b,
                                Stream s, bool constant_coeff) {
    check_linear_combination(a0.size(), a1.size(), scalars, constant, b.limbs);
    auto args = std::make_unique<k::LinearArgs<W>>();
    args->constant_coeff = constant_coeff ? 1u : 0u;
    const auto prime = [&](std::size_t l) { return b.ring->host_moduli[b.host_ids[l]].value; };
    for (std::size_t t = 0; t < a0.size(); ++t) {
      args->a0[t] = a0[t];
      args->a1[t] = a1[t];
      for (std::size_t l = 0; l < b.limbs; ++l)
        args->scalar[t][l] = static_cast<W>(scalars[t][l] % prime(l));
    }
    for (std::size_t l = 0; l < b.limbs; ++l)
      args->constant[l] = static_cast<W>(constant[l] % prime(l));
    args->terms = static_cast<u32>(a0.size());
    ctx_.activate();
    cuda::launch(k::linear_combination_kernel<W>, grid_for(b.limbs * b.ring->n), 256, 0, raw(s),
                 "linear_combination_kernel", out0, out1, *args, map_of(b));
  }
  void linear_map_async(const std::vector<u64*>& out0, const std::vector<u64*>& out1,
                        const std::vector<const u64*>& a0, const std::vector<const u64*>& a1,
                        const std::vector<u64>& weights, const std::vector<u64>& constants,
                        const BasisView& b, Stream s, bool constant_coeff) override {
    linear_map_words(out0, out1, a0, a1, weights, constants, b, s, constant_coeff);
  }
  void linear_map_async(const std::vector<u32*>& out0, const std::vector<u32*>& out1,
                        const std::vector<const u32*>& a0, const std::vector<const u32*>& a1,
                        const std::vector<u64>& weights, const std::vector<u64>& constants,
                        const BasisView32& b, Stream s, bool constant_coeff) override {
    linear_map_words(out0, out1, a0, a1, weights, constants, b, s, constant_coeff);
  }
  template <class W>
  void linear_map_words(const std::vector<W*>& out0, const std::vector<W*>& out1,
                        const std::vector<const W*>& a0, const std::vector<const W*>& a1,
                        const std::vector<u64>& weights, const std::vector<u64>& constants,
                        const backend::BasisViewT<W>& b, Stream s, bool constant_coeff) {
    check_linear_map(out0.size(), out1.size(), a0.size(), a1.size(), weights, constants, b.limbs);
    if (b.ring->n % k::kMapThreads)
      throw ParameterError("linear_map: the ring degree must be a multiple of 256");
    const std::size_t outputs = out0.size(), inputs = a0.size(), limbs = b.limbs;
    // One upload: the four pointer tables, then the reduced weights and constants.
    std::vector<u64> host;
    host.reserve(2 * (outputs + inputs) + weights.size() + constants.size());
    for (auto* tbl : {&out0, &out1})
      for (W* p : *tbl) host.push_back(reinterpret_cast<u64>(p));
    for (auto* tbl : {&a0, &a1})
      for (const W* p : *tbl) host.push_back(reinterpret_cast<u64>(p));
    const auto prime = [&](std::size_t l) { return b.ring->host_moduli[b.host_ids[l]].value; };
    for (std::size_t e = 0; e < weights.size(); ++e) host.push_back(weights[e] % prime(e % limbs));
    for (std::size_t e = 0; e < constants.size(); ++e)
      host.push_back(constants[e] % prime(e % limbs));
    ctx_.activate();
    Scratch up = upload(host, s);
    u64* base = up.words();
    const auto table = [&](std::size_t at) { return reinterpret_cast<W* const*>(base + at); };
    const auto ctable = [&](std::size_t at) {
      return reinterpret_cast<const W* const*>(base + at);
    };
    const u64* w = base + 2 * (outputs + inputs);
    const dim3 grid(static_cast<u32>(limbs * b.ring->n / k::kMapThreads),
                    static_cast<u32>((outputs + k::kMapOutputs - 1) / k::kMapOutputs));
    cuda::launch(k::linear_map_kernel<W>, grid, k::kMapThreads, 0, raw(s), "linear_map_kernel",
                 table(0), table(outputs), ctable(2 * outputs), ctable(2 * outputs + inputs), w,
                 w + weights.size(), static_cast<u32>(inputs), static_cast<u32>(outputs),
                 constant_coeff ? 1u : 0u, map_of(b));
  }
  void scale_plain_async(u64* out, const u64* m, u64 t, u64 q_mod_t, const u64* q_div_t,
                         const BasisView& b, Stream s) override {
    ctx_.activate();
    cuda::launch(k::scale_plain_kernel, grid_for(b.ring->n), 256, 0, raw(s), "scale_plain_kernel",
                 out, m, t, q_mod_t, q_div_t, map_of(b));
  }
  /// Polynomials first .. first + count - 1 of an affine map, as the kernels take them.
  template <class W>
  static k::AffineArgsT<W> affine_args(W* const* out, const W* const* a, const W* const* addends,
                                       std::size_t first, std::size_t count) {
    k::AffineArgsT<W> args{};
    args.count = static_cast<u32>(count);
    for (u32 k = 0; k < args.count; ++k) {
      args.out[k] = out[first + k];
      args.a[k] = a[first + k];
      args.addend[k] = addends ? addends[first + k] : nullptr;
    }
    return args;
  }
  void affine_sub_async(u64* const* out, const u64* const* a, const u64* c, const u64* mul,
                        const u64* mul_companion, const u64* const* addends, std::size_t count,
                        const BasisView& b, Stream s) override {
    affine_sub_words(out, a, c, mul, mul_companion, addends, count, b, s);
  }
  void affine_sub_async(u32* const* out, const u32* const* a, const u32* c, const u32* mul,
                        const u32* mul_companion, const u32* const* addends, std::size_t count,
                        const BasisView32& b, Stream s) override {
    affine_sub_words(out, a, c, mul, mul_companion, addends, count, b, s);
  }
  template <class W>
  void affine_sub_words(W* const* out, const W* const* a, const W* c, const W* mul,
                        const W* mul_companion, const W* const* addends, std::size_t count,
                        const backend::BasisViewT<W>& b, Stream s) {
    ctx_.activate();
    const std::size_t words = b.limbs * b.ring->n;
    for (std::size_t first = 0; first < count; first += kMaxAffineTerms) {
      const k::AffineArgsT<W> args =
          affine_args(out, a, addends, first, std::min(count - first, kMaxAffineTerms));
      cuda::launch(k::affine_sub_kernel<W>, grid_for(args.count * words), 256, 0, raw(s),
                   "affine_sub_kernel", args, c + first * words, mul, mul_companion, map_of(b));
    }
  }
  void ntt_forward_affine_sub_async(u32* const* out, const u32* const* a, u32* c, const u32* mul,
                                    const u32* mul_companion, const u32* const* addends,
                                    std::size_t count, const BasisView32& b, Stream s) override {
    ctx_.activate();
    if (count <= kMaxAffineTerms &&
        cuda::launch_ntt_forward_affine32(ntt_batch(c, b, true), count,
                                          affine_args(out, a, addends, 0, count), mul,
                                          mul_companion, raw(s)))
      return;
    Backend::ntt_forward_affine_sub_async(out, a, c, mul, mul_companion, addends, count, b, s);
  }
  void ntt_forward_affine_sub_async(u64* const* out, const u64* const* a, u64* c, const u64* mul,
                                    const u64* mul_companion, const u64* const* addends,
                                    std::size_t count, const BasisView& b, Stream s) override {
    ctx_.activate();
    if (count <= kMaxAffineTerms &&
        cuda::launch_ntt_forward_affine(ntt_batch(c, b, true), count,
                                        affine_args(out, a, addends, 0, count), mul, mul_companion,
                                        schedule(), raw(s)))
      return;
    Backend::ntt_forward_affine_sub_async(out, a, c, mul, mul_companion, addends, count, b, s);
  }
  void convert_ntt_affine_sub_async(const std::vector<ConvJob>& jobs, u64* const* out,
                                    const u64* const* a, u64* c, const u64* mul,
                                    const u64* mul_companion, const u64* const* addends,
                                    const BasisView& b, Stream s, const u64* sub) override {
    ctx_.activate();
    // Conversions from one prime run in the NTT's first load: each row reads its polynomial's
    // source row and converts it there (kernels::ConvertLift), so the converted rows are never
    // written and read back, and the conversion's launch is gone.
    if (const OnePrimeMaps* maps = one_prime_lift(jobs, c, b)) {
      k::NttBatch batch = ntt_batch(c, b, true);
      batch.src0 = jobs[0].in;
      batch.lift_rows = static_cast<u32>(b.limbs);
      batch.lift_maps = maps;
      batch.lift_sub = sub;
      if (cuda::launch_ntt_forward_affine(batch, jobs.size(),
                                          affine_args(out, a, addends, 0, jobs.size()), mul,
                                          mul_companion, schedule(), raw(s)))
        return;
    }
    Backend::convert_ntt_affine_sub_async(jobs, out, a, c, mul, mul_companion, addends, b, s, sub);
  }
  void convert_affine_sub_async(const std::vector<ConvJob>& jobs, u64* const* out,
                                const u64* const* a, u64* c, const u64* mul,
                                const u64* mul_companion, const u64* const* addends,
                                u64 addend_galois, const BasisView& b, Stream s) override {
    ctx_.activate();
    // Conversions from one prime (a ModDown with one special prime): the conversion, the map and
    // the rotated addend in one pass, the converted rows never written.
    const OnePrimeMaps* maps = jobs.empty() ? nullptr : jobs[0].conv.one_prime;
    bool fused = maps && jobs.size() <= kMaxAffineTerms;
    k::ConvertSources src{};
    for (std::size_t j = 0; fused && j < jobs.size(); ++j) {
      fused = jobs[j].conv.one_prime == maps && !jobs[j].in_sub && jobs[j].to.ids == b.ids &&
              jobs[j].to.limbs == b.limbs;
      src.in[j] = jobs[j].in;
    }
    if (!fused) {
      Backend::convert_affine_sub_async(jobs, out, a, c, mul, mul_companion, addends, addend_galois,
                                        b, s);
      return;
    }
    // X^k's inverse automorphism modulo 2N (k odd): Newton's iteration on 64-bit words.
    u64 inv = 0;
    if (addend_galois > 1) {
      inv = addend_galois;
      for (int i = 0; i < 6; ++i) inv *= 2 - addend_galois * inv;
      inv &= 2 * b.ring->n - 1;
    }
    const k::AffineArgs args = affine_args(out, a, addends, 0, jobs.size());
    // Two coefficients per thread: the limb's constants are loaded once for both. Measured on an
    // H200 (bench/RESULTS.md): BFV relinearization N13 0.0168 -> 0.0145 ms, N15 (496) 0.0791 ->
    // 0.0777; four per thread made the small sets up to 5 % slower.
    const dim3 grid(static_cast<u32>((b.ring->n + 511) / 512), static_cast<u32>(b.limbs),
                    static_cast<u32>(jobs.size()));
    cuda::launch(k::convert_affine_sub_kernel, grid, 256, 0, raw(s), "convert_affine_sub_kernel",
                 args, src, maps, mul, mul_companion, inv, map_of(b));
  }
  /// The maps of conversion jobs that a lifted NTT over b can run in its first load (nullptr:
  /// none): one source prime, the same conversion for every job, no subtrahend of their own,
  /// source rows and outputs (c) back to back.
  static const OnePrimeMaps* one_prime_lift(const std::vector<ConvJob>& jobs, const u64* c,
                                            const BasisView& b) {
    const std::size_t n = b.ring->n;
    if (jobs.empty() || jobs.size() > kMaxAffineTerms || n < 512 || !jobs[0].conv.one_prime)
      return nullptr;
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const ConvJob& j = jobs[k];
      if (j.conv.one_prime != jobs[0].conv.one_prime || j.in_sub || j.to.ids != b.ids ||
          j.to.limbs != b.limbs || j.in != jobs[0].in + k * n || j.out != c + k * b.limbs * n)
        return nullptr;
    }
    return jobs[0].conv.one_prime;
  }
  void key_inner_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                               const BasisView& qlp, Stream s) override {
    ctx_.activate();
    cuda::launch(k::key_inner_product_kernel<u64>, grid_for(qlp.limbs * qlp.ring->n), 256, 0,
                 raw(s), "key_inner_product_kernel", q0, q1, p0, p1, kp, map_of(qlp));
  }
  void key_inner_product_async(u32* q0, u32* q1, u32* p0, u32* p1, const KeyProductView32& kp,
                               const BasisView32& qlp, Stream s) override {
    ctx_.activate();
    cuda::launch(k::key_inner_product_kernel<u32>, grid_for(qlp.limbs * qlp.ring->n), 256, 0,
                 raw(s), "key_inner_product_kernel", q0, q1, p0, p1, kp, map_of(qlp));
  }

  void ntt_key_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                             const LiftedRows& lift, const BasisView& ext_basis,
                             const BasisView& qlp, Stream s) override {
    ctx_.activate();
    // options().fused_key_product: off runs the transform and the product apart, always fuses
    // them at every size (comparisons and tests); auto lets launch_ntt_key_product decide.
    const Fusion fusion = options().fused_key_product;
    if (fusion != Fusion::off) {
      k::NttBatch batch = lifted_batch(const_cast<u64*>(kp.ext), lift, ext_basis);
      // The kernel's rows are Q_l u P's (the converted rows' primes are among them).
      batch.paths = paths_of(qlp);
      if (cuda::launch_ntt_key_product(batch, ext_basis.limbs, kp, qlp.ids, q0, q1, p0, p1,
                                       schedule(), fusion == Fusion::always, raw(s)))
        return;
    }
    Backend::ntt_key_product_async(q0, q1, p0, p1, kp, lift, ext_basis, qlp, s);
  }

  void ntt_key_product_async(u32* q0, u32* q1, u32* p0, u32* p1, const KeyProductView32& kp,
                             const BasisView32& ext_basis, const BasisView32& qlp,
                             Stream s) override {
    ctx_.activate();
    // options().fused_key_product: off runs the transform and the product apart (comparisons);
    // otherwise the 32-bit rows always fuse where the two-kernel schedule has a chunk phase.
    if (options().fused_key_product != Fusion::off &&
        cuda::launch_ntt_key_product32(ntt_batch(const_cast<u32*>(kp.ext), ext_basis, true),
                                       ext_basis.limbs, kp, qlp.ids, q0, q1, p0, p1, raw(s)))
      return;
    Backend::ntt_key_product_async(q0, q1, p0, p1, kp, ext_basis, qlp, s);
  }

  void baby_giant_sums_async(const BabyGiantView& v, const BasisView& qlp, Stream s) override {
    baby_giant_words(v, qlp, s);
  }
  void baby_giant_sums_async(const backend::BabyGiantView32& v, const BasisView32& qlp,
                             Stream s) override {
    baby_giant_words(v, qlp, s);
  }
  template <class W>
  void baby_giant_words(const backend::BabyGiantViewT<W>& v, const backend::BasisViewT<W>& qlp,
                        Stream s) {
    ctx_.activate();
    const auto launch = [&](auto kernel) {
      cuda::launch(kernel, grid_for(qlp.limbs * qlp.ring->n, 128), 128, 0, raw(s),
                   "baby_giant_sums_kernel", v, map_of(qlp));
    };
    if (v.giants <= 2)
      launch(k::baby_giant_sums_kernel<2, W>);
    else if (v.giants <= 4)
      launch(k::baby_giant_sums_kernel<4, W>);
    else
      launch(k::baby_giant_sums_kernel<backend::BabyGiantView::kMaxGiants, W>);
  }

  void rns_from_words_async(u64* out, const u64* words, const CrtView& crt, const BasisView& b,
                            Stream s) override {
    ctx_.activate();
    cuda::launch(k::rns_from_words_kernel, grid_for(b.limbs * b.ring->n), 256, 0, raw(s),
                 "rns_from_words_kernel", out, words, crt, map_of(b));
  }

  void words_from_rns_async(u64* out, const u64* a, const CrtView& crt, const BasisView& b,
                            Stream s) override {
    ctx_.activate();
    const std::size_t n = b.ring->n;
    Scratch digits = scratch(n * b.limbs, s);
    cuda::launch(k::words_from_rns_kernel, grid_for(n, 128), 128, 0, raw(s),
                 "words_from_rns_kernel", out, digits.words(), a, crt, *b.ring, b.ids,
                 static_cast<u32>(b.limbs), static_cast<u32>(b.ring->log_n));
  }

  void sample_uniform_async(u64* out, const ChaChaKey& key, u64 nonce, const BasisView& b,
                            Stream s) override {
    ctx_.activate();
    cuda::launch(k::sample_uniform_kernel, grid_for(b.limbs * b.ring->n / 4), 256, 0, raw(s),
                 "sample_uniform_kernel", out, key, nonce, map_of(b));
  }

  void sample_small_async(u64* out, const ChaChaKey& key, u64 nonce, const SmallSampler& dist,
                          const BasisView& b, Stream s) override {
    ctx_.activate();
    constexpr u32 kLimbsPerGroup = 2;
    dim3 grid = grid_for(b.ring->n / 8);
    grid.y = static_cast<u32>((b.limbs + kLimbsPerGroup - 1) / kLimbsPerGroup);
    cuda::launch(k::sample_small_kernel, grid, 256, 0, raw(s), "sample_small_kernel", out, key,
                 nonce, dist, map_of(b), kLimbsPerGroup);
  }

  void count_wide_coefficients_async(u64* count, const u64* a, u64 q0_inv, const BasisView& b,
                                     Stream s) override {
    ctx_.activate();
    cuda::launch(k::count_wide_coefficients_kernel, grid_for(b.ring->n), 256, 0, raw(s),
                 "count_wide_coefficients_kernel", reinterpret_cast<unsigned long long*>(count), a,
                 q0_inv, map_of(b));
  }

  void embed_signed_async(u64* out, const std::int64_t* values, const BasisView& b,
                          Stream s) override {
    ctx_.activate();
    const std::size_t n = b.ring->n;
    Scratch v = scratch(n, s);
    copy_from_host_async(v.p, values, n * sizeof(std::int64_t), s);
    cuda::launch(k::embed_signed_kernel, grid_for(b.limbs * n), 256, 0, raw(s),
                 "embed_signed_kernel", out, static_cast<const std::int64_t*>(v.p), map_of(b));
  }

  CggiOps& cggi() override { return *cggi_; }
  CkksEncodeOps& ckks_encode() override { return *ckks_encode_; }
  IntegerEncodeOps& integer_encode() override { return *integer_encode_; }
  BigIntOps& big_int() override { return *big_int_; }

 private:
  /// The modulus of limb l from the host copy of the ring's moduli.
  static const Modulus& host_modulus(const BasisView& b, std::size_t l) {
    return b.ring->host_moduli[b.host_ids[l]];
  }

  cuda::DeviceContext ctx_;
  /// The built-in NTT table for this GPU (by name, else the nearest measured GPU).
  const cuda::TunedGpu& tuned_ = cuda::tuned_gpu(ctx_.index());
  std::unique_ptr<CggiOps> cggi_;                     // after ctx_, which it uses
  std::unique_ptr<CkksEncodeOps> ckks_encode_;        // likewise
  std::unique_ptr<IntegerEncodeOps> integer_encode_;  // likewise
  std::unique_ptr<BigIntOps> big_int_;                // likewise
};

}  // namespace

Backend& cuda_backend(int index) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<CudaBackend>> backends;
  std::lock_guard lock(mutex);
  if (index < 0) throw DeviceError("negative CUDA device index " + std::to_string(index));
  if (static_cast<std::size_t>(index) >= backends.size()) backends.resize(index + 1);
  if (!backends[index]) backends[index] = std::make_unique<CudaBackend>(index);
  return *backends[index];
}

}  // namespace ember::backend
