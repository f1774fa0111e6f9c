// Bindings shared by the RLWE schemes: keys, ciphertexts and every rlwe::Evaluator operation,
// added to a scheme's context class by bind_evaluator().
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <vector>

#include "ember/backend/backend.h"
#include "ember/core/errors.h"
#include "ember/rlwe/evaluator.h"

namespace ember::bind {

namespace nb = nanobind;
using rlwe::Ciphertext;
using rlwe::PublicKey;
using rlwe::SecretKey;
using rlwe::SwitchKey;

/// SecretKey, PublicKey, SwitchKey and Ciphertext, and their 32-bit forms SecretKey32, ...
/// (once per module).
void bind_rlwe_types(nb::module_& m);

inline ChaChaKey seed_from_bytes(const nb::bytes& seed, const char* what) {
  if (seed.size() != 32) throw SerializationError(std::string("malformed ") + what + " seed");
  ChaChaKey k;
  std::memcpy(k.words, seed.c_str(), 32);
  return k;
}

template <class Poly = ring::RnsPoly>
std::vector<Poly> polys_from_list(const nb::list& l) {
  std::vector<Poly> ps;
  for (auto h : l) ps.push_back(nb::cast<const Poly&>(h).copy());
  return ps;
}

/// Properties, keys, (de)serialization helpers and the shared operations of a scheme context.
/// A scheme that redefines an operation (BGV's add) gets its own through Ctx.
/// Releases the GIL for a call that only computes (no Python objects touched, no sampler drawn
/// from): threads that drive several devices (ctx.map) then run their calls concurrently.
inline constexpr auto release = nb::call_guard<nb::gil_scoped_release>();

template <class Ctx>
void bind_evaluator(nb::class_<Ctx>& c) {
  // The context's word type decides its objects' types (Ciphertext or Ciphertext32, ...).
  using W = typename Ctx::Word;
  using Ciphertext = rlwe::CiphertextT<W>;
  using SecretKey = rlwe::SecretKeyT<W>;
  using SwitchKey = rlwe::SwitchKeyT<W>;
  using Poly = ring::RnsPolyT<W>;
  c.def_prop_ro("n", [](const Ctx& x) { return x.n(); })
      .def_prop_ro("max_level", [](const Ctx& x) { return x.max_level(); })
      .def_prop_ro("dnum", [](const Ctx& x) { return x.rlwe().dnum(); })
      .def_prop_ro("alpha", [](const Ctx& x) { return x.rlwe().alpha(); })
      .def_prop_ro("params_id", [](const Ctx& x) { return x.rlwe().params_id(); })
      .def_prop_ro("device", [](const Ctx& x) { return x.rlwe().device().str(); })
      .def("prime", [](const Ctx& x, std::size_t i) { return x.prime(i); })
      // Primes of Q at a level (one more per level unless levels group several).
      .def("rows", [](const Ctx& x, std::size_t level) { return x.rlwe().rows(level); })
      .def("q_basis", [](const Ctx& x, std::size_t l) { return x.rlwe().q_basis(l); })
      .def("full_basis", [](const Ctx& x) { return x.rlwe().full_basis(); })
      .def(
          "keygen",
          [](const Ctx& x, ring::Sampler& s, std::size_t hw) { return x.rlwe().keygen(s, hw); },
          nb::arg("sampler"), nb::arg("hamming_weight") = 0)
      .def("public_key", [](const Ctx& x, const SecretKey& sk,
                            ring::Sampler& s) { return x.rlwe().public_key(sk, s); })
      .def("relin_key", [](const Ctx& x, const SecretKey& sk,
                           ring::Sampler& s) { return x.rlwe().relin_key(sk, s); })
      .def("galois_key", [](const Ctx& x, const SecretKey& sk, u64 g,
                            ring::Sampler& s) { return x.rlwe().galois_key(sk, g, s); })
      .def(
          "decrypt_core",
          [](const Ctx& x, const Ciphertext& ct, const SecretKey& sk, std::size_t limbs) {
            return x.rlwe().decrypt_core(ct, sk, limbs);
          },
          release)
      .def("make_ciphertext",
           [](const Ctx& x, nb::list polys, std::size_t level, double scale, u64 factor,
              u64 key_id) {
             return x.rlwe().make_ciphertext(polys_from_list<Poly>(polys), level, scale, factor,
                                             key_id);
           })
      .def("make_secret_key", [](const Ctx& x, const Poly& s,
                                 u64 key_id) { return x.rlwe().make_secret_key(s.copy(), key_id); })
      .def("make_public_key",
           [](const Ctx& x, const Poly& b, const nb::bytes& seed, u64 nonce, u64 key_id) {
             return x.rlwe().make_public_key(b.copy(), seed_from_bytes(seed, "public key"), nonce,
                                             key_id);
           })
      .def("make_switch_key",
           [](const Ctx& x, nb::list parts, const nb::bytes& seed, u64 nonce, u64 galois,
              u64 key_id) {
             return x.rlwe().make_switch_key(polys_from_list<Poly>(parts),
                                             seed_from_bytes(seed, "evaluation key"), nonce, galois,
                                             key_id);
           })
      .def("switch_key_part", [](const Ctx& x, const SwitchKey& k,
                                 std::size_t j) { return x.rlwe().switch_key_part(k, j); })
      .def("switch_key_uniform_part",
           [](const Ctx& x, const SwitchKey& k, std::size_t j) {
             return x.rlwe().switch_key_uniform_part(k, j);
           })
      .def_prop_ro("error_factor", [](const Ctx& x) { return x.rlwe().error_factor(); })
      .def(
          "to_form",
          [](const Ctx& x, const Ciphertext& a, const std::string& form) {
            return x.to_form(a, ring::form_from_name(form));
          },
          release)
      .def(
          "add", [](const Ctx& x, const Ciphertext& a, const Ciphertext& b) { return x.add(a, b); },
          release)
      .def(
          "sub", [](const Ctx& x, const Ciphertext& a, const Ciphertext& b) { return x.sub(a, b); },
          release)
      .def(
          "negate", [](const Ctx& x, const Ciphertext& a) { return x.negate(a); }, release)
      .def(
          "add_plain",
          [](const Ctx& x, const Ciphertext& a, const Poly& p) { return x.add_plain(a, p); },
          release)
      .def(
          "sub_plain",
          [](const Ctx& x, const Ciphertext& a, const Poly& p) { return x.sub_plain(a, p); },
          release)
      .def(
          "multiply_plain",
          [](const Ctx& x, const Ciphertext& a, const Poly& p) { return x.multiply_plain(a, p); },
          release)
      .def(
          "dot_plain",
          [](const Ctx& x, const std::vector<const Ciphertext*>& cts,
             const std::vector<const Poly*>& pts) { return x.dot_plain(cts, pts); },
          release)
      .def(
          "linear_combination",
          [](const Ctx& x, const std::vector<const Ciphertext*>& cts,
             const std::vector<std::vector<u64>>& scalars, const std::vector<u64>& constant,
             std::size_t level) { return x.linear_combination(cts, scalars, constant, level); },
          release)
      .def("linear_combinations",
           [](const Ctx& x, const std::vector<const Ciphertext*>& cts,
              nb::ndarray<const u64, nb::ndim<3>, nb::c_contig, nb::device::cpu> weights,
              const std::vector<std::vector<u64>>& constants, std::size_t level) {
             const std::size_t limbs = x.rlwe().rows(level);
             if (weights.shape(1) != cts.size() || weights.shape(2) != limbs ||
                 weights.shape(0) != constants.size())
               throw ParameterError(
                   "linear_combinations: weights [outputs][ciphertexts][primes] and one constant "
                   "list per output");
             std::vector<u64> w(weights.data(), weights.data() + weights.size());
             std::vector<u64> c;
             c.reserve(constants.size() * limbs);
             for (const auto& k : constants) {
               if (k.size() != limbs)
                 throw ParameterError("linear_combinations: one constant residue per prime");
               c.insert(c.end(), k.begin(), k.end());
             }
             nb::gil_scoped_release unlocked;
             return x.linear_combinations(cts, w, c, level);
           })
      .def(
          "multiply_scalar",
          [](const Ctx& x, const Ciphertext& a, const std::vector<u64>& r) {
            return x.multiply_scalar(a, r);
          },
          release)
      .def(
          "add_scalar",
          [](const Ctx& x, const Ciphertext& a, const std::vector<u64>& r) {
            return x.add_scalar(a, r);
          },
          release)
      .def(
          "multiply_no_relin",
          [](const Ctx& x, const Ciphertext& a, const Ciphertext& b) {
            return x.multiply_no_relin(a, b);
          },
          release)
      .def(
          "relinearize",
          [](const Ctx& x, const Ciphertext& a, const SwitchKey& k) { return x.relinearize(a, k); },
          release)
      .def(
          "multiply_divide",
          [](const Ctx& x, const Ciphertext& a, const Ciphertext& b, const SwitchKey& k,
             const Ciphertext* sub, const std::vector<u64>& sub_scalars) {
            return x.multiply_divide(a, b, k, sub, sub_scalars);
          },
          nb::arg("a"), nb::arg("b"), nb::arg("relin"), nb::arg("sub").none() = nb::none(),
          nb::arg("sub_scalars") = std::vector<u64>{}, release)
      .def(
          "multiply",
          [](const Ctx& x, const Ciphertext& a, const Ciphertext& b, const SwitchKey& k) {
            return x.multiply(a, b, k);
          },
          release)
      .def(
          "drop_level",
          [](const Ctx& x, const Ciphertext& a, std::size_t l) { return x.drop_level(a, l); },
          release)
      .def(
          "apply_galois",
          [](const Ctx& x, const Ciphertext& a, const SwitchKey& k) {
            return x.apply_galois(a, k);
          },
          release)
      .def("apply_galois_hoisted",
           [](const Ctx& x, const Ciphertext& ct, const std::vector<const SwitchKey*>& keys) {
             nb::list out;
             for (auto& r : x.apply_galois_hoisted(ct, keys)) out.append(nb::cast(std::move(r)));
             return out;
           });
}

/// The host vector as a numpy array that owns it.
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  std::size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, owner);
}

}  // namespace ember::bind
