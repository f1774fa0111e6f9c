// RnsPoly (and RnsPoly32): storage on a device and the backend-neutral polynomial operations.
#include "ember/ring/rns_poly.h"

#include <string>

#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"

namespace ember::ring {

const char* form_name(Form f) { return f == Form::coeff ? "coeff" : "eval"; }

Form form_from_name(const std::string& name) {
  if (name == "coeff") return Form::coeff;
  if (name == "eval") return Form::eval;
  throw ParameterError("unknown form '" + name + "': use 'coeff' or 'eval'");
}

template <class W>
RnsPolyT<W>::RnsPolyT(RnsBasis basis, Form form, Device device, backend::Stream stream)
    : basis_(std::move(basis)), form_(form), device_(device), stream_(stream) {
  if constexpr (sizeof(W) == 4)
    for (std::size_t l = 0; l < basis_.size(); ++l)
      if (basis_.prime(l) >> kMaxModulusBitsOf<u32>)
        throw ParameterError("a polynomial of 32-bit words needs primes below 2^30; limb " +
                             std::to_string(l) + " has " + std::to_string(basis_.prime(l)));
  auto& be = backend::backend_for(device_);
  storage_ = std::make_shared<backend::Buffer>(be, words() * sizeof(W), stream_);
}

template <class W>
RnsPolyT<W>::RnsPolyT(RnsBasis basis, Form form, Device device, backend::Stream stream,
                      std::shared_ptr<backend::Buffer> storage, std::size_t offset)
    : basis_(std::move(basis)),
      form_(form),
      device_(device),
      stream_(stream),
      storage_(std::move(storage)),
      offset_(offset) {}

template <class W>
std::vector<RnsPolyT<W>> RnsPolyT<W>::batch(const RnsBasis& basis, Form form, Device device,
                                            std::size_t count, backend::Stream stream) {
  auto& be = backend::backend_for(device);
  const std::size_t words = basis.size() * basis.n();
  const auto storage = std::make_shared<backend::Buffer>(be, count * words * sizeof(W), stream);
  std::vector<RnsPolyT> polys;
  for (std::size_t k = 0; k < count; ++k)
    polys.push_back(RnsPolyT(basis, form, device, stream, storage, k * words));
  return polys;
}

template <class W>
backend::Backend& RnsPolyT<W>::backend() const {
  return backend::backend_for(device_);
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::zeros(RnsBasis basis, Form form, Device device) {
  std::vector<W> z(basis.size() * basis.n(), 0);
  RnsPolyT p(std::move(basis), form, device);
  auto& be = p.backend();
  be.copy_from_host_async(p.data(), z.data(), z.size() * sizeof(W), p.stream_);
  be.synchronize(p.stream_);
  return p;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::from_host(RnsBasis basis, Form form, Device device, const W* data) {
  const std::size_t n = basis.n();
  for (std::size_t l = 0; l < basis.size(); ++l) {
    const u64 q = basis.prime(l);
    for (std::size_t i = 0; i < n; ++i)
      if (data[l * n + i] >= q)
        throw ParameterError("word " + std::to_string(i) + " of limb " + std::to_string(l) +
                             " is not reduced modulo " + std::to_string(q) +
                             ": reduce values into [0, q) first");
  }
  RnsPolyT p(std::move(basis), form, device);
  auto& be = p.backend();
  be.copy_from_host_async(p.data(), data, p.words() * sizeof(W), p.stream_);
  be.synchronize(p.stream_);
  return p;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::from_signed(RnsBasis basis, Form form, Device device,
                                     const std::int64_t* values) {
  if constexpr (sizeof(W) == 4) {
    // 32-bit words: the residues on the host (keys and masks, not a hot path).
    const std::size_t n = basis.n();
    std::vector<W> words(basis.size() * n);
    for (std::size_t l = 0; l < basis.size(); ++l) {
      const auto q = static_cast<std::int64_t>(basis.prime(l));
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t r = values[i] % q;
        words[l * n + i] = static_cast<W>(r < 0 ? r + q : r);
      }
    }
    RnsPolyT p = from_host(std::move(basis), Form::coeff, device, words.data());
    if (form == Form::eval) p.ntt_inplace();
    return p;
  } else {
    RnsPolyT p(std::move(basis), Form::coeff, device);
    auto& be = p.backend();
    be.embed_signed_async(p.data(), values, p.view(), p.stream_);
    be.synchronize(p.stream_);
    if (form == Form::eval) p.ntt_inplace();
    return p;
  }
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::copy() const {
  RnsPolyT p(basis_, form_, device_, stream_);
  auto& be = backend();
  be.copy_async(p.data(), data(), words() * sizeof(W), stream_);
  return p;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::on_stream(backend::Stream stream) const {
  RnsPolyT p(basis_, form_, device_, stream);
  auto& be = backend();
  const backend::StreamJoin join(be, stream, {stream_});
  be.copy_async(p.data(), data(), words() * sizeof(W), stream);
  return p;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::to(Device device) const {
  if (device == device_) return copy();
  RnsPolyT p(basis_, form_, device);
  auto &dst = p.backend(), &src = backend();
  backend::copy_between_devices(dst, p.data(), p.stream_, src, data(), stream_,
                                words() * sizeof(W));
  return p;
}

template <class W>
void RnsPolyT<W>::to_host(W* out) const {
  auto& be = backend();
  be.copy_to_host_async(out, data(), words() * sizeof(W), stream_);
  be.synchronize(stream_);
}

template <class W>
std::vector<W> RnsPolyT<W>::to_host() const {
  std::vector<W> out(words());
  to_host(out.data());
  return out;
}

template <class W>
void RnsPolyT<W>::check_same(const RnsPolyT& o, const char* op) const {
  if (basis_ != o.basis_)
    throw MismatchError(std::string(op) + ": operands have different RNS bases (" +
                        std::to_string(limbs()) + " vs " + std::to_string(o.limbs()) +
                        " limbs or other primes/ring)");
  if (form_ != o.form_)
    throw MismatchError(std::string(op) + ": operands are in different forms (" + form_name(form_) +
                        " vs " + form_name(o.form_) + "); convert one with ntt()/intt()");
  if (!(device_ == o.device_))
    throw MismatchError(std::string(op) + ": operands live on different devices (" + device_.str() +
                        " vs " + o.device_.str() + "); move one with to()");
}

template <class W>
RnsPolyT<W>& RnsPolyT<W>::ntt_inplace() {
  if (form_ != Form::coeff) throw MismatchError("ntt: the polynomial is already in eval form");
  auto& be = backend();
  be.ntt_forward_async(data(), view(), 1, stream_);
  form_ = Form::eval;
  return *this;
}

template <class W>
RnsPolyT<W>& RnsPolyT<W>::intt_inplace() {
  if (form_ != Form::eval) throw MismatchError("intt: the polynomial is already in coeff form");
  auto& be = backend();
  be.ntt_inverse_async(data(), view(), 1, stream_);
  form_ = Form::coeff;
  return *this;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::ntt() const {
  if (form_ != Form::coeff) throw MismatchError("ntt: the polynomial is already in eval form");
  return transformed(true);
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::intt() const {
  if (form_ != Form::eval) throw MismatchError("intt: the polynomial is already in coeff form");
  return transformed(false);
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::transformed(bool forward) const {
  if constexpr (sizeof(W) == 4) {
    // 32-bit words have in-place transforms only: a copy, then the transform.
    RnsPolyT r = copy();
    return std::move(forward ? r.ntt_inplace() : r.intt_inplace());
  } else {
    RnsPolyT r(basis_, forward ? Form::eval : Form::coeff, device_, stream_);
    auto& be = backend();
    const u64* src = data();
    if (forward)
      be.ntt_forward_async(r.data(), &src, view(), 1, stream_);
    else
      be.ntt_inverse_async(r.data(), &src, view(), 1, stream_);
    return r;
  }
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::add(const RnsPolyT& o) const {
  check_same(o, "add");
  RnsPolyT r(basis_, form_, device_, stream_);
  auto& be = backend();
  const backend::StreamJoin join(be, stream_, {o.stream_});
  be.add_async(r.data(), data(), o.data(), view(), stream_);
  return r;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::sub(const RnsPolyT& o) const {
  check_same(o, "sub");
  RnsPolyT r(basis_, form_, device_, stream_);
  auto& be = backend();
  const backend::StreamJoin join(be, stream_, {o.stream_});
  be.sub_async(r.data(), data(), o.data(), view(), stream_);
  return r;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::negate() const {
  RnsPolyT r(basis_, form_, device_, stream_);
  auto& be = backend();
  be.negate_async(r.data(), data(), view(), stream_);
  return r;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::multiply(const RnsPolyT& o) const {
  check_same(o, "multiply");
  if (form_ != Form::eval)
    throw MismatchError("multiply: pointwise product needs eval form; call ntt() on both first");
  RnsPolyT r(basis_, form_, device_, stream_);
  auto& be = backend();
  const backend::StreamJoin join(be, stream_, {o.stream_});
  be.multiply_async(r.data(), data(), o.data(), view(), stream_);
  return r;
}

template <class W>
RnsPolyT<W>& RnsPolyT<W>::multiply_accumulate_inplace(const RnsPolyT& a, const RnsPolyT& b) {
  check_same(a, "multiply_accumulate");
  check_same(b, "multiply_accumulate");
  if (form_ != Form::eval)
    throw MismatchError("multiply_accumulate: needs eval form; call ntt() first");
  auto& be = backend();
  const backend::StreamJoin join(be, stream_, {a.stream_, b.stream_});
  be.multiply_accumulate_async(data(), a.data(), b.data(), view(), stream_);
  return *this;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::multiply_scalar(u64 scalar) const {
  return multiply_scalar(std::vector<u64>(limbs(), scalar));
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::multiply_scalar(const std::vector<u64>& per_limb) const {
  if (per_limb.size() != limbs())
    throw ParameterError("multiply_scalar: got " + std::to_string(per_limb.size()) +
                         " scalars for " + std::to_string(limbs()) + " limbs; give one per limb");
  RnsPolyT r(basis_, form_, device_, stream_);
  backend().multiply_scalar_async(r.data(), data(), per_limb, view(), stream_);
  return r;
}

template <class W>
RnsPolyT<W> RnsPolyT<W>::automorphism(u64 k) const {
  if (k % 2 == 0 || k >= 2 * n())
    throw ParameterError("automorphism: exponent " + std::to_string(k) +
                         " must be odd and below 2N=" + std::to_string(2 * n()));
  RnsPolyT r(basis_, form_, device_, stream_);
  backend().automorphism_async(r.data(), data(), k, form_ == Form::eval, view(), stream_);
  return r;
}

template <class W>
template <class V>
RnsPolyT<V> RnsPolyT<W>::to_words() const {
  RnsPolyT<V> r(basis_, form_, device_, stream_);
  auto& be = backend();
  if constexpr (sizeof(V) == sizeof(W))
    be.copy_async(r.data(), data(), words() * sizeof(W), stream_);
  else if constexpr (sizeof(V) == 4)
    be.narrow_words_async(r.data(), data(), words(), stream_);
  else
    be.widen_words_async(r.data(), data(), words(), stream_);
  return r;
}

template class RnsPolyT<u64>;
template class RnsPolyT<u32>;
template RnsPolyT<u64> RnsPolyT<u64>::to_words<u64>() const;
template RnsPolyT<u32> RnsPolyT<u64>::to_words<u32>() const;
template RnsPolyT<u64> RnsPolyT<u32>::to_words<u64>() const;
template RnsPolyT<u32> RnsPolyT<u32>::to_words<u32>() const;

}  // namespace ember::ring
