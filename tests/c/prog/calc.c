/* A C program whose ranges must close on every path: early return,
 * break/continue out of a wrapped block, goto. */
#include <stdio.h>

static int classify(int x) {
  if (x < 0)
    return -1;
  if (x == 0)
    return 0;
  return 1;
}

static int loop(int n) {
  int total = 0;
  for (int i = 0; i < n; i++) {
    if (i % 3 == 0)
      continue;
    total += i;
    if (total > 40)
      break;
  }
  return total;
}

static int search(const int *v, int n, int want) {
  for (int i = 0; i < n; i++)
    if (v[i] == want)
      goto found;
  return -1;
found:
  return 1;
}

int main(void) {
  int v[] = {4, 8, 15, 16, 23, 42};
  int acc = 0;
  for (int i = -2; i < 3; i++)
    acc += classify(i);
  printf("classify %d\n", acc);
  int l = loop(20); /* a call site in a declaration used later */
  printf("loop %d\n", l);
  printf("search %d %d\n", search(v, 6, 23), search(v, 6, 5));
  printf("at %s:%d\n", __FILE__, __LINE__); /* #line keeps both */
  return 7;
}
