#include <stdint.h>
uint32_t while_do(uint32_t x) {
  int i = 0;
  uint32_t h = 2166136261u;
  while (i < 4) {
    h = (h ^ ((x >> (8 * i)) & 0xff)) * 16777619u;
    i++;
  }
  do { h ^= h >> 13; i--; } while (i > 2);
  return h;
}
