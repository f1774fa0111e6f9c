#include <stdint.h>
int16_t branches(int16_t a, int16_t b) {
  int16_t r;
  if (a > b) {
    if (a > 100) r = a - b;
    else r = a + b;
  } else if (a == b) {
    r = 7;
  } else {
    r = b - a;
    if (r & 1) r = -r;
  }
  return r;
}
