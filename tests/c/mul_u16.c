#include <stdint.h>
uint16_t mul_u16(uint16_t a, uint16_t b) { return a * b + (a >> 3); }
