#if defined(__linux__) && !defined(_FILE_OFFSET_BITS)
# define _FILE_OFFSET_BITS 64
#endif
#include <stdio.h>

long size_of(FILE *f) {
  if (fseeko(f, 0, SEEK_END)) return -1;
  return (long)ftello(f);
}
