#include <stdint.h>
/* uint8_t wraps on return (truncation on conversion). */
uint8_t add_u8(uint8_t a, uint8_t b) { return a + b; }
