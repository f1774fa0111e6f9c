#include <stdint.h>
/* early return from inside a loop on an encrypted condition */
int find_first(const int8_t a[8], int8_t x) {
  for (int i = 0; i < 8; i++)
    if (a[i] == x) return i;
  return -1;
}
