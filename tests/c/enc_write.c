#include <stdint.h>
/* writes at encrypted indices; the array is an output */
void enc_write(uint8_t a[8], uint8_t i, uint8_t v) {
  a[i & 7] = v;
  a[(i + 3) & 7] += 1;
}
