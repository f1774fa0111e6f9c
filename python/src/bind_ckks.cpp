// Python bindings of the CKKS context (encoding, products, rescaling; the rest is shared).
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <cstring>
#include <memory>
#include <string>

#include "bind_rlwe.h"
#include "convert.h"
#include "ember/ckks/context.h"
#include "ember/ckks/context32.h"
#include "slot_arrays.h"

namespace nb = nanobind;
using namespace ember;
using ember::ckks::Context;
using ember::rlwe::Ciphertext;
using ember::rlwe::PublicKey;
using ember::rlwe::SecretKey;

namespace {
using py::AnyValues;
using py::C128Vector;
using py::F64Vector;
using Memory = Context::Memory;
using SlotType = Context::SlotType;

template <class Ctx>
Memory memory_of(const Ctx& x, const AnyValues& a) {
  return py::in_device_memory(x.rlwe().device(), a) ? Memory::device : Memory::host;
}
}  // namespace

namespace {
/// What the CKKS contexts of both word types share: encodings, encryption, ModRaise, switching
/// keys, and every rlwe operation (bind_evaluator).
template <class Ctx>
void bind_ckks_common(nb::class_<Ctx>& c) {
  bind::bind_evaluator(c);
  using W = typename Ctx::Word;
  using Ciphertext = rlwe::CiphertextT<W>;
  using SecretKey = rlwe::SecretKeyT<W>;
  using PublicKey = rlwe::PublicKeyT<W>;
  using SwitchKey = rlwe::SwitchKeyT<W>;
  using Poly = ring::RnsPolyT<W>;
  c.def(
       "encode_coeffs",
       [](const Ctx& x, F64Vector v, std::size_t level, double scale, bool extended) {
         if (v.shape(0) != x.n())
           throw ParameterError("encode: expected " + std::to_string(x.n()) +
                                " coefficients, got " + std::to_string(v.shape(0)));
         std::vector<double> copy;
         return x.encode_coeffs(py::aligned(v, copy), level, scale, extended);
       },
       nb::arg("coeffs"), nb::arg("level"), nb::arg("scale"), nb::arg("extended") = false)
      .def(
          "encode_slots",
          // (plaintext, is_complex, largest |re| or |im|): values on the host or this GPU.
          [](const Ctx& x, AnyValues v, std::size_t level, double scale, bool repeat,
             bool extended) {
            const SlotType type = py::slot_type_of(v);
            const Memory where = memory_of(x, v);
            const void* data = v.data();
            const std::size_t count = v.shape(0);
            nb::gil_scoped_release unlocked;
            auto e = x.encode_slots(data, type, count, where, level, scale, repeat, extended);
            return std::make_tuple(std::move(e.poly), e.is_complex, e.magnitude);
          },
          nb::arg("values"), nb::arg("level"), nb::arg("scale"), nb::arg("repeat") = false,
          nb::arg("extended") = false)
      .def(
          "decode_slots",
          // The first `count` slots of m / scale: a numpy array, or (on_device) an array of
          // `shape` (prod(shape) = count; default: 1-D) in this GPU's memory that DLPack
          // consumers take without a copy.
          [](const Ctx& x, const Poly& m, double scale, bool check, std::size_t count, bool complex,
             bool on_device, std::vector<std::size_t> shape) -> nb::object {
            const SlotType type = complex ? SlotType::c128 : SlotType::f64;
            if (on_device) {
              shape = py::device_output_shape(x.rlwe().device(), std::move(shape), count);
              auto buffer = std::make_unique<backend::Buffer>(
                  x.rlwe().backend(), std::max<std::size_t>(count, 1) * (complex ? 16 : 8),
                  m.stream());
              {
                nb::gil_scoped_release unlocked;
                x.decode_slots(m, scale, check, buffer->template as<void>(), type, count,
                               Memory::device);
              }
              return nb::cast(py::device_array(x.rlwe().device(), buffer.release(), shape, type));
            }
            if (complex) {
              std::vector<std::complex<double>> out(count);
              {
                nb::gil_scoped_release unlocked;
                x.decode_slots(m, scale, check, out.data(), type, count, Memory::host);
              }
              return nb::cast(py::owned(std::move(out)));
            }
            std::vector<double> out(count);
            {
              nb::gil_scoped_release unlocked;
              x.decode_slots(m, scale, check, out.data(), type, count, Memory::host);
            }
            return nb::cast(py::owned(std::move(out)));
          },
          nb::arg("poly"), nb::arg("scale"), nb::arg("check"), nb::arg("count"), nb::arg("complex"),
          nb::arg("on_device"), nb::arg("shape") = std::vector<std::size_t>{})
      .def(
          "decode_coeffs",
          [](const Ctx& x, const Poly& p, double scale, bool check) {
            std::vector<double> v;
            {
              nb::gil_scoped_release unlocked;  // the numpy array is made with the GIL held
              v = x.decode_coeffs(p, scale, check);
            }
            return bind::to_numpy(std::move(v));
          },
          nb::arg("poly"), nb::arg("scale"), nb::arg("check") = true)
      .def("coefficient_bound",
           // As a Python float (log2 below 1024 in every preset) for messages and checks.
           [](const Ctx& x, std::size_t level) {
             return static_cast<double>(x.coefficient_bound(level));
           })
      .def("encrypt", [](const Ctx& x, const Poly& p, const PublicKey& pk,
                         ring::Sampler& s) { return x.rlwe().encrypt(p, pk, s); })
      .def("encrypt_symmetric",
           [](const Ctx& x, const Poly& p, const SecretKey& sk, ring::Sampler& s) {
             return x.rlwe().encrypt_symmetric(p, sk, s);
           })
      .def("linear_transform_hoisted",
           // babies: Galois keys of baby steps 1..; giant_keys: a key or None per giant step;
           // terms: per giant step, (baby index, plaintext over Q_level u P) pairs.
           [](const Ctx& x, const Ciphertext& ct, const std::vector<const SwitchKey*>& babies,
              nb::list giant_keys, nb::list terms) {
             if (nb::len(giant_keys) != nb::len(terms))
               throw ParameterError("linear transform: one term list per giant step");
             std::vector<typename rlwe::EvaluatorT<W>::TransformGiant> giants;
             for (std::size_t g = 0; g < nb::len(giant_keys); ++g) {
               typename rlwe::EvaluatorT<W>::TransformGiant tg;
               nb::handle key = giant_keys[g];
               if (!key.is_none()) tg.key = &nb::cast<const SwitchKey&>(key);
               for (nb::handle t : nb::cast<nb::list>(terms[g])) {
                 auto pair = nb::cast<nb::tuple>(t);
                 tg.terms.emplace_back(nb::cast<std::size_t>(pair[0]),
                                       &nb::cast<const Poly&>(pair[1]));
               }
               giants.push_back(std::move(tg));
             }
             return x.linear_transform_hoisted(ct, babies, giants);
           })
      .def("mod_raise", &Ctx::mod_raise, bind::release)
      .def(
          "switch_key",
          [](const Ctx& x, const Ciphertext& a, const SwitchKey& k) { return x.switch_key(a, k); },
          bind::release)
      .def("switching_key",
           // A key from `from_sk` to `to_sk`, filed under `key_id` (the key set that uses it);
           // level0_only: see rlwe::Context::switch_key_level0.
           [](const Ctx& x, const SecretKey& from_sk, const SecretKey& to_sk, ring::Sampler& s,
              u64 key_id, bool level0_only) {
             SwitchKey k = level0_only ? x.rlwe().switch_key_level0(from_sk.s, to_sk, s)
                                       : x.rlwe().switch_key(from_sk.s, to_sk, s, 0);
             k.key_id = key_id;
             return k;
           });
}
}  // namespace

namespace {
/// Ctx(n, q, p, dnum, device, like=None, level_primes=[]): like is a context of the same
/// parameters (on another device) whose ring to share.
template <class Ctx>
void bind_ckks_init(nb::class_<Ctx>& c) {
  c.def(
      "__init__",
      [](Ctx* x, std::size_t n, const std::vector<u64>& q, const std::vector<u64>& p,
         std::size_t dnum, const std::string& device, const Ctx* like,
         const std::vector<std::size_t>& level_primes) {
        new (x) Ctx(n, q, p, dnum, backend::parse_device(device),
                    like ? like->rlwe().ring() : nullptr, level_primes);
      },
      nb::arg("n"), nb::arg("q"), nb::arg("p"), nb::arg("dnum"), nb::arg("device"),
      nb::arg("like").none() = nb::none(), nb::arg("level_primes") = std::vector<std::size_t>{});
  bind_ckks_common(c);
  c.def("rescale", &Ctx::rescale, bind::release)
      .def("slots_to_coeffs", &py::host_slots_to_coeffs<Ctx>)
      .def("coeffs_to_slots", &py::host_coeffs_to_slots<Ctx>);
}
}  // namespace

void bind_ckks(nb::module_& m) {
  nb::class_<Context> c(m, "CkksContext");
  bind_ckks_init(c);
  // CKKS on 32-bit words (every prime below 2^30): the same surface.
  nb::class_<ckks::Context32> c32(m, "CkksContext32");
  bind_ckks_init(c32);
}
