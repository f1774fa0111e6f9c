/* The dot product of two length-64 vectors of 16-bit integers: dot500.c's circuit at an eighth
   of the length (compiles in about a minute), for benchmarks on small machines. */
#include <stdint.h>
#define N 64
int32_t dot(const int16_t a[N], const int16_t b[N]) {
  int32_t s = 0;
  for (int i = 0; i < N; i++) s += a[i] * b[i];
  return s;
}
