/* In the file itself: strptime() is X/Open. */
#define _XOPEN_SOURCE 700
#include <time.h>

int parse_day(const char *s, struct tm *tm) { return strptime(s, "%Y-%m-%d", tm) != 0; }
