#include <ncrt.h>
#line 1 "input/calc.c"
/* Full trace leaves out what the compiler would inline (docs/rules-c.md). */
#include <stdio.h>

#define l_sinline static inline

/* declared inline: left out */
static inline int square(int x) { NCRT_RANGE("square"); return x * x; }
l_sinline int cube(int x) { NCRT_RANGE("cube"); return square(x) * x; }
static __attribute__((always_inline)) int twice(int x) { NCRT_RANGE("twice"); return 2 * x + square(0); }

/* a small leaf (no calls, at most 4 statements), any linkage: left out */
int get(const int *p) { NCRT_RANGE("get"); return *p; }
int clamp(int v, int lo, int hi) { NCRT_RANGE("clamp");
  if (v < lo) v = lo;
  return v > hi ? hi : v;
}

/* a small static function (at most 8 statements), calls or not: left out */
static int report(const char *what, int v) { NCRT_RANGE("report");
  printf("%s %d\n", what, v);
  return v;
}

/* an external function with a call: kept (callers in other files do not
 * inline it) */
int scaled(int v) { NCRT_RANGE("scaled"); return report("scaled", v * 3); }

/* a leaf with five statements: kept */
int sign_sum(int a, int b) { NCRT_RANGE("sign_sum");
  int s = a + b;
  if (s < 0) return -1;
  if (s > 0) return 1;
  return 0;
}

/* a static function with nine statements: kept */
static int mix(int a, int b) { NCRT_RANGE("mix");
  int s = a + b;
  int d = a - b;
  int p = a * b;
  if (s > d) s -= d;
  if (p > s) p -= s;
  s += square(p);
  d += cube(s);
  p += twice(d);
  return s + d + p;
}

/* named by a rule: instrumented although it is declared inline */
static inline int hot(int x) { NCRT_RANGE("hot"); return mix(x, x + 1) + clamp(x, 0, 9); }

int main(void) { NCRT_RANGE("main");
  int n = 4;
  printf("%d %d %d %d\n", get(&n), scaled(n), sign_sum(n, -n), hot(n));
  return 0;
}
