/* crashload: many ranges over many names, then a crash or an exit, for the
 * crash and exit paths (run beside busy loops: no timing is assumed).
 *   crashload segv N [MS]   N ranges ("f0".."f999", nested two deep), then
 *                           prints "closed N" and dereferences NULL at once
 *                           (or after MS milliseconds)
 *   crashload segv-exit N   as segv, with its own SIGSEGV handler installed
 *                           before the first range: it prints "own handler"
 *                           and calls _exit(7) (its handler decides)
 *   crashload segv-chain N  as segv, with a handler installed after the
 *                           first range (as Python's faulthandler is): it
 *                           prints "own handler", puts the previous action
 *                           back and returns, so the fault comes again
 *   crashload exit N [wait] N ranges, with "f1"'s source location and
 *                           ncrt_step() every N/4 ranges, then 150000 "hot"
 *                           ranges (the default throttle stops the name at
 *                           100000), a start/end range ended ("span.done")
 *                           and one left open ("span.open"); prints "end_ns
 *                           T" (CLOCK_MONOTONIC as main returns) and returns
 *                           0. With "wait", halfway it waits (60 s at most)
 *                           until the flusher has converted some of it into
 *                           the trace's body (.ncrt-PID.body grows)
 * 1000 names: N up to 10^8 stays under the default throttle (10^5 calls
 * per name), so every range is recorded. */
#include <ncrt.h>
#include <glob.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define K 1000
static char names[K][8];
static struct sigaction prev;

static void say(const char *m) {
  ssize_t r = write(1, m, strlen(m));
  (void)r;
}
static void own_exit(int sig) {
  (void)sig;
  say("own handler\n");
  _exit(7);
}
static void own_chain(int sig) {
  (void)sig;
  say("own handler\n");
  sigaction(SIGSEGV, &prev, NULL);
}

/* the size of this process's .body (.ncrt-h<HOSTID>-<PID>.body, rundir.h), -1 before it exists */
static long body_size(const char *dir) {
  char pat[1200];
  snprintf(pat, sizeof pat, "%s/.ncrt-h*-%d.body", dir ? dir : ".", (int)getpid());
  glob_t g;
  long n = -1;
  if (glob(pat, 0, NULL, &g) == 0) {
    struct stat st;
    if (stat(g.gl_pathv[0], &st) == 0) n = (long)st.st_size;
    globfree(&g);
  }
  return n;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "segv";
  long n = argc > 2 ? atol(argv[2]) : 2000000;
  for (int i = 0; i < K; i++) snprintf(names[i], sizeof names[i], "f%d", i);
  if (!strcmp(mode, "segv-exit")) signal(SIGSEGV, own_exit);
  int ex = !strcmp(mode, "exit"), wait = ex && argc > 3 && !strcmp(argv[3], "wait");
  if (ex) ncrt_source_location("f1", "crashload.c", 42);
  for (long i = 0; i + 1 < n; i += 2) {
    if (ex && i % (n / 4 + 1) < 2) ncrt_step();
    if (wait && i == n / 2) {
      for (int k = 0; k < 6000 && body_size(getenv("NCRT_OUTPUT_DIR")) < 20000; k++) usleep(10000);
    }
    nvtxRangePushA(names[i % K]);
    nvtxRangePushA(names[(i * 7 + 3) % K]);
    nvtxRangePop();
    nvtxRangePop();
  }
  if (!strcmp(mode, "segv-chain")) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_chain;
    sigaction(SIGSEGV, &sa, &prev);
  }
  if (ex) {
    for (int i = 0; i < 150000; i++) {
      nvtxRangePushA("hot");
      nvtxRangePop();
    }
    nvtxRangeEnd(nvtxRangeStartA("span.done"));
    nvtxRangeStartA("span.open");
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    printf("end_ns %lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
    return 0;
  }
  printf("closed %ld\n", n);
  fflush(stdout);
  if (argc > 3) usleep((useconds_t)atol(argv[3]) * 1000);
  *(volatile int *)(uintptr_t)(argc > 99) = 1; /* NULL: SIGSEGV */
  return 0;
}
