/* Through a prefix header that sets _POSIX_C_SOURCE (under -std=c99,
 * fileno() and fdopen() are POSIX only). */
#include "posix_prefix.h"
#include <ncrt.h>
#line 4 "input/fileno.c"
#include <stdio.h>

int fd_of(FILE *f) { NCRT_RANGE("fd_of"); return fileno(f); }

FILE *reopen(int fd) { NCRT_RANGE("reopen"); return fdopen(fd, "r"); }
