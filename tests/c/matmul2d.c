#include <stdint.h>
/* 2-D array parameters; c is written, so it is an output */
void matmul2d(const int8_t a[3][3], const int8_t b[3][3], int16_t c[3][3]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      int16_t s = 0;
      for (int k = 0; k < 3; k++) s += a[i][k] * b[k][j];
      c[i][j] = s;
    }
}
