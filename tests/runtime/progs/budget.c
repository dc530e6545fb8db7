/* Two processes (a fork) record N ranges each (argv[1], default 2 000 000):
 * with a disk budget the run stops recording once both together have
 * spilled that much. */
#include <ncrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 2000000;
  pid_t kid = fork();
  long s = 0;
  for (long i = 0; i < n; i++) {
    NCRT_RANGE(kid ? "parent" : "child");
    s += i;
  }
  if (kid > 0) waitpid(kid, NULL, 0);
  printf("%ld\n", s);
  return 0;
}
