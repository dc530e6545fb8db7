#if defined(__linux__) && !defined(_FILE_OFFSET_BITS)
# define _FILE_OFFSET_BITS 64
#endif
#include <ncrt.h>
#line 4 "input/block.c"
#include <stdio.h>

long size_of(FILE *f) { NCRT_RANGE("size_of");
  if (fseeko(f, 0, SEEK_END)) return -1;
  return (long)ftello(f);
}
