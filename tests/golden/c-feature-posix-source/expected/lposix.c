/* The macro itself, not a prefix header; also #undef counts. */
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <ncrt.h>
#line 4 "input/lposix.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *copy(const char *s) { NCRT_RANGE("copy"); return strdup(s); }

long readall(FILE *f) { NCRT_RANGE("readall");
  char *line = NULL;
  size_t cap = 0;
  long n = 0;
  while (getline(&line, &cap, f) > 0) n++;
  free(line);
  return n;
}
