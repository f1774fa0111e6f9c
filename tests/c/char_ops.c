char char_ops(char c, unsigned char k) {
  if (c >= 'a' && c <= 'z') c = c - 'a' + 'A';
  else if (c == '\n') c = '_';
  return (char)(c ^ (k & 0x1f)) + '\x01';
}
