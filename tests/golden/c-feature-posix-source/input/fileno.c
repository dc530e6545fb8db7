/* Through a prefix header that sets _POSIX_C_SOURCE (under -std=c99,
 * fileno() and fdopen() are POSIX only). */
#include "posix_prefix.h"
#include <stdio.h>

int fd_of(FILE *f) { return fileno(f); }

FILE *reopen(int fd) { return fdopen(fd, "r"); }
