// Moves of keys and ciphertexts between devices.
#include "ember/rlwe/keys.h"

namespace ember::rlwe {

SecretKey SecretKey::to(backend::Device device) const {
  return SecretKey{s.to(device), key_id, params_id};
}

PublicKey PublicKey::to(backend::Device device) const {
  return PublicKey{b.to(device), a.to(device), seed, seed_nonce, key_id, params_id};
}

SwitchKey SwitchKey::to(backend::Device device) const {
  auto& src = *data.backend();
  auto& dst = backend::backend_for(device);
  backend::Buffer moved(dst, data.bytes(), dst.default_stream());
  backend::copy_between_devices(dst, moved.as<void>(), dst.default_stream(), src,
                                data.as<const void>(), src.default_stream(), data.bytes());
  return SwitchKey{std::move(moved), dnum, rows, seed, seed_nonce, galois, key_id, params_id};
}

Ciphertext Ciphertext::to(backend::Device device) const {
  Ciphertext c;
  if (!polys.empty()) {
    // Back to back in one allocation, as the evaluator makes them (one launch can take them all).
    c.polys = RnsPoly::batch(polys[0].basis(), polys[0].form(), device, polys.size());
    for (std::size_t i = 0; i < polys.size(); ++i) {
      auto &dst = c.polys[i].backend(), &src = polys[i].backend();
      backend::copy_between_devices(dst, c.polys[i].data(), dst.default_stream(), src,
                                    polys[i].data(), src.default_stream(),
                                    polys[i].words() * sizeof(u64));
      c.polys[i].set_form(polys[i].form());
    }
  }
  c.level = level;
  c.scale = scale;
  c.factor = factor;
  c.key_id = key_id;
  c.params_id = params_id;
  return c;
}

}  // namespace ember::rlwe
