/* In the file itself: strptime() is X/Open. */
#define _XOPEN_SOURCE 700
#include <ncrt.h>
#line 3 "input/strptime.c"
#include <time.h>

int parse_day(const char *s, struct tm *tm) { NCRT_RANGE("parse_day"); return strptime(s, "%Y-%m-%d", tm) != 0; }
