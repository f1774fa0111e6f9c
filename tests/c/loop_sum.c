#include <stdint.h>
uint16_t loop_sum(const uint8_t a[8]) {
  uint16_t s = 0;
  for (int i = 0; i < 8; i++) s += a[i];
  return s;
}
