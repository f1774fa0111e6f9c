#include <stdint.h>
#include <stdbool.h>
int32_t casts(int32_t x) {
  int8_t a = (int8_t)x;
  uint8_t b = (uint8_t)x;
  int16_t c = (int16_t)(uint16_t)(x >> 4);
  bool d = (bool)(x & 0x100);
  uint32_t e = (uint32_t)(int8_t)b;
  return a + b + c + d + (int32_t)(e >> 24);
}
