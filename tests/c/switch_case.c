#include <stdint.h>
/* switch with fall-through, default in the middle, break and continue inside a loop */
int switch_case(uint8_t op, int16_t a, int16_t b) {
  int r = 0;
  for (int i = 0; i < 2; i++) {
    switch ((op >> (4 * i)) & 7) {
      case 0: r += a; break;
      case 1: r -= b;  /* falls through */
      case 2: r ^= a + b; break;
      default: r += 3;
      case 5: if (a > b) continue; r *= 2; break;
      case 6: return r - 1;
    }
    r += 1;
  }
  return r;
}
