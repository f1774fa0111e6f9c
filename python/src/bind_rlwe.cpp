// Python bindings of the RLWE key and ciphertext types.
#include "bind_rlwe.h"

namespace ember::bind {

namespace {
/// The key and ciphertext classes of words W, named with `suffix` ("" or "32").
template <class W>
void bind_types(nb::module_& m, const std::string& suffix) {
  using SecretKey = rlwe::SecretKeyT<W>;
  using PublicKey = rlwe::PublicKeyT<W>;
  using SwitchKey = rlwe::SwitchKeyT<W>;
  using Ciphertext = rlwe::CiphertextT<W>;
  nb::class_<SecretKey>(m, ("SecretKey" + suffix).c_str())
      .def_prop_ro("s", [](const SecretKey& k) { return k.s.copy(); })
      .def_ro("key_id", &SecretKey::key_id)
      .def_ro("params_id", &SecretKey::params_id)
      .def_prop_ro("device", [](const SecretKey& k) { return k.s.device().str(); })
      .def(
          "to",
          [](const SecretKey& k, const std::string& d) { return k.to(backend::parse_device(d)); },
          release);
  nb::class_<PublicKey>(m, ("PublicKey" + suffix).c_str())
      .def_prop_ro("b", [](const PublicKey& k) { return k.b.copy(); })
      .def_prop_ro("a", [](const PublicKey& k) { return k.a.copy(); })
      .def_prop_ro("seed",
                   [](const PublicKey& k) {
                     return nb::bytes(reinterpret_cast<const char*>(k.seed.words), 32);
                   })
      .def_ro("seed_nonce", &PublicKey::seed_nonce)
      .def_ro("key_id", &PublicKey::key_id)
      .def_ro("params_id", &PublicKey::params_id)
      .def_prop_ro("device", [](const PublicKey& k) { return k.b.device().str(); })
      .def(
          "to",
          [](const PublicKey& k, const std::string& d) { return k.to(backend::parse_device(d)); },
          release);
  nb::class_<SwitchKey>(m, ("SwitchKey" + suffix).c_str())
      .def_ro("key_id", &SwitchKey::key_id)
      .def_ro("params_id", &SwitchKey::params_id)
      .def_ro("galois", &SwitchKey::galois)
      .def_ro("dnum", &SwitchKey::dnum)
      .def_prop_ro("seed",
                   [](const SwitchKey& k) {
                     return nb::bytes(reinterpret_cast<const char*>(k.seed.words), 32);
                   })
      .def_ro("seed_nonce", &SwitchKey::seed_nonce)
      .def_prop_ro("nbytes", [](const SwitchKey& k) { return k.data.bytes(); })
      .def_prop_ro("device", [](const SwitchKey& k) { return k.device().str(); })
      .def(
          "to",
          [](const SwitchKey& k, const std::string& d) { return k.to(backend::parse_device(d)); },
          release);
  nb::class_<Ciphertext>(m, ("Ciphertext" + suffix).c_str())
      .def_ro("level", &Ciphertext::level)
      .def_rw("scale", &Ciphertext::scale)
      .def_ro("factor", &Ciphertext::factor)
      .def_ro("key_id", &Ciphertext::key_id)
      .def_ro("params_id", &Ciphertext::params_id)
      .def_prop_ro("size", [](const Ciphertext& c) { return c.polys.size(); })
      .def_prop_ro("form",
                   [](const Ciphertext& c) { return std::string(ring::form_name(c.form())); })
      .def("poly", [](const Ciphertext& c, std::size_t i) { return c.polys.at(i).copy(); })
      .def("copy", &Ciphertext::copy)
      .def_prop_ro("device",
                   [](const Ciphertext& c) {
                     return c.polys.empty() ? std::string() : c.polys[0].device().str();
                   })
      .def(
          "to",
          [](const Ciphertext& c, const std::string& d) { return c.to(backend::parse_device(d)); },
          release)
      .def_prop_ro("stream", &Ciphertext::stream)
      .def("on_stream", &Ciphertext::on_stream, nb::arg("stream"), release);
}
}  // namespace

void bind_rlwe_types(nb::module_& m) {
  bind_types<u64>(m, "");
  bind_types<u32>(m, "32");
}

}  // namespace ember::bind
