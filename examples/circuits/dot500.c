/* ARCTYREX's benchmark: the dot product of two length-500 vectors of 16-bit integers, a 32-bit
   result (wrapping). `ember compile examples/circuits/dot500.c -f dot -o
   examples/circuits/compiled/dot500.circuit`; `ember bench circuit` uses it when it is there. */
#include <stdint.h>
#define N 500
int32_t dot(const int16_t a[N], const int16_t b[N]) {
  int32_t s = 0;
  for (int i = 0; i < N; i++) s += a[i] * b[i];
  return s;
}
