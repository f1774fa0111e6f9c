int incdec(int a, int b) {
  int x = a++;
  int y = ++b;
  int z = (a--) * 2 + (--b);
  return x + y * 3 + z * 5 + a + b;
}
