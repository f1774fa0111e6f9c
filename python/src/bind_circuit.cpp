// Python bindings of the circuit layer (the IR, the bit-sliced evaluator, the encrypted
// scheduler). Bindings only: the logic is in src/circuit and python/ember/circuit.py.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "convert.h"
#include "ember/cggi/context.h"
#include "ember/circuit/circuit.h"
#include "ember/circuit/evaluate.h"
#include "ember/circuit/run.h"
#include "ember/core/errors.h"

namespace nb = nanobind;
using namespace ember;
using namespace ember::circuit;

namespace {

using U8Vector = nb::ndarray<const std::uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using I64Matrix = nb::ndarray<const std::int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
/// A port as Python describes it: (name, width, signed, element count).
using PortTuple = std::tuple<std::string, int, bool, std::size_t>;

std::vector<Port> ports(const std::vector<PortTuple>& t) {
  std::vector<Port> out;
  for (const auto& [name, width, is_signed, count] : t)
    out.push_back({name, width, is_signed, count});
  return out;
}

nb::dict stats_dict(const Stats& s) {
  nb::dict by_type;
  for (int code = 0; code < kNumCodes; ++code)
    if (s.gates_by_code[code])
      by_type[gate_name(static_cast<std::uint8_t>(code))] = s.gates_by_code[code];
  nb::dict d;
  d["gates"] = s.gates;
  d["bootstraps"] = s.bootstraps;
  d["gates_by_type"] = by_type;
  d["depth"] = s.depth;
  d["widest_wave"] = s.widest_wave;
  d["widest_wave_bootstraps"] = s.widest_wave_bootstraps;
  d["input_bits"] = s.input_bits;
  d["output_bits"] = s.output_bits;
  return d;
}

nb::dict run_stats_dict(const RunStats& s) {
  nb::dict d;
  d["mode"] = s.mode;
  d["devices"] = s.devices;
  d["gates"] = s.gates;
  d["bootstraps"] = s.bootstraps;
  d["steps"] = s.steps;
  d["launches"] = s.launches;
  d["gathers"] = s.gathers;
  d["cross_device_copies"] = s.cross_device_copies;
  d["cross_device_transfers"] = s.cross_device_transfers;
  d["spilled"] = s.spilled;
  d["restored"] = s.restored;
  d["gates_per_device"] = s.gates_per_device;
  d["peak_live_per_device"] = s.peak_live_per_device;
  d["capacity_per_device"] = s.capacity_per_device;
  d["plan_seconds"] = s.plan_seconds;
  d["issue_seconds"] = s.issue_seconds;
  d["wait_seconds"] = s.wait_seconds;
  d["seconds"] = s.seconds;
  return d;
}

}  // namespace

void bind_circuit(nb::module_& m) {
  nb::class_<Circuit>(m, "CircuitIR")
      .def(
          "__init__",
          [](Circuit* self, const std::vector<PortTuple>& inputs,
             const std::vector<PortTuple>& outputs, U8Vector ops, I64Matrix args,
             py::I64Vector out_lits) {
            if (args.shape(0) != ops.shape(0) || (args.shape(0) && args.shape(1) != 3))
              throw ParameterError("circuit: args must be [gates x 3]");
            new (self)
                Circuit(ports(inputs), ports(outputs), py::to_vector<std::uint8_t>(ops),
                        py::to_vector<std::int64_t>(args), py::to_vector<std::int64_t>(out_lits));
          },
          nb::arg("inputs"), nb::arg("outputs"), nb::arg("ops"), nb::arg("args"),
          nb::arg("out_lits"))
      .def_prop_ro("depth", &Circuit::depth)
      .def("levels",
           [](const Circuit& c) {
             const auto& lv = c.levels();
             return py::owned(std::vector<std::int64_t>(lv.begin(), lv.end()));
           })
      .def("stats", [](const Circuit& c) { return stats_dict(c.stats()); })
      .def(
          "evaluate",
          [](const Circuit& c, py::U64Matrix words) {
            if (words.shape(0) != c.num_input_bits())
              throw ParameterError("evaluate: expected " + std::to_string(c.num_input_bits()) +
                                   " rows of input words, got " + std::to_string(words.shape(0)));
            const std::size_t w = words.shape(1);
            std::vector<std::uint64_t> scratch, out;
            const std::uint64_t* p = py::aligned(words, scratch);
            {
              nb::gil_scoped_release unlocked;
              out = evaluate(c, p, w);
            }
            return py::to_numpy(std::move(out), c.out_lits().size(), w);
          },
          nb::arg("words"));

  // (outputs, stats) of a run: inputs one CggiBatch or None per input port, devices a list of
  // (context, server key) pairs; progress(steps_done, steps, gates_done, gates, seconds).
  m.def(
      "circuit_run",
      [](const Circuit& c, const cggi::Context& home, const nb::list& inputs,
         const std::vector<std::tuple<const cggi::Context*, const cggi::ServerKey*>>& devices,
         const std::string& mode, bool fuse, std::size_t max_live, int streams, bool locality,
         std::size_t min_batch, std::size_t min_gates, bool skip_bootstrap, nb::object progress) {
        std::vector<cggi::LweBatch> ins;
        for (nb::handle h : inputs)
          ins.push_back(h.is_none() ? cggi::LweBatch{} : nb::cast<const cggi::LweBatch&>(h));
        std::vector<DeviceKit> kits;
        for (const auto& [ctx, key] : devices) kits.push_back({ctx, key});
        RunOptions o;
        o.mode = parse_mode(mode);
        o.fuse = fuse;
        o.max_live_ciphertexts = max_live;
        o.streams_per_device = streams;
        o.locality = locality;
        o.dataflow_min_batch = min_batch;
        o.min_gates_per_device = min_gates;
        o.skip_bootstrap = skip_bootstrap;
        if (!progress.is_none())
          o.progress = [progress](const Progress& p) {
            nb::gil_scoped_acquire hold;
            progress(p.steps_done, p.steps, p.gates_done, p.gates, p.seconds);
          };
        RunResult r;
        {
          nb::gil_scoped_release unlocked;
          r = run(c, home, ins, kits, o);
        }
        return nb::make_tuple(r.outputs, run_stats_dict(r.stats));
      },
      nb::arg("circuit"), nb::arg("home"), nb::arg("inputs"), nb::arg("devices"), nb::arg("mode"),
      nb::arg("fuse"), nb::arg("max_live"), nb::arg("streams"), nb::arg("locality"),
      nb::arg("min_batch"), nb::arg("min_gates"), nb::arg("skip_bootstrap"),
      nb::arg("progress").none());
}
