#include <stdint.h>
/* pointer parameters are outputs (one element each) */
void ptr_out(uint16_t a, uint16_t b, uint16_t *q, uint16_t *r) {
  *q = b ? a / b : 0;
  *r = b ? a % b : a;
}
