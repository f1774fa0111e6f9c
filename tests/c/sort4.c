#include <stdint.h>
static void swap_if(int8_t a[4], int i, int j) {
  if (a[i] > a[j]) { int8_t t = a[i]; a[i] = a[j]; a[j] = t; }
}
void sort4(int8_t a[4]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3 - i; j++) swap_if(a, j, j + 1);
}
