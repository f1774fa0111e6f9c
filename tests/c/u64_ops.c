#include <stdint.h>
uint64_t u64_ops(uint64_t a, uint64_t b) {
  return (a + b) ^ (a - (b >> 7)) ^ (a < b ? 0x8000000000000000ull : 5u);
}
