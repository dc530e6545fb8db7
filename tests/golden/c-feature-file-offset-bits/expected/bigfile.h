/* A header with an include guard around it all: the include may go inside
 * the guard, after the macro. */
#ifndef BIGFILE_H
#define BIGFILE_H

#define _FILE_OFFSET_BITS 64
#include <ncrt.h>
#line 7 "input/bigfile.h"
#include <sys/types.h>

static inline off_t twice_off(off_t o) { NCRT_RANGE("twice_off"); return 2 * o; }

#endif /* BIGFILE_H */
