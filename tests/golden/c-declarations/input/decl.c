/* Wrapping statements in a block must not hide what they declare from the
 * code after them: variables, struct/enum tags, enumerators, typedefs. */
int g(int x) {
  struct S { int a; };
  enum E { A, B };
  typedef int T;
  struct S s = {A};
  T t = s.a + x;
  t *= 2;
  return t;
}

int h(int x) {
  struct Local { int a; };
  int unused = x * 3;
  x++;
  return x;
}
