/* The macro is set inside an #if block that goes on into the code: the
 * include cannot follow it there (the block may be left out), so it stays
 * on line 1 and ncrewrite warns. */
#ifdef __linux__
#define _FILE_OFFSET_BITS 64
#include <stdio.h>

long tell(FILE *f) { return (long)ftello(f); }
#endif
