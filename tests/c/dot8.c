#include <stdint.h>
#define N 8
int32_t dot8(const int16_t a[N], const int16_t b[N]) {
  int32_t s = 0;
  for (int i = 0; i < N; i++) s += a[i] * b[i];
  return s;
}
