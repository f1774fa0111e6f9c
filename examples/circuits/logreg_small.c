/* Logistic-regression inference on 4 features, 32-bit fixed point, 4 Maclaurin terms of the
 * sigmoid: returns about 80640 * sigmoid(b + w . x).
 *
 * Scaling: x, w and b are Q8.8 (value = integer / 256); z = b + w . x is kept in Q.8 (the
 * products are Q.16, shifted right by 8). The sigmoid's Maclaurin series times 80640 (the
 * paper's polynomial 40320 + 20160 z - 1680 z^3 + 168 z^5 - 17 z^7, cut after its fourth
 * term here) is evaluated by Horner's rule in u = z^2, each product shifted right by 8 to stay
 * in Q.8, so the result is an integer near 80640 * sigmoid(z): above 40320 means class 1.
 * The series is accurate for |z| below about 1.5 and diverges past pi (its radius of
 * convergence); intermediate values fit 32 bits for |z| < 8. Right shifts of negative values
 * are arithmetic (floor), as gcc and clang do and the compiler defines. */
#include <stdint.h>

int32_t logreg_small(const int16_t x[4], const int16_t w[4], int16_t b) {
  int32_t acc = (int32_t)b * 256;
  for (int i = 0; i < 4; i++) acc += (int32_t)w[i] * x[i];
  int32_t z = acc >> 8;        /* Q.8 */
  int32_t u = (z * z) >> 8;    /* z^2, Q.8 */
  int32_t p = 168;
  p = ((p * u) >> 8) - 1680;
  p = ((p * u) >> 8) + 20160;
  return ((p * z) >> 8) + 40320;
}
