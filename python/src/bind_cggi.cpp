// Python bindings of the CGGI layer (parameters, context, keys, ciphertext batches). Bindings
// only: the logic is in src/cggi and python/ember/cggi.py.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "convert.h"
#include "ember/backend/backend.h"
#include "ember/cggi/context.h"
#include "ember/core/errors.h"

namespace nb = nanobind;
using namespace ember;
using namespace ember::cggi;

namespace {

using U8Vector = nb::ndarray<const std::uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using U64Vector = nb::ndarray<const std::uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using U32Vector = nb::ndarray<const std::uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
constexpr auto release = nb::call_guard<nb::gil_scoped_release>();

using py::owned;
using py::to_vector;

/// The parameter literal from its Python fields (kinds: 0 gaussian, 1 tuniform).
Params params_from(int torus_bits, std::size_t n, std::size_t k, std::size_t N, int lwe_kind,
                   double lwe_value, int glwe_kind, double glwe_value, int bkb, int bkl, int ksb,
                   int ksl, bool insecure) {
  Params p;
  p.torus_bits = torus_bits;
  p.n = n;
  p.k = k;
  p.N = N;
  if ((lwe_kind != 0 && lwe_kind != 1) || (glwe_kind != 0 && glwe_kind != 1))
    throw ParameterError("noise kind must be gaussian or tuniform");
  p.lwe_noise = {static_cast<Noise::Kind>(lwe_kind), lwe_value};
  p.glwe_noise = {static_cast<Noise::Kind>(glwe_kind), glwe_value};
  p.bk_base_log = bkb;
  p.bk_levels = bkl;
  p.ks_base_log = ksb;
  p.ks_levels = ksl;
  p.insecure = insecure;
  return p;
}

#define EMBER_CGGI_PARAM_ARGS                                                                    \
  nb::arg("torus_bits"), nb::arg("n"), nb::arg("k"), nb::arg("N"), nb::arg("lwe_kind"),          \
      nb::arg("lwe_value"), nb::arg("glwe_kind"), nb::arg("glwe_value"), nb::arg("bk_base_log"), \
      nb::arg("bk_levels"), nb::arg("ks_base_log"), nb::arg("ks_levels"), nb::arg("insecure")

nb::dict preset_dict(const std::string& name) {
  const Params p = Params::preset(name);
  nb::dict d;
  d["name"] = p.name;
  d["torus_bits"] = p.torus_bits;
  d["n"] = p.n;
  d["k"] = p.k;
  d["N"] = p.N;
  d["lwe_noise"] = nb::make_tuple(p.lwe_noise.kind == Noise::gaussian ? "gaussian" : "tuniform",
                                  p.lwe_noise.value);
  d["glwe_noise"] = nb::make_tuple(p.glwe_noise.kind == Noise::gaussian ? "gaussian" : "tuniform",
                                   p.glwe_noise.value);
  d["bk_base_log"] = p.bk_base_log;
  d["bk_levels"] = p.bk_levels;
  d["ks_base_log"] = p.ks_base_log;
  d["ks_levels"] = p.ks_levels;
  d["insecure"] = p.insecure;
  return d;
}

}  // namespace

void bind_cggi(nb::module_& m) {
  m.def("cggi_preset", &preset_dict, nb::arg("name"));
  m.def("cggi_preset_names", &Params::preset_names);
  m.def("cggi_secure_log2_std", &secure_log2_std, nb::arg("dim"));
  // (fingerprint, meets_security_floor, limb_bits, limbs) of a validated literal.
  m.def(
      "cggi_check_params",
      [](int tb, std::size_t n, std::size_t k, std::size_t N, int lk, double lv, int gk, double gv,
         int bkb, int bkl, int ksb, int ksl, bool insecure) {
        const Params p = params_from(tb, n, k, N, lk, lv, gk, gv, bkb, bkl, ksb, ksl, insecure);
        p.validate();
        const auto s = p.shape();
        return std::make_tuple(p.fingerprint(), p.meets_security_floor(), s.limb_bits, s.limbs);
      },
      EMBER_CGGI_PARAM_ARGS);

  nb::class_<LweBatch>(m, "CggiBatch")
      .def_ro("count", &LweBatch::count)
      .def_ro("dim", &LweBatch::dim)
      .def_ro("message_bits", &LweBatch::message_bits)
      .def_ro("torus_bits", &LweBatch::torus_bits)
      .def_ro("key_id", &LweBatch::key_id)
      .def_ro("params_id", &LweBatch::params_id)
      .def("to_host", [](const LweBatch& b) { return owned(b.to_host()); })
      .def("on_stream", &LweBatch::on_stream, nb::arg("stream"))
      .def(
          "to",
          [](const LweBatch& b, const std::string& device) {
            return b.to(backend::parse_device(device));
          },
          nb::call_guard<nb::gil_scoped_release>());

  nb::class_<ClientKey>(m, "CggiClientKey")
      .def_ro("key_id", &ClientKey::key_id)
      .def_ro("params_id", &ClientKey::params_id)
      .def("lwe", [](const ClientKey& k) { return owned(std::vector<std::uint8_t>(k.lwe)); })
      .def("glwe", [](const ClientKey& k) { return owned(std::vector<std::uint8_t>(k.glwe)); });

  nb::class_<ServerKey>(m, "CggiServerKey")
      .def_ro("key_id", &ServerKey::key_id)
      .def_ro("params_id", &ServerKey::params_id)
      .def_prop_ro("nbytes", [](const ServerKey& k) { return k.bsk.bytes() + k.ksk.bytes(); })
      .def_prop_ro("bsk_bytes", [](const ServerKey& k) { return k.bsk.bytes(); })
      .def_prop_ro("ksk_bytes", [](const ServerKey& k) { return k.ksk.bytes(); })
      .def_prop_ro("device", [](const ServerKey& k) { return k.device().str(); })
      .def(
          "to",
          [](const ServerKey& k, const std::string& device) {
            return k.to(backend::parse_device(device));
          },
          nb::call_guard<nb::gil_scoped_release>());

  nb::enum_<Gate>(m, "CggiGate")
      .value("and_", Gate::and_)
      .value("nand", Gate::nand)
      .value("or_", Gate::or_)
      .value("nor", Gate::nor)
      .value("xor", Gate::xor_)
      .value("xnor", Gate::xnor)
      .value("andny", Gate::andny)
      .value("andyn", Gate::andyn)
      .value("orny", Gate::orny)
      .value("oryn", Gate::oryn);

  nb::class_<Context> c(m, "CggiContext");
  c.def(
       "__init__",
       [](Context* x, int tb, std::size_t n, std::size_t k, std::size_t N, int lk, double lv,
          int gk, double gv, int bkb, int bkl, int ksb, int ksl, bool insecure,
          const std::string& device) {
         new (x) Context(params_from(tb, n, k, N, lk, lv, gk, gv, bkb, bkl, ksb, ksl, insecure),
                         backend::parse_device(device));
       },
       EMBER_CGGI_PARAM_ARGS, nb::arg("device"))
      .def_prop_ro("params_id", &Context::params_id)
      .def_prop_ro("device", [](const Context& x) { return x.device().str(); })
      .def_prop_ro("limbs", [](const Context& x) { return x.shape().limbs; })
      .def("keygen", &Context::keygen, release)
      .def(
          "server_key",
          [](Context& x, const ClientKey& ck, nb::object progress) {
            std::function<void(std::size_t, std::size_t)> cb;
            if (!progress.is_none())
              cb = [progress](std::size_t done, std::size_t total) {
                nb::gil_scoped_acquire hold;
                progress(done, total);
              };
            nb::gil_scoped_release unlocked;
            return x.server_key(ck, cb);
          },
          nb::arg("ck"), nb::arg("progress").none() = nb::none())
      .def(
          "encrypt_bits",
          [](Context& x, U8Vector bits, const ClientKey& ck) {
            auto v = to_vector<std::uint8_t>(bits);
            nb::gil_scoped_release unlocked;
            return x.encrypt_bits(v, ck);
          },
          nb::arg("bits"), nb::arg("ck"))
      .def("decrypt_bits",
           [](const Context& x, const LweBatch& c, const ClientKey& ck) {
             std::vector<std::uint8_t> out;
             {
               nb::gil_scoped_release unlocked;
               out = x.decrypt_bits(c, ck);
             }
             return owned(std::move(out));
           })
      .def(
          "encrypt_in_place",
          // Bits (message_bits 0) or integers (bytes) in this GPU context's memory, read where
          // they are (DLPack).
          [](Context& x, nb::ndarray<const std::uint8_t, nb::ndim<1>, nb::c_contig> values,
             int message_bits, const ClientKey& ck) {
            const backend::Device d = x.device();
            if (d.kind != backend::DeviceKind::cuda ||
                values.device_type() != nb::device::cuda::value ||
                values.device_id() != static_cast<int>(d.index))
              throw ParameterError(
                  "encrypt: the values must be in the memory of this context's GPU (" + d.str() +
                  ")");
            nb::gil_scoped_release unlocked;
            return message_bits
                       ? x.encrypt_ints_in_place(values.data(), values.shape(0), message_bits, ck)
                       : x.encrypt_bits_in_place(values.data(), values.shape(0), ck);
          },
          nb::arg("values"), nb::arg("message_bits"), nb::arg("ck"))
      .def("decrypt_in_place",
           // The bits or integers (uint8) in this GPU context's memory, a DLPack array of `shape`.
           [](const Context& x, const LweBatch& c, const ClientKey& ck,
              std::vector<std::size_t> shape) {
             shape = py::device_output_shape(x.device(), std::move(shape), c.count);
             auto buffer = std::make_unique<backend::Buffer>(
                 *c.words->backend(), std::max<std::size_t>(c.count, 1), c.stream);
             {
               nb::gil_scoped_release unlocked;
               x.decrypt_in_place(c, ck, buffer->as<std::uint8_t>());
             }
             backend::Buffer* owned_buffer = buffer.release();
             nb::capsule owner(owned_buffer,
                               [](void* p) noexcept { delete static_cast<backend::Buffer*>(p); });
             return nb::ndarray<>(owned_buffer->as<void>(), shape.size(), shape.data(), owner,
                                  nullptr, nb::dtype<std::uint8_t>(), nb::device::cuda::value,
                                  x.device().index);
           })
      .def(
          "encrypt_ints",
          [](Context& x, U64Vector values, int bits, const ClientKey& ck) {
            auto v = to_vector<std::uint64_t>(values);
            nb::gil_scoped_release unlocked;
            return x.encrypt_ints(v, bits, ck);
          },
          nb::arg("values"), nb::arg("bits"), nb::arg("ck"))
      .def("decrypt_ints",
           [](const Context& x, const LweBatch& c, const ClientKey& ck) {
             std::vector<std::uint64_t> out;
             {
               nb::gil_scoped_release unlocked;
               out = x.decrypt_ints(c, ck);
             }
             return owned(std::move(out));
           })
      .def("phase_errors",
           [](const Context& x, const LweBatch& c, const ClientKey& ck) {
             std::vector<double> out;
             {
               nb::gil_scoped_release unlocked;
               out = x.phase_errors(c, ck);
             }
             return owned(std::move(out));
           })
      .def("gate", &Context::gate, release)
      .def("mux", &Context::mux, release)
      .def("maj", &Context::maj, release)
      .def("xor3", &Context::xor3, release)
      .def("not_", &Context::not_, release)
      .def("copy", &Context::copy, release)
      .def("bootstrap", &Context::bootstrap, release)
      .def("constant",
           [](Context& x, U8Vector bits) { return x.constant(to_vector<std::uint8_t>(bits)); })
      .def("apply_lut", &Context::apply_lut, release)
      .def("add", &Context::add, release)
      .def("mul_scalar", &Context::mul_scalar, release)
      .def("add_scalar", &Context::add_scalar, release)
      .def("slice", &Context::slice, release)
      .def("concat", &Context::concat)
      .def(
          "take",
          [](const Context& x, const LweBatch& a, U32Vector index) {
            return x.take(a, to_vector<std::uint32_t>(index));
          },
          release)
      .def(
          "batch_from_host",
          [](const Context& x, U64Vector words, std::size_t count, int bits, std::uint64_t key_id) {
            return x.batch_from_host(to_vector<std::uint64_t>(words), count, bits, key_id);
          })
      .def("client_key_from",
           [](const Context& x, U8Vector lwe, U8Vector glwe, std::uint64_t key_id) {
             return x.client_key_from(to_vector<std::uint8_t>(lwe), to_vector<std::uint8_t>(glwe),
                                      key_id);
           })
      .def("server_key_from",
           [](const Context& x, U64Vector bsk, U64Vector ksk, std::uint64_t key_id) {
             auto b = to_vector<std::uint64_t>(bsk);
             auto k = to_vector<std::uint64_t>(ksk);
             nb::gil_scoped_release unlocked;
             return x.server_key_from(b, k, key_id);
           })
      .def("bsk_to_host",
           [](const Context& x, const ServerKey& sk) { return owned(x.bsk_to_host(sk)); })
      .def("ksk_to_host",
           [](const Context& x, const ServerKey& sk) { return owned(x.ksk_to_host(sk)); });
}
