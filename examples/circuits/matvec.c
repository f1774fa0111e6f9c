/* 16-bit vector-matrix product: a 125-vector times a 125x4 matrix (4 dot products of 125). */
#include <stdint.h>

void matvec(const int16_t v[125], const int16_t m[125][4], int32_t out[4]) {
  for (int j = 0; j < 4; j++) {
    int32_t s = 0;
    for (int i = 0; i < 125; i++) s += v[i] * m[i][j];
    out[j] = s;
  }
}
