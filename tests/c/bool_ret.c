#include <stdbool.h>
#include <stdint.h>
bool bool_ret(uint32_t x, bool flip) { return ((x % 3) == 0) != flip; }
