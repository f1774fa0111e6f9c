// Python bindings of the benchmark primitives: timed batched NTTs and device copy bandwidth.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "ember/core/numtheory.h"
#include "ember/ring/rns_poly.h"
#include "ember/ring/sampler.h"

namespace nb = nanobind;
using namespace ember;
using namespace ember::ring;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

/// Times forward and inverse NTTs of one limbs x N polynomial (`prime_bits`-bit primes) with the
/// given variant. Checks INTT(NTT(a)) == a on the timed buffer before returning.
nb::dict bench_ntt(int log_n, std::size_t limbs, const std::string& device,
                   const std::string& variant, int prime_bits, int warmup, int iters) {
  const std::size_t n = std::size_t{1} << log_n;
  auto ctx = RingContext::create(n, generate_ntt_primes(prime_bits, n, limbs));
  RnsBasis basis = RnsBasis::all(ctx);
  const Device dev = backend::parse_device(device);
  ChaChaKey key{};
  Sampler sampler(key);
  RnsPoly a = sampler.uniform(basis, dev, Form::coeff);
  const std::vector<u64> before = a.to_host();
  auto& be = a.backend();
  be.set_ntt_variant(variant);
  const auto view = a.view();
  u64* data = a.data();
  auto fwd = be.time_runs([&](backend::Stream s) { be.ntt_forward_async(data, view, 1, s); },
                          warmup, iters);
  auto inv = be.time_runs([&](backend::Stream s) { be.ntt_inverse_async(data, view, 1, s); },
                          warmup, iters);
  const bool roundtrip_ok = a.to_host() == before;  // equal counts of forward and inverse runs
  be.set_ntt_variant("auto");
  nb::dict d;
  d["log_n"] = log_n;
  d["limbs"] = limbs;
  d["prime_bits"] = prime_bits;
  d["device"] = dev.str();
  d["variant"] = variant == "auto" ? be.ntt_variant_for(n, limbs) : variant;
  d["forward_us"] = median(fwd) * 1e3;
  d["inverse_us"] = median(inv) * 1e3;
  d["forward_min_us"] = *std::min_element(fwd.begin(), fwd.end()) * 1e3;
  d["inverse_min_us"] = *std::min_element(inv.begin(), inv.end()) * 1e3;
  d["bytes_per_pass"] = static_cast<double>(2 * n * limbs * sizeof(u64));
  d["roundtrip_ok"] = roundtrip_ok;
  return d;
}

/// Device-to-device copy bandwidth in GB/s (bytes read plus bytes written) of a `mb`-MB buffer.
double copy_bandwidth(const std::string& device, std::size_t mb, int iters) {
  const Device dev = backend::parse_device(device);
  auto& be = backend::backend_for(dev);
  const std::size_t bytes = mb << 20;
  auto s = be.default_stream();
  backend::Buffer a(be, bytes, s), b(be, bytes, s);
  std::vector<char> init(bytes, 1);
  be.copy_from_host_async(a.as<void>(), init.data(), bytes, s);
  be.synchronize(s);
  auto t = be.time_runs([&](backend::Stream st) { be.copy_async(b.as<void>(), a.as<void>(), bytes, st); },
                        3, iters);
  return 2.0 * bytes / (median(t) * 1e-3) / 1e9;
}

}  // namespace

void bind_bench(nb::module_& m) {
  m.def("bench_ntt", &bench_ntt, nb::arg("log_n"), nb::arg("limbs"), nb::arg("device") = "cpu",
        nb::arg("variant") = "auto", nb::arg("prime_bits") = 50, nb::arg("warmup") = 5,
        nb::arg("iters") = 50);
  m.def("copy_bandwidth", &copy_bandwidth, nb::arg("device"), nb::arg("mb") = 512,
        nb::arg("iters") = 20);
  m.def("ntt_variants", [](const std::string& device) {
    return backend::backend_for(backend::parse_device(device)).ntt_variants();
  });
}
