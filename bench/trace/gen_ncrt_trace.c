/* gen_ncrt_trace: a synthetic trace in libncrt's layout, fast enough for
 * 10^8 events (bench/trace/bench_stream.py) and shaped to probe the
 * streaming summary (tests/trace/test_stream.py).
 *
 * What libncrt writes and this copies: per thread, each range as an X event
 * when it ends (children before their parent, a thread's events in the
 * order they end), with a top-level "depth" member; threads' events
 * interleaved in blocks (libncrt flushes per-thread buffers); start/end
 * ranges ("start/end": true in args) after them; thread names; then the
 * "ncrt" metadata (throttled names, process, lifetime) after the events.
 *
 * usage: gen_ncrt_trace OUT EVENTS [options]     (OUT "-": stdout)
 *   --threads N   threads (default 4)
 *   --seed N      random seed (default 1)
 *   --random      random trees (fan-out, depth, names) instead of the
 *                 regular benchmark shape; with it:
 *   --gaps P      per cent of children one depth level deeper than their
 *                 parent + 1 (a throttled range between, not recorded)
 *   --zero P      per cent of leaves of zero duration
 *   --coarse      times on whole microseconds (equal starts and ends)
 *   --async N     start/end ranges after the events
 *   --unordered   one thread's events reversed (not in end order)
 *   --nodepth     leave "depth" out (a foreign trace)
 *   --orphans     some trees' roots not recorded (their children stay
 *                 pending at depth 1: top-level for the coverage)
 *   --wide N      ranges at depth 1 have N children (more than the
 *                 streaming fold keeps apart at one depth)
 * Top-level ranges are named train_step (summary --step train_step). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static uint64_t rng_state = 1;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int pct(int p) { return (int)(rnd() % 100) < p; }

static const char *const NAMES[] = {"train_step", "forward", "layer", "attention", "matmul", "softmax",
                                    "backward", "recurse", "load_batch", "optimizer"};
enum { NNAMES = sizeof NAMES / sizeof *NAMES, MAXD = 12 };

static int opt_random, opt_gaps, opt_zero, opt_coarse, opt_nodepth, opt_orphans, opt_wide;
static long long pid = 4242;

/* One event, formatted by hand (printf is the generator's bottleneck). */
static char *put_u(char *p, uint64_t v) {
  char tmp[24];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  while (n) *p++ = tmp[--n];
  return p;
}
static char *put_us(char *p, int64_t ns) {
  p = put_u(p, (uint64_t)(ns / 1000));
  int64_t f = ns % 1000;
  *p++ = '.';
  *p++ = (char)('0' + f / 100);
  *p++ = (char)('0' + f / 10 % 10);
  *p++ = (char)('0' + f % 10);
  return p;
}
static char *put_s(char *p, const char *s) {
  while (*s) *p++ = *s++;
  return p;
}

static uint64_t written, target;
static int first_event = 0; /* the process_name event comes first */

static void emit(const char *name, int64_t tid, int64_t ts, int64_t dur, int depth, const char *args) {
  char buf[512], *p = buf;
  if (!first_event) *p++ = ',', *p++ = '\n';
  first_event = 0;
  p = put_s(p, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"");
  p = put_s(p, name);
  p = put_s(p, "\",\"pid\":");
  p = put_u(p, (uint64_t)pid);
  p = put_s(p, ",\"tid\":");
  p = put_u(p, (uint64_t)tid);
  p = put_s(p, ",\"ts\":");
  p = put_us(p, ts);
  p = put_s(p, ",\"dur\":");
  p = put_us(p, dur);
  if (depth >= 0 && !opt_nodepth) {
    p = put_s(p, ",\"depth\":");
    p = put_u(p, (uint64_t)depth);
  }
  if (args) p = put_s(p, args);
  *p++ = '}';
  fwrite(buf, 1, (size_t)(p - buf), out);
  written++;
}

/* Events of one thread, held back when the thread's order is to be
 * written start first (--unordered). */
typedef struct {
  const char *name;
  int64_t ts, dur;
  int depth;
} Rec;
static Rec *held;
static size_t nheld, capheld;
static int hold;

static void event(const char *name, int64_t tid, int64_t ts, int64_t dur, int depth) {
  if (hold) {
    if (nheld == capheld) capheld = capheld ? capheld * 2 : 1024, held = realloc(held, capheld * sizeof *held);
    held[nheld++] = (Rec){name, ts, dur, depth};
    return;
  }
  emit(name, tid, ts, dur, depth, NULL);
}

static int64_t tick(int64_t lo, int64_t span) {
  int64_t v = lo + (int64_t)(rnd() % (uint64_t)span);
  return opt_coarse ? (v + 999) / 1000 * 1000 : v;
}

/* A subtree starting at t0 at this depth: its events in end order (children
 * first); returns its end. budget: events it may still write. */
static int64_t tree(int64_t tid, int64_t t0, int depth, int name, uint64_t *budget, int record) {
  int64_t t = t0 + (opt_random ? tick(0, 2000) : 300);
  int kids = 0;
  if (depth < MAXD - 2 && *budget > 1) {
    if (opt_random) kids = opt_wide && depth == 1 ? opt_wide : (int)(rnd() % (depth < 3 ? 6 : 3));
    else kids = depth == 0 ? 9 : depth < 4 ? 4 : 0; /* 1 + 9 * (1 + 4 * (1 + 4 * (1 + 4))) = 757 per step */
  }
  for (int k = 0; k < kids && *budget > 1; k++) {
    int cd = depth + 1 + (opt_random && opt_gaps && pct(opt_gaps));
    int cn = opt_random ? (int)(rnd() % (NNAMES - 1)) + 1 : 1 + (depth + k) % 6;
    if (!opt_random && depth >= 2 && k == 0) cn = 7; /* "recurse" at several depths: counted once */
    (*budget)--;
    t = tree(tid, t, cd, cn, budget, 1);
    t += opt_random ? tick(0, 1500) : 100 + (int64_t)(rnd() % 50);
  }
  int64_t end = t;
  if (!kids) {
    if (opt_random && opt_zero && pct(opt_zero)) end = t0;
    else end = t0 + (opt_random ? tick(1, 5000) : 500 + (int64_t)(rnd() % 4000));
  } else {
    end += opt_random ? tick(0, 2000) : 200;
  }
  if (record) event(NAMES[name], tid, t0, end - t0, depth);
  return end;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: gen_ncrt_trace OUT EVENTS [--threads N] [--seed N] [--rank R WORLD] [--random ...]\n");
    return 2;
  }
  target = strtoull(argv[2], NULL, 10);
  int threads = 4, nasync = 0, unordered = 0, rank = 0, world = 1;
  for (int i = 3; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(a, "--seed") && i + 1 < argc) rng_state = strtoull(argv[++i], NULL, 10) * 2654435761u + 1;
    else if (!strcmp(a, "--random")) opt_random = 1;
    else if (!strcmp(a, "--rank") && i + 2 < argc) rank = atoi(argv[++i]), world = atoi(argv[++i]);
    else if (!strcmp(a, "--gaps") && i + 1 < argc) opt_gaps = atoi(argv[++i]);
    else if (!strcmp(a, "--zero") && i + 1 < argc) opt_zero = atoi(argv[++i]);
    else if (!strcmp(a, "--coarse")) opt_coarse = 1;
    else if (!strcmp(a, "--async") && i + 1 < argc) nasync = atoi(argv[++i]);
    else if (!strcmp(a, "--unordered")) unordered = 1;
    else if (!strcmp(a, "--nodepth")) opt_nodepth = 1;
    else if (!strcmp(a, "--orphans")) opt_orphans = 1;
    else if (!strcmp(a, "--wide") && i + 1 < argc) opt_wide = atoi(argv[++i]);
    else {
      fprintf(stderr, "gen_ncrt_trace: unknown option %s\n", a);
      return 2;
    }
  }
  if (threads < 1) threads = 1;
  out = strcmp(argv[1], "-") ? fopen(argv[1], "wb") : stdout;
  if (!out) {
    perror(argv[1]);
    return 1;
  }
  static char obuf[1 << 22];
  setvbuf(out, obuf, _IOFBF, sizeof obuf);
  fputs("{\n\"traceEvents\": [\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":0,"
        "\"args\":{\"name\":\"app\"}}", out);
  int64_t *clock = calloc((size_t)threads, sizeof *clock);
  int64_t first = -1, last = 0;
  for (int th = 0; th < threads; th++) clock[th] = 1000000 + th * 1700;
  uint64_t budget = target;
  int th = 0;
  while (budget > 0) {
    int64_t tid = pid + th;
    /* --unordered: thread 1's trees reversed */
    hold = unordered && th == 1 % threads;
    uint64_t b = budget > 2000 ? 2000 : budget;
    uint64_t before = b;
    b--;
    int record = !(opt_orphans && pct(20));
    int64_t end = tree(tid, clock[th], 0, 0, &b, record);
    if (first < 0) first = clock[th];
    if (end > last) last = end;
    budget -= before - b;
    if (hold && nheld) {
      for (size_t i = nheld; i-- > 0;) emit(held[i].name, tid, held[i].ts, held[i].dur, held[i].depth, NULL);
      nheld = 0;
    }
    clock[th] = end + (opt_random ? tick(0, 20000) : 2000 + (int64_t)(rnd() % 1000));
    th = (th + 1) % threads;
  }
  for (int i = 0; i < nasync; i++) {
    int64_t a = first + (int64_t)(rnd() % (uint64_t)(last - first + 1));
    int64_t d = (int64_t)(rnd() % 300000);
    char args[96];
    snprintf(args, sizeof args, ",\"args\":{\"start/end\":true,\"range id\":%d}", i + 1);
    emit(i % 2 ? "consume" : "prefetch", pid + i % threads, a, d, -1, args);
  }
  for (int i = 0; i < threads; i++)
    fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":%lld,\"args\":{\"name\":"
            "\"worker-%d\"}}", pid + i, i);
  long long start = (first - 500000) / 1000, exit = (last + 300000) / 1000, wr = exit + 2000;
  fprintf(out, "\n],\n\"schemaVersion\": 1,\n\"distributedInfo\": {\"backend\": \"\", \"rank\": %d, \"world_size\": %d},\n"
          "\"ncrt\": {\"throttled\": [\n  {\"name\": \"softmax\", \"calls\": 100000, \"total_calls\": -1, "
          "\"avg_us\": 1.5, \"tid\": %lld, \"from_ts\": %lld.000}],\n"
          "  \"process\": {\"pid\": 4242, \"ppid\": 1, \"start\": \"ncrun\", \"role\": \"main\", \"detail\": \"\", "
          "\"rank\": %d, \"is_rank\": true},\n"
          "  \"lifetime\": {\"written\": %lld.000, \"start\": %lld.000, \"exit\": %lld.000}}\n}\n",
          rank, world, pid, (long long)((first + last) / 2000), rank, wr, start, exit);
  if (fflush(out) || (out != stdout && fclose(out))) {
    perror(argv[1]);
    return 1;
  }
  fprintf(stderr, "gen_ncrt_trace: %llu events\n", (unsigned long long)written);
  free(clock);
  free(held);
  return 0;
}
