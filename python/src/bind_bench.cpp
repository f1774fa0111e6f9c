// Python bindings of the benchmark primitives: timed batched NTTs and device copy bandwidth.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include "bench_util.h"
#include "ember/ckks/context.h"
#include "ember/core/numtheory.h"
#include "ember/ring/rns_poly.h"
#include "ember/ring/sampler.h"

namespace nb = nanobind;
using namespace ember;
using namespace ember::ring;

namespace {

using bench::median;
using bench::primes_for;

/// Times forward and inverse NTTs of limbs x N polynomials (`prime_bits`-bit primes) with each
/// variant. "hot": the same buffer every run (it may stay in L2, as in peers' benchmarks);
/// "cold": round-robin over enough buffers (>= 256 MiB in all) that each run reads DRAM.
/// Before timing, checks INTT(NTT(a)) == a for every variant.
nb::list bench_ntt(int log_n, std::size_t limbs, const std::string& device,
                   const std::vector<std::string>& variants, int prime_bits, int warmup, int iters,
                   bool one_prime) {
  const std::size_t n = std::size_t{1} << log_n;
  // one_prime: every row under the first prime, so the twiddle table (N words per prime) stays
  // in L2 and the times show what reading the tables of `limbs` primes costs.
  auto ctx = RingContext::create(n, generate_ntt_primes(prime_bits, n, one_prime ? 1 : limbs));
  RnsBasis basis =
      one_prime ? RnsBasis::unchecked(ctx, std::vector<u32>(limbs, 0)) : RnsBasis::all(ctx);
  const Device dev = backend::parse_device(device);
  ChaChaKey key{};
  Sampler sampler(key);
  const std::size_t bytes = n * limbs * sizeof(u64);
  const std::size_t rotation =
      std::min<std::size_t>(64, std::max<std::size_t>(1, (std::size_t{256} << 20) / bytes + 1));
  std::vector<RnsPoly> polys;
  for (std::size_t i = 0; i < rotation; ++i)
    polys.push_back(sampler.uniform(basis, dev, Form::coeff));
  const std::vector<u64> before = polys[0].to_host();
  auto& be = polys[0].backend();
  const auto view = polys[0].view();
  nb::list out;
  // Each variant runs under the backend's options with that ntt_variant; the caller's options
  // come back afterwards, also when a run throws.
  const backend::BackendOptions before_options = be.options();
  struct Restore {
    backend::Backend& be;
    const backend::BackendOptions& o;
    // Cannot throw: these options were valid and their snapshot is kept (no allocation).
    ~Restore() { be.set_options(o); }
  } restore{be, before_options};
  for (const std::string& variant : variants) {
    backend::BackendOptions o = before_options;
    o.ntt_variant = variant;
    be.set_options(o);
    RnsPoly check = polys[0].copy();
    be.ntt_forward_async(check.data(), view, 1, be.default_stream());
    be.ntt_inverse_async(check.data(), view, 1, be.default_stream());
    const bool roundtrip_ok = check.to_host() == before;
    u64* hot = polys[0].data();
    std::size_t next = 0;
    auto cold = [&]() { return polys[next++ % rotation].data(); };
    auto fwd_hot = be.time_runs([&](backend::Stream s) { be.ntt_forward_async(hot, view, 1, s); },
                                warmup, iters);
    auto inv_hot = be.time_runs([&](backend::Stream s) { be.ntt_inverse_async(hot, view, 1, s); },
                                warmup, iters);
    auto fwd_cold = be.time_runs(
        [&](backend::Stream s) { be.ntt_forward_async(cold(), view, 1, s); }, warmup, iters);
    next = 0;  // each buffer gets as many inverses as forwards, so all of them return to `before`
    auto inv_cold = be.time_runs(
        [&](backend::Stream s) { be.ntt_inverse_async(cold(), view, 1, s); }, warmup, iters);
    nb::dict d;
    d["log_n"] = log_n;
    d["limbs"] = limbs;
    d["prime_bits"] = prime_bits;
    d["one_prime"] = one_prime;
    d["device"] = dev.str();
    d["variant"] = variant == "auto" ? "auto:" + be.ntt_variant_for(n, limbs, prime_bits) : variant;
    d["forward_us"] = median(fwd_hot) * 1e3;
    d["inverse_us"] = median(inv_hot) * 1e3;
    d["forward_cold_us"] = median(fwd_cold) * 1e3;
    d["inverse_cold_us"] = median(inv_cold) * 1e3;
    d["bytes_per_pass"] = static_cast<double>(2 * bytes);
    d["roundtrip_ok"] = roundtrip_ok;
    out.append(d);
  }
  return out;
}

/// The 32-bit-word transforms against the 64-bit ones over the same `limbs` primes of 30 bits
/// (below 2^30, as 32-bit words need) at N = 2^log_n, in one process on one device: median
/// microseconds of a forward and an inverse NTT of the whole batch (hot buffers), and whether the
/// 32-bit forward transform's words equal the 64-bit one's and the round trip returns the input.
nb::dict bench_ntt32(int log_n, std::size_t limbs, const std::string& device, int warmup,
                     int iters) {
  const std::size_t n = std::size_t{1} << log_n;
  auto ctx = RingContext::create(n, generate_ntt_primes(30, n, limbs));
  const RnsBasis basis = RnsBasis::all(ctx);
  const Device dev = backend::parse_device(device);
  ChaChaKey key{};
  Sampler sampler(key);
  RnsPoly wide = sampler.uniform(basis, dev, Form::coeff);
  auto& be = wide.backend();
  const std::vector<u64> before = wide.to_host();
  const std::vector<u32> narrow_host(before.begin(), before.end());
  const backend::Stream s = be.default_stream();
  backend::Buffer narrow =
      backend::Buffer::from_host(be, narrow_host.data(), narrow_host.size() * sizeof(u32), s);
  const auto view = wide.view();
  const auto view32 = basis.on32(be);
  be.ntt_forward_async(wide.data(), view, 1, s);
  be.ntt_forward_async(narrow.as<u32>(), view32, 1, s);
  std::vector<u32> fwd32(narrow_host.size());
  be.copy_to_host_async(fwd32.data(), narrow.as<const void>(), fwd32.size() * sizeof(u32), s);
  be.synchronize(s);
  const std::vector<u64> fwd64 = wide.to_host();
  const bool equal = std::equal(fwd32.begin(), fwd32.end(), fwd64.begin());
  be.ntt_inverse_async(narrow.as<u32>(), view32, 1, s);
  be.copy_to_host_async(fwd32.data(), narrow.as<const void>(), fwd32.size() * sizeof(u32), s);
  be.synchronize(s);
  const bool roundtrip = fwd32 == narrow_host;
  u32* d32 = narrow.as<u32>();
  u64* d64 = wide.data();
  auto time = [&](auto&& f) { return median(be.time_runs(f, warmup, iters)) * 1e3; };
  nb::dict d;
  d["log_n"] = log_n;
  d["limbs"] = limbs;
  d["prime_bits"] = 30;
  d["device"] = dev.str();
  d["forward32_us"] = time([&](backend::Stream t) { be.ntt_forward_async(d32, view32, 1, t); });
  d["inverse32_us"] = time([&](backend::Stream t) { be.ntt_inverse_async(d32, view32, 1, t); });
  d["forward64_us"] = time([&](backend::Stream t) { be.ntt_forward_async(d64, view, 1, t); });
  d["inverse64_us"] = time([&](backend::Stream t) { be.ntt_inverse_async(d64, view, 1, t); });
  d["bytes32_per_pass"] = static_cast<double>(2 * n * limbs * sizeof(u32));
  d["bytes64_per_pass"] = static_cast<double>(2 * n * limbs * sizeof(u64));
  d["forward_equal_64"] = equal;
  d["roundtrip_ok"] = roundtrip;
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
  auto t = be.time_runs(
      [&](backend::Stream st) { be.copy_async(b.as<void>(), a.as<void>(), bytes, st); }, 3, iters);
  return 2.0 * bytes / (median(t) * 1e-3) / 1e9;
}

/// Times the CKKS operations at the top level of (q_bits, p_bits, dnum): medians in ms.
nb::dict bench_ckks(int log_n, const std::vector<int>& q_bits, const std::vector<int>& p_bits,
                    std::size_t dnum, const std::string& device, int warmup, int iters) {
  using rlwe::Ciphertext;
  const std::size_t n = std::size_t{1} << log_n;
  std::vector<u64> used;
  const auto q = primes_for(q_bits, n, used);
  const auto p = primes_for(p_bits, n, used);
  const Device dev = backend::parse_device(device);
  ckks::Context ctx(n, q, p, dnum, dev);
  auto& r = ctx.rlwe();
  auto& be = r.backend();
  ChaChaKey key{};
  Sampler sampler(key);
  const auto sk = r.keygen(sampler);
  const auto pk = r.public_key(sk, sampler);
  const auto relin = r.relin_key(sk, sampler);
  std::vector<rlwe::SwitchKey> rot;
  for (u64 step = 1; step <= 8; ++step) {
    u64 g = 1;
    for (u64 i = 0; i < step; ++i) g = g * 5 % (2 * n);
    rot.push_back(r.galois_key(sk, g, sampler));
  }
  std::vector<const rlwe::SwitchKey*> rot_ptrs;
  for (const auto& k : rot) rot_ptrs.push_back(&k);
  const std::size_t top = ctx.max_level();
  const double scale = std::ldexp(1.0, q_bits.size() > 1 ? q_bits[1] : 40);
  std::vector<double> coeffs(n);
  for (std::size_t i = 0; i < n; ++i) coeffs[i] = std::sin(0.001 * static_cast<double>(i)) * 1e-3;
  const RnsPoly pt = ctx.encode_coeffs(coeffs.data(), top, scale);
  Ciphertext a = r.encrypt(pt, pk, sampler);
  Ciphertext b = r.encrypt(pt, pk, sampler);
  a.scale = b.scale = scale;
  const Ciphertext prod3 = ctx.multiply_no_relin(a, b);
  const Ciphertext prod = ctx.relinearize(prod3, relin);
  be.synchronize(be.default_stream());
  auto med = [&](const std::function<void()>& f) {
    return median(be.time_runs([&](backend::Stream) { f(); }, warmup, iters));
  };
  nb::dict d;
  d["log_n"] = log_n;
  d["q_primes"] = q.size();
  d["p_primes"] = p.size();
  d["dnum"] = r.dnum();
  d["device"] = dev.str();
  d["encode_ms"] = med([&] { ctx.encode_coeffs(coeffs.data(), top, scale); });
  d["encrypt_ms"] = med([&] { r.encrypt(pt, pk, sampler); });
  // Exact decryption over every prime of the level, as ctx.decrypt does.
  d["decrypt_ms"] = med([&] { ctx.decode_coeffs(r.decrypt_core(a, sk, a.level + 1), scale); });
  d["add_ms"] = med([&] { ctx.add(a, b); });
  d["multiply_relin_ms"] = med([&] { ctx.multiply(a, b, relin); });
  d["relinearize_ms"] = med([&] { ctx.relinearize(prod3, relin); });
  d["rescale_ms"] = med([&] { ctx.rescale(prod); });
  // What ct * ct costs a CKKS user: product, relinearization and rescale, fused (one division).
  d["multiply_relin_rescale_ms"] = med([&] { ctx.multiply_divide(a, b, relin); });
  d["rotate_ms"] = med([&] { ctx.apply_galois(a, rot[0]); });
  d["hoisted_rotate8_ms"] = med([&] { ctx.apply_galois_hoisted(a, rot_ptrs); });
  d["key_bytes"] = static_cast<double>(relin.data.bytes());
  return d;
}

}  // namespace

nb::dict bench_integer(const std::string& scheme, int log_n, const std::vector<int>& q_bits,
                       const std::vector<int>& p_bits, u64 t, const std::string& device, int warmup,
                       int iters);

void bind_bench(nb::module_& m) {
  m.def("bench_integer", &bench_integer, nb::arg("scheme"), nb::arg("log_n"), nb::arg("q_bits"),
        nb::arg("p_bits"), nb::arg("t"), nb::arg("device") = "cpu", nb::arg("warmup") = 3,
        nb::arg("iters") = 20);
  m.def("bench_ckks", &bench_ckks, nb::arg("log_n"), nb::arg("q_bits"), nb::arg("p_bits"),
        nb::arg("dnum"), nb::arg("device") = "cpu", nb::arg("warmup") = 3, nb::arg("iters") = 20);
  m.def("bench_ntt", &bench_ntt, nb::arg("log_n"), nb::arg("limbs"), nb::arg("device") = "cpu",
        nb::arg("variants") = std::vector<std::string>{"auto"}, nb::arg("prime_bits") = 50,
        nb::arg("warmup") = 5, nb::arg("iters") = 50, nb::arg("one_prime") = false);
  m.def("bench_ntt32", &bench_ntt32, nb::arg("log_n"), nb::arg("limbs"), nb::arg("device") = "cpu",
        nb::arg("warmup") = 5, nb::arg("iters") = 50);
  m.def("copy_bandwidth", &copy_bandwidth, nb::arg("device"), nb::arg("mb") = 512,
        nb::arg("iters") = 20);
}
