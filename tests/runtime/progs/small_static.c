/* issue 40: the slow function is a small static function (spin), called
 * through two more (process_item -> transform_slow -> spin), all of which
 * gcc -O2 inlines in the original build. Full trace must give each a range,
 * and the summary must put spin first by exclusive time. main calls atoi and
 * printf, which have no range: the summary names them. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static unsigned long spin(unsigned long n) {
  unsigned long x = 0;
  for (unsigned long i = 0; i < n; i++) x += i * i;
  return x;
}
static unsigned long transform_slow(int v) { return spin(4000 + (unsigned)v % 7); }
static unsigned long transform_fast(int v) { return spin(20 + (unsigned)v % 3); }
static void process_item(int v) {
  sink += transform_slow(v);
  sink += transform_fast(v);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3000;
  for (int i = 0; i < n; i++) process_item(i);
  printf("%lu\n", sink & 0xff);
  return 0;
}
