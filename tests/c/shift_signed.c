#include <stdint.h>
/* right shift of a negative int is arithmetic (gcc's choice; ours too) */
int64_t shift_signed(int32_t a, int16_t b, uint8_t s) {
  int32_t x = a >> (s & 31);
  int64_t y = (int64_t)b << (s & 47);
  return x + y + (b >> (s & 7));
}
