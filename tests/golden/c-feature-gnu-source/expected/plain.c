#include <ncrt.h>
#line 1 "input/plain.c"
/* No feature-test macro, and a local header that sets none: the include
 * stays on line 1. */
#include <stdio.h>
#include "util.h"

size_t twice(size_t n) { NCRT_RANGE("twice"); return 2 * n; }
