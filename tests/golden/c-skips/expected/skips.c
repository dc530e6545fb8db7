#include <ncrt.h>
#line 1 "input/skips.c"
/* Full trace skips what cannot hold a range, and says why (--explain).
 * This file includes <ncrt.h> itself to call ncrt_step(): that does not
 * make it "already instrumented". */
#include <ncrt.h>
#include <stdio.h>

int declared_only(int x);

#define MAKE_GETTER(name, value) \
  static int name(void) { return value; }
MAKE_GETTER(get_seven, 7)

#define SQUARE_BODY(x) { return (x) * (x); }

inline int twice(int x) { return 2 * x; }

static inline int thrice(int x) { NCRT_RANGE("thrice"); return 3 * x; }

extern int counter;
int counter = 0;

/* an upper-case name is not a macro */
static int RESET_DEVICE(int x) { NCRT_RANGE("RESET_DEVICE"); return x; }

static int loop(int n) { NCRT_RANGE("loop");
  int s = 0;
  for (int i = 0; i < n; i++) s += thrice(i);
  return s;
}

int main(void) { NCRT_RANGE("main");
  ncrt_step();
  printf("%d %d %d\n", loop(4), get_seven(), RESET_DEVICE(1));
  return 0;
}
