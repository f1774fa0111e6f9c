#include <stdint.h>
uint16_t div_u8(uint8_t a, uint8_t b) {
  if (b == 0) return 0xffff;
  return (uint16_t)((a / b) << 8 | (a % b));
}
