#include <stdint.h>
int16_t max_array(const int16_t a[8]) {
  int16_t m = a[0];
  for (int i = 1; i < 8; i++) m = a[i] > m ? a[i] : m;
  return m;
}
