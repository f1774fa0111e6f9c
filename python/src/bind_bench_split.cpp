// Benchmark binding of one operation over several devices: a CKKS or BGV multiplication with
// relinearization and a rotation split over 1, 2, 4, ... devices against the same operation on one
// device, with the split results checked word for word against it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "ember/bgv/context.h"
#include "ember/ckks/context.h"
#include "ember/core/errors.h"
#include "ember/rlwe/split_evaluator.h"

namespace nb = nanobind;
using namespace ember;

namespace {

using bench::median;
using bench::primes_for;
using rlwe::Ciphertext;
using rlwe::SplitCiphertext;
using rlwe::SplitEvaluator;
using rlwe::SwitchKey;

/// Host wall clock per run, `batch` back-to-back runs then `sync`, median over `reps`: what a
/// caller waits per operation when it keeps the devices busy.
double wall_ms(const std::function<void()>& run, const std::function<void()>& sync, int reps,
               int batch = 10) {
  run();
  sync();
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < batch; ++k) run();
    sync();
    v.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        batch);
  }
  return median(v);
}

/// Host time to queue one run (`batch` runs back to back, no wait for the devices; synchronized
/// before and after): what the host side costs when the devices keep up.
double issue_ms(const std::function<void()>& run, const std::function<void()>& sync, int reps,
                int batch = 10) {
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < batch; ++k) run();
    v.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        batch);
    sync();
  }
  return median(v);
}

/// One run, synchronized: the latency of a single operation.
double latency_ms(const std::function<void()>& run, const std::function<void()>& sync, int reps) {
  return wall_ms(run, sync, reps, 1);
}

bool same_words(const Ciphertext& a, const Ciphertext& b) {
  if (a.polys.size() != b.polys.size()) return false;
  for (std::size_t k = 0; k < a.polys.size(); ++k)
    if (a.polys[k].to_host() != b.polys[k].to_host()) return false;
  return true;
}

template <class Ctx>
nb::dict run(Ctx& ctx, const std::vector<std::size_t>& counts,
             const std::vector<backend::Device>& devices, int reps) {
  auto& r = ctx.rlwe();
  ring::Sampler sampler;
  const auto sk = r.keygen(sampler);
  const auto relin = r.relin_key(sk, sampler);
  const u64 galois = 5;  // a rotation by one slot
  const auto rot = r.galois_key(sk, galois, sampler);
  const std::size_t top = ctx.max_level();
  const ring::RnsPoly m = ring::RnsPoly::zeros(r.q_basis(top), ring::Form::eval, r.device());
  const Ciphertext a = r.encrypt_symmetric(m, sk, sampler);
  const Ciphertext b = r.encrypt_symmetric(m, sk, sampler);
  auto& be = r.backend();
  auto sync_one = [&] { be.synchronize(a.stream()); };
  const Ciphertext want_mul = ctx.multiply(a, b, relin);
  const Ciphertext want_rot = ctx.apply_galois(a, rot);
  nb::dict d;
  d["log_n"] = static_cast<int>(std::log2(ctx.n()));
  d["q_primes"] = r.q_count();
  d["p_primes"] = r.p_count();
  d["dnum"] = r.dnum();
  d["one_device"] = r.device().str();
  d["multiply_relin_ms"] = wall_ms([&] { ctx.multiply(a, b, relin); }, sync_one, reps);
  d["rotate_ms"] = wall_ms([&] { ctx.apply_galois(a, rot); }, sync_one, reps);
  d["multiply_relin_latency_ms"] = latency_ms([&] { ctx.multiply(a, b, relin); }, sync_one, reps);
  d["rotate_latency_ms"] = latency_ms([&] { ctx.apply_galois(a, rot); }, sync_one, reps);
  d["multiply_relin_issue_ms"] = issue_ms([&] { ctx.multiply(a, b, relin); }, sync_one, reps);
  nb::list splits;
  for (std::size_t k : counts) {
    if (k > devices.size()) continue;
    // Between GPUs both exchanges: NCCL and peer copies (copy_between_devices).
    const bool gpus = devices[0].kind == backend::DeviceKind::cuda && k > 1;
    for (const auto exchange :
         gpus ? std::vector<dist::Exchange>{dist::Exchange::automatic, dist::Exchange::copy}
              : std::vector<dist::Exchange>{dist::Exchange::automatic}) {
      const std::vector<backend::Device> set(devices.begin(), devices.begin() + k);
      SplitEvaluator split(r, dist::DeviceSet(set), exchange);
      std::vector<SwitchKey> relins, rots;
      std::vector<const SwitchKey*> relin_ptrs, rot_ptrs;
      for (const auto& dev : set) {
        relins.push_back(relin.to(dev));
        rots.push_back(rot.to(dev));
      }
      for (std::size_t i = 0; i < k; ++i) {
        relin_ptrs.push_back(&relins[i]);
        rot_ptrs.push_back(&rots[i]);
      }
      const SplitCiphertext sa = split.split(a), sb = split.split(b);
      auto sync = [&] { split.synchronize(sa); };
      const bool mul_ok =
          same_words(split.gather(split.multiply(sa, sb, relin_ptrs), r.device()), want_mul);
      const bool rot_ok =
          same_words(split.gather(split.apply_galois(sa, rot_ptrs), r.device()), want_rot);
      nb::dict s;
      s["devices"] = k;
      s["exchange"] = split.communicator().exchange_name();
      s["multiply_bit_identical"] = mul_ok;
      s["rotate_bit_identical"] = rot_ok;
      s["multiply_relin_ms"] = wall_ms([&] { split.multiply(sa, sb, relin_ptrs); }, sync, reps);
      s["rotate_ms"] = wall_ms([&] { split.apply_galois(sa, rot_ptrs); }, sync, reps);
      s["multiply_relin_latency_ms"] =
          latency_ms([&] { split.multiply(sa, sb, relin_ptrs); }, sync, reps);
      s["rotate_latency_ms"] = latency_ms([&] { split.apply_galois(sa, rot_ptrs); }, sync, reps);
      s["multiply_relin_issue_ms"] =
          issue_ms([&] { split.multiply(sa, sb, relin_ptrs); }, sync, reps);
      splits.append(s);
    }
  }
  d["splits"] = splits;
  return d;
}

/// Times the split operations on the first k of `devices` for each k in `counts`, against one
/// device (devices[0]); every split result is compared word for word with one device's.
nb::dict bench_split(const std::string& scheme, int log_n, const std::vector<int>& q_bits,
                     const std::vector<int>& p_bits, std::size_t dnum, u64 t,
                     const std::vector<std::string>& device_names,
                     const std::vector<std::size_t>& counts, int reps) {
  if (device_names.empty()) throw ParameterError("bench_split: name at least one device");
  std::vector<backend::Device> devices;
  for (const auto& name : device_names) devices.push_back(backend::parse_device(name));
  const std::size_t n = std::size_t{1} << log_n;
  std::vector<u64> used;
  const auto q = primes_for(q_bits, n, used);
  const auto p = primes_for(p_bits, n, used);
  nb::dict d;
  if (scheme == "ckks") {
    ckks::Context ctx(n, q, p, dnum, devices[0]);
    d = run(ctx, counts, devices, reps);
  } else if (scheme == "bgv") {
    bgv::Context ctx(n, q, p, dnum, t, devices[0]);
    d = run(ctx, counts, devices, reps);
  } else {
    throw ParameterError("bench_split: scheme 'ckks' or 'bgv', got '" + scheme + "'");
  }
  d["scheme"] = scheme;
  return d;
}

}  // namespace

void bind_bench_split(nb::module_& m) {
  m.def("bench_split", &bench_split, nb::arg("scheme"), nb::arg("log_n"), nb::arg("q_bits"),
        nb::arg("p_bits"), nb::arg("dnum"), nb::arg("t") = 65537, nb::arg("devices"),
        nb::arg("counts"), nb::arg("reps") = 10);
}
