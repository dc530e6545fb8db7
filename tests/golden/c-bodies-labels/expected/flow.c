#include <ncrt.h>
#line 1 "input/flow.c"
/* Call sites and line ranges in bodies without braces, else-if chains,
 * loops and after labels; a goto into a range is refused. */
#include <stdio.h>

static int step(int i) { return i * 2; }

int walk(int n) {
  int total = 0;
  for (int i = 0; i < n; i++)
    { NCRT_RANGE("walk:step"); total += step(i); }
  while (total > 100) { NCRT_RANGE("walk:step"); total -= step(3); }
  if (n > 10)
    { NCRT_RANGE("walk:printf"); printf("many\n"); }
  else if (n > 5) {
    { NCRT_RANGE("walk:printf"); printf("some\n"); }
  } else
    { NCRT_RANGE("walk:printf"); printf("few\n"); }
  do
    { NCRT_RANGE("do body"); total++; }
  while (total < 3);
retry:
  { NCRT_RANGE("walk:step"); total += step(1); }
  if (total < 20)
    goto retry;
  switch (n) {
  case 1:
    { NCRT_RANGE("walk:step"); total += step(n); }
    break;
  default:
    { NCRT_RANGE("walk:printf"); printf("n=%d\n", n); }
  }
  return total;
}

int jump(int n) {
  if (n < 0)
    goto done;
  n = step(n);
  n++;
done:
  { NCRT_RANGE("after label"); n--; }
  return n;
}
