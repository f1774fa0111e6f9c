/* 16-bit 10x10 matrix product with 32-bit results (1,000 multiply-accumulates). Each entry is a
   dot product of a row of a and a column of b: dot10 is compiled once (#pragma ember separate)
   and instantiated 100 times, where the whole program synthesized flat would take Yosys and
   ABC most of an hour. */
#include <stdint.h>

#pragma ember separate
static int32_t dot10(const int16_t a[10], const int16_t b[10]) {
  int32_t s = 0;
  for (int k = 0; k < 10; k++) s += a[k] * b[k];
  return s;
}

void matmul10(const int16_t a[10][10], const int16_t b[10][10], int32_t c[10][10]) {
  int16_t bt[10][10];  // b's columns as rows
  for (int k = 0; k < 10; k++)
    for (int j = 0; j < 10; j++) bt[j][k] = b[k][j];
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 10; j++) c[i][j] = dot10(a[i], bt[j]);
}
