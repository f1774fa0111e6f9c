// The ring family of backend operations: NTTs, pointwise arithmetic, automorphisms, linear
// combinations, big integer <-> RNS, sampling, and the views of rings and bases they take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/backend/runtime.h"
#include "ember/core/chacha20.h"
#include "ember/core/modarith.h"

namespace ember::backend {

/// Precomputed per-prime tables of a ring, laid out in a backend's memory, on words of type W
/// (u64: every ring; u32: rings whose primes are below 2^30, see RingContext::tables32_on).
/// Prime `id` owns rows [id * n, (id + 1) * n) of each twiddle array.
template <class W>
struct RingTablesViewT {
  std::size_t n = 0;
  int log_n = 0;
  std::size_t prime_count = 0;
  const ModulusT<W>* moduli = nullptr;
  const ModulusT<W>* host_moduli = nullptr;  // the same moduli in host memory
  const W* psi_rev = nullptr;                // forward twiddles: psi^bitrev(i)
  const W* psi_rev_shoup = nullptr;
  const W* psi_inv_rev = nullptr;  // inverse twiddles: psi^-bitrev(i)
  const W* psi_inv_rev_shoup = nullptr;
  const W* n_inv = nullptr;  // N^-1 mod q
  const W* n_inv_shoup = nullptr;
};
using RingTablesView = RingTablesViewT<u64>;
using RingTablesView32 = RingTablesViewT<u32>;

/// A basis as seen by a kernel: which primes of the ring each limb uses.
template <class W>
struct BasisViewT {
  const RingTablesViewT<W>* ring = nullptr;  // host-side struct whose pointers are backend memory
  const u32* ids = nullptr;                  // [limbs], backend memory
  const u32* host_ids = nullptr;             // [limbs], host memory (same values)
  std::size_t limbs = 0;
};
using BasisView = BasisViewT<u64>;
using BasisView32 = BasisViewT<u32>;

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
void check_linear_combination(std::size_t terms0, std::size_t terms1,
                              const std::vector<std::vector<u64>>& scalars,
                              const std::vector<u64>& constant, std::size_t limbs);

/// Throws ParameterError unless a linear_map_async call's sizes agree.
void check_linear_map(std::size_t outputs0, std::size_t outputs1, std::size_t inputs0,
                      std::size_t inputs1, const std::vector<u64>& weights,
                      const std::vector<u64>& constants, std::size_t limbs);

/// Tables of the exact big-integer <-> RNS conversions, backend memory.
struct CrtView {
  std::size_t words = 0;            // 64-bit words per big integer on input (to RNS)
  const u64* pow2_64k = nullptr;    // [limbs][words]: 2^(64k) mod q_i
  const u64* garner_inv = nullptr;  // [limbs][limbs]: q_j^-1 mod q_i for j < i
};

/// Which small distribution a sampler draws from.
struct SmallSampler {
  enum Kind { ternary, gaussian } kind = ternary;
  u64 ternary_threshold = 0;          // nonzero iff (word >> 1) < threshold
  const u64* gaussian_cdt = nullptr;  // backend memory, cumulative table (63-bit fixed point)
  int gaussian_bound = 0;             // entries in the table; |x| <= bound
};

/// Operations on RNS polynomials, row by row (one row per prime of a basis). Stream-ordered.
class RingOps {
 public:
  virtual ~RingOps() = default;
  /// NTT schedules this backend implements ("auto" picks the tuned one per size).
  virtual std::vector<std::string> ntt_variants() const = 0;
  /// The schedule "auto" uses for one polynomial of `limbs` limbs of primes of `prime_bits` bits:
  /// "name", or "forward/inverse" when the directions differ.
  virtual std::string ntt_variant_for(std::size_t n, std::size_t limbs, int prime_bits) const = 0;

  // Negacyclic NTT over `count` polynomials of basis b, stored back to back (limb-major).
  virtual void ntt_forward_async(u64* data, const BasisView& b, std::size_t count,
                                 Stream stream) = 0;
  virtual void ntt_inverse_async(u64* data, const BasisView& b, std::size_t count,
                                 Stream stream) = 0;
  // The same on 32-bit words (primes below 2^30): one code with the 64-bit transforms,
  // instantiated for u32 (cpu_ntt.cpp, kernels/ntt.cuh's column and chunk kernels).
  virtual void ntt_forward_async(u32* data, const BasisView32& b, std::size_t count,
                                 Stream stream) = 0;
  virtual void ntt_inverse_async(u32* data, const BasisView32& b, std::size_t count,
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
  // The same on 32-bit words (primes below 2^30), from the same code as the 64-bit ones; out +=
  // a * c as multiply_accumulate_async.
  virtual void add_async(u32* out, const u32* a, const u32* c, const BasisView32& b,
                         Stream stream) = 0;
  virtual void sub_async(u32* out, const u32* a, const u32* c, const BasisView32& b,
                         Stream stream) = 0;
  virtual void negate_async(u32* out, const u32* a, const BasisView32& b, Stream stream) = 0;
  virtual void multiply_async(u32* out, const u32* a, const u32* c, const BasisView32& b,
                              Stream stream) = 0;
  virtual void multiply_accumulate_async(u32* out, const u32* a, const u32* c, const BasisView32& b,
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
  virtual void tensor_async(u32* d0, u32* d1, u32* d2, const u32* a0, const u32* a1, const u32* b0,
                            const u32* b1, const BasisView32& b, Stream stream) = 0;
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
  virtual void dot_plain_async(u32* out0, u32* out1, const std::vector<const u32*>& a0,
                               const std::vector<const u32*>& a1, const std::vector<const u32*>& p,
                               const u32* add0, const u32* add1, const BasisView32& b,
                               Stream stream) = 0;
  /// out = a * scalar[limb]; scalars are host values, reduced mod each limb's prime.
  virtual void multiply_scalar_async(u64* out, const u64* a, const std::vector<u64>& scalars,
                                     const BasisView& b, Stream stream) = 0;
  virtual void multiply_scalar_async(u32* out, const u32* a, const std::vector<u64>& scalars,
                                     const BasisView32& b, Stream stream) = 0;
  /// out = a(X^k) for odd k; `eval` selects the evaluation-form permutation.
  virtual void automorphism_async(u64* out, const u64* a, u64 k, bool eval, const BasisView& b,
                                  Stream stream) = 0;
  virtual void automorphism_async(u32* out, const u32* a, u64 k, bool eval, const BasisView32& b,
                                  Stream stream) = 0;
  /// out[i] = a[i] for `count` words: 64-bit words below 2^32 to 32-bit ones (narrow) and back
  /// (widen). What 32-bit rings borrow from the 64-bit code (sampling, encoding) crosses here.
  virtual void narrow_words_async(u32* out, const u64* a, std::size_t count, Stream stream) = 0;
  virtual void widen_words_async(u64* out, const u32* a, std::size_t count, Stream stream) = 0;
  /// out += scalar[limb] * a(X^k), evaluation form (one pass): the P sigma(c0) term of rotations
  /// kept in Q u P. k = 1 gives out += scalar * a. Scalars are host values, reduced here.
  virtual void automorphism_accumulate_async(u64* out, const u64* a, u64 k,
                                             const std::vector<u64>& scalars, const BasisView& b,
                                             Stream stream) = 0;
  virtual void automorphism_accumulate_async(u32* out, const u32* a, u64 k,
                                             const std::vector<u64>& scalars, const BasisView32& b,
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
  virtual void linear_combination_async(u32* out0, u32* out1, const std::vector<const u32*>& a0,
                                        const std::vector<const u32*>& a1,
                                        const std::vector<std::vector<u64>>& scalars,
                                        const std::vector<u64>& constant, const BasisView32& b,
                                        Stream stream, bool constant_coeff = false) = 0;
  /// A matrix of linear combinations of ciphertext halves, one pass over the inputs per tile
  /// of outputs: out0[j] = sum_i a0[i] w[j][i][limb] + c[j][limb],
  /// out1[j] = sum_i a1[i] w[j][i][limb], for j < out0.size(), i < a0.size(). `weights` is
  /// row-major [outputs][inputs][limbs] and `constants` [outputs][limbs], host values below
  /// 2^64 (reduced here). The outputs must not alias the inputs. The constant polynomial is c
  /// in every slot (eval form) or, with `constant_coeff`, c at coefficient 0.
  virtual void linear_map_async(const std::vector<u64*>& out0, const std::vector<u64*>& out1,
                                const std::vector<const u64*>& a0,
                                const std::vector<const u64*>& a1, const std::vector<u64>& weights,
                                const std::vector<u64>& constants, const BasisView& b,
                                Stream stream, bool constant_coeff = false) = 0;
  virtual void linear_map_async(const std::vector<u32*>& out0, const std::vector<u32*>& out1,
                                const std::vector<const u32*>& a0,
                                const std::vector<const u32*>& a1, const std::vector<u64>& weights,
                                const std::vector<u64>& constants, const BasisView32& b,
                                Stream stream, bool constant_coeff = false) = 0;
  /// BFV plaintext scaling: out[limb][i] = round(Q m[i] / t) mod q_limb for one row m of values
  /// in [0, t) (backend memory); q_div_t[limb] = floor(Q/t) mod q_limb (backend memory).
  virtual void scale_plain_async(u64* out, const u64* m, u64 t, u64 q_mod_t, const u64* q_div_t,
                                 const BasisView& b, Stream stream) = 0;
  // Big integer <-> RNS (coefficient form).
  /// out[limb][i] = value_i mod q_limb, value_i given as `crt.words` little-endian words.
  virtual void rns_from_words_async(u64* out, const u64* words, const CrtView& crt,
                                    const BasisView& b, Stream stream) = 0;
  /// out[i][0..limbs) = the value in [0, Q) whose residues are a[.][i] (Garner).
  virtual void words_from_rns_async(u64* out, const u64* a, const CrtView& crt, const BasisView& b,
                                    Stream stream) = 0;

  /// Adds to *count (backend memory, one word) the number of coefficients of `a` (coefficient
  /// form, b.limbs >= 2) whose value needs more than the first two primes to decode:
  /// backend::rows::two_prime_value_holds is false for them. q0_inv: q_0^-1 mod q_1. CKKS decoding
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
};

}  // namespace ember::backend
