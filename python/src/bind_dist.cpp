// Python bindings of the dist layer: Communicator, row partitions, nccl_compiled, and the split
// evaluator (one operation over several devices).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "ember/bfv/context.h"
#include "ember/bgv/context.h"
#include "ember/ckks/context.h"
#include "ember/core/errors.h"
#include "ember/dist/communicator.h"
#include "ember/rlwe/split_evaluator.h"

namespace nb = nanobind;
using namespace ember;
using namespace ember::dist;
using ember::ring::RnsPoly;

namespace {

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

Exchange exchange_from_name(const std::string& name) {
  if (name == "auto") return Exchange::automatic;
  if (name == "nccl") return Exchange::nccl;
  if (name == "copy") return Exchange::copy;
  throw ParameterError("unknown exchange '" + name + "': use 'auto', 'nccl' or 'copy'");
}

ConstPolyRefs as_const(const std::vector<RnsPoly*>& polys) {
  return ConstPolyRefs(polys.begin(), polys.end());
}

std::vector<RowRange> to_ranges(const Ranges& r) {
  std::vector<RowRange> out;
  for (const auto& [b, e] : r) out.push_back({b, e});
  return out;
}

Ranges from_ranges(const std::vector<RowRange>& r) {
  Ranges out;
  for (const auto& x : r) out.emplace_back(x.begin, x.end);
  return out;
}

std::vector<std::string> device_names(const DeviceSet& set) {
  std::vector<std::string> out;
  for (const auto& d : set.devices()) out.push_back(d.str());
  return out;
}

template <class Ctx>
void split_init(nb::class_<rlwe::SplitEvaluator>& c) {
  c.def(
      "__init__",
      [](rlwe::SplitEvaluator* self, const Ctx& ctx, const std::vector<std::string>& devices,
         const std::string& exchange) {
        new (self) rlwe::SplitEvaluator(ctx.rlwe(), DeviceSet::parse(devices),
                                        exchange_from_name(exchange));
      },
      nb::arg("ctx"), nb::arg("devices"), nb::arg("exchange") = "auto", nb::keep_alive<1, 2>());
}

void bind_split(nb::module_& m) {
  using Release = nb::call_guard<nb::gil_scoped_release>;
  using rlwe::SplitCiphertext;
  using rlwe::SplitEvaluator;
  using rlwe::SwitchKey;
  nb::class_<SplitCiphertext>(m, "SplitCiphertext")
      .def_ro("level", &SplitCiphertext::level)
      .def_ro("scale", &SplitCiphertext::scale)
      .def_ro("factor", &SplitCiphertext::factor)
      .def_ro("key_id", &SplitCiphertext::key_id)
      .def_ro("params_id", &SplitCiphertext::params_id)
      .def_prop_ro("size", &SplitCiphertext::polys)
      .def_prop_ro("rows", [](const SplitCiphertext& a) { return from_ranges(a.rows); })
      .def(
          "part",
          [](const SplitCiphertext& a, std::size_t rank, std::size_t poly) {
            return a.parts.at(rank).at(poly).copy();
          },
          nb::arg("rank"), nb::arg("poly"));
  nb::class_<SplitEvaluator> c(m, "SplitEvaluator");
  split_init<ckks::Context>(c);
  split_init<bgv::Context>(c);
  split_init<bfv::Context>(c);
  c.def_prop_ro("devices", [](const SplitEvaluator& e) { return device_names(e.devices()); })
      .def_prop_ro("exchange",
                   [](const SplitEvaluator& e) { return e.communicator().exchange_name(); })
      .def("rows_at",
           [](const SplitEvaluator& e, std::size_t level) { return from_ranges(e.rows_at(level)); })
      .def("split", &SplitEvaluator::split, Release())
      .def(
          "gather",
          [](const SplitEvaluator& e, const SplitCiphertext& a, const std::string& device) {
            return e.gather(a, backend::parse_device(device));
          },
          Release())
      .def("multiply", &SplitEvaluator::multiply, Release())
      .def("apply_galois", &SplitEvaluator::apply_galois, Release())
      .def("synchronize", &SplitEvaluator::synchronize, Release());
}

}  // namespace

void bind_dist(nb::module_& m) {
  using Release = nb::call_guard<nb::gil_scoped_release>;
  m.def("nccl_compiled", &nccl_compiled);
  m.def(
      "partition_rows",
      [](std::size_t rows, std::size_t parts) { return from_ranges(partition_rows(rows, parts)); },
      nb::arg("rows"), nb::arg("parts"));
  m.def(
      "take_rows",
      [](const RnsPoly& whole, std::size_t begin, std::size_t end, const std::string& device) {
        return take_rows(whole, {begin, end}, backend::parse_device(device));
      },
      nb::arg("whole"), nb::arg("begin"), nb::arg("end"), nb::arg("device"));

  nb::class_<Communicator>(m, "Communicator")
      .def(
          "__init__",
          [](Communicator* self, const std::vector<std::string>& devices,
             const std::string& exchange) {
            new (self) Communicator(DeviceSet::parse(devices), exchange_from_name(exchange));
          },
          nb::arg("devices"), nb::arg("exchange") = "auto")
      .def_prop_ro("devices",
                   [](const Communicator& c) {
                     std::vector<std::string> out;
                     for (const auto& d : c.devices().devices()) out.push_back(d.str());
                     return out;
                   })
      .def_prop_ro("exchange", &Communicator::exchange_name)
      .def("__len__", &Communicator::size)
      .def(
          "broadcast",
          [](Communicator& c, const std::vector<RnsPoly*>& polys, std::size_t root, bool sync) {
            sync ? c.broadcast(polys, root) : c.broadcast_async(polys, root);
          },
          nb::arg("polys"), nb::arg("root") = 0, nb::arg("sync") = true, Release())
      .def(
          "all_gather",
          [](Communicator& c, const std::vector<RnsPoly*>& parts, bool sync) {
            return sync ? c.all_gather(as_const(parts)) : c.all_gather_async(as_const(parts));
          },
          nb::arg("parts"), nb::arg("sync") = true, Release())
      .def(
          "all_gather_into",
          [](Communicator& c, const std::vector<RnsPoly*>& parts,
             const std::vector<RnsPoly*>& wholes, bool sync) {
            c.all_gather_into_async(as_const(parts), wholes);
            if (sync) c.synchronize();
          },
          nb::arg("parts"), nb::arg("wholes"), nb::arg("sync") = true, Release())
      .def(
          "reduce_scatter",
          [](Communicator& c, const std::vector<RnsPoly*>& wholes, const Ranges& ranges,
             bool sync) {
            return sync ? c.reduce_scatter(as_const(wholes), to_ranges(ranges))
                        : c.reduce_scatter_async(as_const(wholes), to_ranges(ranges));
          },
          nb::arg("wholes"), nb::arg("ranges") = Ranges{}, nb::arg("sync") = true, Release())
      .def(
          "reduce_scatter_into",
          [](Communicator& c, const std::vector<RnsPoly*>& wholes,
             const std::vector<RnsPoly*>& parts, bool sync) {
            c.reduce_scatter_into_async(as_const(wholes), parts);
            if (sync) c.synchronize();
          },
          nb::arg("wholes"), nb::arg("parts"), nb::arg("sync") = true, Release())
      .def(
          "all_reduce",
          [](Communicator& c, const std::vector<RnsPoly*>& polys, bool sync) {
            sync ? c.all_reduce(polys) : c.all_reduce_async(polys);
          },
          nb::arg("polys"), nb::arg("sync") = true, Release())
      .def("synchronize", &Communicator::synchronize, Release());
  bind_split(m);
}
