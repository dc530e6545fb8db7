int f(int a)
{
  int b = a + 1;
  b *= 2;
  return b;
}
