/* Element-wise addition of two vectors of 500 32-bit integers. */
#include <stdint.h>

void vadd500(const int32_t a[500], const int32_t b[500], int32_t c[500]) {
  for (int i = 0; i < 500; i++) c[i] = a[i] + b[i];
}
