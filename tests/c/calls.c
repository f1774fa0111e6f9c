#include <stdint.h>
static int16_t max2(int16_t a, int16_t b) { return a > b ? a : b; }
static int16_t abs16(int16_t a) { return a < 0 ? -a : a; }
static int16_t clamp(int16_t x, int16_t lo, int16_t hi) { return x < lo ? lo : (x > hi ? hi : x); }
static void bump(int16_t v[3]) { v[0] += 1; v[2] = max2(v[1], v[2]); }
int32_t calls(int16_t a, int16_t b, int16_t v[3]) {
  bump(v);
  return max2(abs16(a), abs16(b)) + clamp(a, -100, 100) * 10 + v[0];
}
