/* Logistic-regression inference on 4 features, 64-bit fixed point, 6 Maclaurin terms of the
 * sigmoid: returns about 1451520 * sigmoid(b + w . x).
 *
 * Scaling: x, w and b are Q16.16 (value = integer / 65536); z = b + w . x is kept in Q.16.
 * The series to z^9 times 1451520 = 18 * 80640 is 18 times the paper's polynomial
 * (40320 + 20160 z - 1680 z^3 + 168 z^5 - 17 z^7) plus 31 z^9, evaluated by Horner's rule in
 * u = z^2 with each product shifted right by 16; above 725760 means class 1. Intermediate
 * values fit 64 bits for |z| < 64 (the series itself diverges past pi). */
#include <stdint.h>

int64_t logreg_large(const int32_t x[4], const int32_t w[4], int32_t b) {
  int64_t acc = (int64_t)b * 65536;
  for (int i = 0; i < 4; i++) acc += (int64_t)w[i] * x[i];
  int64_t z = acc >> 16;         /* Q.16 */
  int64_t u = (z * z) >> 16;     /* z^2, Q.16 */
  int64_t p = 31;
  p = ((p * u) >> 16) - 306;
  p = ((p * u) >> 16) + 3024;
  p = ((p * u) >> 16) - 30240;
  p = ((p * u) >> 16) + 362880;
  return ((p * z) >> 16) + 725760;
}
