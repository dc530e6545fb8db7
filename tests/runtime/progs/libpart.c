/* A shared library with its own NVTX copy (NVTX is header-only). */
#include <ncrt.h>
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
int CAT(LIBNAME, _work)(int x);
int CAT(LIBNAME, _work)(int x) {
  NCRT_RANGE(LIBLABEL);
  return x + 1;
}
