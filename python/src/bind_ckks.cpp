// Python bindings of the RLWE core and the CKKS mechanics (keys, ciphertexts, operations).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>

#include "ember/ckks/context.h"
#include "ember/core/errors.h"

namespace nb = nanobind;
using namespace ember;
using ember::ckks::Context;
using ember::rlwe::Ciphertext;
using ember::rlwe::PublicKey;
using ember::rlwe::SecretKey;
using ember::rlwe::SwitchKey;

namespace {
using F64Vector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

nb::ndarray<nb::numpy, double, nb::ndim<1>> to_numpy(std::vector<double>&& v) {
  auto* owned = new std::vector<double>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  std::size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, double, nb::ndim<1>>(owned->data(), 1, shape, owner);
}
}  // namespace

void bind_ckks(nb::module_& m) {
  nb::class_<SecretKey>(m, "SecretKey")
      .def_prop_ro("s", [](const SecretKey& k) { return k.s.copy(); })
      .def_ro("key_id", &SecretKey::key_id)
      .def_ro("params_id", &SecretKey::params_id);
  nb::class_<PublicKey>(m, "PublicKey")
      .def_prop_ro("b", [](const PublicKey& k) { return k.b.copy(); })
      .def_prop_ro("seed",
                   [](const PublicKey& k) {
                     return nb::bytes(reinterpret_cast<const char*>(k.seed.words), 32);
                   })
      .def_ro("seed_nonce", &PublicKey::seed_nonce)
      .def_ro("key_id", &PublicKey::key_id)
      .def_ro("params_id", &PublicKey::params_id);
  nb::class_<SwitchKey>(m, "SwitchKey")
      .def_ro("key_id", &SwitchKey::key_id)
      .def_ro("params_id", &SwitchKey::params_id)
      .def_ro("galois", &SwitchKey::galois)
      .def_ro("dnum", &SwitchKey::dnum)
      .def_prop_ro("seed",
                   [](const SwitchKey& k) {
                     return nb::bytes(reinterpret_cast<const char*>(k.seed.words), 32);
                   })
      .def_ro("seed_nonce", &SwitchKey::seed_nonce)
      .def_prop_ro("nbytes", [](const SwitchKey& k) { return k.data.bytes(); });
  nb::class_<Ciphertext>(m, "Ciphertext")
      .def_ro("level", &Ciphertext::level)
      .def_rw("scale", &Ciphertext::scale)
      .def_ro("key_id", &Ciphertext::key_id)
      .def_ro("params_id", &Ciphertext::params_id)
      .def_prop_ro("size", [](const Ciphertext& c) { return c.polys.size(); })
      .def("poly", [](const Ciphertext& c, std::size_t i) { return c.polys.at(i).copy(); })
      .def("copy", &Ciphertext::copy);

  nb::class_<Context>(m, "CkksContext")
      .def("__init__",
           [](Context* c, std::size_t n, const std::vector<u64>& q, const std::vector<u64>& p,
              std::size_t dnum, const std::string& device) {
             new (c) Context(n, q, p, dnum, backend::parse_device(device));
           })
      .def_prop_ro("n", &Context::n)
      .def_prop_ro("max_level", &Context::max_level)
      .def_prop_ro("dnum", [](const Context& c) { return c.rlwe().dnum(); })
      .def_prop_ro("alpha", [](const Context& c) { return c.rlwe().alpha(); })
      .def_prop_ro("params_id", [](const Context& c) { return c.rlwe().params_id(); })
      .def_prop_ro("device", [](const Context& c) { return c.rlwe().device().str(); })
      .def("prime", &Context::prime)
      .def("q_basis", [](const Context& c, std::size_t l) { return c.rlwe().q_basis(l); })
      .def("encode_coeffs",
           [](const Context& c, F64Vector v, std::size_t level, double scale) {
             if (v.shape(0) != c.n())
               throw ParameterError("encode: expected " + std::to_string(c.n()) +
                                    " coefficients, got " + std::to_string(v.shape(0)));
             return c.encode_coeffs(v.data(), level, scale);
           })
      .def("decode_coeffs", [](const Context& c, const ring::RnsPoly& m,
                               double scale) { return to_numpy(c.decode_coeffs(m, scale)); })
      .def(
          "keygen",
          [](const Context& c, ring::Sampler& s, std::size_t hw) { return c.rlwe().keygen(s, hw); },
          nb::arg("sampler"), nb::arg("hamming_weight") = 0)
      .def("public_key", [](const Context& c, const SecretKey& sk,
                            ring::Sampler& s) { return c.rlwe().public_key(sk, s); })
      .def("relin_key", [](const Context& c, const SecretKey& sk,
                           ring::Sampler& s) { return c.rlwe().relin_key(sk, s); })
      .def("galois_key", [](const Context& c, const SecretKey& sk, u64 g,
                            ring::Sampler& s) { return c.rlwe().galois_key(sk, g, s); })
      .def("encrypt", [](const Context& c, const ring::RnsPoly& m, const PublicKey& pk,
                         ring::Sampler& s) { return c.rlwe().encrypt(m, pk, s); })
      .def("encrypt_symmetric",
           [](const Context& c, const ring::RnsPoly& m, const SecretKey& sk, ring::Sampler& s) {
             return c.rlwe().encrypt_symmetric(m, sk, s);
           })
      .def("decrypt_core", [](const Context& c, const Ciphertext& ct, const SecretKey& sk,
                              std::size_t limbs) { return c.rlwe().decrypt_core(ct, sk, limbs); })
      .def("make_ciphertext",
           [](const Context& c, nb::list polys, std::size_t level, double scale, u64 key_id) {
             std::vector<ring::RnsPoly> ps;
             for (auto h : polys) ps.push_back(nb::cast<const ring::RnsPoly&>(h).copy());
             return c.rlwe().make_ciphertext(std::move(ps), level, scale, key_id);
           })
      .def("make_secret_key", [](const Context& c, const ring::RnsPoly& s,
                                 u64 key_id) { return c.rlwe().make_secret_key(s.copy(), key_id); })
      .def("make_public_key",
           [](const Context& c, const ring::RnsPoly& b, const nb::bytes& seed, u64 nonce,
              u64 key_id) {
             if (seed.size() != 32) throw SerializationError("malformed public key seed");
             ChaChaKey k;
             std::memcpy(k.words, seed.c_str(), 32);
             return c.rlwe().make_public_key(b.copy(), k, nonce, key_id);
           })
      .def("make_switch_key",
           [](const Context& c, nb::list parts, const nb::bytes& seed, u64 nonce, u64 galois,
              u64 key_id) {
             if (seed.size() != 32) throw SerializationError("malformed evaluation key seed");
             ChaChaKey k;
             std::memcpy(k.words, seed.c_str(), 32);
             std::vector<ring::RnsPoly> ps;
             for (auto h : parts) ps.push_back(nb::cast<const ring::RnsPoly&>(h).copy());
             return c.rlwe().make_switch_key(ps, k, nonce, galois, key_id);
           })
      .def("switch_key_part", [](const Context& c, const SwitchKey& k,
                                 std::size_t j) { return c.rlwe().switch_key_part(k, j); })
      .def("full_basis", [](const Context& c) { return c.rlwe().full_basis(); })
      .def("add", &Context::add)
      .def("sub", &Context::sub)
      .def("negate", &Context::negate)
      .def("add_plain", &Context::add_plain)
      .def("sub_plain", &Context::sub_plain)
      .def("multiply_plain", &Context::multiply_plain)
      .def("multiply_scalar", &Context::multiply_scalar)
      .def("add_scalar", &Context::add_scalar)
      .def("multiply_no_relin", &Context::multiply_no_relin)
      .def("relinearize", &Context::relinearize)
      .def("multiply", &Context::multiply)
      .def("rescale", &Context::rescale)
      .def("drop_level", &Context::drop_level)
      .def("apply_galois", &Context::apply_galois)
      .def("apply_galois_hoisted",
           [](const Context& c, const Ciphertext& ct, const std::vector<const SwitchKey*>& keys) {
             nb::list out;
             for (auto& r : c.apply_galois_hoisted(ct, keys)) out.append(nb::cast(std::move(r)));
             return out;
           });
}
