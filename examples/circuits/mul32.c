/* 32-bit multiplication, low 32 bits of the product (ARCTYREX: 2.83 s on one A100). */
#include <stdint.h>

int32_t mul32(int32_t a, int32_t b) { return a * b; }
