// The key-switching family of backend operations: base conversions, the affine steps of
// divisions by trailing primes (ModDown, rescale), key inner products and the double-hoisted
// linear transform's sums, with the views they take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/backend/ring_ops.h"

namespace ember::backend {

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

/// Tables of a fast base conversion from basis Q (`from`) to basis P (`to`), backend memory, on
/// words of type W (u64; u32 for primes below 2^30: BaseConverter::view32_on).
template <class W>
struct BaseConvViewT {
  std::size_t from_limbs = 0;
  std::size_t to_limbs = 0;
  const W* qhat_inv = nullptr;        // [from]: (Q/q_i)^-1 mod q_i
  const W* qhat_inv_shoup = nullptr;  // [from]
  const W* qhat_mod_p = nullptr;      // [from][to]: (Q/q_i) mod p_j
  // Exact conversion (HPS): the overflow u = floor(sum_i y_i / q_i) is computed in floating
  // point and u Q subtracted, so the result is x mod Q itself. Null for the fast conversion.
  const double* inv_q = nullptr;  // [from]: 1 / q_i
  const W* q_mod_p = nullptr;     // [to]: Q mod p_j
  // Optional affine maps folded into the conversion (null: identity). The input map x -> x a + b
  // is applied as y_i = x_i qhat_inv_i + y_add_i (a folded into qhat_inv); the output map is
  // v -> v out_mul_j + out_add_j. Centered conversions and DivideRound's correction use them.
  const W* y_add = nullptr;          // [from]
  const W* out_mul = nullptr;        // [to]
  const W* out_mul_shoup = nullptr;  // [to]
  const W* out_add = nullptr;        // [to]
};
/// The 32-bit conversion's tables, with the byte matrix its tensor-core kernel reads.
struct BaseConvView32 : BaseConvViewT<u32> {
  // W[k][j] with k = 4 i + a for source prime i and byte a of y_i, W = (Q/q_i mod p_j) 2^(8a)
  // out_mul_j mod p_j, and for an exact conversion the row k = 4 from_limbs times the overflow:
  // (-Q mod p_j) out_mul_j; as BaseConvView::byte_planes (ring::byte_planes_of) with four planes,
  // over byte_blocks blocks of 32 rows (null above kByteMatrixInputs32 rows).
  const u32* byte_planes = nullptr;
  u32 byte_blocks = 0;
};
/// Rows of the 32-bit byte matrix at most (three blocks: 24 source primes, 23 when exact).
inline constexpr std::size_t kByteMatrixInputs32 = 96;

/// The 64-bit conversion's tables, with the forms only its kernels read.
struct BaseConvView : BaseConvViewT<u64> {
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

/// One base conversion of a batch on 32-bit words (see ConvJob).
struct ConvJob32 {
  BaseConvView32 conv;
  BasisView32 from, to;
  const u32* in = nullptr;
  u32* out = nullptr;
};

/// Operands of the fused key inner product of hybrid key switching (backend memory).
/// Digit j of the decomposition of d (eval form over Q_l, q_rows = l + 1 rows) is d itself on its
/// primes D_j = [j alpha, min((j + 1) alpha, q_rows)) and its ModUp on the other rows of
/// Q_l u P, which `ext` holds back to back: digit j's converted rows start at row
/// j * (rows - alpha), in Q_l u P order with D_j left out. `key` holds dnum digits of two
/// polynomials over the key_rows = key_q_rows + (rows - q_rows) primes of the full basis. On words
/// W (u64; u32 for primes below 2^30).
template <class W>
struct KeyProductViewT {
  const W* d = nullptr;    // [q_rows][N], eval form
  const W* ext = nullptr;  // converted rows of every digit, eval form (64-bit words may be
                           // unreduced: below 2^63.3 for primes below 2^57, see
                           // ntt_forward_lifted_async)
  const W* key = nullptr;  // [dnum][2][key_rows][N], eval form
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
  const W* add = nullptr;  // [q_rows][N], eval form
  W add_scale[kMaxAddRows] = {};
};
using KeyProductView = KeyProductViewT<u64>;
using KeyProductView32 = KeyProductViewT<u32>;

/// Operands of the baby-step sums of a double-hoisted linear transform (backend memory): baby b
/// is the rotation (galois[b], key[b]) of one ciphertext kept in Q_l u P, the key product of the
/// shared ModUp digits (`product`, whose key is unused) plus P sigma_b(c0) (product.add); giant
/// g's sum, sum_b plain[g][b] * baby_b over Q_l u P, goes to out[g] (two polynomials, each Q rows
/// then P rows). The babies are never written out.
template <class W>
struct BabyGiantViewT {
  static constexpr u32 kMaxBabies = 16;
  static constexpr u32 kMaxGiants = 8;
  KeyProductViewT<W> product;
  const W* key[kMaxBabies] = {};
  u64 galois[kMaxBabies] = {};
  const W* plain[kMaxGiants][kMaxBabies] = {};  // [rows][N] over Q_l u P; null: no term
  W* out[kMaxGiants] = {};
  u32 babies = 0;
  u32 giants = 0;
};
using BabyGiantView = BabyGiantViewT<u64>;
using BabyGiantView32 = BabyGiantViewT<u32>;

/// Base conversion and hybrid key switching. Operations a backend may fuse with the ring
/// family's (a transform followed by an affine step, ...) are declared here and composed from
/// the two families in Backend (backend.h) unless a backend fuses them.
class KeySwitchOps {
 public:
  virtual ~KeySwitchOps() = default;
  /// out[k] = (a[k] - c_k) * mul[limb] (+ addends[k] when addends and it are not null) for the
  /// k < count polynomials, c_k = c + k limbs N (back to back), in one pass: the last step of a
  /// division by trailing primes, with the polynomial it is added to fused in. mul (and its Shoup
  /// companions) in backend memory; out[k] may alias a[k] or addends[k].
  static constexpr std::size_t kMaxAffineTerms = 8;
  virtual void affine_sub_async(u64* const* out, const u64* const* a, const u64* c, const u64* mul,
                                const u64* mul_companion, const u64* const* addends,
                                std::size_t count, const BasisView& b, Stream stream) = 0;
  virtual void affine_sub_async(u32* const* out, const u32* const* a, const u32* c, const u32* mul,
                                const u32* mul_companion, const u32* const* addends,
                                std::size_t count, const BasisView32& b, Stream stream) = 0;
  /// The forward NTT of the `count` polynomials at c (back to back, in place), then
  /// affine_sub_async(out, a, c, ...): the last two steps of a division. A backend may fuse them
  /// (the CUDA one applies the affine map in the NTT's last kernel); c is scratch afterwards.
  virtual void ntt_forward_affine_sub_async(u64* const* out, const u64* const* a, u64* c,
                                            const u64* mul, const u64* mul_companion,
                                            const u64* const* addends, std::size_t count,
                                            const BasisView& b, Stream stream) = 0;
  /// The same on 32-bit words.
  virtual void ntt_forward_affine_sub_async(u32* const* out, const u32* const* a, u32* c,
                                            const u32* mul, const u32* mul_companion,
                                            const u32* const* addends, std::size_t count,
                                            const BasisView32& b, Stream stream) = 0;
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
                                            const u64* sub = nullptr) = 0;
  /// The coefficient-form counterpart: the conversions `jobs` (job k writes polynomial k of c,
  /// back to back over b), then out[k] = (a[k] - c_k) * mul + addends[k](X^addend_galois)
  /// (addend_galois 0 or 1: the addend as it is; else the automorphism of the coefficient-form
  /// addend, a rotation's sigma(c0)). The last steps of a ModDown whose result stays in
  /// coefficient form (BFV). A backend may fuse them (the CUDA one does for conversions from
  /// one prime); c is scratch afterwards.
  virtual void convert_affine_sub_async(const std::vector<ConvJob>& jobs, u64* const* out,
                                        const u64* const* a, u64* c, const u64* mul,
                                        const u64* mul_companion, const u64* const* addends,
                                        u64 addend_galois, const BasisView& b, Stream stream) = 0;
  /// out0 / out1 over Q_l u P (rows of `qlp`) = sum_j ext_j * key_j.{0,1}, one fused pass; the
  /// Q_l rows of out0 / out1 go to q0 / q1, the P rows to p0 / p1.
  virtual void key_inner_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                                       const BasisView& qlp, Stream stream) = 0;
  /// The same on 32-bit words.
  virtual void key_inner_product_async(u32* q0, u32* q1, u32* p0, u32* p1,
                                       const KeyProductView32& kp, const BasisView32& qlp,
                                       Stream stream) = 0;
  /// ModUp's forward NTT of the converted rows kp.ext (over `ext_basis`, one polynomial;
  /// lifted from `lift` as by ntt_forward_lifted_async when lift.rows_per_source > 0), then
  /// key_inner_product_async: what a key product with rows used once computes. kp.ext's words are
  /// scratch afterwards. The GPU fuses the transform's last pass with the product where the rows
  /// exceed most of its L2 cache, so the transformed rows are never written and read back.
  virtual void ntt_key_product_async(u64* q0, u64* q1, u64* p0, u64* p1, const KeyProductView& kp,
                                     const LiftedRows& lift, const BasisView& ext_basis,
                                     const BasisView& qlp, Stream stream) = 0;
  /// The same on 32-bit words (no lifted rows).
  virtual void ntt_key_product_async(u32* q0, u32* q1, u32* p0, u32* p1, const KeyProductView32& kp,
                                     const BasisView32& ext_basis, const BasisView32& qlp,
                                     Stream stream) = 0;
  /// The giant-step sums of BabyGiantView over Q_l u P (rows of `qlp`), one pass.
  virtual void baby_giant_sums_async(const BabyGiantView& v, const BasisView& qlp,
                                     Stream stream) = 0;
  virtual void baby_giant_sums_async(const BabyGiantView32& v, const BasisView32& qlp,
                                     Stream stream) = 0;

  // Base conversion (coefficient form).
  /// out (P limbs) = sum_i [a_i qhat_inv_i]_{q_i} * qhat_i mod p_j
  virtual void base_convert_async(u64* out, const u64* a, const BaseConvView& conv,
                                  const BasisView& from, const BasisView& to, Stream stream) = 0;

  /// The same on 32-bit words (primes below 2^30).
  virtual void base_convert_async(u32* out, const u32* a, const BaseConvView32& conv,
                                  const BasisView32& from, const BasisView32& to,
                                  Stream stream) = 0;

  /// Several independent conversions (ModUp's digits) in one launch where the backend can.
  virtual void base_convert_many_async(const std::vector<ConvJob>& jobs, Stream stream) = 0;
  /// The same on 32-bit words (two passes over every job at once on the GPU).
  virtual void base_convert_many_async(const std::vector<ConvJob32>& jobs, Stream stream) = 0;
};

}  // namespace ember::backend
