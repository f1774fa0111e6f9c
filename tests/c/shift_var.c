#include <stdint.h>
uint32_t shift_var(uint32_t a, uint8_t s) {
  return (a << (s & 31)) ^ (a >> ((s >> 3) & 31)) ^ (1u << (s % 32));
}
