// The _ember_bench extension module: the benchmark kernels behind `ember bench` and `ember tune`
// (timed loops over the library's operations), apart from the product module. Bindings only.
#include <nanobind/nanobind.h>

#include "translate_errors.h"

namespace nb = nanobind;

void bind_bench(nb::module_& m);
void bind_bench_split(nb::module_& m);

NB_MODULE(_ember_bench, m) {
  ember::bind::register_error_translator();
  bind_bench(m);
  bind_bench_split(m);
}
