#include <stdint.h>
int32_t div_i32(int32_t a, int32_t b, int32_t c) {
  if (b == 0 || (a == -2147483647 - 1 && b == -1)) return c;
  return a / b + a % b * 3;
}
