#include <stdint.h>
uint16_t compound(uint16_t a, uint16_t b) {
  uint16_t x = a;
  x += b; x -= 3; x *= 5; x ^= b; x |= 1; x &= 0x7fff;
  x <<= b & 7; x >>= 2;
  if (b != 0) { x /= b; x %= 1000; }
  return x;
}
