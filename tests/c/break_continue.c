#include <stdint.h>
/* sum of the positive elements before the first zero */
int break_continue(const int8_t a[8]) {
  int s = 0, i;
  for (i = 0; i < 8; ++i) {
    if (a[i] == 0) break;
    if (a[i] < 0) continue;
    s += a[i];
  }
  return s * 16 + i;
}
