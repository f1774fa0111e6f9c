#include <stdint.h>
static const uint8_t SBOX[16] = {0xc, 5, 6, 0xb, 9, 0, 0xa, 0xd, 3, 0xe, 0xf, 8, 4, 7, 1, 2};
uint8_t lut_sbox(uint8_t x) { return (uint8_t)(SBOX[x >> 4] << 4 | SBOX[x & 15]); }
