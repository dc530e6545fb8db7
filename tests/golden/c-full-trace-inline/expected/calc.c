#include <ncrt.h>
#line 1 "input/calc.c"
/* Full trace leaves out only what cannot take time by itself
 * (docs/rules-c.md): straight-line code with no call and no loop. */
#include <stdio.h>

#define l_sinline static inline

/* straight-line, no call: left out, inline or not */
static inline int square(int x) { return x * x; }
int get(const int *p) { return *p; }
int clamp(int v, int lo, int hi) {
  if (v < lo) v = lo;
  return v > hi ? hi : v;
}
int sign_sum(int a, int b) {
  int s = a + b;
  if (s < 0) return -1;
  if (s > 0) return 1;
  return 0;
}

/* a call: kept, however small or inline (it may run for any time) */
l_sinline int cube(int x) { NCRT_RANGE("cube"); return square(x) * x; }
static __attribute__((always_inline)) int twice(int x) { NCRT_RANGE("twice"); return 2 * x + square(0); }
static int report(const char *what, int v) { NCRT_RANGE("report");
  printf("%s %d\n", what, v);
  return v;
}
int scaled(int v) { NCRT_RANGE("scaled"); return report("scaled", v * 3); }

/* a loop: kept */
static int tri(int n) { NCRT_RANGE("tri");
  int s = 0;
  for (int i = 1; i <= n; i++) s += i;
  return s;
}

/* straight-line but called through a pointer: kept (never inlined there) */
static int negate(int v) { NCRT_RANGE("negate"); return -v; }
static int (*const ops[])(int) = {negate, tri};

/* straight-line but more than eight statements: kept */
static int mix(int a, int b) { NCRT_RANGE("mix");
  int s = a + b;
  int d = a - b;
  int p = a * b;
  if (s > d) s -= d;
  if (p > s) p -= s;
  s += p;
  d += s;
  p += d;
  return s + d + p;
}

/* named by a rule: instrumented although full trace would leave it out */
static inline int hot(int x) { NCRT_RANGE("hot"); return x + 1; }

int main(void) { NCRT_RANGE("main");
  int n = 4;
  printf("%d %d %d %d %d\n", get(&n), scaled(n), sign_sum(n, -n), hot(n), clamp(n, 0, 9));
  printf("%d %d %d %d\n", cube(n), twice(n), ops[0](n) + ops[1](n), mix(n, 1));
  return 0;
}
