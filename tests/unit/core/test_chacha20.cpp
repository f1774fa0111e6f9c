// Known-answer tests of the ChaCha20 block function (ember/core/chacha20.h).
//
// Ember uses Bernstein's layout: state words 12..13 are a 64-bit block counter and 14..15 a 64-bit
// nonce. The RFC 7539 test vectors use a 32-bit counter and a 96-bit nonce in the same four words,
// so they map onto ours as counter = word12 | word13 << 32 and nonce = word14 | word15 << 32.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>

#include "ember/core/chacha20.h"

namespace {

using ember::ChaChaKey;

ChaChaKey key_from_bytes(const std::uint8_t (&b)[32]) {
  ChaChaKey k;
  for (int i = 0; i < 8; ++i)
    k.words[i] = static_cast<std::uint32_t>(b[4 * i]) |
                 static_cast<std::uint32_t>(b[4 * i + 1]) << 8 |
                 static_cast<std::uint32_t>(b[4 * i + 2]) << 16 |
                 static_cast<std::uint32_t>(b[4 * i + 3]) << 24;
  return k;
}

void serialize(const std::uint32_t w[16], std::uint8_t out[64]) {
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(w[i] >> (8 * j));
}

void expect_block(const ChaChaKey& key, std::uint64_t counter, std::uint64_t nonce,
                  const std::uint8_t (&expected)[64]) {
  std::uint32_t w[16];
  ember::chacha20_block(key, counter, nonce, w);
  std::uint8_t got[64];
  serialize(w, got);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(got[i], expected[i]) << "byte " << i << " counter=" << counter << " nonce=" << nonce;
}

TEST(ChaCha20, QuarterRoundRfc7539Section211) {
  std::uint32_t a = 0x11111111, b = 0x01020304, c = 0x9b8d6f43, d = 0x01234567;
  ember::chacha_quarter(a, b, c, d);
  EXPECT_EQ(a, 0xea2a92f4u);
  EXPECT_EQ(b, 0xcb1cf8ceu);
  EXPECT_EQ(c, 0x4581472eu);
  EXPECT_EQ(d, 0x5881c4bbu);
}

TEST(ChaCha20, BlockRfc7539Section232) {
  std::uint8_t kb[32];
  for (int i = 0; i < 32; ++i) kb[i] = static_cast<std::uint8_t>(i);
  const ChaChaKey key = key_from_bytes(kb);
  // RFC: block count 1, nonce 00 00 00 09 00 00 00 4a 00 00 00 00 (state words 13..15 =
  // 0x09000000, 0x4a000000, 0x00000000).
  const std::uint64_t counter = 0x0900000000000001ull;
  const std::uint64_t nonce = 0x000000004a000000ull;
  const std::uint8_t expected[64] = {
      0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3,
      0x20, 0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22,
      0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa,
      0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1,
      0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
  expect_block(key, counter, nonce, expected);

  // The state words of the RFC's "after adding the original state" dump.
  std::uint32_t w[16];
  ember::chacha20_block(key, counter, nonce, w);
  const std::uint32_t words[16] = {0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3,
                                   0xc7f4d1c7, 0x0368c033, 0x9aaa2204, 0x4e6cd4c3,
                                   0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                                   0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(w[i], words[i]) << "word " << i;
}

TEST(ChaCha20, BlockRfc7539AppendixA1ZeroKey) {
  const std::uint8_t zero[32] = {};
  const ChaChaKey key = key_from_bytes(zero);
  // Test vector #1: all-zero key and nonce, block counter 0.
  const std::uint8_t v1[64] = {0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a,
                               0xe5, 0x53, 0x86, 0xbd, 0x28, 0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d,
                               0xed, 0x1a, 0xa8, 0x36, 0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7, 0xda,
                               0x41, 0x59, 0x7c, 0x51, 0x57, 0x48, 0x8d, 0x77, 0x24, 0xe0, 0x3f,
                               0xb8, 0xd8, 0x4a, 0x37, 0x6a, 0x43, 0xb8, 0xf4, 0x15, 0x18, 0xa1,
                               0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86};
  expect_block(key, 0, 0, v1);
  // Test vector #2: the same with block counter 1.
  const std::uint8_t v2[64] = {0x9f, 0x07, 0xe7, 0xbe, 0x55, 0x51, 0x38, 0x7a, 0x98, 0xba, 0x97,
                               0x7c, 0x73, 0x2d, 0x08, 0x0d, 0xcb, 0x0f, 0x29, 0xa0, 0x48, 0xe3,
                               0x65, 0x69, 0x12, 0xc6, 0x53, 0x3e, 0x32, 0xee, 0x7a, 0xed, 0x29,
                               0xb7, 0x21, 0x76, 0x9c, 0xe6, 0x4e, 0x43, 0xd5, 0x71, 0x33, 0xb0,
                               0x74, 0xd8, 0x39, 0xd5, 0x31, 0xed, 0x1f, 0x28, 0x51, 0x0a, 0xfb,
                               0x45, 0xac, 0xe1, 0x0a, 0x1f, 0x4b, 0x79, 0x4d, 0x6f};
  expect_block(key, 1, 0, v2);
}

TEST(ChaCha20, WordsAreLittleEndianPairsOfBlockWords) {
  ChaChaKey key;
  for (int i = 0; i < 8; ++i) key.words[i] = 0x01010101u * static_cast<std::uint32_t>(i + 1);
  for (std::uint64_t counter : {0ull, 1ull, 0xffffffffull, 0x100000000ull, ~0ull}) {
    std::uint32_t w[16];
    std::uint64_t words[8];
    ember::chacha20_block(key, counter, 77, w);
    ember::chacha20_words(key, counter, 77, words);
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(words[i], static_cast<std::uint64_t>(w[2 * i]) |
                              static_cast<std::uint64_t>(w[2 * i + 1]) << 32);
  }
}

TEST(ChaCha20, CounterAndNonceHighWordsMatter) {
  // All 64 bits of counter and nonce enter the state: flipping any bit changes the block.
  const std::uint8_t zero[32] = {};
  const ChaChaKey key = key_from_bytes(zero);
  std::set<std::uint64_t> firsts;
  std::uint64_t w[8];
  ember::chacha20_words(key, 0, 0, w);
  firsts.insert(w[0]);
  for (int bit = 0; bit < 64; ++bit) {
    ember::chacha20_words(key, std::uint64_t{1} << bit, 0, w);
    firsts.insert(w[0]);
    ember::chacha20_words(key, 0, std::uint64_t{1} << bit, w);
    firsts.insert(w[0]);
  }
  EXPECT_EQ(firsts.size(), 129u);
}

TEST(ChaCha20, OsKeysDiffer) {
  const ChaChaKey a = ember::chacha_key_from_os();
  const ChaChaKey b = ember::chacha_key_from_os();
  EXPECT_NE(std::memcmp(a.words, b.words, sizeof(a.words)), 0);
}

}  // namespace
