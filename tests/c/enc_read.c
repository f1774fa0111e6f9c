#include <stdint.h>
int8_t enc_read(const int8_t a[6], uint8_t i) { return a[i % 6] + a[(i + 1) % 6]; }
