#include <ncrt.h>
#line 1 "input/sw.c"
/* Ranges inside switch cases and bare blocks; a range over several cases
 * takes the whole switch (a case label inside the new block would be a
 * jump into the range's scope). K&R definitions and Allman braces. */
#include <stdio.h>

int sw(int n)
{ NCRT_RANGE("sw");
  int r = 0;
  { NCRT_RANGE("over cases"); switch (n) {
  case 1:
    { NCRT_RANGE("case 1"); r += 1; }
    r *= 2;
  case 2: {
    { NCRT_RANGE("case 2 block"); int k = n * 3;
    r += k; }
    break;
  }
  default:
    r = -1;
  } }
  {
    int t = r;
    { NCRT_RANGE("sw:printf"); printf("%d\n", t); }
  }
  return r;
}

int knr(a, b)
  int a;
  int b;
{ NCRT_RANGE("knr"); return a + b; }
