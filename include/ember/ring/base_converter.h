// Fast (and exact, HPS) RNS base conversion from a basis Q to a basis P.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/backend/per_device.h"
#include "ember/ring/rns_poly.h"

namespace ember::ring {

/// Affine maps folded into a conversion: the source residues become x a_i + b_i (mod q_i) before
/// converting and the result v becomes v c_j + d_j (mod p_j). Empty vectors mean identity.
struct ConversionMaps {
  std::vector<u64> in_mul, in_add;    // [from]
  std::vector<u64> out_mul, out_add;  // [to]
};

/// Approximate base conversion of Bajard et al.: for x in [0, Q), returns x + u*Q over P with
/// 0 <= u < |Q| (no correction of the Q-overflow, as in every fast hybrid key switching).
class BaseConverter {
 public:
  /// Throws MismatchError when the bases belong to different rings or share a prime.
  /// exact=true gives x mod Q exactly (HPS: the overflow count estimated in floating point).
  /// `maps` are applied in the same pass (no extra launches).
  BaseConverter(RnsBasis from, RnsBasis to, bool exact = false, const ConversionMaps& maps = {});
  /// Exact conversion of the centered value of x (in (-Q/2, Q/2]) rather than of x in [0, Q);
  /// with in_mul (one value per prime of `from`), of x in_mul mod Q; with out_mul (one per prime
  /// of `to`), times out_mul.
  static BaseConverter centered(RnsBasis from, RnsBasis to, const std::vector<u64>& in_mul = {},
                                const std::vector<u64>& out_mul = {});
  const RnsBasis& from() const { return from_; }
  const RnsBasis& to() const { return to_; }
  /// `a` over `from`, coefficient form -> result over `to`, coefficient form.
  RnsPoly convert(const RnsPoly& a) const;
  /// The same conversion on 32-bit words: ParameterError unless every prime of both bases is
  /// below 2^30. Bit-identical to convert() on the same values.
  RnsPoly32 convert(const RnsPoly32& a) const;
  /// Raw launch into caller memory (for fused scheme code).
  void convert_async(u64* out, const u64* a, backend::Backend& be, backend::Stream s) const;
  backend::BaseConvView view_on(backend::Backend& be) const;
  /// The tables on 32-bit words (see convert(const RnsPoly32&)).
  backend::BaseConvView32 view32_on(backend::Backend& be) const;
  /// This conversion of `a` into `out` as one job of Backend::base_convert_many_async.
  backend::ConvJob job(u64* out, const u64* a, backend::Backend& be) const;
  /// The same on 32-bit words.
  backend::ConvJob32 job(u32* out, const u32* a, backend::Backend& be) const;
  /// The conversion's byte planes (see BaseConvView::byte_planes), empty when it has none.
  const std::vector<u32>& byte_planes() const { return byte_planes_; }
  /// Blocks of 32 rows of the byte matrix (see BaseConvView::byte_blocks).
  std::size_t byte_blocks() const { return byte_blocks_; }
  const std::vector<backend::ByteTarget>& byte_targets() const { return byte_targets_; }
  const std::vector<backend::ByteSource>& byte_sources() const { return byte_sources_; }
  /// The 32-bit conversion's four byte planes (BaseConvView32::byte_planes, as view32_on
  /// uploads them); empty above kByteMatrixInputs32 rows.
  std::vector<u32> byte_planes32() const;

 private:
  /// The byte matrix of the tensor-core conversions, `bytes` rows per source prime (8 for
  /// 64-bit words, 4 for 32-bit ones) and the overflow's row when exact (BaseConvView::
  /// byte_planes, BaseConvView32::byte_planes).
  std::vector<std::vector<u64>> byte_matrix(std::size_t bytes) const;
  struct DeviceTables;
  struct DeviceTables32;
  RnsBasis from_, to_;
  bool exact_ = false;
  std::vector<u64> qhat_inv_, qhat_inv_shoup_, qhat_mod_p_, q_mod_p_;
  std::vector<u64> y_add_, out_mul_, out_mul_shoup_, out_add_;
  std::vector<double> inv_q_;
  std::vector<u32> byte_planes_;
  std::size_t byte_blocks_ = 0;
  std::vector<backend::ByteTarget> byte_targets_;
  std::vector<backend::ByteSource> byte_sources_;
  std::shared_ptr<backend::PerDevice<DeviceTables>> tables_;
  std::shared_ptr<backend::PerDevice<DeviceTables32>> tables32_;
};

}  // namespace ember::ring
