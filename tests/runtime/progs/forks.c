/* Parent opens "parent" ranges, forks; the child records "child" ranges and
 * exits normally (its own trace); the parent waits and records more. */
#include <ncrt.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  for (int i = 0; i < 3; i++) {
    NCRT_RANGE("parent.before");
  }
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    for (int i = 0; i < 4; i++) {
      NCRT_RANGE("child");
    }
    return 0;
  }
  waitpid(p, NULL, 0);
  for (int i = 0; i < 2; i++) {
    NCRT_RANGE("parent.after");
  }
  puts("ok");
  return 0;
}
