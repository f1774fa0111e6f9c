/* usual arithmetic conversions: int vs unsigned compares as unsigned */
int mixed_sign(int a, unsigned b) {
  return (a < b) + 2 * (a > (int)b) + 4 * ((unsigned char)a == (b & 255u)) + 8 * (-1 < b);
}
