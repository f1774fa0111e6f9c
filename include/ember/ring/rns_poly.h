// RnsPoly: a polynomial in RNS form, a dense limbs x N array on one device, in coeff or eval form.
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

class RnsPoly {
 public:
  /// Uninitialized storage (its contents are unspecified until written), allocated in the order
  /// of `stream` (the null Stream: the device's default stream). A polynomial keeps its stream:
  /// the operations on it run there (see stream()).
  RnsPoly(RnsBasis basis, Form form, Device device, backend::Stream stream = {});
  static RnsPoly zeros(RnsBasis basis, Form form, Device device);
  /// `count` uninitialized polynomials stored back to back in one allocation (released with the
  /// last of them), so that one batched primitive can process them all (see
  /// Backend::ntt_forward_async's count).
  static std::vector<RnsPoly> batch(const RnsBasis& basis, Form form, Device device,
                                    std::size_t count, backend::Stream stream = {});
  /// Copies limbs x N words from host memory; throws ParameterError if a word is not reduced
  /// modulo its limb's prime.
  static RnsPoly from_host(RnsBasis basis, Form form, Device device, const u64* data);
  /// Reduces signed host values (N of them) into every limb.
  static RnsPoly from_signed(RnsBasis basis, Form form, Device device, const std::int64_t* values);

  RnsPoly(RnsPoly&&) noexcept = default;
  RnsPoly& operator=(RnsPoly&&) noexcept = default;
  RnsPoly copy() const;
  /// A copy on another device (on its default stream).
  RnsPoly to(Device device) const;
  /// A copy on `stream` of this device, ordered after this polynomial's writes: later operations
  /// on the copy run on that stream.
  RnsPoly on_stream(backend::Stream stream) const;
  /// Copies limbs x N words to host memory (synchronizes).
  void to_host(u64* out) const;
  std::vector<u64> to_host() const;

  const RnsBasis& basis() const { return basis_; }
  Form form() const { return form_; }
  Device device() const { return device_; }
  /// The stream this polynomial's operations run on (allocated, written and released there);
  /// operations with operands on other streams order the streams with events (StreamJoin).
  backend::Stream stream() const { return stream_; }
  std::size_t limbs() const { return basis_.size(); }
  std::size_t n() const { return basis_.n(); }
  std::size_t words() const { return limbs() * n(); }
  u64* data() { return storage_ ? storage_->as<u64>() + offset_ : nullptr; }
  const u64* data() const { return storage_ ? storage_->as<const u64>() + offset_ : nullptr; }
  backend::Backend& backend() const;
  backend::BasisView view() const { return basis_.on(backend()); }
  /// Sets the form tag without computing (for data written by a primitive).
  void set_form(Form f) { form_ = f; }

  // Transforms (in place, or into a new polynomial without a copy; throw MismatchError when
  // already in the target form).
  RnsPoly& ntt_inplace();
  RnsPoly& intt_inplace();
  RnsPoly ntt() const;
  RnsPoly intt() const;

  // Arithmetic; operands must share basis, form and device (else MismatchError).
  RnsPoly add(const RnsPoly& o) const;
  RnsPoly sub(const RnsPoly& o) const;
  RnsPoly negate() const;
  /// Pointwise product; both operands in eval form.
  RnsPoly multiply(const RnsPoly& o) const;
  /// this += a * b (all in eval form).
  RnsPoly& multiply_accumulate_inplace(const RnsPoly& a, const RnsPoly& b);
  /// Multiply by one integer (reduced per limb) or by one integer per limb.
  RnsPoly multiply_scalar(u64 scalar) const;
  RnsPoly multiply_scalar(const std::vector<u64>& per_limb) const;
  /// a(X) -> a(X^k) for odd k in [1, 2N), in the current form.
  RnsPoly automorphism(u64 k) const;

 private:
  /// Words [offset, offset + words) of `storage`.
  RnsPoly(RnsBasis basis, Form form, Device device, backend::Stream stream,
          std::shared_ptr<backend::Buffer> storage, std::size_t offset);
  /// The NTT (forward) or INTT of this polynomial into a new one, without a copy.
  RnsPoly transformed(bool forward) const;
  void check_same(const RnsPoly& o, const char* op) const;
  RnsBasis basis_;
  Form form_;
  Device device_;
  backend::Stream stream_;
  std::shared_ptr<backend::Buffer> storage_;  // shared by the polynomials of one batch
  std::size_t offset_ = 0;                    // in words
};

}  // namespace ember::ring
