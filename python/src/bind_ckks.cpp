// Python bindings of the CKKS context (encoding, products, rescaling; the rest is shared).
#include "bind_rlwe.h"
#include "convert.h"
#include "ember/ckks/context.h"

namespace nb = nanobind;
using namespace ember;
using ember::ckks::Context;
using ember::rlwe::Ciphertext;
using ember::rlwe::PublicKey;
using ember::rlwe::SecretKey;

namespace {
using F64Vector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
}  // namespace

void bind_ckks(nb::module_& m) {
  nb::class_<Context> c(m, "CkksContext");
  // like: a context of the same parameters (on another device) whose ring to share.
  c.def(
      "__init__",
      [](Context* x, std::size_t n, const std::vector<u64>& q, const std::vector<u64>& p,
         std::size_t dnum, const std::string& device, const Context* like) {
        new (x) Context(n, q, p, dnum, backend::parse_device(device),
                        like ? like->rlwe().ring() : nullptr);
      },
      nb::arg("n"), nb::arg("q"), nb::arg("p"), nb::arg("dnum"), nb::arg("device"),
      nb::arg("like").none() = nb::none());
  bind::bind_evaluator(c);
  c.def(
       "encode_coeffs",
       [](const Context& x, F64Vector v, std::size_t level, double scale, bool extended) {
         if (v.shape(0) != x.n())
           throw ParameterError("encode: expected " + std::to_string(x.n()) +
                                " coefficients, got " + std::to_string(v.shape(0)));
         std::vector<double> copy;
         return x.encode_coeffs(py::aligned(v, copy), level, scale, extended);
       },
       nb::arg("coeffs"), nb::arg("level"), nb::arg("scale"), nb::arg("extended") = false)
      .def("linear_transform_hoisted",
           // babies: Galois keys of baby steps 1..; giant_keys: a key or None per giant step;
           // terms: per giant step, (baby index, plaintext over Q_level u P) pairs.
           [](const Context& x, const Ciphertext& ct,
              const std::vector<const rlwe::SwitchKey*>& babies, nb::list giant_keys,
              nb::list terms) {
             if (nb::len(giant_keys) != nb::len(terms))
               throw ParameterError("linear transform: one term list per giant step");
             std::vector<rlwe::Evaluator::TransformGiant> giants;
             for (std::size_t g = 0; g < nb::len(giant_keys); ++g) {
               rlwe::Evaluator::TransformGiant tg;
               nb::handle key = giant_keys[g];
               if (!key.is_none()) tg.key = &nb::cast<const rlwe::SwitchKey&>(key);
               for (nb::handle t : nb::cast<nb::list>(terms[g])) {
                 auto pair = nb::cast<nb::tuple>(t);
                 tg.terms.emplace_back(nb::cast<std::size_t>(pair[0]),
                                       &nb::cast<const ring::RnsPoly&>(pair[1]));
               }
               giants.push_back(std::move(tg));
             }
             return x.linear_transform_hoisted(ct, babies, giants);
           })
      .def(
          "decode_coeffs",
          [](const Context& x, const ring::RnsPoly& p, double scale, bool check) {
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
           [](const Context& x, std::size_t level) {
             return static_cast<double>(x.coefficient_bound(level));
           })
      .def("encrypt", [](const Context& x, const ring::RnsPoly& p, const PublicKey& pk,
                         ring::Sampler& s) { return x.rlwe().encrypt(p, pk, s); })
      .def("encrypt_symmetric",
           [](const Context& x, const ring::RnsPoly& p, const SecretKey& sk, ring::Sampler& s) {
             return x.rlwe().encrypt_symmetric(p, sk, s);
           })
      .def("rescale", &Context::rescale, bind::release)
      .def("mod_raise", &Context::mod_raise, bind::release)
      .def(
          "switch_key",
          [](const Context& x, const Ciphertext& a, const rlwe::SwitchKey& k) {
            return x.switch_key(a, k);
          },
          bind::release)
      .def("switching_key",
           // A key from `from_sk` to `to_sk`, filed under `key_id` (the key set that uses it);
           // level0_only: see rlwe::Context::switch_key_level0.
           [](const Context& x, const SecretKey& from_sk, const SecretKey& to_sk, ring::Sampler& s,
              u64 key_id, bool level0_only) {
             rlwe::SwitchKey k = level0_only ? x.rlwe().switch_key_level0(from_sk.s, to_sk, s)
                                             : x.rlwe().switch_key(from_sk.s, to_sk, s, 0);
             k.key_id = key_id;
             return k;
           });
}
