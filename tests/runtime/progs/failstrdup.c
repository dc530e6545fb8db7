/* failstrdup: an LD_PRELOAD library for tests only (issue 34, defect 7).
 * strdup returns NULL, as out of memory, for a string that contains
 * $FAILSTRDUP (the trace names ncrun lists: ".pt.trace.json.gz"). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *strdup(const char *s) {
  const char *pat = getenv("FAILSTRDUP");
  if (pat && *pat && strstr(s, pat)) return errno = ENOMEM, NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  return p ? memcpy(p, s, n) : NULL;
}
