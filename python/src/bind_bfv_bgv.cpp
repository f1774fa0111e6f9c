// Python bindings of the BFV and BGV contexts (the shared operations come from bind_evaluator).
#include "bind_rlwe.h"
#include "convert.h"
#include "ember/bfv/context.h"
#include "ember/bgv/context.h"
#include "ember/rlwe/integer_encoder.h"

namespace nb = nanobind;
using namespace ember;
using ember::rlwe::Ciphertext;
using ember::rlwe::IntegerEncoder;
using ember::rlwe::PlainCoeffs;
using ember::rlwe::PublicKey;
using ember::rlwe::SecretKey;

namespace {
using U64Vector = nb::ndarray<const u64, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

void check_length(const U64Vector& v, std::size_t n) {
  if (v.shape(0) != n)
    throw ParameterError("expected " + std::to_string(n) + " plaintext coefficients, got " +
                         std::to_string(v.shape(0)));
}

/// Refuses a device plaintext of another device or ring degree than the context's.
template <class Ctx>
const u64* plain_words(const Ctx& x, const PlainCoeffs& m) {
  if (m.device() != x.rlwe().device() || m.n() != x.n())
    throw MismatchError("the plaintext is on " + m.device().str() +
                        " with N=" + std::to_string(m.n()) + ", the context on " +
                        x.rlwe().device().str() + " with N=" + std::to_string(x.n()));
  return m.data();
}
}  // namespace

/// BFV/BGV decryption as a numpy array: the decryption without the GIL, the array with it.
template <class Ctx>
nb::ndarray<nb::numpy, u64, nb::ndim<1>> decrypt_to_numpy(const Ctx& x, const Ciphertext& ct,
                                                          const SecretKey& sk) {
  std::vector<u64> v;
  {
    nb::gil_scoped_release unlocked;
    v = x.decrypt(ct, sk);
  }
  return bind::to_numpy(std::move(v));
}

void bind_bfv_bgv(nb::module_& m) {
  m.def("bfv_aux_primes", &bfv::choose_aux_primes, nb::arg("n"), nb::arg("q_primes"),
        nb::arg("p_primes"), nb::arg("plain_modulus"), nb::arg("aux_bits") = 0,
        "The primes R of BFV's multiplication basis (see bfv::choose_aux_primes).");
  nb::class_<bfv::Context> f(m, "BfvContext");
  // like: a context of the same parameters (on another device) whose ring to share.
  f.def(
      "__init__",
      [](bfv::Context* x, std::size_t n, const std::vector<u64>& q, const std::vector<u64>& p,
         std::size_t dnum, u64 t, int aux_bits, const std::string& device,
         const bfv::Context* like) {
        new (x) bfv::Context(n, q, p, dnum, t, aux_bits, backend::parse_device(device),
                             like ? like->rlwe().ring() : nullptr);
      },
      nb::arg("n"), nb::arg("q"), nb::arg("p"), nb::arg("dnum"), nb::arg("t"), nb::arg("aux_bits"),
      nb::arg("device"), nb::arg("like").none() = nb::none());
  bind::bind_evaluator(f);
  f.def_prop_ro("plain_modulus", &bfv::Context::plain_modulus)
      .def("scale_plain",
           [](const bfv::Context& x, U64Vector m, std::size_t level) {
             check_length(m, x.n());
             std::vector<u64> copy;
             return x.scale_plain_host(py::aligned(m, copy), level);
           })
      .def("encrypt",
           [](const bfv::Context& x, U64Vector m, const PublicKey& pk, ring::Sampler& s) {
             check_length(m, x.n());
             std::vector<u64> copy;
             return x.encrypt(x.scale_plain_host(py::aligned(m, copy), x.max_level()), pk, s);
           })
      .def("encrypt_symmetric",
           [](const bfv::Context& x, U64Vector m, const SecretKey& sk, ring::Sampler& s) {
             check_length(m, x.n());
             std::vector<u64> copy;
             return x.encrypt_symmetric(x.scale_plain_host(py::aligned(m, copy), x.max_level()), sk,
                                        s);
           })
      .def("decrypt", &decrypt_to_numpy<bfv::Context>)
      // Device plaintexts (IntegerEncoder): scaled, encrypted and decrypted in backend memory.
      .def(
          "scale_plain_coeffs",
          [](const bfv::Context& x, const PlainCoeffs& m, std::size_t level) {
            return x.scale_plain(plain_words(x, m), level);
          },
          bind::release)
      .def(
          "encrypt_coeffs",
          [](const bfv::Context& x, const PlainCoeffs& m, const PublicKey& pk, ring::Sampler& s) {
            return x.encrypt(x.scale_plain(plain_words(x, m), x.max_level()), pk, s);
          },
          bind::release)
      .def(
          "encrypt_symmetric_coeffs",
          [](const bfv::Context& x, const PlainCoeffs& m, const SecretKey& sk, ring::Sampler& s) {
            return x.encrypt_symmetric(x.scale_plain(plain_words(x, m), x.max_level()), sk, s);
          },
          bind::release)
      .def(
          "decrypt_coeffs",
          // The message modulo t in the encoder's (this context's) device memory.
          [](const bfv::Context& x, const Ciphertext& ct, const SecretKey& sk,
             const IntegerEncoder& e) {
            const backend::Buffer rounded = x.decrypt_rounded(ct, sk);
            return e.message(rounded.as<const u64>(), ct.stream(), 0, 1);
          },
          bind::release)
      .def("mod_switch", &bfv::Context::mod_switch, bind::release)
      .def("noise_budget", &bfv::Context::noise_budget);

  nb::class_<bgv::Context> g(m, "BgvContext");
  g.def(
      "__init__",
      [](bgv::Context* x, std::size_t n, const std::vector<u64>& q, const std::vector<u64>& p,
         std::size_t dnum, u64 t, const std::string& device, const bgv::Context* like) {
        new (x) bgv::Context(n, q, p, dnum, t, backend::parse_device(device),
                             like ? like->rlwe().ring() : nullptr);
      },
      nb::arg("n"), nb::arg("q"), nb::arg("p"), nb::arg("dnum"), nb::arg("t"), nb::arg("device"),
      nb::arg("like").none() = nb::none());
  bind::bind_evaluator(g);
  g.def_prop_ro("plain_modulus", &bgv::Context::plain_modulus)
      .def("encrypt", [](const bgv::Context& x, const ring::RnsPoly& p, const PublicKey& pk,
                         ring::Sampler& s) { return x.rlwe().encrypt(p, pk, s); })
      .def("encrypt_symmetric",
           [](const bgv::Context& x, const ring::RnsPoly& p, const SecretKey& sk,
              ring::Sampler& s) { return x.rlwe().encrypt_symmetric(p, sk, s); })
      .def("decrypt", &decrypt_to_numpy<bgv::Context>)
      .def(
          "decrypt_coeffs",
          // The message modulo t ([v]_q0 / factor) in the encoder's device memory.
          [](const bgv::Context& x, const Ciphertext& ct, const SecretKey& sk,
             const IntegerEncoder& e) {
            u64 factor = 1;
            const ring::RnsPoly low = x.decrypt_low(ct, sk, factor);
            return e.message(low.data(), low.stream(), x.prime(0), factor);
          },
          bind::release)
      .def("mod_switch", &bgv::Context::mod_switch, bind::release)
      .def("noise_budget", &bgv::Context::noise_budget);
}
