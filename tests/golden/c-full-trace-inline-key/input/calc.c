/* Full trace leaves out what the compiler would inline (docs/rules-c.md). */
#include <stdio.h>

#define l_sinline static inline

/* declared inline: left out */
static inline int square(int x) { return x * x; }
l_sinline int cube(int x) { return square(x) * x; }
static __attribute__((always_inline)) int twice(int x) { return 2 * x + square(0); }

/* a small leaf (no calls, at most 4 statements), any linkage: left out */
int get(const int *p) { return *p; }
int clamp(int v, int lo, int hi) {
  if (v < lo) v = lo;
  return v > hi ? hi : v;
}

/* a small static function (at most 8 statements), calls or not: left out */
static int report(const char *what, int v) {
  printf("%s %d\n", what, v);
  return v;
}

/* an external function with a call: kept (callers in other files do not
 * inline it) */
int scaled(int v) { return report("scaled", v * 3); }

/* a leaf with five statements: kept */
int sign_sum(int a, int b) {
  int s = a + b;
  if (s < 0) return -1;
  if (s > 0) return 1;
  return 0;
}

/* a static function with nine statements: kept */
static int mix(int a, int b) {
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
static inline int hot(int x) { return mix(x, x + 1) + clamp(x, 0, 9); }

int main(void) {
  int n = 4;
  printf("%d %d %d %d\n", get(&n), scaled(n), sign_sum(n, -n), hot(n));
  return 0;
}
