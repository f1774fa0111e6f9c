#include <stdint.h>
/* C99 division truncates toward zero; the remainder takes the dividend's sign */
int32_t div_i16(int16_t a, int16_t b) {
  if (b == 0) return 0;
  return (a / b) * 65536 + (a % b);
}
