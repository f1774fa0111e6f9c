// The _ember extension module: error translation, build info, devices. Bindings only, no logic.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <new>

#include "ember/backend/backend.h"
#include "ember/core/errors.h"
#include "ember/core/process.h"
#include "translate_errors.h"

namespace nb = nanobind;

void bind_ring(nb::module_& m);
void bind_ckks(nb::module_& m);
void bind_bfv_bgv(nb::module_& m);
void bind_integer_encoder(nb::module_& m);
void bind_options(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_dist(nb::module_& m);
void bind_cggi(nb::module_& m);
void bind_circuit(nb::module_& m);
void bind_heaan(nb::module_& m);
namespace ember::bind {
void bind_rlwe_types(nb::module_& m);
}

NB_MODULE(_ember, m) {
  ember::bind::register_error_translator();

  m.def("cuda_compiled", &ember::backend::cuda_compiled);
  nb::class_<ember::backend::GpuInfo>(m, "GpuInfo")
      .def_ro("index", &ember::backend::GpuInfo::index)
      .def_ro("name", &ember::backend::GpuInfo::name)
      .def_ro("memory_bytes", &ember::backend::GpuInfo::memory_bytes)
      .def_ro("major", &ember::backend::GpuInfo::major)
      .def_ro("minor", &ember::backend::GpuInfo::minor)
      .def_ro("multiprocessors", &ember::backend::GpuInfo::multiprocessors)
      .def_ro("memory_bandwidth_gbs", &ember::backend::GpuInfo::memory_bandwidth_gbs);
  m.def("cuda_devices", &ember::backend::cuda_devices);
  m.def("set_cpu_threads", &ember::backend::set_cpu_threads);
  m.def("cpu_threads", &ember::backend::cpu_threads);
  m.def("fork_generation", &ember::fork_generation);
  m.def("parse_device", [](const std::string& s) { return ember::backend::parse_device(s).str(); });
  m.def("synchronize", [](const std::string& device) {
    // Waits for the device's default stream (timing of Python-level work).
    auto& be = ember::backend::backend_for(ember::backend::parse_device(device));
    be.synchronize(be.default_stream());
  });
  m.def("ntt_variants", [](const std::string& device) {
    return ember::backend::backend_for(ember::backend::parse_device(device)).ntt_variants();
  });

  bind_ring(m);
  ember::bind::bind_rlwe_types(m);
  bind_ckks(m);
  bind_integer_encoder(m);
  bind_bfv_bgv(m);
  bind_options(m);
  bind_runtime(m);
  bind_dist(m);
  bind_cggi(m);
  bind_circuit(m);
  bind_heaan(m);
}
