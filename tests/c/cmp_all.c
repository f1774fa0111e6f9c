#include <stdint.h>
int cmp_all(int16_t a, int16_t b) {
  return (a < b) | (a <= b) << 1 | (a > b) << 2 | (a >= b) << 3 | (a == b) << 4 | (a != b) << 5;
}
