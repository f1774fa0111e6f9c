// Keys for the ChaCha20 CSPRNG from the operating system's entropy source.
#include "ember/core/chacha20.h"

#include <sys/random.h>

#include <cerrno>
#include <cstddef>

#include "ember/core/errors.h"

namespace ember {

ChaChaKey chacha_key_from_os() {
  ChaChaKey key{};
  auto* bytes = reinterpret_cast<unsigned char*>(key.words);
  std::size_t filled = 0;
  while (filled < sizeof(key.words)) {
    ssize_t got = getrandom(bytes + filled, sizeof(key.words) - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error("the operating system's random source (getrandom) failed; cannot draw a key");
    }
    filled += static_cast<std::size_t>(got);
  }
  return key;
}

}  // namespace ember
