// Python bindings of the ring layer: RingContext, RnsBasis, RnsPoly, conversions, samplers.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>

#include "convert.h"
#include "ember/core/chacha20.h"
#include "ember/core/errors.h"
#include "ember/core/numtheory.h"
#include "ember/ring/base_extender.h"
#include "ember/ring/crt.h"
#include "ember/ring/divide_round.h"
#include "ember/ring/rns_poly.h"
#include "ember/ring/sampler.h"

namespace nb = nanobind;
using namespace ember;
using namespace ember::ring;
using ember::py::I64Vector;
using ember::py::U64Matrix;

namespace {

void check_shape(const RnsBasis& b, std::size_t rows, std::size_t cols, const char* what) {
  if (rows != b.size() || cols != b.n())
    throw ParameterError(std::string(what) + ": array shape is (" + std::to_string(rows) + ", " +
                         std::to_string(cols) + ") but the basis needs (limbs, N) = (" +
                         std::to_string(b.size()) + ", " + std::to_string(b.n()) + ")");
}

using U32Matrix = nb::ndarray<const u32, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

/// A new numpy array (rows x cols, uint32) that owns `data`.
nb::ndarray<nb::numpy, u32, nb::ndim<2>> to_numpy32(std::vector<u32>&& data, std::size_t rows,
                                                    std::size_t cols) {
  auto* owned = new std::vector<u32>(std::move(data));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<u32>*>(p); });
  std::size_t shape[2] = {rows, cols};
  return nb::ndarray<nb::numpy, u32, nb::ndim<2>>(owned->data(), 2, shape, owner);
}

ChaChaKey key_from_bytes(const nb::bytes& b) {
  if (b.size() != 32)
    throw ParameterError("a ChaCha20 key is 32 bytes, got " + std::to_string(b.size()));
  ChaChaKey k;
  std::memcpy(k.words, b.c_str(), 32);
  return k;
}

}  // namespace

void bind_ring(nb::module_& m) {
  m.def("is_prime", &is_prime);
  m.def("is_ntt_friendly", &is_ntt_friendly);
  m.def("generate_ntt_primes", &generate_ntt_primes, nb::arg("bits"), nb::arg("n"),
        nb::arg("count"), nb::arg("exclude") = std::vector<u64>{});
  m.def("primitive_root_2n", &primitive_root_2n);
  m.def("inverse_mod", &inverse_mod);
  m.def("chacha20_block", [](const nb::bytes& key, u64 counter, u64 nonce) {
    std::uint32_t out[16];
    chacha20_block(key_from_bytes(key), counter, nonce, out);
    return nb::bytes(reinterpret_cast<const char*>(out), 64);
  });
  m.def("gaussian_cdt", [](double sigma) {
    int bound = 0;
    return gaussian_cdt(sigma, bound);
  });

  nb::class_<RingContext>(m, "RingContext")
      .def_static("create", &RingContext::create, nb::arg("n"), nb::arg("primes"))
      .def_prop_ro("n", &RingContext::n)
      .def_prop_ro("log_n", &RingContext::log_n)
      .def_prop_ro("prime_count", &RingContext::prime_count)
      .def("prime", &RingContext::prime)
      .def("psi", [](const RingContext& r, std::size_t id) { return r.prime_tables(id).psi; });

  nb::class_<RnsBasis>(m, "RnsBasis")
      .def(nb::init<std::shared_ptr<const RingContext>, std::vector<u32>>())
      .def_static("all", &RnsBasis::all)
      .def_prop_ro("ids", &RnsBasis::ids)
      .def_prop_ro("primes", &RnsBasis::primes)
      .def_prop_ro("n", &RnsBasis::n)
      .def_prop_ro("context", &RnsBasis::context)
      .def("__len__", &RnsBasis::size)
      .def("concat", &RnsBasis::concat)
      .def("__eq__", [](const RnsBasis& a, const RnsBasis& b) { return a == b; });

  // The same polynomials on 32-bit words (primes below 2^30): the transforms and pointwise
  // arithmetic that big-integer CKKS's residues use; tests compare them with RnsPoly's.
  nb::class_<RnsPoly32>(m, "RnsPoly32")
      .def_static(
          "from_numpy",
          [](const RnsBasis& b, U32Matrix a, const std::string& form, const std::string& device) {
            check_shape(b, a.shape(0), a.shape(1), "RnsPoly32.from_numpy");
            std::vector<u32> copy;
            return RnsPoly32::from_host(b, form_from_name(form), backend::parse_device(device),
                                        py::aligned(a, copy));
          },
          nb::arg("basis"), nb::arg("array"), nb::arg("form") = "coeff", nb::arg("device") = "cpu")
      .def("to_numpy", [](const RnsPoly32& p) { return to_numpy32(p.to_host(), p.limbs(), p.n()); })
      .def_prop_ro("basis", &RnsPoly32::basis)
      .def_prop_ro("limbs", &RnsPoly32::limbs)
      .def_prop_ro("n", &RnsPoly32::n)
      .def_prop_ro("form", [](const RnsPoly32& p) { return std::string(form_name(p.form())); })
      .def_prop_ro("device", [](const RnsPoly32& p) { return p.device().str(); })
      .def("ntt", &RnsPoly32::ntt)
      .def("intt", &RnsPoly32::intt)
      .def("add", &RnsPoly32::add)
      .def("sub", &RnsPoly32::sub)
      .def("negate", &RnsPoly32::negate)
      .def("multiply", &RnsPoly32::multiply)
      .def("multiply_scalar", nb::overload_cast<u64>(&RnsPoly32::multiply_scalar, nb::const_))
      .def("multiply_scalar_per_limb",
           nb::overload_cast<const std::vector<u64>&>(&RnsPoly32::multiply_scalar, nb::const_))
      .def("multiply_accumulate_inplace", [](RnsPoly32& p, const RnsPoly32& a, const RnsPoly32& b) {
        p.multiply_accumulate_inplace(a, b);
      });

  nb::class_<RnsPoly>(m, "RnsPoly")
      .def_static(
          "from_numpy",
          [](const RnsBasis& b, U64Matrix a, const std::string& form, const std::string& device) {
            check_shape(b, a.shape(0), a.shape(1), "RnsPoly.from_numpy");
            std::vector<u64> copy;
            return RnsPoly::from_host(b, form_from_name(form), backend::parse_device(device),
                                      py::aligned(a, copy));
          },
          nb::arg("basis"), nb::arg("array"), nb::arg("form") = "coeff", nb::arg("device") = "cpu")
      .def_static(
          "from_signed",
          [](const RnsBasis& b, I64Vector v, const std::string& form, const std::string& device) {
            if (v.shape(0) != b.n())
              throw ParameterError("RnsPoly.from_signed: got " + std::to_string(v.shape(0)) +
                                   " values for N=" + std::to_string(b.n()));
            std::vector<std::int64_t> copy;
            return RnsPoly::from_signed(b, form_from_name(form), backend::parse_device(device),
                                        py::aligned(v, copy));
          },
          nb::arg("basis"), nb::arg("values"), nb::arg("form") = "coeff", nb::arg("device") = "cpu")
      .def_static(
          "zeros",
          [](const RnsBasis& b, const std::string& form, const std::string& device) {
            return RnsPoly::zeros(b, form_from_name(form), backend::parse_device(device));
          },
          nb::arg("basis"), nb::arg("form") = "coeff", nb::arg("device") = "cpu")
      .def("to_numpy", [](const RnsPoly& p) { return py::to_numpy(p.to_host(), p.limbs(), p.n()); })
      .def_prop_ro("basis", &RnsPoly::basis)
      .def_prop_ro("form", [](const RnsPoly& p) { return std::string(form_name(p.form())); })
      .def_prop_ro("device", [](const RnsPoly& p) { return p.device().str(); })
      .def_prop_ro("limbs", &RnsPoly::limbs)
      .def_prop_ro("n", &RnsPoly::n)
      .def("copy", &RnsPoly::copy)
      .def("to",
           [](const RnsPoly& p, const std::string& d) { return p.to(backend::parse_device(d)); })
      .def_prop_ro("stream", &RnsPoly::stream)
      .def("on_stream", &RnsPoly::on_stream, nb::arg("stream"))
      .def("ntt_inplace", [](RnsPoly& p) { p.ntt_inplace(); })
      .def("intt_inplace", [](RnsPoly& p) { p.intt_inplace(); })
      .def("ntt", &RnsPoly::ntt)
      .def("intt", &RnsPoly::intt)
      .def("add", &RnsPoly::add)
      .def("sub", &RnsPoly::sub)
      .def("negate", &RnsPoly::negate)
      .def("multiply", &RnsPoly::multiply)
      .def("multiply_accumulate_inplace",
           [](RnsPoly& p, const RnsPoly& a, const RnsPoly& b) {
             p.multiply_accumulate_inplace(a, b);
           })
      .def("multiply_scalar", nb::overload_cast<u64>(&RnsPoly::multiply_scalar, nb::const_))
      .def("multiply_scalar_per_limb",
           nb::overload_cast<const std::vector<u64>&>(&RnsPoly::multiply_scalar, nb::const_))
      .def("automorphism", &RnsPoly::automorphism)
      .def("__add__", &RnsPoly::add)
      .def("__sub__", &RnsPoly::sub)
      .def("__neg__", &RnsPoly::negate)
      .def("__mul__", &RnsPoly::multiply)
      .def("__repr__", [](const RnsPoly& p) {
        return "RnsPoly(N=" + std::to_string(p.n()) + ", limbs=" + std::to_string(p.limbs()) +
               ", form=" + form_name(p.form()) + ", device=" + p.device().str() + ")";
      });

  nb::class_<BaseConverter>(m, "BaseConverter")
      .def(nb::init<RnsBasis, RnsBasis, bool>(), nb::arg("source"), nb::arg("target"),
           nb::arg("exact") = false)
      .def_static(
          "centered",
          [](RnsBasis source, RnsBasis target, const std::vector<u64>& in_mul,
             const std::vector<u64>& out_mul) {
            return BaseConverter::centered(std::move(source), std::move(target), in_mul, out_mul);
          },
          nb::arg("source"), nb::arg("target"), nb::arg("in_mul") = std::vector<u64>{},
          nb::arg("out_mul") = std::vector<u64>{})
      .def("convert", nb::overload_cast<const RnsPoly&>(&BaseConverter::convert, nb::const_))
      .def("convert", nb::overload_cast<const RnsPoly32&>(&BaseConverter::convert, nb::const_));
  nb::class_<DivideRound>(m, "DivideRound")
      .def(nb::init<RnsBasis, RnsBasis, u64, u64>(), nb::arg("q"), nb::arg("t"),
           nb::arg("plain_modulus") = 1, nb::arg("multiplier") = 1)
      .def("divide", &DivideRound::divide<u64>, nb::arg("a_q"), nb::arg("a_t"))
      .def("divide", &DivideRound::divide<u32>, nb::arg("a_q"), nb::arg("a_t"));
  nb::class_<BaseExtender>(m, "BaseExtender")
      .def(nb::init<RnsBasis, RnsBasis>())
      .def_prop_ro("qp", &BaseExtender::qp)
      .def("mod_up", &BaseExtender::mod_up)
      .def("mod_down", &BaseExtender::mod_down);

  nb::class_<CrtConverter>(m, "CrtConverter")
      .def(nb::init<RnsBasis>())
      .def("to_rns",
           [](const CrtConverter& c, U64Matrix words, const std::string& device) {
             if (words.shape(0) != c.basis().n())
               throw ParameterError("to_rns: got " + std::to_string(words.shape(0)) +
                                    " values for N=" + std::to_string(c.basis().n()));
             std::vector<u64> copy;
             return c.to_rns(py::aligned(words, copy), words.shape(1),
                             backend::parse_device(device));
           })
      .def("from_rns", [](const CrtConverter& c, const RnsPoly& p) {
        return py::to_numpy(c.from_rns(p), p.n(), c.output_words());
      });

  nb::class_<Sampler>(m, "Sampler")
      .def(nb::init<>())
      .def(
          "__init__",
          [](Sampler* s, const nb::bytes& key, u64 nonce) {
            new (s) Sampler(key_from_bytes(key), nonce);
          },
          nb::arg("key"), nb::arg("first_nonce") = 0)
      .def(
          "uniform",
          [](Sampler& s, const RnsBasis& b, const std::string& d, const std::string& form) {
            return s.uniform(b, backend::parse_device(d), form_from_name(form));
          },
          nb::arg("basis"), nb::arg("device") = "cpu", nb::arg("form") = "eval")
      .def(
          "ternary",
          [](Sampler& s, const RnsBasis& b, const std::string& d, double p) {
            return s.ternary(b, backend::parse_device(d), p);
          },
          nb::arg("basis"), nb::arg("device") = "cpu", nb::arg("prob_nonzero") = 2.0 / 3.0)
      .def(
          "ternary_hamming",
          [](Sampler& s, const RnsBasis& b, const std::string& d, std::size_t h) {
            return s.ternary_hamming(b, backend::parse_device(d), h);
          },
          nb::arg("basis"), nb::arg("device") = "cpu", nb::arg("hamming_weight"))
      .def(
          "gaussian",
          [](Sampler& s, const RnsBasis& b, const std::string& d, double sigma) {
            return s.gaussian(b, backend::parse_device(d), sigma);
          },
          nb::arg("basis"), nb::arg("device") = "cpu", nb::arg("sigma") = 3.2)
      .def(
          "wide_gaussian",
          [](Sampler& s, const RnsBasis& b, const std::string& d, double sigma) {
            return s.wide_gaussian(b, backend::parse_device(d), sigma);
          },
          nb::arg("basis"), nb::arg("device") = "cpu", nb::arg("sigma"));
}
