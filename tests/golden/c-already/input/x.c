#include <ncrt.h>
#line 1 "x.c"
int f(void) { NCRT_RANGE("f");
  return 1;
}
