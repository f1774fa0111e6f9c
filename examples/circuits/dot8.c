/* 16-bit dot product of length 8: dot500's multiply-accumulate at a size CI compiles quickly. */
#include <stdint.h>

int32_t dot8(const int16_t a[8], const int16_t b[8]) {
  int32_t s = 0;
  for (int i = 0; i < 8; i++) s += a[i] * b[i];
  return s;
}
