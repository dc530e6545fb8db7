/* longrun: the collector on the crash, memory and signal paths.
 *   longrun crash            1000 "done" ranges, then "late.open" (left
 *                            open), prints "pid N", waits for a line on
 *                            stdin (the test kills it meanwhile with
 *                            SIGKILL) and, given one, dereferences NULL
 *   longrun rss N            N ranges in a tight loop; prints "rss_growth_kb
 *                            K" (ru_maxrss after minus before the loop)
 *   longrun sigalrm N        N "main.loop" ranges while a 50 us interval
 *                            timer's SIGALRM handler records "in.handler";
 *                            prints "handler_calls C"
 *   longrun term-exit        a SIGTERM handler that calls _exit(3), raised
 *                            while another thread mallocs and frees
 *   longrun wait-term        5000 "claimed" ranges, then waits (up to 20 s)
 *                            for a SIGTERM (the test hook of libncrt's
 *                            flusher sends one while it holds a claim on them)
 *   longrun exit-term        5000 "claimed" ranges, then _exit(0) (run with
 *                            NCRT_TEST_TERM_IN_CLAIM=own and NCRT_FLUSH=0:
 *                            _exit's save claims them and the hook sends
 *                            SIGTERM to the thread inside that claim)
 *   longrun thread-exit-term a thread records 500 "claimed" ranges and ends
 *                            (the hook as above fires in its exit spill);
 *                            main then waits (up to 20 s) for the SIGTERM
 *   longrun atexit           its own atexit handler (registered before any
 *                            range) records "in.atexit"
 *   longrun names N T        N ranges of N distinct names ("n0".."n<N-1>"),
 *                            then T threads, all alive at once, each
 *                            recording one range of the last name; prints
 *                            "threads_rss_growth_kb K" (the threads' part)
 *   longrun threads N        N short-lived threads one after another, each
 *                            recording "t.one"; prints "threads_rss_growth_kb
 *                            K" (ru_maxrss after the last minus after the
 *                            first 100)
 *   longrun oom              100000 "before" ranges, then 1 MiB blocks (each
 *                            in an "alloc" range, touched) until malloc
 *                            fails (run it under RLIMIT_AS); prints "blocks
 *                            B" and exits 0 with the memory still taken
 *   longrun timed N          N "r" ranges, then prints "end_ns T" (its
 *                            CLOCK_MONOTONIC time as main returns): the
 *                            exit's cost is the time from T to the exit
 *   longrun paced N S        N "r" ranges spread over S seconds (batches
 *                            of 1000, sleeping between), then as timed
 *   longrun incremental      100000 "outer" ranges each around an "inner",
 *                            a "between" mark, then waits until the flusher
 *                            has converted some of it into the trace's body
 *                            (.ncrt-PID.body in $NCRT_OUTPUT_DIR grows),
 *                            then as many again and a thread's "t.one"
 *   longrun new-names N      N ranges of N distinct names ("m<i>"), each
 *                            after a malloc/free, while a 50 us SIGALRM
 *                            handler records a never-seen name each time
 *                            ("h<k>"); prints "handler_calls C" */
#include <ncrt.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long maxrss_kb(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_maxrss;
}

static volatile long handler_calls;
static void on_alarm(int sig) {
  (void)sig;
  handler_calls++;
  NCRT_RANGE("in.handler");
}

static void on_term(int sig) {
  (void)sig;
  _exit(3);
}

static volatile int stop;
static void *churn(void *arg) {
  (void)arg;
  while (!stop) free(calloc(1, 64 + (rand() & 1023)));
  return NULL;
}

static void in_atexit(void) { NCRT_RANGE("in.atexit"); }

static void on_alarm_new(int sig) {
  (void)sig;
  char nm[24] = "h";
  long k = handler_calls++, i = 1;
  char d[20];
  int nd = 0;
  do d[nd++] = (char)('0' + k % 10);
  while ((k /= 10) && nd < 20);
  while (nd) nm[i++] = d[--nd];
  nm[i] = 0;
  nvtxRangePushA(nm);
  nvtxRangePop();
}

static pthread_barrier_t all_recorded;
static char last_name[32];
static void *one_range(void *arg) {
  (void)arg;
  nvtxRangePushA(last_name);
  nvtxRangePop();
  pthread_barrier_wait(&all_recorded); /* every thread holds its state at once */
  return NULL;
}

static void *five_hundred(void *arg) {
  (void)arg;
  for (int i = 0; i < 500; i++) {
    NCRT_RANGE("claimed");
  }
  return NULL;
}

static void *one_short(void *arg) {
  (void)arg;
  NCRT_RANGE("t.one");
  return NULL;
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
  const char *mode = argc > 1 ? argv[1] : "crash";
  long n = argc > 2 ? atol(argv[2]) : 1000;
  if (!strcmp(mode, "crash")) {
    for (int i = 0; i < 1000; i++) {
      NCRT_RANGE("done");
    }
    nvtxRangePushA("late.open");
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    char line[16];
    if (fgets(line, sizeof line, stdin)) *(volatile int *)(uintptr_t)(argc - 2) = 1; /* NULL: SIGSEGV */
    return 0;
  }
  if (!strcmp(mode, "rss")) {
    { NCRT_RANGE("warm"); }
    long before = maxrss_kb();
    for (long i = 0; i < n; i++) {
      NCRT_RANGE("r");
    }
    printf("rss_growth_kb %ld\n", maxrss_kb() - before);
    return 0;
  }
  if (!strcmp(mode, "sigalrm")) {
    { NCRT_RANGE("in.handler"); } /* the name registered before the timer */
    signal(SIGALRM, on_alarm);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (long i = 0; i < n; i++) {
      NCRT_RANGE("main.loop");
      NCRT_RANGE("main.inner");
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("handler_calls %ld\n", handler_calls);
    return 0;
  }
  if (!strcmp(mode, "wait-term")) {
    for (int i = 0; i < 5000; i++) {
      NCRT_RANGE("claimed");
    }
    for (int i = 0; i < 200; i++) usleep(100000);
    return 0;
  }
  if (!strcmp(mode, "exit-term")) {
    for (int i = 0; i < 5000; i++) {
      NCRT_RANGE("claimed");
    }
    _exit(0);
  }
  if (!strcmp(mode, "thread-exit-term")) {
    pthread_t th;
    pthread_create(&th, NULL, five_hundred, NULL);
    pthread_join(th, NULL);
    for (int i = 0; i < 200; i++) usleep(100000);
    return 0;
  }
  if (!strcmp(mode, "term-exit")) {
    signal(SIGTERM, on_term);
    pthread_t th;
    pthread_create(&th, NULL, churn, NULL);
    for (int i = 0; i < 2000; i++) {
      NCRT_RANGE("before.term");
      free(malloc(100));
    }
    raise(SIGTERM);
    return 0;
  }
  if (!strcmp(mode, "new-names")) {
    nvtxRangePop(); /* NVTX set up (its init spins if a handler interrupts it) */
    signal(SIGALRM, on_alarm_new);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    char nm[32];
    for (long i = 0; i < n; i++) {
      free(malloc(16 + (size_t)(rand() & 4095)));
      snprintf(nm, sizeof nm, "m%ld", i);
      nvtxRangePushA(nm);
      nvtxRangePop();
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("handler_calls %ld\n", handler_calls);
    return 0;
  }
  if (!strcmp(mode, "names")) {
    char nm[32];
    for (long i = 0; i < n; i++) {
      snprintf(nm, sizeof nm, "n%ld", i);
      nvtxRangePushA(nm);
      nvtxRangePop();
    }
    snprintf(last_name, sizeof last_name, "n%ld", n - 1);
    int nt = argc > 3 ? atoi(argv[3]) : 64;
    pthread_t th[256];
    if (nt > 256) nt = 256;
    pthread_barrier_init(&all_recorded, NULL, (unsigned)nt + 1);
    long before = maxrss_kb();
    for (int i = 0; i < nt; i++) pthread_create(&th[i], NULL, one_range, NULL);
    pthread_barrier_wait(&all_recorded);
    long after = maxrss_kb();
    for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
    printf("threads_rss_growth_kb %ld\n", after - before);
    return 0;
  }
  if (!strcmp(mode, "threads")) {
    long before = 0;
    for (long i = 0; i < n; i++) {
      pthread_t th;
      if (pthread_create(&th, NULL, one_short, NULL) != 0) return 3;
      pthread_join(th, NULL);
      if (i == 99) before = maxrss_kb();
    }
    printf("threads_rss_growth_kb %ld\n", maxrss_kb() - before);
    return 0;
  }
  if (!strcmp(mode, "oom")) {
    for (int i = 0; i < 100000; i++) {
      NCRT_RANGE("before");
    }
    long blocks = 0;
    for (;;) {
      NCRT_RANGE("alloc");
      char *b = malloc(1 << 20);
      if (!b) break;
      memset(b, 1, 1 << 20);
      blocks++;
    }
    printf("blocks %ld\n", blocks);
    return 0;
  }
  if (!strcmp(mode, "timed") || !strcmp(mode, "paced")) {
    double secs = argc > 3 ? atof(argv[3]) : 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
      NCRT_RANGE("r");
      if (secs > 0 && i % 1000 == 999) {
        /* sleep until batch i/1000 is due */
        double due = secs * (double)(i + 1) / (double)n;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        if (due > el) {
          struct timespec d = {(time_t)(due - el), (long)((due - el - (double)(time_t)(due - el)) * 1e9)};
          nanosleep(&d, NULL);
        }
      }
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("end_ns %lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    fflush(stdout);
    return 0;
  }
  if (!strcmp(mode, "incremental")) {
    const char *dir = getenv("NCRT_OUTPUT_DIR");
    for (int i = 0; i < 100000; i++) {
      NCRT_RANGE("outer");
      NCRT_RANGE("inner");
    }
    nvtxMarkA("between");
    long converted;
    while ((converted = body_size(dir)) < 4096) usleep(10000);
    for (int i = 0; i < 100000; i++) {
      NCRT_RANGE("outer");
      NCRT_RANGE("inner");
    }
    pthread_t th;
    pthread_create(&th, NULL, one_short, NULL);
    pthread_join(th, NULL);
    printf("converted_while_running %lld\n", (long long)converted);
    return 0;
  }
  if (!strcmp(mode, "atexit")) {
    atexit(in_atexit);
    { NCRT_RANGE("in.main"); }
    return 0;
  }
  return 2;
}
