#include <stdbool.h>
#include <stdint.h>
bool logical(bool p, bool q, uint8_t x) {
  bool r = (p && !q) || (x > 100 && p) || !(x & 1);
  return q ? !r : r;
}
