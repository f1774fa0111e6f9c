#include <stdint.h>
// int8_t operands promote to int: the sum does not wrap at 8 bits
int add_i8_promote(int8_t a, int8_t b) { return a + b - (int8_t)(a + b); }
