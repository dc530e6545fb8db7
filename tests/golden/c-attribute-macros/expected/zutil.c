#include <ncrt.h>
#line 1 "input/zutil.c"
/* Defined in the file itself: zlib's ZEXTERN and ZEXPORT. */
#ifndef ZEXTERN
#  define ZEXTERN extern
#endif
#ifndef ZEXPORT
#  define ZEXPORT
#endif

ZEXTERN int ZEXPORT zlibCompileFlags(void);

int ZEXPORT zlibCompileFlags(void) { NCRT_RANGE("zlibCompileFlags");
  return 0;
}
