#include <ncrt.h>
#line 1 "input/prog.c"
#include <stdio.h>
#include <stdlib.h>

static int square(int x) { return x * x; }

int sum_to(int n) { NCRT_RANGE("sum_to");
  int total = 0;
  for (int i = 0; i < n; i++) {
    { NCRT_RANGE("sum_to:L9-11"); if (i == 7)
      continue;
    total += square(i); }
    if (total > 1000)
      break;
  }
  return total;
}

int find(const int *v, int n, int want) { NCRT_RANGE("search");
  for (int i = 0; i < n; i++)
    if (v[i] == want) goto found;
  return -1;
found:
  return 1;
}

int main(void) {
  int *buf = __extension__ ({ NCRT_RANGE("main:malloc"); malloc(4 * sizeof *buf); });
  buf[0] = 1; buf[1] = 2;
  { NCRT_RANGE("main:printf"); printf("%d\n", sum_to(20)); }
  { NCRT_RANGE("main:printf"); printf("%d\n", find(buf, 2, 2)); }
  int r = sum_to(3);
  { NCRT_RANGE("main:printf"); printf("%d\n", r); }
  free(buf);
  return 3;
}
