// The backend interface: memory and every RNS polynomial primitive, implemented by cpu and cuda.
//
// Everything above `ring` is backend-neutral; a backend is the only code that knows where memory
// lives. Every primitive here is stream-ordered (`_async`): it returns once the work is enqueued
// (the CPU backend finishes before returning). Pointers are in the backend's own memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/backend/options.h"
#include "ember/core/chacha20.h"
#include "ember/core/modarith.h"

namespace ember::backend {

enum class DeviceKind { cpu, cuda };

/// Where memory lives and work runs: one CUDA GPU, or a CPU device. CPU devices cpu:0, cpu:1, ...
/// share the host's memory and cores but are separate backends (their own tables and caches), so
/// that device sets, key replication and moves run, and are tested, without a GPU.
struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;
  /// "cpu" (cpu:0), "cpu:1", "cuda:0", ...
  std::string str() const;
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator<(const Device& o) const { return kind != o.kind ? kind < o.kind : index < o.index; }
};

/// CPU devices a process may name (cpu:0 .. cpu:kMaxCpuDevices-1).
inline constexpr int kMaxCpuDevices = 64;

/// An ordered queue of work on one device (a cudaStream_t on CUDA; the CPU backend runs work
/// when it is enqueued, so its streams are null handles). The null Stream, `Stream{}`, is the
/// device's default stream: what callers pass when they have no stream of their own.
struct Stream {
  void* handle = nullptr;
};

/// A point in a stream's work that other streams (of any device of the same backend kind) can
/// wait for (a cudaEvent_t on CUDA; null on the CPU, whose work is done when enqueued).
struct Event {
  void* handle = nullptr;
};

/// Precomputed per-prime tables of a ring, laid out in a backend's memory.
/// Prime `id` owns rows [id * n, (id + 1) * n) of each twiddle array.
struct RingTablesView {
  std::size_t n = 0;
  int log_n = 0;
  std::size_t prime_count = 0;
  const Modulus* moduli = nullptr;
  const Modulus* host_moduli = nullptr;  // the same moduli in host memory
  const u64* psi_rev = nullptr;          // forward twiddles: psi^bitrev(i)
  const u64* psi_rev_shoup = nullptr;
  const u64* psi_inv_rev = nullptr;  // inverse twiddles: psi^-bitrev(i)
  const u64* psi_inv_rev_shoup = nullptr;
  const u64* n_inv = nullptr;  // N^-1 mod q
  const u64* n_inv_shoup = nullptr;
};

/// A basis as seen by a kernel: which primes of the ring each limb uses.
struct BasisView {
  const RingTablesView* ring = nullptr;  // host-side struct whose pointers are backend memory
  const u32* ids = nullptr;              // [limbs], backend memory
  const u32* host_ids = nullptr;         // [limbs], host memory (same values)
  std::size_t limbs = 0;
};

/// ModUp's one-prime digits as a forward NTT's input (Backend::ntt_forward_lifted_async): row r
/// of the transformed polynomial starts as row r / rows_per_source of `words` reduced modulo row
/// r's prime (a digit's residues, below its prime, are its value; lifting it to another prime is
/// a reduction).
struct LiftedRows {
  const u64* words = nullptr;
  std::size_t rows_per_source = 0;  // 0: no lifted input
  u64 bound = 0;  // every word is below it (the digits' largest prime); 0: any 64-bit word
};

/// Throws ParameterError unless a linear_combination_async call fits its limits.
void check_linear_combination(const std::vector<const u64*>& a0, const std::vector<const u64*>& a1,
                              const std::vector<std::vector<u64>>& scalars,
                              const std::vector<u64>& constant, const BasisView& b);

/// A target prime of a byte-matrix conversion with what its reduction needs in one load.
struct ByteTarget {
  u64 prime = 0;
  double inv_prime = 0;  // 1 / prime, for the quotient estimate
  u64 out_add = 0;       // the output map's addend (0: none)
};

/// A source prime of a byte-matrix conversion with everything its input y_i = x_i qhat_inv_i +
/// y_add_i needs, side by side (three 16-byte loads instead of five dependent ones through the
/// basis' prime ids): the same values as BaseConvView's qhat_inv, qhat_inv_shoup, y_add and inv_q.
struct alignas(16) ByteSource {
  u64 prime = 0;
  u64 qhat_inv = 0;
  u64 qhat_inv_shoup = 0;
  u64 y_add = 0;       // 0: none
  double inv_q = 0.0;  // 1 / prime for an exact conversion's overflow (0: fast conversion)
};

/// A conversion from one prime p as a lifted NTT's first load reads it (Backend::
/// convert_ntt_affine_sub_async): the BaseConvView's tables and p's modulus, backend memory.
/// y = x in_mul + in_add mod p, then y mod p_j (Q / p = 1), then v out_mul_j + out_add_j; null
/// in_add, out_mul or out_add: that part of the map is the identity.
struct OnePrimeMaps {
  const Modulus* source = nullptr;
  const u64* in_mul = nullptr;
  const u64* in_mul_shoup = nullptr;
  const u64* in_add = nullptr;
  const u64* out_mul = nullptr;
  const u64* out_mul_shoup = nullptr;
  const u64* out_add = nullptr;
};

/// Tables of a fast base conversion from basis Q (`from`) to basis P (`to`), backend memory.
struct BaseConvView {
  std::size_t from_limbs = 0;
  std::size_t to_limbs = 0;
  const u64* qhat_inv = nullptr;        // [from]: (Q/q_i)^-1 mod q_i
  const u64* qhat_inv_shoup = nullptr;  // [from]
  const u64* qhat_mod_p = nullptr;      // [from][to]: (Q/q_i) mod p_j
  // Exact conversion (HPS): the overflow u = floor(sum_i y_i / q_i) is computed in floating
  // point and u Q subtracted, so the result is x mod Q itself. Null for the fast conversion.
  const double* inv_q = nullptr;  // [from]: 1 / q_i
  const u64* q_mod_p = nullptr;   // [to]: Q mod p_j
  // Optional affine maps folded into the conversion (null: identity). The input map x -> x a + b
  // is applied as y_i = x_i qhat_inv_i + y_add_i (a folded into qhat_inv); the output map is
  // v -> v out_mul_j + out_add_j. Centered conversions and DivideRound's correction use them.
  const u64* y_add = nullptr;          // [from]
  const u64* out_mul = nullptr;        // [to]
  const u64* out_mul_shoup = nullptr;  // [to]
  const u64* out_add = nullptr;        // [to]
  // The conversion as a byte matrix for integer tensor cores (null when the source primes and,
  // for an exact conversion, the overflow exceed kByteMatrixInputs): W[k][j] with k = 8 i + a for
  // source prime i and byte a of y_i, W = (Q/q_i mod p_j) 2^(8a) out_mul_j mod p_j, and for an
  // exact conversion the row k = 8 from_limbs times the overflow's byte: (-Q mod p_j) out_mul_j.
  // k runs over byte_blocks blocks of 32. Stored as its eight byte planes (byte b of every W),
  // each [to rounded up to 8][8 byte_blocks u32 words of four k], the words of one column in
  // mma fragment order (rows::byte_plane_slot); sum_b 2^(8b) sum_k bytes_k(y) plane_b[k][j] <
  // 2^15 p_j is then the converted value (mod p_j).
  const u32* byte_planes = nullptr;
  u32 byte_blocks = 0;
  const ByteTarget* byte_targets = nullptr;  // [to]
  const ByteSource* byte_sources = nullptr;  // [from]
  // Conversions from one prime: this conversion's OnePrimeMaps, itself in backend memory.
  const OnePrimeMaps* one_prime = nullptr;
};

/// Inputs (source primes, and the overflow of an exact conversion) a byte-matrix conversion
/// takes: 8 bytes each in rows of at most 4 blocks of 32 bytes.
inline constexpr std::size_t kByteMatrixInputs = 16;

/// One base conversion of a batch: `out` (to's limbs) from `in` (from's limbs), coefficient form.
struct ConvJob {
  BaseConvView conv;
  BasisView from, to;
  const u64* in = nullptr;
  u64* out = nullptr;
  // Optional: the job converts in - in_sub (modulo each source prime; same layout as in), so a
  // difference that only feeds the conversion is never written (BFV's scaled product).
  const u64* in_sub = nullptr;
};

/// Tables of the exact big-integer <-> RNS conversions, backend memory.
struct CrtView {
  std::size_t words = 0;            // 64-bit words per big integer on input (to RNS)
  const u64* pow2_64k = nullptr;    // [limbs][words]: 2^(64k) mod q_i
  const u64* garner_inv = nullptr;  // [limbs][limbs]: q_j^-1 mod q_i for j < i
};

/// Operands of the fused key inner product of hybrid key switching (backend memory).
/// Digit j of the decomposition of d (eval form over Q_l, q_rows = l + 1 rows) is d itself on its
/// primes D_j = [j alpha, min((j + 1) alpha, q_rows)) and its ModUp on the other rows of
/// Q_l u P, which `ext` holds back to back: digit j's converted rows start at row
/// j * (rows - alpha), in Q_l u P order with D_j left out. `key` holds dnum digits of two
/// polynomials over the key_rows = key_q_rows + (rows - q_rows) primes of the full basis.
struct KeyProductView {
  const u64* d = nullptr;    // [q_rows][N], eval form
  const u64* ext = nullptr;  // converted rows of every digit, eval form (words may be unreduced:
                             // below 2^63.3 for primes below 2^57, see ntt_forward_lifted_async)
  const u64* key = nullptr;  // [dnum][2][key_rows][N], eval form
  u32 digits = 0;
  u32 alpha = 0;
  u32 rows = 0;        // l + 1 + k
  u32 q_rows = 0;      // l + 1
  u32 key_rows = 0;    // L + 1 + k
  u32 key_q_rows = 0;  // L + 1
  u64 galois = 0;      // 0, or the odd k of an automorphism applied to the digits on the fly
  // Optional: out0 += add_scale[r] * add(X^galois) on the Q rows r (a hoisted rotation's
  // P sigma(c0), fused into the key product's accumulator); add_scale reduced mod q_r.
  static constexpr u32 kMaxAddRows = 64;
  const u64* add = nullptr;  // [q_rows][N], eval form
  u64 add_scale[kMaxAddRows] = {};
};

/// Operands of the baby-step sums of a double-hoisted linear transform (backend memory): baby b
/// is the rotation (galois[b], key[b]) of one ciphertext kept in Q_l u P, the key product of the
/// shared ModUp digits (`product`, whose key is unused) plus P sigma_b(c0) (product.add); giant
/// g's sum, sum_b plain[g][b] * baby_b over Q_l u P, goes to out[g] (two polynomials, each Q rows
/// then P rows). The babies are never written out.
struct BabyGiantView {
  static constexpr u32 kMaxBabies = 16;
  static constexpr u32 kMaxGiants = 8;
  KeyProductView product;
  const u64* key[kMaxBabies] = {};
  u64 galois[kMaxBabies] = {};
  const u64* plain[kMaxGiants][kMaxBabies] = {};  // [rows][N] over Q_l u P; null: no term
  u64* out[kMaxGiants] = {};
  u32 babies = 0;
  u32 giants = 0;
};

/// Which small distribution a sampler draws from.
struct SmallSampler {
  enum Kind { ternary, gaussian } kind = ternary;
  u64 ternary_threshold = 0;          // nonzero iff (word >> 1) < threshold
  const u64* gaussian_cdt = nullptr;  // backend memory, cumulative table (63-bit fixed point)
  int gaussian_bound = 0;             // entries in the table; |x| <= bound
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;

  // Memory. allocate throws DeviceMemoryError with the size when the device is full.
  virtual void* allocate(std::size_t bytes, Stream stream) = 0;
  virtual void deallocate(void* p, std::size_t bytes, Stream stream) noexcept = 0;
  virtual void copy_from_host_async(void* dst, const void* src, std::size_t bytes,
                                    Stream stream) = 0;
  virtual void copy_to_host_async(void* dst, const void* src, std::size_t bytes, Stream stream) = 0;
  virtual void copy_async(void* dst, const void* src, std::size_t bytes, Stream stream) = 0;
  virtual void synchronize(Stream stream) = 0;
  virtual Stream default_stream() = 0;

  // Streams and events. A created stream runs concurrently with the others of its device;
  // destroy_stream waits for its work first and keeps the handle valid (for reuse) until the
  // backend goes, so objects still holding it never see a dangling stream. An event records the work queued on a stream so far;
  // wait_event makes later work of a stream (of this device) wait for it without blocking the
  // host. CPU: null handles, and every call returns at once.
  virtual Stream create_stream() = 0;
  virtual void destroy_stream(Stream stream) noexcept = 0;
  virtual Event create_event() = 0;
  virtual void destroy_event(Event event) noexcept = 0;
  virtual void record_event(Event event, Stream stream) = 0;
  virtual void wait_event(Stream stream, Event event) = 0;
  virtual void synchronize_event(Event event) = 0;
  /// Copies `bytes` from `src` in the memory of `src_device` (another device of this backend's
  /// kind) to `dst` in this device's memory, on `stream`: peer to peer where the two GPUs can
  /// reach each other, staged through host memory by the driver otherwise. The caller orders it
  /// after the source's writes (copy_between_devices does).
  virtual void copy_from_peer_async(void* dst, const void* src, const Device& src_device,
                                    std::size_t bytes, Stream stream) = 0;

  // Benchmarking support. time_runs returns `iters` samples of the milliseconds one run of `fn`
  // takes, after `warmup` untimed runs. CPU: wall clock. CUDA: device time, from events around
  // 10 back-to-back runs (divided by 10) queued behind a spin kernel that outlasts the host's
  // enqueueing, so launch latency is not counted.
  virtual std::vector<double> time_runs(const std::function<void(Stream)>& fn, int warmup,
                                        int iters) = 0;
  /// NTT schedules this backend implements ("auto" picks the tuned one per size).
  virtual std::vector<std::string> ntt_variants() const = 0;
  /// This backend's options (see options.h): a snapshot that stays valid while the backend lives.
  const BackendOptions& options() const noexcept { return options_.get(); }
  /// Replaces the options for later operations; set them between operations. Throws
  /// ParameterError, changing nothing, for an NTT variant or table row this backend lacks.
  void set_options(const BackendOptions& options);
  /// The schedule "auto" uses for one polynomial of `limbs` limbs of primes of `prime_bits` bits:
  /// "name", or "forward/inverse" when the directions differ.
  virtual std::string ntt_variant_for(std::size_t n, std::size_t limbs, int prime_bits) const = 0;

  // Negacyclic NTT over `count` polynomials of basis b, stored back to back (limb-major).
  virtual void ntt_forward_async(u64* data, const BasisView& b, std::size_t count,
                                 Stream stream) = 0;
  virtual void ntt_inverse_async(u64* data, const BasisView& b, std::size_t count,
                                 Stream stream) = 0;
  // Out of place: out = NTT / INTT of the `count` polynomials in[0..count) (each limbs x N words,
  // anywhere in backend memory, unchanged: the first pass reads them, so no copy), written back
  // to back to out. With source_rows > 0, in[k] holds only the first source_rows rows of
  // polynomial k and its other rows are already in out (BFV's product: a ciphertext's Q rows
  // where they are, their conversion to R written next to where the transform puts them).
  virtual void ntt_forward_async(u64* out, const u64* const* in, const BasisView& b,
                                 std::size_t count, Stream stream, std::size_t source_rows = 0) = 0;
  virtual void ntt_inverse_async(u64* out, const u64* const* in, const BasisView& b,
                                 std::size_t count, Stream stream, std::size_t source_rows = 0) = 0;
  /// Forward NTT of one polynomial `out` of basis b lifted from `src` (see LiftedRows): the ModUp
  /// of one-prime digits, without writing the lifted rows before the transform reads them. Only
  /// key products read these rows (KeyProductView::ext), so a backend may leave their words
  /// unreduced: congruent to the transform modulo the row's prime and below 2^63.3 where that
  /// prime is below 2^57 (the products' 128-bit sums are reduced once).
  virtual void ntt_forward_lifted_async(u64* out, const LiftedRows& src, const BasisView& b,
                                        Stream stream) = 0;

  // Pointwise arithmetic over limbs x N words; inputs reduced, outputs reduced.
  virtual void add_async(u64* out, const u64* a, const u64* c, const BasisView& b,
                         Stream stream) = 0;
  virtual void sub_async(u64* out, const u64* a, const u64* c, const BasisView& b,
                         Stream stream) = 0;
  virtual void negate_async(u64* out, const u64* a, const BasisView& b, Stream stream) = 0;
  virtual void multiply_async(u64* out, const u64* a, const u64* c, const BasisView& b,
                              Stream stream) = 0;
  /// Tensor product of (a0, a1) and (b0, b1): d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1. With
  /// `upper`, the limbs from upper->split on read the four operands from upper's (whose first
  /// limb is limb `split`): BFV's product over Q u R, whose R limbs were extended apart, in one
  /// pass.
  struct TensorUpper {
    const u64 *a0, *a1, *b0, *b1;
    std::size_t split;
  };
  virtual void tensor_async(u64* d0, u64* d1, u64* d2, const u64* a0, const u64* a1, const u64* b0,
                            const u64* b1, const BasisView& b, Stream stream,
                            const TensorUpper* upper = nullptr) = 0;
  /// The forward NTT of two degree-1 ciphertexts (ntt_forward_async(scratch, in, b, 4, stream,
  /// source_rows): in = {a0, a1, b0, b1}, written back to back to scratch) followed by their
  /// tensor product into d0, d1, d2. A backend may fuse the two and leave scratch as it likes.
  virtual void ntt_forward_tensor_async(u64* d0, u64* d1, u64* d2, u64* scratch,
                                        const u64* const (&in)[4], const BasisView& b,
                                        Stream stream, std::size_t source_rows = 0) {
    ntt_forward_async(scratch, in, b, 4, stream, source_rows);
    const std::size_t words = b.limbs * b.ring->n;
    tensor_async(d0, d1, d2, scratch, scratch + words, scratch + 2 * words, scratch + 3 * words, b,
                 stream);
  }
  /// out += a * c
  virtual void multiply_accumulate_async(u64* out, const u64* a, const u64* c, const BasisView& b,
                                         Stream stream) = 0;
  /// Plaintext inner product of ciphertext halves: out0 = sum_i a0[i] p[i] (+ add0),
  /// out1 = sum_i a1[i] p[i] (+ add1), pointwise over b, one pass (lazy 128-bit sums). At most
  /// kMaxDotTerms terms; add0 / add1 may be null or alias out0 / out1.
  static constexpr std::size_t kMaxDotTerms = 32;
  virtual void dot_plain_async(u64* out0, u64* out1, const std::vector<const u64*>& a0,
                               const std::vector<const u64*>& a1, const std::vector<const u64*>& p,
                               const u64* add0, const u64* add1, const BasisView& b,
                               Stream stream) = 0;
  /// out = a * scalar[limb]; scalars are host values, reduced mod each limb's prime.
  virtual void multiply_scalar_async(u64* out, const u64* a, const std::vector<u64>& scalars,
                                     const BasisView& b, Stream stream) = 0;
  /// out = a(X^k) for odd k; `eval` selects the evaluation-form permutation.
  virtual void automorphism_async(u64* out, const u64* a, u64 k, bool eval, const BasisView& b,
                                  Stream stream) = 0;
  /// out += scalar[limb] * a(X^k), evaluation form (one pass): the P sigma(c0) term of rotations
  /// kept in Q u P. k = 1 gives out += scalar * a. Scalars are host values, reduced here.
  virtual void automorphism_accumulate_async(u64* out, const u64* a, u64 k,
                                             const std::vector<u64>& scalars, const BasisView& b,
                                             Stream stream) = 0;

  /// Linear combination of ciphertext halves with per-limb integer scalars (host values below
  /// 2^64, reduced here): out0 = sum_t a0[t] s[t][limb] + c[limb], out1 = sum_t a1[t] s[t][limb],
  /// one pass. At most kMaxLinearTerms terms and kMaxLinearLimbs limbs; out may alias a term.
  /// The constant polynomial is c in every slot (eval form) or, with `constant_coeff`, c at
  /// coefficient 0 (coefficient form).
  static constexpr std::size_t kMaxLinearTerms = 16;
  static constexpr std::size_t kMaxLinearLimbs = 64;
  virtual void linear_combination_async(u64* out0, u64* out1, const std::vector<const u64*>& a0,
                                        const std::vector<const u64*>& a1,
                                        const std::vector<std::vector<u64>>& scalars,
                                        const std::vector<u64>& constant, const BasisView& b,
                                        Stream stream, bool constant_coeff = false) = 0;
  /// out[k] = (a[k] - c_k) * mul[limb] (+ addends[k] when addends and it are not null) for the
  /// k < count polynomials, c_k = c + k limbs N (back to back), in one pass: the last step of a
  /// division by trailing primes, with the polynomial it is added to fused in. mul (and its Shoup
  /// companions) in backend memory; out[k] may alias a[k] or addends[k].
  static constexpr std::size_t kMaxAffineTerms = 8;
  virtual void affine_sub_async(u64* const* out, const u64* const* a, const u64* c, const u64* mul,
                                const u64* mul_companion, const u64* const* addends,
                                std::size_t count, const BasisView& b, Stream stream) = 0;
  /// The forward NTT of the `count` polynomials at c (back to back, in place), then
  /// affine_sub_async(out, a, c, ...): the last two steps of a division. A backend may fuse them
  /// (the CUDA one applies the affine map in the NTT's last kernel); c is scratch afterwards.
  virtual void ntt_forward_affine_sub_async(u64* const* out, const u64* const* a, u64* c,
                                            const u64* mul, const u64* mul_companion,
                                            const u64* const* addends, std::size_t count,
                                            const BasisView& b, Stream stream) {
    ntt_forward_async(c, b, count, stream);
    affine_sub_async(out, a, c, mul, mul_companion, addends, count, b, stream);
  }
  /// A division's last three steps: the conversions `jobs` (job k writes polynomial k of c, the
  /// polynomials back to back over b), less `sub` (same layout, coefficient form; nullptr:
  /// none), then ntt_forward_affine_sub_async(out, a, c, ...) with count = jobs.size(). The
  /// result gains NTT(sub[k]) * mul: a coefficient-form addend e enters as sub = e / mul. A
  /// backend may fold conversions from one prime and the subtraction into the NTT's first load
  /// (the CUDA one does: ModDown with one special prime, rescales), so the converted rows are
  /// never written; c is scratch afterwards.
  virtual void convert_ntt_affine_sub_async(const std::vector<ConvJob>& jobs, u64* const* out,
                                            const u64* const* a, u64* c, const u64* mul,
                                            const u64* mul_companion, const u64* const* addends,
                                            const BasisView& b, Stream stream,
                                            const u64* sub = nullptr) {
    base_convert_many_async(jobs, stream);
    const std::size_t words = b.limbs * b.ring->n;
    if (sub)
      for (std::size_t k = 0; k < jobs.size(); ++k)
        sub_async(c + k * words, c + k * words, sub + k * words, b, stream);
    ntt_forward_affine_sub_async(out, a, c, mul, mul_companion, addends, jobs.size(), b, stream);
  }
  /// The coefficient-form counterpart: the conversions `jobs` (job k writes polynomial k of c,
  /// back to back over b), then out[k] = (a[k] - c_k) * mul + addends[k](X^addend_galois)
  /// (addend_galois 0 or 1: the addend as it is; else the automorphism of the coefficient-form
  /// addend, a rotation's sigma(c0)). The last steps of a ModDown whose result stays in
  /// coefficient form (BFV). A backend may fuse them (the CUDA one does for conversions from
  /// one prime); c is scratch afterwards.
  virtual void convert_affine_sub_async(const std::vector<ConvJob>& jobs, u64* const* out,
                                        const u64* const* a, u64* c, const u64* mul,
                                        const u64* mul_companion, const u64* const* addends,
                                        u64 addend_galois, const BasisView& b, Stream stream) {
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
  /// BFV plaintext scaling: out[limb][i] = round(Q m[i] / t) mod q_limb for one row m of values
  /// in [0, t) (backend memory); q_div_t[limb] = floor(Q/t) mod q_limb (backend memory).
  virtual void scale_plain_async(u64* out, const u64* m, u64 t, u64 q_mod_t, const u64* q_div_t,
                                 const BasisView& b, Stream stream) = 0;
  /// out0 / out1 over Q_l u P (rows of `qlp`) = sum_j ext_j * key_j.{0,1}, one fused pass; the
  /// Q_l rows of out0 / out1 go to q0 / q1, the P rows to p0 / p1.
  virtual void key_inner_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                                       const BasisView& qlp, Stream stream) = 0;
  /// ModUp's forward NTT of the converted rows kp.ext (over `ext_basis`, one polynomial;
  /// lifted from `lift` as by ntt_forward_lifted_async when lift.rows_per_source > 0), then
  /// key_inner_product_async: what a key product with rows used once computes. kp.ext's words are
  /// scratch afterwards. The GPU fuses the transform's last pass with the product where the rows
  /// exceed most of its L2 cache, so the transformed rows are never written and read back.
  virtual void ntt_key_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                                     const LiftedRows& lift, const BasisView& ext_basis,
                                     const BasisView& qlp, Stream stream) {
    u64* ext = const_cast<u64*>(kp.ext);
    if (lift.rows_per_source)
      ntt_forward_lifted_async(ext, lift, ext_basis, stream);
    else
      ntt_forward_async(ext, ext_basis, 1, stream);
    key_inner_product_async(q0, q1, p0, p1, kp, qlp, stream);
  }
  /// The giant-step sums of BabyGiantView over Q_l u P (rows of `qlp`), one pass.
  virtual void baby_giant_sums_async(const BabyGiantView& v, const BasisView& qlp,
                                     Stream stream) = 0;

  // Base conversion (coefficient form).
  /// out (P limbs) = sum_i [a_i qhat_inv_i]_{q_i} * qhat_i mod p_j
  virtual void base_convert_async(u64* out, const u64* a, const BaseConvView& conv,
                                  const BasisView& from, const BasisView& to, Stream stream) = 0;

  /// Several independent conversions (ModUp's digits) in one launch where the backend can.
  virtual void base_convert_many_async(const std::vector<ConvJob>& jobs, Stream stream) = 0;

  // Big integer <-> RNS (coefficient form).
  /// out[limb][i] = value_i mod q_limb, value_i given as `crt.words` little-endian words.
  virtual void rns_from_words_async(u64* out, const u64* words, const CrtView& crt,
                                    const BasisView& b, Stream stream) = 0;
  /// out[i][0..limbs) = the value in [0, Q) whose residues are a[.][i] (Garner).
  virtual void words_from_rns_async(u64* out, const u64* a, const CrtView& crt, const BasisView& b,
                                    Stream stream) = 0;

  /// Adds to *count (backend memory, one word) the number of coefficients of `a` (coefficient
  /// form, b.limbs >= 2) whose value needs more than the first two primes to decode:
  /// ring::rows::two_prime_value_holds is false for them. q0_inv: q_0^-1 mod q_1. CKKS decoding
  /// reads two rows instead of every row when the count is 0.
  virtual void count_wide_coefficients_async(u64* count, const u64* a, u64 q0_inv,
                                             const BasisView& b, Stream stream) = 0;

  // Sampling from the ChaCha20 stream (key, nonce); identical on every backend.
  virtual void sample_uniform_async(u64* out, const ChaChaKey& key, u64 nonce, const BasisView& b,
                                    Stream stream) = 0;
  virtual void sample_small_async(u64* out, const ChaChaKey& key, u64 nonce,
                                  const SmallSampler& dist, const BasisView& b, Stream stream) = 0;
  /// out[limb][i] = values[i] mod q_limb for signed host values.
  virtual void embed_signed_async(u64* out, const std::int64_t* host_values, const BasisView& b,
                                  Stream stream) = 0;

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
