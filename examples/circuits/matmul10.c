/* 16-bit 10x10 matrix product with 32-bit results (1,000 multiply-accumulates). */
#include <stdint.h>

void matmul10(const int16_t a[10][10], const int16_t b[10][10], int32_t c[10][10]) {
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 10; j++) {
      int32_t s = 0;
      for (int k = 0; k < 10; k++) s += a[i][k] * b[k][j];
      c[i][j] = s;
    }
}
