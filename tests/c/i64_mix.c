#include <stdint.h>
/* int64 + uint32 -> int64; uint64 vs int64 -> uint64 */
int64_t i64_mix(int64_t a, uint32_t b, int8_t c) {
  uint64_t u = (uint64_t)a;
  return a + b - c + (u > (uint64_t)c) * 1000;
}
