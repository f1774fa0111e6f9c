#include <stdint.h>
#define K 7
uint32_t unsigned_wrap(uint32_t a, uint32_t b, uint8_t c) {
  uint8_t d = c - 200;
  uint32_t e = a - b;
  return e * K + d + (uint32_t)sizeof(uint16_t) + (a > b);
}
