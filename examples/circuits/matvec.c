/* 16-bit vector-matrix product: a 125-vector times a 125x4 matrix (4 dot products of 125).
   Each dot product is five dot products of 25, summed by a small adder tree: dot25 is compiled
   once (#pragma ember separate) and instantiated 20 times, where the whole program synthesized
   flat would take Yosys and ABC most of an hour. */
#include <stdint.h>

#pragma ember separate
static int32_t dot25(const int16_t a[25], const int16_t b[25]) {
  int32_t s = 0;
  for (int i = 0; i < 25; i++) s += a[i] * b[i];
  return s;
}

void matvec(const int16_t v[125], const int16_t m[125][4], int32_t out[4]) {
  for (int j = 0; j < 4; j++) {
    int32_t part[5];
    for (int c = 0; c < 5; c++) {
      int16_t vc[25], mc[25];
      for (int i = 0; i < 25; i++) {
        vc[i] = v[25 * c + i];
        mc[i] = m[25 * c + i][j];
      }
      part[c] = dot25(vc, mc);
    }
    out[j] = (part[0] + part[1]) + (part[2] + part[3]) + part[4];
  }
}
