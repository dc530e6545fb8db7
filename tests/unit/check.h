/* check.h: the unit tests' one assertion. CHECK(cond) and CHECK_STR(got,
 * want) say file:line and what differed, count the failures, and go on;
 * main returns unit_failures() (0: passed). */
#ifndef NC_UNIT_CHECK_H
#define NC_UNIT_CHECK_H

#include <stdio.h>
#include <string.h>

static int unit_failed;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      unit_failed++;                                                       \
    }                                                                      \
  } while (0)

#define CHECK_STR(got, want)                                                              \
  do {                                                                                    \
    const char *g_ = (got), *w_ = (want);                                                 \
    if (!g_ || strcmp(g_, w_)) {                                                          \
      fprintf(stderr, "%s:%d: %s\n  got:  [%s]\n  want: [%s]\n", __FILE__, __LINE__, #got, \
              g_ ? g_ : "(null)", w_);                                                    \
      unit_failed++;                                                                      \
    }                                                                                     \
  } while (0)

static inline int unit_failures(const char *what) {
  if (unit_failed) fprintf(stderr, "%s: %d check%s failed\n", what, unit_failed, unit_failed == 1 ? "" : "s");
  else printf("%s: ok\n", what);
  return unit_failed != 0;
}

#endif
