// Moves of keys and ciphertexts between devices.
#include "ember/rlwe/keys.h"

namespace ember::rlwe {

namespace {
/// Keys are complete when moved: operations on any stream of the device may read them.
void settle(backend::Device device) { backend::backend_for(device).synchronize({}); }
}  // namespace

template <class W>
SecretKeyT<W> SecretKeyT<W>::to(backend::Device device) const {
  SecretKeyT k{s.to(device), key_id, params_id};
  settle(device);
  return k;
}

template <class W>
PublicKeyT<W> PublicKeyT<W>::to(backend::Device device) const {
  PublicKeyT k{b.to(device), a.to(device), seed, seed_nonce, key_id, params_id};
  settle(device);
  return k;
}

template <class W>
SwitchKeyT<W> SwitchKeyT<W>::to(backend::Device device) const {
  auto& src = *data.backend();
  auto& dst = backend::backend_for(device);
  backend::Buffer moved(dst, data.bytes(), backend::Stream{});
  backend::copy_between_devices(dst, moved.as<void>(), backend::Stream{}, src,
                                data.as<const void>(), backend::Stream{}, data.bytes());
  settle(device);
  return SwitchKeyT{std::move(moved), dnum, rows, seed, seed_nonce, galois, key_id, params_id};
}

template <class W>
CiphertextT<W> CiphertextT<W>::to(backend::Device device) const {
  if (polys.empty()) return with_polys({});
  // Back to back in one allocation, as the evaluator makes them (one launch can take them all).
  std::vector<Poly> moved = Poly::batch(polys[0].basis(), polys[0].form(), device, polys.size());
  for (std::size_t i = 0; i < polys.size(); ++i) {
    auto &dst = moved[i].backend(), &src = polys[i].backend();
    backend::copy_between_devices(dst, moved[i].data(), backend::Stream{}, src, polys[i].data(),
                                  polys[i].stream(), polys[i].words() * sizeof(W));
    moved[i].set_form(polys[i].form());
  }
  return with_polys(std::move(moved));
}

template <class W>
CiphertextT<W> CiphertextT<W>::on_stream(backend::Stream stream) const {
  std::vector<Poly> moved;
  for (const auto& p : polys) moved.push_back(p.on_stream(stream));
  return with_polys(std::move(moved));
}

template struct SecretKeyT<u64>;
template struct SecretKeyT<u32>;
template struct PublicKeyT<u64>;
template struct PublicKeyT<u32>;
template struct SwitchKeyT<u64>;
template struct SwitchKeyT<u32>;
template struct CiphertextT<u64>;
template struct CiphertextT<u32>;

}  // namespace ember::rlwe
