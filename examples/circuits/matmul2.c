/* 16-bit 2x2 matrix product: matmul10's loops and 2-D indexing at a size CI compiles quickly. */
#include <stdint.h>

void matmul2(const int16_t a[2][2], const int16_t b[2][2], int32_t c[2][2]) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      int32_t s = 0;
      for (int k = 0; k < 2; k++) s += a[i][k] * b[k][j];
      c[i][j] = s;
    }
}
