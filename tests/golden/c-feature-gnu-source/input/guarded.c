// The usual guarded form: the include goes after the #endif, never inside
// the #if block (with -D_GNU_SOURCE on the command line it is skipped).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <sched.h>

int cpus(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set)) return 1;
  return CPU_COUNT(&set);
}
