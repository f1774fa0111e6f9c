// ChaCha20 block function (counter-based), host and device: the CSPRNG behind every sampler.
//
// Word w (64-bit) of stream (key, nonce) is word w % 8 of block w / 8; each block is computed
// independently from its counter, so a GPU thread and the CPU draw exactly the same words.
#pragma once

#include <cstdint>

#include "ember/core/config.h"

namespace ember {

struct ChaChaKey {
  std::uint32_t words[8];
};

EMBER_HD std::uint32_t chacha_rotl(std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

EMBER_HD void chacha_quarter(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c,
                             std::uint32_t& d) {
  a += b;
  d = chacha_rotl(d ^ a, 16);
  c += d;
  b = chacha_rotl(b ^ c, 12);
  a += b;
  d = chacha_rotl(d ^ a, 8);
  c += d;
  b = chacha_rotl(b ^ c, 7);
}

/// One 64-byte ChaCha20 block (20 rounds) with a 64-bit block counter and a 64-bit nonce
/// (Bernstein's original layout), returned as 16 little-endian 32-bit words.
EMBER_HD void chacha20_block(const ChaChaKey& key, std::uint64_t counter, std::uint64_t nonce,
                             std::uint32_t out[16]) {
  std::uint32_t s[16] = {0x61707865u,
                         0x3320646eu,
                         0x79622d32u,
                         0x6b206574u,
                         key.words[0],
                         key.words[1],
                         key.words[2],
                         key.words[3],
                         key.words[4],
                         key.words[5],
                         key.words[6],
                         key.words[7],
                         static_cast<std::uint32_t>(counter),
                         static_cast<std::uint32_t>(counter >> 32),
                         static_cast<std::uint32_t>(nonce),
                         static_cast<std::uint32_t>(nonce >> 32)};
  std::uint32_t x[16];
  for (int i = 0; i < 16; ++i) x[i] = s[i];
  for (int round = 0; round < 10; ++round) {
    chacha_quarter(x[0], x[4], x[8], x[12]);
    chacha_quarter(x[1], x[5], x[9], x[13]);
    chacha_quarter(x[2], x[6], x[10], x[14]);
    chacha_quarter(x[3], x[7], x[11], x[15]);
    chacha_quarter(x[0], x[5], x[10], x[15]);
    chacha_quarter(x[1], x[6], x[11], x[12]);
    chacha_quarter(x[2], x[7], x[8], x[13]);
    chacha_quarter(x[3], x[4], x[9], x[14]);
  }
  for (int i = 0; i < 16; ++i) out[i] = x[i] + s[i];
}

/// The 8 consecutive 64-bit words of block `counter`.
EMBER_HD void chacha20_words(const ChaChaKey& key, std::uint64_t counter, std::uint64_t nonce,
                             std::uint64_t out[8]) {
  std::uint32_t w[16];
  chacha20_block(key, counter, nonce, w);
  for (int i = 0; i < 8; ++i)
    out[i] =
        static_cast<std::uint64_t>(w[2 * i]) | (static_cast<std::uint64_t>(w[2 * i + 1]) << 32);
}

/// Fills a key from the operating system's CSPRNG (getrandom / /dev/urandom). Throws Error when
/// the OS source is unavailable.
ChaChaKey chacha_key_from_os();

}  // namespace ember
