#include <stdint.h>
/* side effects in the right operand of && and || happen only when it is evaluated */
int short_circuit(int8_t a, int8_t b) {
  int n = 0;
  if (a > 0 && (n += 1, b > 0)) n += 10;
  if (a < 0 || (n += 100, b < 0)) n += 1000;
  int m = a ? n++ : n--;
  return n * 3 + m;
}
