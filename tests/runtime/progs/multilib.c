/* The program and two shared libraries each carry an NVTX copy; all three
 * initialise the same collector once. */
#include <ncrt.h>
#include <stdio.h>
int liba_work(int);
int libb_work(int);
int main(void) {
  NCRT_RANGE("main");
  int s = 0;
  for (int i = 0; i < 3; i++) s += liba_work(i) + libb_work(i);
  printf("%d\n", s);
  return 0;
}
