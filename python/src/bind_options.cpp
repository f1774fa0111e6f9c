// Python bindings of the per-backend options (ember/backend/options.h) as plain dicts; the
// checks of names and types, table files and the context manager live in ember/options.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/core/errors.h"

namespace nb = nanobind;
using namespace ember;
using backend::BackendOptions;

namespace {

using Row = std::tuple<int, int, bool, std::string, std::string>;

nb::dict to_dict(const BackendOptions& o) {
  nb::dict d;
  d["ntt_variant"] = o.ntt_variant;
  d["ntt_fp64"] = o.ntt_fp64;
  d["ntt_unreduced"] = o.ntt_unreduced;
  d["key_product_words"] = o.key_product_words;
  d["bconv_tensor"] = o.bconv_tensor;
  d["fused_tensor"] = backend::fusion_name(o.fused_tensor);
  d["fused_key_product"] = backend::fusion_name(o.fused_key_product);
  d["cggi_rotation_group"] = o.cggi_rotation_group == 0
                                 ? nb::object(nb::str("auto"))
                                 : nb::object(nb::int_(o.cggi_rotation_group));
  d["ntt_table"] = o.ntt_table_name.empty() ? nb::object(nb::none())
                                            : nb::object(nb::str(o.ntt_table_name.c_str()));
  std::vector<Row> rows;
  for (const auto& e : o.ntt_table)
    rows.emplace_back(e.log_n, e.limbs, e.integer_path, e.forward, e.inverse);
  d["ntt_table_rows"] = rows;
  return d;
}

/// `o` with the entries of `d` applied (keys as to_dict writes them; ember/options.py has
/// checked the names and types).
BackendOptions from_dict(BackendOptions o, const nb::dict& d) {
  for (auto [key, value] : d) {
    const std::string k = nb::cast<std::string>(key);
    if (k == "ntt_variant")
      o.ntt_variant = nb::cast<std::string>(value);
    else if (k == "ntt_fp64")
      o.ntt_fp64 = nb::cast<bool>(value);
    else if (k == "ntt_unreduced")
      o.ntt_unreduced = nb::cast<bool>(value);
    else if (k == "key_product_words")
      o.key_product_words = nb::cast<bool>(value);
    else if (k == "bconv_tensor")
      o.bconv_tensor = nb::cast<bool>(value);
    else if (k == "fused_tensor")
      o.fused_tensor = backend::parse_fusion(nb::cast<std::string>(value));
    else if (k == "fused_key_product")
      o.fused_key_product = backend::parse_fusion(nb::cast<std::string>(value));
    else if (k == "cggi_rotation_group")
      o.cggi_rotation_group = nb::isinstance<nb::str>(value) ? 0 : nb::cast<int>(value);
    else if (k == "ntt_table")
      o.ntt_table_name = value.is_none() ? std::string() : nb::cast<std::string>(value);
    else if (k == "ntt_table_rows") {
      o.ntt_table.clear();
      for (const Row& r : nb::cast<std::vector<Row>>(value))
        o.ntt_table.push_back(
            {std::get<0>(r), std::get<1>(r), std::get<2>(r), std::get<3>(r), std::get<4>(r)});
    } else
      throw ParameterError("unknown backend option '" + k + "'");
  }
  return o;
}

backend::Backend& backend_of(const std::string& device) {
  return backend::backend_for(backend::parse_device(device));
}

}  // namespace

void bind_options(nb::module_& m) {
  m.def(
      "backend_options",
      [](const std::string& device) { return to_dict(backend_of(device).options()); },
      nb::arg("device"), "The device's backend options, with the measured table's rows.");
  m.def(
      "set_backend_options",
      [](const std::string& device, const nb::dict& changes) {
        auto& be = backend_of(device);
        be.set_options(from_dict(be.options(), changes));
      },
      nb::arg("device"), nb::arg("changes"),
      "Applies `changes` (keys as backend_options returns them) to the device's backend.");
  m.def(
      "environment_backend_options", [] { return to_dict(BackendOptions::from_environment()); },
      "The options a new backend starts with (defaults and environment variables).");
}
