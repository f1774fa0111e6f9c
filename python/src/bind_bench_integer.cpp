// BFV / BGV operation timings (the C++ side of `ember bench bfv|bgv`).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "bench_util.h"
#include "ember/bfv/context.h"
#include "ember/bgv/context.h"
#include "ember/core/errors.h"
#include "ember/ring/sampler.h"

namespace nb = nanobind;
using namespace ember;
using ember::rlwe::Ciphertext;

namespace {

u64 galois_for_step(u64 step, std::size_t n) {
  u64 g = 1;
  for (u64 i = 0; i < step; ++i) g = g * 5 % (2 * n);
  return g;
}

/// The keys (secret, public, relinearization, rotation by one, row swap) and the timers of one
/// scheme context.
template <class Ctx>
struct Bench {
  const Ctx& ctx;
  rlwe::Context& r;
  backend::Backend& be;
  ring::Sampler sampler{ChaChaKey{}};
  int warmup, iters;
  rlwe::SecretKey sk;
  rlwe::PublicKey pk;
  rlwe::SwitchKey relin, rot, swap;
  Bench(const Ctx& c, int w, int i)
      : ctx(c),
        r(const_cast<rlwe::Context&>(c.rlwe())),
        be(r.backend()),
        warmup(w),
        iters(i),
        sk(r.keygen(sampler)),
        pk(r.public_key(sk, sampler)),
        relin(r.relin_key(sk, sampler)),
        rot(r.galois_key(sk, galois_for_step(1, c.n()), sampler)),
        swap(r.galois_key(sk, 2 * c.n() - 1, sampler)) {}
  double ms(const std::function<void()>& f) {
    return bench::median(be.time_runs([&](backend::Stream) { f(); }, warmup, iters));
  }
  /// Host wall clock per run of 10 back-to-back runs, synchronized (what a caller waits).
  double wall_ms(const std::function<void()>& f) {
    const auto s = be.default_stream();
    be.synchronize(s);
    std::vector<double> v;
    for (int i = 0; i < std::max(3, iters / 4); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < 10; ++k) f();
      be.synchronize(s);
      v.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
          10);
    }
    return bench::median(v);
  }
};

}  // namespace

/// Medians (ms) of key generation, encryption, decryption, add, multiply (+relinearize), rotate
/// and row swap at the top level; for BGV also modulus switching.
nb::dict bench_integer(const std::string& scheme, int log_n, const std::vector<int>& q_bits,
                       const std::vector<int>& p_bits, u64 t, const std::string& device, int warmup,
                       int iters) {
  const std::size_t n = std::size_t{1} << log_n;
  std::vector<u64> used;
  const auto q = bench::primes_for(q_bits, n, used);
  const auto p = bench::primes_for(p_bits, n, used);
  const backend::Device dev = backend::parse_device(device);
  std::vector<u64> m(n);
  std::vector<std::int64_t> m_signed(n);
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = (i * 2654435761u) % t;
    m_signed[i] = m[i] > t / 2 ? static_cast<std::int64_t>(m[i]) - static_cast<std::int64_t>(t)
                               : static_cast<std::int64_t>(m[i]);
  }
  nb::dict d;
  d["scheme"] = scheme;
  d["log_n"] = log_n;
  d["q_primes"] = q.size();
  d["p_primes"] = p.size();
  d["t"] = t;
  d["device"] = dev.str();
  double log_qp = 0;
  for (u64 x : q) log_qp += std::log2(static_cast<double>(x));
  for (u64 x : p) log_qp += std::log2(static_cast<double>(x));
  d["log_qp"] = log_qp;

  auto common = [&](auto& b, const Ciphertext& x, const Ciphertext& y) {
    auto& r = b.r;
    auto& sampler = b.sampler;
    const auto& sk = b.sk;
    d["keygen_sk_ms"] = b.ms([&] { r.keygen(sampler); });
    d["keygen_pk_ms"] = b.ms([&] { r.public_key(sk, sampler); });
    d["keygen_relin_ms"] = b.ms([&] { r.relin_key(sk, sampler); });
    d["add_ms"] = b.ms([&] { b.ctx.add(x, y); });
  };

  if (scheme == "bfv") {
    const std::vector<u64> aux = bfv::choose_aux_primes(n, q, p, t);
    d["aux_primes"] = aux.size();
    bfv::Context ctx(n, q, p, q.size(), t, aux, dev);
    Bench<bfv::Context> b(ctx, warmup, iters);
    auto& r = b.r;
    auto& sampler = b.sampler;
    backend::Buffer m_dev =
        backend::Buffer::from_host(b.be, m.data(), n * sizeof(u64), b.be.default_stream());
    const auto scaled = [&] { return ctx.scale_plain(m_dev.as<u64>(), ctx.max_level()); };
    const Ciphertext x = ctx.encrypt(scaled(), b.pk, sampler);
    const Ciphertext y = ctx.encrypt(scaled(), b.pk, sampler);
    if (ctx.decrypt(x, b.sk) != m) throw Error("bench bfv: decryption check failed");
    const Ciphertext x3 = ctx.multiply_no_relin(x, y);
    common(b, x, y);
    // Encryption timed from the message: its scaling is part of it.
    d["encrypt_ms"] = b.ms([&] { ctx.encrypt(scaled(), b.pk, sampler); });
    d["encrypt_symmetric_ms"] = b.ms([&] { ctx.encrypt_symmetric(scaled(), b.sk, sampler); });
    d["decrypt_ms"] = b.ms([&] { ctx.decrypt_rounded(x, b.sk); });
    d["multiply_ms"] = b.ms([&] { ctx.multiply_no_relin(x, y); });
    d["relinearize_ms"] = b.ms([&] { ctx.relinearize(x3, b.relin); });
    d["multiply_relin_ms"] = b.ms([&] { ctx.multiply(x, y, b.relin); });
    d["multiply_relin_wall_ms"] = b.wall_ms([&] { ctx.multiply(x, y, b.relin); });
    d["rotate_ms"] = b.ms([&] { ctx.apply_galois(x, b.rot); });
    d["rotate_wall_ms"] = b.wall_ms([&] { ctx.apply_galois(x, b.rot); });
    d["rotate_columns_ms"] = b.ms([&] { ctx.apply_galois(x, b.swap); });
    d["mod_switch_ms"] = b.ms([&] { ctx.mod_switch(x, ctx.max_level() - 1); });
    d["key_bytes"] = static_cast<double>(b.relin.data.bytes());
  } else if (scheme == "bgv") {
    bgv::Context ctx(n, q, p, q.size(), t, dev);
    Bench<bgv::Context> b(ctx, warmup, iters);
    auto& r = b.r;
    auto& sampler = b.sampler;
    const auto top = r.q_basis(ctx.max_level());
    // The plaintext's residues are uploaded once, as BFV's m_dev is: encryption is timed from a
    // device copy of them through the NTT into eval form (the upload from pageable host memory
    // synchronized the stream inside the timed region).
    const ring::RnsPoly m_coeff =
        ring::RnsPoly::from_signed(top, ring::Form::coeff, dev, m_signed.data());
    auto lift = [&] {
      ring::RnsPoly pt = m_coeff.copy();
      pt.ntt_inplace();
      return pt;
    };
    const Ciphertext x = r.encrypt(lift(), b.pk, sampler);
    const Ciphertext y = r.encrypt(lift(), b.pk, sampler);
    if (ctx.decrypt(x, b.sk) != m) throw Error("bench bgv: decryption check failed");
    const Ciphertext x3 = ctx.multiply_no_relin(x, y);
    const Ciphertext xy = ctx.multiply(x, y, b.relin);
    common(b, x, y);
    d["encrypt_ms"] = b.ms([&] { r.encrypt(lift(), b.pk, sampler); });
    d["encrypt_symmetric_ms"] = b.ms([&] { r.encrypt_symmetric(lift(), b.sk, sampler); });
    // Device part of decryption: c0 + c1 s switched to q_0 (coefficient form).
    u64 factor = 0;
    d["decrypt_ms"] = b.ms([&] { ctx.decrypt_low(x, b.sk, factor); });
    d["multiply_ms"] = b.ms([&] { ctx.multiply_no_relin(x, y); });
    d["relinearize_ms"] = b.ms([&] { ctx.relinearize(x3, b.relin); });
    d["multiply_relin_ms"] = b.ms([&] { ctx.multiply(x, y, b.relin); });
    d["mod_switch_ms"] = b.ms([&] { ctx.mod_switch(xy, ctx.max_level() - 1); });
    // What ct * ct costs a BGV user (automatic modulus switching): one division by P q_l.
    auto mul_ms = [&] { ctx.multiply_divide(x, y, b.relin); };
    d["multiply_relin_modswitch_ms"] = b.ms(mul_ms);
    d["multiply_relin_modswitch_wall_ms"] = b.wall_ms(mul_ms);
    d["rotate_ms"] = b.ms([&] { ctx.apply_galois(x, b.rot); });
    d["rotate_wall_ms"] = b.wall_ms([&] { ctx.apply_galois(x, b.rot); });
    d["rotate_columns_ms"] = b.ms([&] { ctx.apply_galois(x, b.swap); });
    d["key_bytes"] = static_cast<double>(b.relin.data.bytes());
  } else {
    throw ParameterError("bench_integer: scheme must be bfv or bgv");
  }
  return d;
}
