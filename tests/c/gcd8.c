#include <stdint.h>
/* Euclid with an encrypted exit (break) and a compile-time bound */
uint8_t gcd8(uint8_t a, uint8_t b) {
  for (int i = 0; i < 13; i++) {
    if (b == 0) break;
    uint8_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}
