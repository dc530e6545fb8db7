#include <ncrt.h>
#line 1 "input/w.c"
int f(int a)
{
  int b = a + 1;
  { NCRT_RANGE("f:L4-5"); b *= 2;
  return b; }
}
