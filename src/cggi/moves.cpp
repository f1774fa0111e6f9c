// Copies of CGGI ciphertext batches and server keys on another device.
#include <memory>

#include "ember/backend/backend.h"
#include "ember/cggi/context.h"

namespace ember::cggi {

namespace {
/// A copy of `src` (written on `src_stream` of its backend) on `device`, complete when returned.
backend::Buffer copy_to(const backend::Buffer& src, backend::Stream src_stream,
                        backend::Device device) {
  auto& dst_be = backend::backend_for(device);
  backend::Buffer dst(dst_be, src.bytes(), backend::Stream{});
  if (src.bytes())
    backend::copy_between_devices(dst_be, dst.as<void>(), backend::Stream{}, *src.backend(),
                                  src.as<void>(), src_stream, src.bytes());
  dst_be.synchronize(backend::Stream{});
  return dst;
}
}  // namespace

LweBatch LweBatch::to(backend::Device device) const {
  LweBatch c = *this;
  c.stream = backend::Stream{};
  if (words) c.words = std::make_shared<backend::Buffer>(copy_to(*words, stream, device));
  return c;
}

ServerKey ServerKey::to(backend::Device device) const {
  ServerKey k;
  k.params_id = params_id;
  k.key_id = key_id;
  k.bsk = copy_to(bsk, backend::Stream{}, device);
  k.ksk = copy_to(ksk, backend::Stream{}, device);
  return k;
}

}  // namespace ember::cggi
