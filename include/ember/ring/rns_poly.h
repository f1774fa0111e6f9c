// RnsPoly: a polynomial in RNS form, a dense limbs x N array on one device, in coeff or eval form,
// of 64-bit words (RnsPoly) or 32-bit ones (RnsPoly32, primes below 2^30).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/backend/buffer.h"
#include "ember/ring/ring_context.h"

namespace ember::ring {

using backend::Device;

/// `coeff`: coefficients; `eval`: NTT values (bit-reversed order of the roots psi^(2i+1)).
enum class Form { coeff, eval };

const char* form_name(Form f);
/// The form named "coeff" or "eval"; ParameterError for any other name.
Form form_from_name(const std::string& name);

/// W: the word type, u64 (every basis) or u32 (bases of primes below 2^30: the same operations on
/// half the bytes, from the same backend code instantiated for u32).
template <class W>
class RnsPolyT {
 public:
  /// Uninitialized storage (its contents are unspecified until written), allocated in the order
  /// of `stream` (the null Stream: the device's default stream). A polynomial keeps its stream:
  /// the operations on it run there (see stream()).
  RnsPolyT(RnsBasis basis, Form form, Device device, backend::Stream stream = {});
  static RnsPolyT zeros(RnsBasis basis, Form form, Device device);
  /// `count` uninitialized polynomials stored back to back in one allocation (released with the
  /// last of them), so that one batched primitive can process them all (see
  /// Backend::ntt_forward_async's count).
  static std::vector<RnsPolyT> batch(const RnsBasis& basis, Form form, Device device,
                                     std::size_t count, backend::Stream stream = {});
  /// Copies limbs x N words from host memory; throws ParameterError if a word is not reduced
  /// modulo its limb's prime.
  static RnsPolyT from_host(RnsBasis basis, Form form, Device device, const W* data);
  /// Reduces signed host values (N of them) into every limb.
  static RnsPolyT from_signed(RnsBasis basis, Form form, Device device, const std::int64_t* values);

  RnsPolyT(RnsPolyT&&) noexcept = default;
  RnsPolyT& operator=(RnsPolyT&&) noexcept = default;
  RnsPolyT copy() const;
  /// A copy on another device (on its default stream).
  RnsPolyT to(Device device) const;
  /// The same values in words of type V (u32: ParameterError unless every prime is below 2^30),
  /// on this polynomial's stream.
  template <class V>
  RnsPolyT<V> to_words() const;
  /// A copy on `stream` of this device, ordered after this polynomial's writes: later operations
  /// on the copy run on that stream.
  RnsPolyT on_stream(backend::Stream stream) const;
  /// Copies limbs x N words to host memory (synchronizes).
  void to_host(W* out) const;
  std::vector<W> to_host() const;

  const RnsBasis& basis() const { return basis_; }
  Form form() const { return form_; }
  Device device() const { return device_; }
  /// The stream this polynomial's operations run on (allocated, written and released there);
  /// operations with operands on other streams order the streams with events (StreamJoin).
  backend::Stream stream() const { return stream_; }
  std::size_t limbs() const { return basis_.size(); }
  std::size_t n() const { return basis_.n(); }
  std::size_t words() const { return limbs() * n(); }
  W* data() { return storage_ ? storage_->as<W>() + offset_ : nullptr; }
  const W* data() const { return storage_ ? storage_->as<const W>() + offset_ : nullptr; }
  backend::Backend& backend() const;
  backend::BasisViewT<W> view() const { return basis_.template view_on<W>(backend()); }
  /// Sets the form tag without computing (for data written by a primitive).
  void set_form(Form f) { form_ = f; }

  // Transforms (in place, or into a new polynomial without a copy; throw MismatchError when
  // already in the target form).
  RnsPolyT& ntt_inplace();
  RnsPolyT& intt_inplace();
  RnsPolyT ntt() const;
  RnsPolyT intt() const;

  // Arithmetic; operands must share basis, form and device (else MismatchError).
  RnsPolyT add(const RnsPolyT& o) const;
  RnsPolyT sub(const RnsPolyT& o) const;
  RnsPolyT negate() const;
  /// Pointwise product; both operands in eval form.
  RnsPolyT multiply(const RnsPolyT& o) const;
  /// this += a * b (all in eval form).
  RnsPolyT& multiply_accumulate_inplace(const RnsPolyT& a, const RnsPolyT& b);
  /// Multiply by one integer (reduced per limb) or by one integer per limb.
  RnsPolyT multiply_scalar(u64 scalar) const;
  RnsPolyT multiply_scalar(const std::vector<u64>& per_limb) const;
  /// a(X) -> a(X^k) for odd k in [1, 2N), in the current form.
  RnsPolyT automorphism(u64 k) const;

 private:
  /// Words [offset, offset + words) of `storage`.
  RnsPolyT(RnsBasis basis, Form form, Device device, backend::Stream stream,
           std::shared_ptr<backend::Buffer> storage, std::size_t offset);
  /// The NTT (forward) or INTT of this polynomial into a new one, without a copy.
  RnsPolyT transformed(bool forward) const;
  void check_same(const RnsPolyT& o, const char* op) const;
  RnsBasis basis_;
  Form form_;
  Device device_;
  backend::Stream stream_;
  std::shared_ptr<backend::Buffer> storage_;  // shared by the polynomials of one batch
  std::size_t offset_ = 0;                    // in words
};

using RnsPoly = RnsPolyT<u64>;
using RnsPoly32 = RnsPolyT<u32>;
extern template class RnsPolyT<u64>;
extern template class RnsPolyT<u32>;

}  // namespace ember::ring
