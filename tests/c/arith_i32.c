#include <stdint.h>
int32_t arith_i32(int32_t a, int32_t b) {
  return a * 3 - b + (a ^ b) - (a & b) + (a | 7) - -a + ~b;
}
