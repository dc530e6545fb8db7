/* Ranges inside switch cases and bare blocks; a range over several cases
 * takes the whole switch (a case label inside the new block would be a
 * jump into the range's scope). K&R definitions and Allman braces. */
#include <stdio.h>

int sw(int n)
{
  int r = 0;
  switch (n) {
  case 1:
    r += 1;
    r *= 2;
  case 2: {
    int k = n * 3;
    r += k;
    break;
  }
  default:
    r = -1;
  }
  {
    int t = r;
    printf("%d\n", t);
  }
  return r;
}

int knr(a, b)
  int a;
  int b;
{ return a + b; }
