/* ARCTYREX's benchmark: the dot product of two length-500 vectors of 16-bit integers, a 32-bit
   result (wrapping); ARCTYREX: 922,308 gates, 128 levels, 14.8 s on 8 A100s.
   `ember compile examples/circuits/dot500.c --function dot500 -o
   examples/circuits/compiled/dot500.circuit`; `ember bench circuit` uses it when it is there. */
#include <stdint.h>

int32_t dot500(const int16_t a[500], const int16_t b[500]) {
  int32_t s = 0;
  for (int i = 0; i < 500; i++) s += a[i] * b[i];
  return s;
}
