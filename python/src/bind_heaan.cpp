// Python bindings of big-integer CKKS (HEAAN): BigPoly, the keys, ciphertexts and the context.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>

#include "convert.h"
#include "ember/core/errors.h"
#include "ember/heaan/context.h"
#include "slot_arrays.h"

namespace nb = nanobind;
using namespace ember;
using ember::ring::BigPoly;

namespace {

BigPoly big_from_numpy(py::U64Matrix words, int bits, const std::string& device) {
  const std::size_t need = BigPoly::words_for(bits);
  if (bits < 1 || words.shape(1) != need)
    throw ParameterError("BigPoly: " + std::to_string(bits) + " bits take " + std::to_string(need) +
                         " words a coefficient, got " + std::to_string(words.shape(1)));
  std::vector<u64> copy;
  return BigPoly::from_host(words.shape(0), bits, backend::parse_device(device),
                            py::aligned(words, copy));
}

nb::dict phases_dict(const heaan::MulPhases& ph) {
  nb::dict d;
  d["crt"] = ph.crt;
  d["ntt"] = ph.ntt;
  d["intt"] = ph.intt;
  d["icrt"] = ph.icrt;
  d["other"] = ph.other;
  return d;
}

}  // namespace

void bind_heaan(nb::module_& m) {
  nb::class_<BigPoly>(m, "BigPoly")
      .def_static("from_numpy", &big_from_numpy, nb::arg("words"), nb::arg("bits"),
                  nb::arg("device") = "cpu")
      .def_static("from_residues", &BigPoly::from_residues, nb::arg("small"), nb::arg("bits"))
      .def("to_numpy", [](const BigPoly& p) { return py::to_numpy(p.to_host(), p.n(), p.words()); })
      .def_prop_ro("n", &BigPoly::n)
      .def_prop_ro("bits", &BigPoly::bits)
      .def_prop_ro("words", &BigPoly::words)
      .def_prop_ro("device", [](const BigPoly& p) { return p.device().str(); })
      .def("copy", &BigPoly::copy)
      .def("to",
           [](const BigPoly& p, const std::string& d) { return p.to(backend::parse_device(d)); })
      .def("add", &BigPoly::add)
      .def("sub", &BigPoly::sub)
      .def("negate", &BigPoly::negate)
      .def("shifted", &BigPoly::shifted, nb::arg("out_bits"), nb::arg("left") = 0,
           nb::arg("right") = 0)
      .def("automorphism", &BigPoly::automorphism, nb::arg("galois"));

  nb::class_<ring::BigMultiplier>(m, "BigMultiplier")
      .def(nb::init<std::shared_ptr<const ring::RingContext>>())
      .def("basis_for", &ring::BigMultiplier::basis_for)
      .def("multiply", &ring::BigMultiplier::multiply, nb::arg("a"), nb::arg("b"),
           nb::arg("out_bits"))
      .def("to_rns", &ring::BigMultiplier::to_rns, nb::arg("a"), nb::arg("basis"),
           nb::arg("centered") = false)
      .def("from_rns", &ring::BigMultiplier::from_rns, nb::arg("a"), nb::arg("out_bits"));

  nb::class_<heaan::SecretKey>(m, "HeaanSecretKey")
      .def("__init__",
           [](heaan::SecretKey* k, py::I64Vector v) {
             new (k) heaan::SecretKey{py::to_vector<std::int64_t>(v)};
           })
      .def_prop_ro("values", [](const heaan::SecretKey& k) { return k.s; });
  nb::class_<heaan::PublicKey>(m, "HeaanPublicKey")
      .def("__init__",
           [](heaan::PublicKey* k, const BigPoly& b, const BigPoly& a) {
             new (k) heaan::PublicKey{b.copy(), a.copy()};
           })
      .def_prop_ro("b", [](const heaan::PublicKey& k) { return k.b.copy(); })
      .def_prop_ro("a", [](const heaan::PublicKey& k) { return k.a.copy(); });
  nb::class_<heaan::SwitchKey>(m, "HeaanSwitchKey")
      .def(
          "__init__",
          [](heaan::SwitchKey* k, const ring::RnsPoly32& b, const ring::RnsPoly32& a, u64 galois) {
            new (k) heaan::SwitchKey{b.copy(), a.copy(), galois};
          },
          nb::arg("b"), nb::arg("a"), nb::arg("galois") = 0)
      .def_prop_ro("b", [](const heaan::SwitchKey& k) { return k.b.copy(); })
      .def_prop_ro("a", [](const heaan::SwitchKey& k) { return k.a.copy(); })
      .def_prop_ro("galois", [](const heaan::SwitchKey& k) { return k.galois; });
  m.attr("HeaanRelinKey") = m.attr("HeaanSwitchKey");
  nb::class_<heaan::Ciphertext>(m, "HeaanCiphertext")
      .def("__init__",
           [](heaan::Ciphertext* c, const BigPoly& c0, const BigPoly& c1) {
             new (c) heaan::Ciphertext{c0.copy(), c1.copy()};
           })
      .def_prop_ro("c0", [](const heaan::Ciphertext& c) { return c.c0.copy(); })
      .def_prop_ro("c1", [](const heaan::Ciphertext& c) { return c.c1.copy(); })
      .def_prop_ro("bits", &heaan::Ciphertext::bits)
      .def("copy", [](const heaan::Ciphertext& c) {
        return heaan::Ciphertext{c.c0.copy(), c.c1.copy()};
      });

  nb::class_<heaan::Context>(m, "HeaanContext")
      .def(
          "__init__",
          [](heaan::Context* x, std::size_t n, int log_q, const std::vector<u64>& primes,
             const std::string& device) {
            new (x) heaan::Context(n, log_q, primes, backend::parse_device(device));
          },
          nb::arg("n"), nb::arg("log_q"), nb::arg("primes"), nb::arg("device"))
      .def_prop_ro("n", &heaan::Context::n)
      .def_prop_ro("log_q", &heaan::Context::log_q)
      .def("slots_to_coeffs", &py::host_slots_to_coeffs<heaan::Context>)
      .def("coeffs_to_slots", &py::host_coeffs_to_slots<heaan::Context>)
      .def(
          "encode_slots",
          // The message polynomial of up to N/2 values on the host or this context's GPU.
          [](const heaan::Context& x, py::AnyValues v, int scale_bits) {
            const auto type = py::slot_type_of(v);
            const bool on_device = py::in_device_memory(x.device(), v);
            const void* data = v.data();
            const std::size_t count = v.shape(0);
            nb::gil_scoped_release unlocked;
            return x.encode_slots(data, type, count, on_device, scale_bits);
          },
          nb::arg("values"), nb::arg("scale_bits"))
      .def(
          "decode_slots",
          // The first `count` slots of m / 2^scale_bits: a numpy array, or (on_device) an array
          // of `shape` (default: 1-D) in this GPU's memory that DLPack consumers take as it is.
          [](const heaan::Context& x, const BigPoly& m, int scale_bits, std::size_t count,
             bool complex, bool on_device, std::vector<std::size_t> shape) -> nb::object {
            using SlotType = heaan::Context::SlotType;
            const SlotType type = complex ? SlotType::c128 : SlotType::f64;
            if (on_device) {
              shape = py::device_output_shape(x.device(), std::move(shape), count);
              auto buffer = std::make_unique<backend::Buffer>(
                  m.backend(), std::max<std::size_t>(count, 1) * (complex ? 16 : 8), m.stream());
              {
                nb::gil_scoped_release unlocked;
                x.decode_slots(m, scale_bits, buffer->as<void>(), type, count, true);
              }
              return nb::cast(py::device_array(x.device(), buffer.release(), shape, type));
            }
            if (complex) {
              std::vector<std::complex<double>> out(count);
              {
                nb::gil_scoped_release unlocked;
                x.decode_slots(m, scale_bits, out.data(), type, count, false);
              }
              return nb::cast(py::owned(std::move(out)));
            }
            std::vector<double> out(count);
            {
              nb::gil_scoped_release unlocked;
              x.decode_slots(m, scale_bits, out.data(), type, count, false);
            }
            return nb::cast(py::owned(std::move(out)));
          },
          nb::arg("poly"), nb::arg("scale_bits"), nb::arg("count"), nb::arg("complex"),
          nb::arg("on_device"), nb::arg("shape") = std::vector<std::size_t>{})
      .def_prop_ro("relin_primes", [](const heaan::Context& x) { return x.relin_basis().size(); })
      .def("tensor_primes",
           [](const heaan::Context& x, int bits) { return x.tensor_basis(bits).size(); })
      .def("generate_secret", &heaan::Context::generate_secret, nb::arg("sampler"),
           nb::arg("hamming_weight") = 0)
      .def("generate_public", &heaan::Context::generate_public)
      .def("generate_relin", &heaan::Context::generate_relin)
      .def("generate_rotation", &heaan::Context::generate_rotation, nb::arg("sk"),
           nb::arg("galois"), nb::arg("sampler"))
      .def("key_words",
           [](const heaan::Context& x, const heaan::SwitchKey& key) {
             auto [b, a] = x.key_words(key);
             return nb::make_tuple(std::move(b), std::move(a));
           })
      .def("key_from_words", &heaan::Context::key_from_words, nb::arg("b"), nb::arg("a"),
           nb::arg("galois") = 0)
      .def("key_on", [](const heaan::Context& x, const heaan::SwitchKey& key,
                        const std::string& d) { return x.key_on(key, backend::parse_device(d)); })
      .def("key_switch",
           [](const heaan::Context& x, const BigPoly& d, const heaan::SwitchKey& key) {
             auto [t0, t1] = x.key_switch(d, key);
             return nb::make_tuple(std::move(t0), std::move(t1));
           })
      .def("apply_galois", [](const heaan::Context& x, const heaan::Ciphertext& a,
                              const heaan::SwitchKey& key) { return x.apply_galois(a, key); })
      .def("apply_galois_phases",
           [](const heaan::Context& x, const heaan::Ciphertext& a, const heaan::SwitchKey& key) {
             heaan::MulPhases ph;
             heaan::Ciphertext c = x.apply_galois(a, key, &ph);
             return nb::make_tuple(std::move(c), phases_dict(ph));
           })
      .def("multiply_spread",
           [](const heaan::Context& x, const heaan::Ciphertext& a, const heaan::Ciphertext& b,
              const std::vector<const heaan::RelinKey*>& keys,
              const std::vector<std::string>& devices) {
             std::vector<backend::Device> devs;
             for (const auto& d : devices) devs.push_back(backend::parse_device(d));
             return x.multiply_spread(a, b, keys, devs);
           })
      .def("encrypt_secret",
           nb::overload_cast<const BigPoly&, const heaan::SecretKey&, ring::Sampler&>(
               &heaan::Context::encrypt, nb::const_))
      .def("encrypt_public",
           nb::overload_cast<const BigPoly&, const heaan::PublicKey&, ring::Sampler&>(
               &heaan::Context::encrypt, nb::const_))
      .def("decrypt", &heaan::Context::decrypt)
      .def("add", &heaan::Context::add)
      .def("sub", &heaan::Context::sub)
      .def("negate", &heaan::Context::negate)
      .def("rescale", &heaan::Context::rescale)
      .def("mod_down", &heaan::Context::mod_down)
      .def("multiply",
           [](const heaan::Context& x, const heaan::Ciphertext& a, const heaan::Ciphertext& b,
              const heaan::RelinKey& rk) { return x.multiply(a, b, rk); })
      .def("multiply_phases", [](const heaan::Context& x, const heaan::Ciphertext& a,
                                 const heaan::Ciphertext& b, const heaan::RelinKey& rk) {
        heaan::MulPhases ph;
        heaan::Ciphertext c = x.multiply(a, b, rk, &ph);
        return nb::make_tuple(std::move(c), phases_dict(ph));
      });
}
