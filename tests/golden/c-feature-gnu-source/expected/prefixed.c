#include "gnu_prefix.h"
#include <ncrt.h>
#line 2 "input/prefixed.c"

#include <string.h>

char *base(char *path) { NCRT_RANGE("base"); return basename(path); }
