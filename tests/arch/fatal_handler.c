/* fatal_handler: a host that links ncbase (the compiler core will, in the
 * Python extension) survives out of memory and a broken invariant: its
 * handler gets the message and longjmps back, and the process goes on.
 * Without a handler the old behaviour stays (checked by the caller: a child
 * process ends with status 2). Prints "ok" and exits 0 when all holds. */
#include "ncbase.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf back;
static char seen[512];
static int calls;

static void handler(const char *msg, void *ctx) {
  calls++;
  snprintf(seen, sizeof seen, "%s%s", (const char *)ctx, msg);
  longjmp(back, 1);
}

int main(void) {
  volatile int fails = 0;
  nc_set_fatal_handler(handler, "host: ");
  if (!setjmp(back)) {
    void *p = xmalloc(SIZE_MAX / 2); /* cannot be had */
    printf("FAILED: xmalloc(SIZE_MAX/2) returned %p\n", p);
    fails++;
  }
  if (strncmp(seen, "host: out of memory (", 21)) printf("FAILED: oom message '%s'\n", seen), fails++;
  if (!setjmp(back)) {
    BUG("broken %d", 42);
  }
  if (!strstr(seen, "internal error at ") || !strstr(seen, "broken 42"))
    printf("FAILED: bug message '%s'\n", seen), fails++;
  if (calls != 2) printf("FAILED: %d handler calls, expected 2\n", calls), fails++;
  /* still usable after both */
  char *s = xasprintf("%s-%d", "after", 1);
  if (strcmp(s, "after-1")) printf("FAILED: xasprintf after recovery: %s\n", s), fails++;
  free(s);
  /* no handler: out of memory ends the process with status 2 */
  nc_set_fatal_handler(NULL, NULL);
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    (void)xmalloc(SIZE_MAX / 2);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 2) printf("FAILED: without a handler, status %d (expected exit 2)\n", st), fails++;
  if (!fails) printf("ok: handler called for out of memory and BUG, host recovered; default exit 2 kept\n");
  return fails != 0;
}
