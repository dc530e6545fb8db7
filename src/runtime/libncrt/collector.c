/* collector.c: the NVTX side of libncrt.
 *
 * NVTX calls InitializeInjectionNvtx2 once per NVTX copy (every shared
 * library that includes the headers has one); each call fills that copy's
 * CORE and CORE2 slots with the handlers below. Global set-up runs once
 * (pthread_once) and never calls NVTX.
 *
 * Hot path: push stores (clock, name) on a per-thread stack; pop writes one
 * complete record into the thread's current chunk and publishes the count.
 * No locks and no atomics read-modify-write there; a lock is taken only
 * when a thread starts, when a chunk fills, when a new name is interned and
 * on the rare names that drive capture control (gate, step, control marks).
 *
 * Handles given to NVTX are small integers in pointer clothing: a domain
 * handle is its id (NULL = the default domain), a string handle is name id
 * + 1. They are never dereferenced.
 *
 * The CUDA driver's entry (InitializeInjection) is here too: it sets the
 * collector up, then starts CUPTI (cupti.c). The collector calls the
 * writer (convert.c, spill.c) and hands it, at set-up, the view through
 * which the writer reads the collector's state (RtCollectorView, rt.h):
 * the writer never calls this file. */
#define _GNU_SOURCE
#include "rt.h"
#include "ncrt_protocol.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <signal.h>

#include <nvtx3/nvToolsExt.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* ---- clock (clock.c), the hot path's part ---- */

static inline uint64_t now_ticks(void) {
#if defined(__x86_64__)
  if (__builtin_expect(rt_opt.use_tsc, 1)) return __rdtsc();
#endif
  return rt_mono_ns();
}

/* A timestamp for thread t, never earlier than the one it took before. The
 * TSC of two CPUs can differ by some 100 ns on virtual machines: a thread
 * moved between them would record an inner range starting before its outer
 * one, which no viewer nests. Clamping keeps each thread's records in
 * program order (a compare and a store; the struct is in cache). */
static inline uint64_t thread_now(RtThread *t) {
  uint64_t v = now_ticks();
  if (__builtin_expect(v < t->last_ticks, 0)) v = t->last_ticks;
  t->last_ticks = v;
  return v;
}

/* ---- names (names.c) ---- */

/* Stacks and buffers are mapped, never malloc'd: a signal handler may
 * record while its thread is inside malloc. */
static void *map_zero(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* A name's flags: written once under the names lock (release) and or'ed
 * into by the throttle, read on every push and pop by threads that may have
 * the id from elsewhere (a call site's cached handle): acquire, a plain load
 * on x86. */
static inline uint8_t name_flags(uint32_t id) { return __atomic_load_n(&rt_name(id)->flags, __ATOMIC_ACQUIRE); }

/* ---- domains ---- */

#define MAX_DOMAINS 1024
static char *domain_names[MAX_DOMAINS] = {""};
static uint32_t domain_n = 1;
static uint16_t control_domain = 0xffff;

const char *rt_domain_name(uint16_t id) { return id < domain_n ? domain_names[id] : "?"; }

/* The domain named `name` (NULL is ""), made on first use; 0 (the default
 * domain) when the table is full or its name cannot be copied. */
static uint16_t domain_create(const char *name) {
  if (!name) name = "";
  if (rt_names_lock()) return 0;
  uint16_t id;
  for (id = 1; id < domain_n; id++)
    if (!strcmp(domain_names[id], name)) goto done;
  char *copy = domain_n < MAX_DOMAINS ? strdup(name) : NULL;
  if (!copy) {
    id = 0;
    goto done;
  }
  domain_names[domain_n] = copy;
  id = (uint16_t)domain_n++;
  if (!strcmp(name, NCRT_CONTROL_DOMAIN)) control_domain = id;
done:
  rt_names_unlock();
  return id;
}

static inline uint16_t dom_id(nvtxDomainHandle_t d) { return (uint16_t)(uintptr_t)d; }

/* ---- threads and buffers ---- */

/* The recording threads: a list, newest first (ended ones are reused), and
 * what starts and ends them */
static struct {
  RtThread *volatile list;
  pthread_mutex_t lock;
  pthread_key_t exit_key;       /* calls thread_exit (below) when a recording thread ends */
  int exit_key_ok;
  pid_t flusher_pid;            /* the process whose flusher runs */
} threads = {.lock = PTHREAD_MUTEX_INITIALIZER};
/* TLS descriptors (-mtls-dialect=gnu2) keep this cheap without the
 * initial-exec model, which can fail to dlopen in programs that already use
 * up the static TLS surplus (large Python extension stacks). */
static __thread RtThread *tls_thread;
static volatile int collecting = 1; /* 0 after a fatal problem */

RtThread *rt_threads(void) { return __atomic_load_n(&threads.list, __ATOMIC_ACQUIRE); }

/* A thread's first chunk is small (threads that record little cost little);
 * later ones double up to one 2 MiB region, which is then reused for good:
 * when it fills, the thread writes it to the spill file (spill.c) and
 * starts over, so memory per recording thread is bounded by 2 MiB whatever
 * the run's length. Every chunk is an anonymous mapping (mmap and munmap
 * are async-signal-safe, malloc is not); full-size ones are 2 MiB-aligned
 * and marked MADV_HUGEPAGE: a busy thread takes one page fault per 2 MiB
 * once, and none after that. */
#define CHUNK_FIRST 1024
#define HUGE_BYTES (2u << 20)
#define CHUNK_MAX ((HUGE_BYTES - sizeof(RtChunk)) / sizeof(RtRec))

static RtChunk *chunk_new(uint32_t cap) {
  RtChunk *c;
  size_t bytes;
  if (cap >= CHUNK_MAX) {
    cap = CHUNK_MAX;
    bytes = HUGE_BYTES;
    /* over-map by 2 MiB, trim to an aligned 2 MiB region */
    char *p = mmap(NULL, 2 * HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    uintptr_t a = ((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1);
    if (a > (uintptr_t)p) munmap(p, a - (uintptr_t)p);
    munmap((char *)a + HUGE_BYTES, (uintptr_t)p + 2 * HUGE_BYTES - (a + HUGE_BYTES));
#ifdef MADV_HUGEPAGE
    madvise((void *)a, HUGE_BYTES, MADV_HUGEPAGE);
#endif
    c = (RtChunk *)a;
  } else {
    bytes = (sizeof(RtChunk) + cap * sizeof(RtRec) + 4095) & ~(size_t)4095;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    c = p;
  }
  c->cap = cap;
  c->n = 0;
  c->spilled = 0;
  c->bytes = bytes;
  return c;
}

void rt_chunk_free(RtChunk *c) {
  if (c) munmap(c, c->bytes);
}

static void thread_exit(void *arg);

/* Every thread starts on this read-only table, where no name matches: the
 * hot path needs no NULL test, the first count maps the thread's own. */
static const RtStat no_stats[RT_NSTATS] = {[0 ... RT_NSTATS - 1] = {.name = UINT32_MAX}};
#define STATS_BYTES ((sizeof(RtStat) * RT_NSTATS + 4095) & ~(size_t)4095)

/* A thread that ended left its RtThread (and stack of frames) on the list,
 * which readers walk without a lock: a new thread takes it over instead of
 * allocating, so 20 000 short-lived threads cost one RtThread, not 20 000.
 * (The records of the old thread id are on disk already; only its
 * thread_name metadata goes, which for an ended thread was "thread TID".) */
/* t is now the calling thread's: its exit hook, the process's flusher */
static RtThread *adopt(RtThread *t) {
  tls_thread = t;
  if (__atomic_load_n(&threads.exit_key_ok, __ATOMIC_ACQUIRE)) pthread_setspecific(threads.exit_key, t);
  if (threads.flusher_pid != getpid()) rt_flusher_start();
  return t;
}

static RtThread *thread_reuse(void) {
  RtThread *t;
  pthread_mutex_lock(&threads.lock);
  for (t = threads.list; t; t = t->next)
    if (__atomic_load_n(&t->dead, __ATOMIC_ACQUIRE) == 1) {
      /* acquire: pairs with thread_exit's store, so everything the old
       * thread did to this struct (its last pops) happens before we reuse it */
      __atomic_store_n(&t->dead, 2, __ATOMIC_RELAXED); /* taken (only under threads.lock) */
      break;
    }
  pthread_mutex_unlock(&threads.lock);
  if (!t) return NULL;
  RtChunk *c = chunk_new(CHUNK_FIRST);
  if (!c) {
    __atomic_store_n(&t->dead, 1, __ATOMIC_RELEASE);
    return NULL;
  }
  t->tname[0] = 0;
  t->stats = (RtStat *)no_stats;
  t->sp = 0;
  t->last_ticks = 0;
  t->ignored = 0;
  t->busy = 0;
  memset(t->cache_ptr, 0, sizeof t->cache_ptr);
  __atomic_store_n(&t->tid, (uint32_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
  __atomic_store_n(&t->cur, c, __ATOMIC_SEQ_CST);
  __atomic_store_n(&t->dead, 0, __ATOMIC_SEQ_CST);
  return adopt(t);
}

static RtThread *thread_new(void) {
  RtThread *t = thread_reuse();
  if (t) return t;
  t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->tid = (uint32_t)syscall(SYS_gettid);
  t->stats = (RtStat *)no_stats;
  t->stack_cap = 64;
  t->stack = malloc(t->stack_cap * sizeof(RtFrame));
  t->cur = chunk_new(CHUNK_FIRST);
  if (!t->stack || !t->cur) {
    free(t->stack);
    rt_chunk_free(t->cur);
    free(t);
    return NULL;
  }
  pthread_mutex_lock(&threads.lock);
  t->next = threads.list;
  __atomic_store_n(&threads.list, t, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&threads.lock);
  return adopt(t);
}

static inline RtThread *self(void) {
  RtThread *t = tls_thread;
  if (__builtin_expect(t != NULL, 1)) return t;
  return thread_new();
}

/* Wait until no claimer reads t's chunk (they copy at most 2 MiB). */
static void wait_claimers(RtThread *t) {
  for (int i = 0; __atomic_load_n(&t->inflight, __ATOMIC_SEQ_CST); i++)
    if (i > 100) {
      struct timespec d = {0, 50000};
      nanosleep(&d, NULL);
    }
}

/* The chunk is full: write it out, then grow (small chunks) or reuse it. No
 * lock and no malloc: a range recorded in a signal handler may get here. */
static RtRec *rec_slow(RtThread *t) {
  RtChunk *c = t->cur;
  if (c) {
    rt_spill_thread(t); /* a failure is counted there (dropped); no signal handler runs inside it */
    if (c->cap < CHUNK_MAX) {
      RtChunk *nc = chunk_new(c->cap * 2);
      if (nc) {
        /* the generation only (claimers move the low half, atomically: so
         * is this read) */
        nc->spilled = (__atomic_load_n(&c->spilled, __ATOMIC_SEQ_CST) & ~(uint64_t)0xffffffffu) + ((uint64_t)1 << 32);
        __atomic_store_n(&t->cur, nc, __ATOMIC_SEQ_CST);
        wait_claimers(t);
        rt_chunk_free(c);
        return &nc->rec[0];
      }
    }
    /* reuse: first n = 0, then the next generation (a claimer that sees
     * the old generation sees n <= its index and claims nothing) */
    wait_claimers(t);
    __atomic_store_n(&c->n, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->spilled,
                     (__atomic_load_n(&c->spilled, __ATOMIC_SEQ_CST) & ~(uint64_t)0xffffffffu) + ((uint64_t)1 << 32),
                     __ATOMIC_SEQ_CST);
    return &c->rec[0];
  }
  c = chunk_new(CHUNK_FIRST); /* the thread ended and records again (a TLS destructor) */
  if (!c) {
    t->dropped++;
    return NULL;
  }
  __atomic_store_n(&t->cur, c, __ATOMIC_SEQ_CST);
  return &c->rec[0];
}

static inline RtRec *rec_next(RtThread *t) {
  RtChunk *c = t->cur;
  if (__builtin_expect(c && c->n < c->cap, 1)) return &c->rec[c->n];
  return rec_slow(t);
}

static inline void rec_commit(RtThread *t) { __atomic_store_n(&t->cur->n, t->cur->n + 1, __ATOMIC_RELEASE); }

/* ---- capture state ---- */

static volatile int recording = 1; /* the hot path's only test */

/* Capture windows: the CLOCK_MONOTONIC intervals during which capture was
 * on (schedule, gate, start/stop). CUPTI records everything; the writer keeps
 * the GPU work launched inside a window. Changed and read under ctl.lock. */
typedef struct {
  uint64_t a, b; /* b = UINT64_MAX while open */
} Window;

/* Capture control: who turned capture on or off, the schedule's steps and
 * cycles, the windows. Under ctl.lock (gate_open is also read without it). */
static struct {
  pthread_mutex_t lock;
  int user_on, sched_on;
  volatile int gate_open;
  long step_index;              /* index of the step now running */
  long cycles_done;
  int cycle_open;
  long cycle_first_step;
  Window *windows;
  size_t nwin, capwin;
  int capture_on;
  /* A schedule set by the "schedule" verb (the Python package's profilers)
   * writes its cycles as <sched_dir>/<sched_name>... */
  char sched_dir[1024], sched_name[256];
} ctl = {.lock = PTHREAD_MUTEX_INITIALIZER, .user_on = 1, .sched_on = 1, .step_index = -1};

long rt_steps_seen(void) { return ctl.step_index + 1; }


/* One store, safe anywhere (the spill path, a signal handler): pushes from
 * now on are not recorded; recompute() keeps it so (rt_budget_hit). */
void rt_recording_off(void) { __atomic_store_n(&recording, 0, __ATOMIC_RELEASE); }

static void recompute(void) {
  int cap = collecting && ctl.user_on && ctl.sched_on && (!rt_opt.gate[0] || ctl.gate_open > 0) &&
            !__atomic_load_n(&rt_budget_hit, __ATOMIC_ACQUIRE);
  if (cap != ctl.capture_on) {
    uint64_t now = rt_mono_ns();
    if (cap) {
      if (ctl.nwin == ctl.capwin) {
        size_t n = ctl.capwin ? ctl.capwin * 2 : 16;
        Window *w = realloc(ctl.windows, n * sizeof *w);
        if (w) {
          ctl.windows = w;
          ctl.capwin = n;
        }
      }
      if (ctl.nwin < ctl.capwin) ctl.windows[ctl.nwin++] = (Window){now, UINT64_MAX};
    } else if (ctl.nwin) {
      ctl.windows[ctl.nwin - 1].b = now;
    }
    ctl.capture_on = cap;
  }
  __atomic_store_n(&recording, cap && rt_opt.cpu, __ATOMIC_RELEASE);
}

int rt_in_window(uint64_t ns) {
  for (size_t i = ctl.nwin; i-- > 0;)
    if (ctl.windows[i].a <= ns && ns <= ctl.windows[i].b) return 1;
  return 0;
}

/* The windows as "window A B" lines (B 0: still open) for the snapshot a
 * finalizer reads, into buf; the flusher calls it, never waiting for the
 * lock (returns -1 when busy: keep the last text). Past RT_SNAP_WINDOWS the
 * last line is the hull of the rest: a killed process's GPU work launched
 * between those later windows is kept too. */
#define RT_SNAP_WINDOWS 2048
int rt_windows_text(char *buf, size_t cap) {
  if (pthread_mutex_trylock(&ctl.lock)) return -1;
  size_t at = 0;
  buf[0] = 0;
  for (size_t i = 0; i < ctl.nwin && i < RT_SNAP_WINDOWS; i++) {
    uint64_t b = i == RT_SNAP_WINDOWS - 1 ? ctl.windows[ctl.nwin - 1].b : ctl.windows[i].b;
    int k = snprintf(buf + at, cap - at, "window %llu %llu\n", (unsigned long long)ctl.windows[i].a,
                     (unsigned long long)(b == UINT64_MAX ? 0 : b));
    if (k < 0 || (size_t)k >= cap - at) break;
    at += (size_t)k;
  }
  buf[at] = 0;
  pthread_mutex_unlock(&ctl.lock);
  return 0;
}

/* After a write: closed windows are done with. */
void rt_windows_consumed(void) {
  if (ctl.nwin && ctl.windows[ctl.nwin - 1].b == UINT64_MAX) {
    ctl.windows[0] = ctl.windows[ctl.nwin - 1];
    ctl.nwin = 1;
  } else {
    ctl.nwin = 0;
  }
}

static void write_cycle_locked(void) {
  char name[400];
  const char *base = ctl.sched_name[0] ? ctl.sched_name : rt_opt.name;
  if (rt_opt.repeat == 1) snprintf(name, sizeof name, "%s", base);
  else snprintf(name, sizeof name, "%s-cycle%ld", base, ctl.cycles_done + 1);
  ctl.cycle_open = 0;
  ctl.cycles_done++;
  rt_write_trace(ctl.sched_dir[0] ? ctl.sched_dir : NULL, name);
}

/* Steps as the trace shows them (ProfilerStep#N, rt_steps_take): each
 * begins at a step boundary on the thread that made it and ends at the next
 * boundary (ncrt_step(), the "step" verb) or when its --step range ends.
 * Numbered from 0 at the run's start (at a "schedule" verb's start for the
 * Python package's profilers). Own lock: the writer takes them while
 * ctl.lock may be held by the cycle write that called it. */
static struct {
  pthread_mutex_t lock;
  RtStep *v;
  size_t n, cap;
  long next;
} steps = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void tsteps_end_now(uint64_t now) {
  if (steps.n && !steps.v[steps.n - 1].end) steps.v[steps.n - 1].end = now;
}

/* The open step (if any) ends now and the next begins. */
static void tsteps_begin(void) {
  uint64_t now = now_ticks();
  pthread_mutex_lock(&steps.lock);
  tsteps_end_now(now);
  if (steps.n == steps.cap) {
    size_t n = steps.cap ? steps.cap * 2 : 64;
    RtStep *v = realloc(steps.v, n * sizeof *v);
    if (v) steps.v = v, steps.cap = n;
  }
  if (steps.n < steps.cap)
    steps.v[steps.n++] = (RtStep){steps.next, now, 0, (uint32_t)syscall(SYS_gettid), (uint8_t)ctl.capture_on};
  steps.next++; /* numbered by boundary even if this one could not be kept */
  pthread_mutex_unlock(&steps.lock);
}

static void tsteps_end(void) {
  uint64_t now = now_ticks();
  pthread_mutex_lock(&steps.lock);
  tsteps_end_now(now);
  pthread_mutex_unlock(&steps.lock);
}

static void tsteps_reset(void) {
  pthread_mutex_lock(&steps.lock);
  steps.n = 0;
  steps.next = 0;
  pthread_mutex_unlock(&steps.lock);
}

size_t rt_steps_take(RtStep **out) {
  pthread_mutex_lock(&steps.lock);
  size_t n = steps.n && !steps.v[steps.n - 1].end ? steps.n - 1 : steps.n;
  *out = n ? malloc(n * sizeof **out) : NULL;
  if (*out) {
    memcpy(*out, steps.v, n * sizeof **out);
    memmove(steps.v, steps.v + n, (steps.n - n) * sizeof *steps.v);
    steps.n -= n;
  } else n = 0;
  pthread_mutex_unlock(&steps.lock);
  return n;
}

/* A step begins: move the schedule. Called with ctl.lock held. The step
 * before ends first (a cycle written here holds it whole); the new one
 * begins once capture is on, so it lies inside the window the writer keeps
 * steps by (begun before the window opened, a short step's middle fell
 * before it under load: runtime/schedule-range lost ProfilerStep#6). */
static void step_begin_locked(void) {
  tsteps_end();
  ctl.step_index++;
  if (!rt_opt.active) {
    tsteps_begin();
    return;
  }
  long len = rt_opt.wait + rt_opt.warmup + rt_opt.active, si = ctl.step_index - rt_opt.skip_first;
  if (si < 0) { /* skip_first: before every cycle, once */
    ctl.sched_on = 0;
    recompute();
    tsteps_begin();
    return;
  }
  long c = si / len, pos = si % len;
  /* pos 0: a new cycle, also when wait and warmup are 0 (the cycles would
   * run together otherwise) */
  if (ctl.cycle_open && (pos < rt_opt.wait + rt_opt.warmup || pos == 0)) {
    ctl.sched_on = 0;
    recompute();
    write_cycle_locked();
  }
  int on = (rt_opt.repeat == 0 || c < rt_opt.repeat) && pos >= rt_opt.wait + rt_opt.warmup;
  if (on && !ctl.cycle_open) {
    ctl.cycle_open = 1;
    ctl.cycle_first_step = ctl.step_index;
  }
  ctl.sched_on = on;
  recompute();
  tsteps_begin();
}

/* The step range ended: if it was the last active step of a cycle, write. */
static void step_end_locked(void) {
  tsteps_end();
  if (!rt_opt.active || !ctl.cycle_open) return;
  long len = rt_opt.wait + rt_opt.warmup + rt_opt.active, si = ctl.step_index - rt_opt.skip_first;
  if (si >= 0 && si % len == len - 1) {
    ctl.sched_on = 0;
    recompute();
    write_cycle_locked();
  }
}

/* "schedule\t<wait>\t<warmup>\t<active>\t<repeat>[\t<skip_first>]\t<dir>\t<name>": a
 * profiler with a schedule starts (step 0 begins now, as after
 * torch.profiler's start()); "schedule_end": it stops, writing the cycle
 * still open, as torch.profiler's stop() does. Called with ctl.lock held. */
static void schedule_set(const char *args) {
  long v[5] = {0, 0, 0, 0, 0};
  const char *p = args;
  for (int i = 0; i < 5; i++) {
    char *end;
    long x = strtol(p, &end, 10);
    if (i == 4 && (end == p || *end != '\t')) break; /* skip_first is optional */
    if (end == p || *end != '\t' || x < 0) return;
    v[i] = x;
    p = end + 1;
  }
  const char *n = strchr(p, '\t');
  if (!n || (size_t)(n - p) >= sizeof ctl.sched_dir || strlen(n + 1) >= sizeof ctl.sched_name) return;
  memcpy(ctl.sched_dir, p, (size_t)(n - p));
  ctl.sched_dir[n - p] = 0;
  snprintf(ctl.sched_name, sizeof ctl.sched_name, "%s", n + 1);
  rt_opt.wait = v[0];
  rt_opt.warmup = v[1];
  rt_opt.active = v[2];
  rt_opt.repeat = v[3];
  rt_opt.skip_first = v[4];
  tsteps_reset();
  ctl.step_index = -1;
  ctl.cycles_done = 0;
  ctl.cycle_open = 0;
  ctl.user_on = 1;
  if (rt_opt.active) step_begin_locked();
  else recompute();
}

static void schedule_end(void) {
  tsteps_end(); /* as torch.profiler's stop() ends its last step */
  if (rt_opt.active && ctl.cycle_open) {
    ctl.sched_on = 0;
    recompute();
    write_cycle_locked();
  }
  rt_opt.active = 0;
  ctl.sched_on = 1;
  ctl.user_on = 0;
  ctl.sched_dir[0] = ctl.sched_name[0] = 0;
  recompute();
}

static void control(const char *msg) {
  pthread_mutex_lock(&ctl.lock);
  if (!strncmp(msg, NCRT_SCHEDULE_PREFIX, sizeof NCRT_SCHEDULE_PREFIX - 1)) {
    schedule_set(msg + sizeof NCRT_SCHEDULE_PREFIX - 1);
  } else if (!strcmp(msg, NCRT_VERB_SCHEDULE_END)) {
    schedule_end();
  } else if (!strcmp(msg, NCRT_VERB_STEP)) {
    step_begin_locked();
  } else if (!strcmp(msg, NCRT_VERB_START)) {
    ctl.user_on = 1;
    recompute();
  } else if (!strcmp(msg, NCRT_VERB_STOP)) {
    ctl.user_on = 0;
    recompute();
  } else if (!strncmp(msg, NCRT_WRITE_PREFIX, sizeof NCRT_WRITE_PREFIX - 1)) {
    /* "write\t<dir>\t<name>": the Python package's profiler ended a region */
    const char *d = msg + sizeof NCRT_WRITE_PREFIX - 1, *n = strchr(d, '\t');
    char dir[1024];
    if (n && (size_t)(n - d) < sizeof dir && n[1]) {
      memcpy(dir, d, (size_t)(n - d));
      dir[n - d] = 0;
      rt_write_force = 1;
      if (rt_write_trace(dir, n + 1) < 0) rt_say("the trace %s/%s was not written", dir, n + 1);
      rt_write_force = 0;
    }
  } else if (!strncmp(msg, NCRT_ROLE_PREFIX, sizeof NCRT_ROLE_PREFIX - 1)) {
    /* "role\t<role>\t<detail>": what the Python module learnt of this process */
    char role[64];
    const char *r = msg + sizeof NCRT_ROLE_PREFIX - 1, *d = strchr(r, '\t');
    size_t n = d ? (size_t)(d - r) : strlen(r);
    if (n >= sizeof role) n = sizeof role - 1;
    memcpy(role, r, n);
    role[n] = 0;
    rt_process_role(role, d ? d + 1 : "");
  } else if (!strncmp(msg, NCRT_RANK_PREFIX, sizeof NCRT_RANK_PREFIX - 1)) {
    /* "rank\t<R>\t<W>\t<from>": torch.distributed named this process's rank */
    int rank, world;
    char from[32] = "", backend[16] = "";
    if (sscanf(msg + sizeof NCRT_RANK_PREFIX - 1, "%d\t%d\t%31[^\t]\t%15[A-Za-z0-9_:-]", &rank, &world, from,
               backend) >= 2 &&
        rank >= 0) {
      rt_process_rank(rank, world, from[0] ? from : "torch.distributed");
      if (backend[0]) memcpy(rt_proc.backend, backend, sizeof backend);
    }
  } else if (!strncmp(msg, NCRT_LOC_PREFIX, sizeof NCRT_LOC_PREFIX - 1)) {
    /* "loc\t<name>\t<file>\t<line>": where a range name comes from */
    const char *n = msg + 4, *f = strchr(n, '\t');
    const char *l = f ? strchr(f + 1, '\t') : NULL;
    if (l) {
      RtName *nm = rt_name(rt_intern(n, (size_t)(f - n)));
      if (!nm->file) {
        nm->file = strndup(f + 1, (size_t)(l - f - 1));
        nm->line = atoi(l + 1);
      }
    }
  }
  pthread_mutex_unlock(&ctl.lock);
}

/* ---- messages to name ids ---- */

static uint32_t intern_wide(const wchar_t *w) {
  char buf[1024];
  mbstate_t st;
  memset(&st, 0, sizeof st);
  const wchar_t *p = w;
  size_t n = wcsrtombs(buf, &p, sizeof buf - 1, &st);
  if (n == (size_t)-1) return rt_name_unknown;
  return rt_intern(buf, n);
}

static inline uint32_t ascii_id(RtThread *t, const char *s) {
  if (!s) return rt_name_unknown;
  unsigned k = ((uintptr_t)s >> 3) & 63;
  if (t->cache_ptr[k] == s) {
    uint32_t id = t->cache_id[k];
    if (!strcmp(rt_name(id)->str, s)) return id;
  }
  uint32_t id = rt_intern(s, strlen(s));
  t->cache_ptr[k] = s;
  t->cache_id[k] = id;
  return id;
}

#define ATTR_HAS_MESSAGE(a) \
  ((a)->size >= offsetof(nvtxEventAttributes_t, message) + sizeof((a)->message))

static inline uint32_t msg_id(RtThread *t, const nvtxEventAttributes_t *a, uint8_t *cat) {
  *cat = 0;
  if (!a || !ATTR_HAS_MESSAGE(a)) return rt_name_unknown;
  *cat = a->category > 255 ? 255 : (uint8_t)a->category;
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_REGISTERED: {
    uintptr_t h = (uintptr_t)a->message.registered;
    return h ? (uint32_t)(h - 1) : rt_name_unknown;
  }
  case NVTX_MESSAGE_TYPE_ASCII:
    return ascii_id(t, a->message.ascii);
  case NVTX_MESSAGE_TYPE_UNICODE:
    return a->message.unicode ? intern_wide(a->message.unicode) : rt_name_unknown;
  default:
    return rt_name_unknown;
  }
}

/* ---- push / pop ---- */

/* The old stack is not freed: the writer reads other threads' stacks at
 * exit without a lock, so every stack pointer it may see stays valid. The
 * leak is bounded by the final stack's size. */
static int grow_stack(RtThread *t) {
  uint32_t cap = t->stack_cap * 2;
  RtFrame *s = map_zero(cap * sizeof *s); /* not malloc: a signal handler may push here */
  if (!s) return -1;
  memcpy(s, t->stack, t->sp * sizeof *s);
  __atomic_store_n(&t->stack, s, __ATOMIC_RELEASE);
  t->stack_cap = cap;
  return 0;
}

static void push_special(RtThread *t, RtFrame *f, uint8_t flags) {
  if (flags & NAME_STEP) {
    pthread_mutex_lock(&ctl.lock);
    step_begin_locked();
    pthread_mutex_unlock(&ctl.lock);
  }
  if (flags & NAME_GATE) {
    __atomic_add_fetch(&ctl.gate_open, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&ctl.lock);
    recompute();
    pthread_mutex_unlock(&ctl.lock);
    f->gate = 1;
  }
  (void)t;
}

static inline void throttle_skip(RtThread *t, uint32_t name);
static inline void throttle_open(RtThread *t, RtFrame *f, uint32_t name);
static RtStat *slot_take(RtThread *t, uint32_t name);
static inline int push_in(RtThread *t, uint16_t dom, uint32_t name, uint8_t cat, uint64_t addr) {
  if (__builtin_expect(t->sp == t->stack_cap, 0) && grow_stack(t)) return -1;
  RtFrame *f = &t->stack[t->sp];
  f->addr = addr;
  f->name = name;
  f->domain = dom;
  f->gate = 0;
  f->cat = cat;
  uint8_t flags = name_flags(name);
  if (__builtin_expect(flags & (NAME_GATE | NAME_STEP), 0)) push_special(t, f, flags);
  f->recorded = recording && !(flags & NAME_THROTTLED);
  f->child = f->hidden = f->cov = f->meas = 0;
  f->counted = f->outer = 0;
  /* a throttled name's calls are still counted and timed, for the trace's
   * totals; a recorded one is counted open where its slot is at hand, so
   * that a throttled call inside it knows it is not the outermost */
  if ((flags & NAME_THROTTLED) && recording) throttle_open(t, f, name);
  else if (f->recorded && rt_opt.throttle_calls) {
    RtStat *s = &t->stats[name & (RT_NSTATS - 1)];
    if (__builtin_expect(s->name != name, 0)) s = slot_take(t, name);
    if (s) s->open++, f->counted = 1;
  }
  t->sp++;
  /* the clock is read only for ranges that are recorded or timed */
  f->start = f->recorded || f->counted ? thread_now(t) : 0;
  return (int)t->sp - 1;
}

/* Reentrancy: a signal handler that runs while its thread is inside
 * push/pop/mark (busy) has its ranges ignored (its pushes counted so that
 * its pops are ignored too); at any other moment it records normally. The
 * two stores cost nothing measurable; signal fences keep the compiler from
 * moving the frame's stores outside them. */
#define ENTER(t) ((t)->busy = 1, __atomic_signal_fence(__ATOMIC_SEQ_CST))
#define LEAVE(t) (__atomic_signal_fence(__ATOMIC_SEQ_CST), (t)->busy = 0)

/* The throttle (docs/runtime.md, "Throttle"). A name is judged once, when
 * its recorded calls reach N (process-wide): by default that alone stops
 * its recording (N:US also asks for an exclusive mean under US µs). Calls
 * are a property of the program, not of the machine's load, so the same
 * program records the same ranges on an idle or a busy machine; a mean is
 * taken once and the judgement frozen (NAME_KEPT), never looked at again;
 * and the mean is of exclusive time, so a recursive name answers for its
 * own work rather than for the callees nested in it. Calls after the
 * decision are counted (not timed), so the trace says how often the name
 * ran in all.
 *
 * Each thread counts calls and exclusive ticks per name on its own (no
 * atomic on the pop path) and adds them to the name's totals every `limit`
 * calls, so a name called by many threads is judged as if by one. A
 * thread's batch is N/16 calls, cut short to land exactly on N when one
 * thread is alone, so a single-threaded program is throttled at call N. */
static pthread_mutex_t throttle_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t throttle_batch(uint64_t global_count) {
  uint64_t n = (uint64_t)rt_opt.throttle_calls, b = n / 16 ? n / 16 : 1;
  uint64_t left = global_count < n ? n - global_count : 1;
  return left < b ? left : b;
}

/* Mean duration in microseconds of `count` ranges lasting `total` ticks. */
static double ticks_mean_us(uint64_t total, uint64_t count) {
  if (rt_opt.use_tsc) {
    /* ticks -> ns with the ratio measured so far, from the origin alone
     * (the calibration's pair is the flusher's to write: not read here) */
    uint64_t tsc0 = rt_clock_origin_tsc(), ns0 = rt_clock_origin_ns();
    uint64_t n1 = rt_mono_ns(), k1 = now_ticks();
    double r = k1 > tsc0 ? (double)(n1 - ns0) / (double)(k1 - tsc0) : 1.0;
    return (double)total * r / 1e3 / (double)count;
  }
  return (double)(rt_ticks_to_ns(total) - rt_ticks_to_ns(0)) / 1e3 / (double)count;
}

/* Add a thread's counts to the name's totals and judge the name once they
 * reach N calls. Under throttle_lock. */
static void throttle_add(RtName *nm, RtStat *s, uint32_t tid) {
  nm->g_count += s->count;
  nm->g_total += s->total;
  s->count = s->total = 0;
  if (nm->g_count < (uint64_t)rt_opt.throttle_calls ||
      (__atomic_load_n(&nm->flags, __ATOMIC_ACQUIRE) & (NAME_THROTTLED | NAME_KEPT)))
    return;
  double avg_us = ticks_mean_us(nm->g_total, nm->g_count);
  if (rt_opt.throttle_us > 0 && avg_us >= rt_opt.throttle_us) {
    __atomic_or_fetch(&nm->flags, NAME_KEPT, __ATOMIC_RELEASE); /* judged once: kept for good */
    return;
  }
  nm->calls_at_throttle = nm->g_count;
  nm->avg_us_at_throttle = avg_us;
  nm->throttled_at = now_ticks();
  nm->throttled_tid = tid;
  __atomic_or_fetch(&nm->flags, NAME_THROTTLED, __ATOMIC_RELEASE);
}

/* Hand a slot's counts over to its name: calls not recorded by an atomic
 * add, recorded ones under the lock (not waited for: 0 if it is busy, the
 * counts then stay). */
static int slot_hand_over(RtStat *s, uint32_t tid, int wait) {
  if (s->name == UINT32_MAX) return 1;
  RtName *nm = rt_name(s->name);
  if (s->skipped) {
    __atomic_add_fetch(&nm->skipped, s->skipped, __ATOMIC_RELAXED);
    s->skipped = 0;
  }
  if (s->u_calls) {
    __atomic_add_fetch(&nm->u_calls, s->u_calls, __ATOMIC_RELAXED);
    __atomic_add_fetch(&nm->u_incl, s->u_incl, __ATOMIC_RELAXED);
    __atomic_add_fetch(&nm->u_excl, s->u_excl, __ATOMIC_RELAXED);
    __atomic_add_fetch(&nm->u_sum, s->u_sum, __ATOMIC_RELAXED);
    s->u_calls = s->u_incl = s->u_excl = s->u_sum = 0;
  }
  if (!s->count) return 1;
  if (wait) pthread_mutex_lock(&throttle_lock);
  else if (pthread_mutex_trylock(&throttle_lock) != 0) return 0;
  throttle_add(nm, s, tid);
  pthread_mutex_unlock(&throttle_lock);
  return 1;
}

/* The slot of `name` in t's table, taken from the name there (whose counts
 * are handed over), or NULL: the table could not be mapped, or the lock was
 * busy (this call then goes uncounted; the name is judged a little later).
 * No lock waited for and no malloc (mmap is async-signal-safe): a range in
 * a signal handler may get here. */
static RtStat *slot_take(RtThread *t, uint32_t name) {
  if (t->stats == no_stats) {
    RtStat *s = mmap(NULL, STATS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) return NULL;
    for (uint32_t i = 0; i < RT_NSTATS; i++) s[i].name = UINT32_MAX;
    t->stats = s;
  }
  RtStat *s = &t->stats[name & (RT_NSTATS - 1)];
  if (s->name == name) return s;
  /* a name with frames open here keeps its slot: their pops count there */
  if (s->open) return NULL;
  if (!slot_hand_over(s, t->tid, 0)) return NULL;
  s->name = name;
  s->count = s->total = s->limit = s->skipped = 0;
  s->u_calls = s->u_incl = s->u_excl = s->u_sum = 0;
  return s;
}

static void throttle_slow(RtThread *t, uint32_t name, uint64_t excl) {
  RtStat *s = slot_take(t, name);
  if (!s) return;
  s->count++;
  s->total += excl;
  if (s->limit && s->count < s->limit) return; /* first call of this name here */
  RtName *nm = rt_name(name);
  /* never wait: a range in a signal handler may interrupt this thread right
   * here; if the lock is busy, keep counting and try again a little later */
  if (pthread_mutex_trylock(&throttle_lock) != 0) {
    s->limit = s->count + 64;
    return;
  }
  throttle_add(nm, s, t->tid);
  s->limit = throttle_batch(nm->g_count);
  pthread_mutex_unlock(&throttle_lock);
}

/* A call of a throttled name opens: counted, and timed when its slot is at
 * hand (else its time stays in its parent's, as if it were not there). */
static void throttle_open_slow(RtThread *t, RtFrame *f, uint32_t name) {
  RtStat *s = slot_take(t, name);
  if (!s) return;
  s->skipped++;
  f->outer = s->open == 0;
  s->open++;
  f->counted = 1;
}
static inline void throttle_open(RtThread *t, RtFrame *f, uint32_t name) {
  RtStat *s = &t->stats[name & (RT_NSTATS - 1)];
  if (__builtin_expect(s->name != name, 0)) {
    throttle_open_slow(t, f, name);
    return;
  }
  s->skipped++;
  f->outer = s->open == 0;
  s->open++;
  f->counted = 1;
}

/* A call of a throttled name: counted, nothing else. */
static void throttle_skip_slow(RtThread *t, uint32_t name) {
  RtStat *s = slot_take(t, name);
  if (s) s->skipped++;
}
static inline void throttle_skip(RtThread *t, uint32_t name) {
  RtStat *s = &t->stats[name & (RT_NSTATS - 1)];
  if (__builtin_expect(s->name == name, 1)) s->skipped++;
  else throttle_skip_slow(t, name);
}

/* Read at exit while other threads may still count: a best-effort sum (the
 * slots are plain fields their owners write), so ThreadSanitizer does not
 * check it. */
__attribute__((no_sanitize("thread"))) uint64_t rt_name_total_calls(uint32_t id) {
  RtName *nm = rt_name(id);
  uint64_t n = __atomic_load_n(&nm->g_count, __ATOMIC_RELAXED) + __atomic_load_n(&nm->skipped, __ATOMIC_RELAXED);
  for (RtThread *t = rt_threads(); t; t = t->next) {
    const RtStat *st = t->stats, *s = &st[id & (RT_NSTATS - 1)];
    if (st != no_stats && s->name == id) n += s->count + s->skipped;
  }
  return n;
}

/* Ticks of a duration in ns (the clock's ratio so far, as the throttle's
 * mean takes it). */
static uint64_t ticks_dur_ns(uint64_t ticks) {
  return ticks ? (uint64_t)(ticks_mean_us(ticks, 1) * 1e3 + 0.5) : 0;
}

__attribute__((no_sanitize("thread"))) void rt_name_unrec(uint32_t id, RtUnrec *out) {
  RtName *nm = rt_name(id);
  uint64_t incl = __atomic_load_n(&nm->u_incl, __ATOMIC_RELAXED), excl = __atomic_load_n(&nm->u_excl, __ATOMIC_RELAXED);
  uint64_t sum = __atomic_load_n(&nm->u_sum, __ATOMIC_RELAXED), hid = __atomic_load_n(&nm->hidden, __ATOMIC_RELAXED);
  uint64_t calls = __atomic_load_n(&nm->u_calls, __ATOMIC_RELAXED);
  for (RtThread *t = rt_threads(); t; t = t->next) {
    const RtStat *st = t->stats, *s = &st[id & (RT_NSTATS - 1)];
    if (st != no_stats && s->name == id)
      calls += s->u_calls, incl += s->u_incl, excl += s->u_excl, sum += s->u_sum;
  }
  out->calls = calls;
  out->incl_ns = ticks_dur_ns(incl);
  out->excl_ns = ticks_dur_ns(excl);
  out->sum_ns = ticks_dur_ns(sum);
  out->hidden_ns = ticks_dur_ns(hid);
}

/* A thread that ends hands its pending counts over (else short-lived threads
 * calling a name fewer than N/16 times each would never add up). */
static void thread_exit(void *arg) {
  RtThread *t = arg;
  RtStat *st = t->stats;
  if (st != no_stats)
    for (uint32_t i = 0; i < RT_NSTATS; i++) slot_hand_over(&st[i], t->tid, 1);
  /* give the memory back: the records go to the spill file, the buffer and
   * the throttle counts are freed (the small RtThread stays, for its name) */
  t->stats = (RtStat *)no_stats;
  if (st != no_stats) munmap(st, STATS_BYTES);
  RtChunk *c = t->cur;
  if (c) {
    rt_spill_thread(t);
    __atomic_store_n(&t->cur, NULL, __ATOMIC_SEQ_CST);
    wait_claimers(t);
    rt_chunk_free(c);
  }
  /* a later TLS destructor that records gets an RtThread of its own (and
   * this destructor again): this one may go to a new thread from now on */
  tls_thread = NULL;
  __atomic_store_n(&t->dead, 1, __ATOMIC_SEQ_CST);
}

static inline void throttle_check(RtThread *t, uint32_t name, uint64_t excl) {
  RtStat *s = &t->stats[name & (RT_NSTATS - 1)];
  if (__builtin_expect(s->name == name, 1)) {
    s->total += excl;
    if (__builtin_expect(++s->count < s->limit, 1)) return;
    s->count--;
    s->total -= excl;
  }
  throttle_slow(t, name, excl);
}

static inline int pop_in(RtThread *t, uint16_t dom, uint8_t kind) {
  if (__builtin_expect(t->sp == 0, 0)) return -1;
  uint32_t i = t->sp - 1;
  if (__builtin_expect(t->stack[i].domain != dom, 0)) {
    /* stacks are per domain: find this domain's innermost frame */
    while (i > 0 && t->stack[i].domain != dom) i--;
    if (t->stack[i].domain != dom) return -1;
  }
  RtFrame f = t->stack[i];
  if (i != t->sp - 1) memmove(&t->stack[i], &t->stack[i + 1], (t->sp - 1 - i) * sizeof(RtFrame));
  t->sp--;
  uint8_t flags = name_flags(f.name);
  uint64_t end = 0;
  if (f.recorded) {
    end = thread_now(t);
    RtRec *r = rec_next(t);
    if (r) {
      r->start = f.start;
      r->end = end;
      r->name = f.name;
      r->domain = f.domain > 255 ? 255 : (uint8_t)f.domain;
      r->kind = kind;
      r->cat = f.cat;
      rec_set_depth(r, i);
      rec_commit(t);
    }
    /* exclusive time: the parent (still at i - 1) learns of this child;
     * an unrecorded parent passes it up as time the trace shows */
    uint64_t dur = end - f.start;
    if (i) {
      t->stack[i - 1].child += dur;
      if (!t->stack[i - 1].recorded) t->stack[i - 1].cov += dur;
    }
    if (f.counted) {
      RtStat *s = &t->stats[f.name & (RT_NSTATS - 1)];
      if (s->name == f.name && s->open) s->open--;
    }
    /* the throttled calls inside it, which the trace counts as its own
     * time: rare (at most N recorded calls a name), so an atomic add */
    if (f.hidden) __atomic_add_fetch(&rt_name(f.name)->hidden, f.hidden, __ATOMIC_RELAXED);
    if (rt_opt.throttle_calls && !(flags & (NAME_THROTTLED | NAME_KEPT)))
      throttle_check(t, f.name, dur > f.child ? dur - f.child : 0);
    else if (flags & NAME_THROTTLED)
      throttle_skip(t, f.name); /* opened before the decision: a call after it all the same */
  } else if (f.counted) {
    /* a throttled call: timed into its slot (which it kept while open) */
    uint64_t dur = thread_now(t) - f.start;
    RtStat *s = &t->stats[f.name & (RT_NSTATS - 1)];
    if (s->name == f.name) {
      if (s->open) s->open--;
      s->u_calls++;
      s->u_sum += dur;
      s->u_excl += dur > f.child ? dur - f.child : 0;
      if (f.outer) s->u_incl += dur;
    }
    if (i) {
      /* what the nearest recorded range's exclusive time in the trace holds
       * of this call: all of it but the recorded ranges below it (the trace
       * counts those as that range's children) */
      RtFrame *pf = &t->stack[i - 1];
      uint64_t meas = dur > f.cov ? dur - f.cov : 0;
      pf->child += dur;
      if (pf->recorded) pf->hidden += meas;
      else pf->cov += f.cov, pf->meas += meas;
    }
  } else if (i) {
    /* a throttled call not timed (its slot was taken): its own time stays
     * in its parent's; what was timed or recorded below it passes up */
    RtFrame *pf = &t->stack[i - 1];
    pf->child += f.meas + f.cov;
    if (pf->recorded) pf->hidden += f.meas;
    else pf->cov += f.cov, pf->meas += f.meas;
  }
  if (__builtin_expect(flags & (NAME_GATE | NAME_STEP), 0)) {
    if (f.gate) {
      __atomic_sub_fetch(&ctl.gate_open, 1, __ATOMIC_ACQ_REL);
      pthread_mutex_lock(&ctl.lock);
      recompute();
      pthread_mutex_unlock(&ctl.lock);
    }
    if (flags & NAME_STEP) {
      pthread_mutex_lock(&ctl.lock);
      step_end_locked();
      pthread_mutex_unlock(&ctl.lock);
    }
  }
  return (int)t->sp;
}

static inline int pop(uint16_t dom) {
  RtThread *t = tls_thread;
  if (__builtin_expect(!t, 0)) return -1;
  if (__builtin_expect(t->busy, 0)) {
    if (t->ignored) t->ignored--;
    return -1;
  }
  ENTER(t);
  int r = pop_in(t, dom, REC_RANGE);
  LEAVE(t);
  return r;
}

/* A longjmp leaves the frames below target: their ranges never see their
 * pops. Close them now (innermost first, marked), from the outermost one
 * whose scope object lies in the abandoned part of the stack, [here,
 * target) (from an alternate signal stack: the 256 MiB below target). A
 * range opened without an address (a plain nvtxRangePush) above such a
 * frame is closed with it: it was opened while that frame was live. */
void rt_longjmp_unwind(uint64_t target, uint64_t here) {
  RtThread *t = tls_thread;
  if (!t || t->busy || !target || !t->sp) return;
  uint64_t lo = here < target ? here : target - ((uint64_t)256 << 20);
  uint32_t i = 0;
  while (i < t->sp && !(t->stack[i].addr >= lo && t->stack[i].addr < target)) i++;
  if (i == t->sp) return;
  ENTER(t);
  while (t->sp > i) pop_in(t, t->stack[t->sp - 1].domain, REC_RANGE_JUMPED);
  LEAVE(t);
}

static void mark_in(RtThread *t, uint16_t dom, const nvtxEventAttributes_t *a, const char *ascii);
static void mark(uint16_t dom, const nvtxEventAttributes_t *a, const char *ascii) {
  RtThread *t = self();
  if (!t || t->busy) return;
  ENTER(t);
  mark_in(t, dom, a, ascii);
  LEAVE(t);
}

static void mark_in(RtThread *t, uint16_t dom, const nvtxEventAttributes_t *a, const char *ascii) {
  uint8_t cat = 0;
  uint32_t id = a ? msg_id(t, a, &cat) : ascii_id(t, ascii);
  if (dom == control_domain && dom != 0) {
    control(rt_name(id)->str);
    return;
  }
  if (!recording) return;
  RtRec *r = rec_next(t);
  if (!r) return;
  r->start = r->end = thread_now(t);
  r->name = id;
  r->domain = dom > 255 ? 255 : (uint8_t)dom;
  r->kind = REC_MARK;
  r->cat = cat;
  rec_set_depth(r, t->sp);
  rec_commit(t);
}

/* ---- start / end ranges ---- */

static volatile uint64_t span_next = 1;
/* Spans that must keep capture state (gate) are rare: a small locked list. */
typedef struct {
  uint64_t id;
  int gate;
} GateSpan;
static GateSpan gate_spans[64];
static int gate_span_n;

static nvtxRangeId_t span_start_in(RtThread *t, uint16_t dom, const nvtxEventAttributes_t *a, const char *ascii);
static nvtxRangeId_t span_start(uint16_t dom, const nvtxEventAttributes_t *a, const char *ascii) {
  RtThread *t = self();
  if (!t || t->busy) return 0;
  ENTER(t);
  nvtxRangeId_t r = span_start_in(t, dom, a, ascii);
  LEAVE(t);
  return r;
}

static nvtxRangeId_t span_start_in(RtThread *t, uint16_t dom, const nvtxEventAttributes_t *a, const char *ascii) {
  uint8_t cat = 0;
  uint32_t id = a ? msg_id(t, a, &cat) : ascii_id(t, ascii);
  uint64_t sid = __atomic_fetch_add(&span_next, 1, __ATOMIC_RELAXED);
  uint8_t flags = name_flags(id);
  if (__builtin_expect(flags & NAME_GATE, 0)) {
    pthread_mutex_lock(&ctl.lock);
    if (gate_span_n < 64) {
      gate_spans[gate_span_n++] = (GateSpan){sid, 1};
      ctl.gate_open++;
      recompute();
    }
    pthread_mutex_unlock(&ctl.lock);
  }
  if (!recording || (flags & NAME_THROTTLED)) return sid << 1; /* low bit 0: not recorded */
  RtRec *r = rec_next(t);
  if (!r) return sid << 1;
  r->start = now_ticks();
  r->end = sid;
  r->name = id;
  r->domain = dom > 255 ? 255 : (uint8_t)dom;
  r->kind = REC_SPAN_START;
  r->cat = cat;
  rec_set_depth(r, 0);
  rec_commit(t);
  return (sid << 1) | 1;
}

static void span_end(nvtxRangeId_t rid) {
  uint64_t now = now_ticks();
  uint64_t sid = rid >> 1;
  if (gate_span_n) {
    pthread_mutex_lock(&ctl.lock);
    for (int i = 0; i < gate_span_n; i++)
      if (gate_spans[i].id == sid) {
        gate_spans[i] = gate_spans[--gate_span_n];
        ctl.gate_open--;
        recompute();
        break;
      }
    pthread_mutex_unlock(&ctl.lock);
  }
  if (!(rid & 1)) return;
  RtThread *t = self();
  if (!t || t->busy) return;
  ENTER(t);
  RtRec *r = rec_next(t);
  if (r) {
    r->start = now;
    r->end = sid;
    r->name = 0;
    r->domain = 0;
    r->kind = REC_SPAN_END;
    r->cat = 0;
    rec_set_depth(r, 0);
    rec_commit(t);
  }
  LEAVE(t);
}

/* ---- thread and category names ---- */

typedef struct {
  uint32_t key;
  char *name;
} KeyName;
static KeyName cat_names[256];
static int cat_n;
static KeyName os_names[1024];
static int os_n;

static void name_put(KeyName *tab, int *n, int max, uint32_t key, const char *name) {
  if (rt_names_lock()) return;
  int i;
  for (i = 0; i < *n; i++)
    if (tab[i].key == key) break;
  if (i == *n) {
    if (*n == max) goto out;
    (*n)++;
  } else {
    free(tab[i].name);
  }
  tab[i].key = key;
  tab[i].name = strdup(name ? name : "");
out:
  rt_names_unlock();
}

const char *rt_category_name(uint32_t cat) {
  for (int i = 0; i < cat_n; i++)
    if (cat_names[i].key == cat) return cat_names[i].name;
  return NULL;
}
const char *rt_os_thread_name(uint32_t tid) {
  for (int i = 0; i < os_n; i++)
    if (os_names[i].key == tid) return os_names[i].name;
  return NULL;
}

/* ---- NVTX handlers ---- */

/* The name is resolved inside ENTER/LEAVE: a signal handler that
 * interrupts its thread while it interns a name (holding the name lock)
 * has its ranges ignored, as in any other NVTX call. */
#define PUSH_BEGIN(t)             \
  RtThread *t = self();           \
  if (__builtin_expect(!t, 0)) return -1; \
  if (__builtin_expect(t->busy, 0)) {     \
    t->ignored++;                 \
    return -1;                    \
  }                               \
  ENTER(t)
#define PUSH_END(t, dom, id, cat, addr)   \
  int r_ = push_in(t, dom, id, cat, addr); \
  LEAVE(t);                       \
  return r_

/* ncrt.h's ranges carry their scope object's address as the payload */
#define FRAME_OF(a) ((a) && (a)->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 ? (a)->payload.ullValue : 0)

static int NVTX_API h_push_ex(const nvtxEventAttributes_t *a) {
  PUSH_BEGIN(t);
  uint8_t cat;
  uint32_t id = msg_id(t, a, &cat);
  PUSH_END(t, 0, id, cat, FRAME_OF(a));
}
static int NVTX_API h_push_a(const char *m) {
  PUSH_BEGIN(t);
  uint32_t id = ascii_id(t, m);
  PUSH_END(t, 0, id, 0, 0);
}
static int NVTX_API h_push_w(const wchar_t *m) {
  PUSH_BEGIN(t);
  uint32_t id = m ? intern_wide(m) : rt_name_unknown;
  PUSH_END(t, 0, id, 0, 0);
}
static int NVTX_API h_pop(void) { return pop(0); }
static int NVTX_API h_dpush(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  PUSH_BEGIN(t);
  uint8_t cat;
  uint32_t id = msg_id(t, a, &cat);
  PUSH_END(t, dom_id(d), id, cat, FRAME_OF(a));
}
static int NVTX_API h_dpop(nvtxDomainHandle_t d) { return pop(dom_id(d)); }

static void NVTX_API h_mark_ex(const nvtxEventAttributes_t *a) { mark(0, a, NULL); }
static void NVTX_API h_mark_a(const char *m) { mark(0, NULL, m); }
static void NVTX_API h_mark_w(const wchar_t *m) {
  if (!m) return;
  RtName *nm = rt_name(intern_wide(m));
  mark(0, NULL, nm->str);
}
static void NVTX_API h_dmark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) { mark(dom_id(d), a, NULL); }

static nvtxRangeId_t NVTX_API h_start_ex(const nvtxEventAttributes_t *a) { return span_start(0, a, NULL); }
static nvtxRangeId_t NVTX_API h_start_a(const char *m) { return span_start(0, NULL, m); }
static nvtxRangeId_t NVTX_API h_start_w(const wchar_t *m) {
  return span_start(0, NULL, m ? rt_name(intern_wide(m))->str : NULL);
}
static void NVTX_API h_end(nvtxRangeId_t id) { span_end(id); }
static nvtxRangeId_t NVTX_API h_dstart(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  return span_start(dom_id(d), a, NULL);
}
static void NVTX_API h_dend(nvtxDomainHandle_t d, nvtxRangeId_t id) { span_end(id); }

static void NVTX_API h_name_cat_a(uint32_t c, const char *n) { name_put(cat_names, &cat_n, 256, c, n); }
static void NVTX_API h_name_cat_w(uint32_t c, const wchar_t *n) {
  if (n) name_put(cat_names, &cat_n, 256, c, rt_name(intern_wide(n))->str);
}
static void NVTX_API h_dname_cat_a(nvtxDomainHandle_t d, uint32_t c, const char *n) { h_name_cat_a(c, n); }
static void NVTX_API h_dname_cat_w(nvtxDomainHandle_t d, uint32_t c, const wchar_t *n) { h_name_cat_w(c, n); }
static void NVTX_API h_name_thread_a(uint32_t tid, const char *n) { name_put(os_names, &os_n, 1024, tid, n); }
static void NVTX_API h_name_thread_w(uint32_t tid, const wchar_t *n) {
  if (n) name_put(os_names, &os_n, 1024, tid, rt_name(intern_wide(n))->str);
}

static nvtxStringHandle_t NVTX_API h_reg_a(nvtxDomainHandle_t d, const char *s) {
  if (!s) return NULL;
  return (nvtxStringHandle_t)(uintptr_t)(rt_intern(s, strlen(s)) + 1);
}
static nvtxStringHandle_t NVTX_API h_reg_w(nvtxDomainHandle_t d, const wchar_t *s) {
  if (!s) return NULL;
  return (nvtxStringHandle_t)(uintptr_t)(intern_wide(s) + 1);
}
static nvtxDomainHandle_t NVTX_API h_dcreate_a(const char *n) {
  return (nvtxDomainHandle_t)(uintptr_t)domain_create(n ? n : "");
}
static nvtxDomainHandle_t NVTX_API h_dcreate_w(const wchar_t *n) {
  return (nvtxDomainHandle_t)(uintptr_t)domain_create(n ? rt_name(intern_wide(n))->str : "");
}
static void NVTX_API h_ddestroy(nvtxDomainHandle_t d) {}
static void NVTX_API h_initialize(const void *r) {}

/* ---- global set-up, exit, fork ---- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int exit_written;

const char *rt_current_trace_name(void) {
  static char name[400];
  if (rt_opt.active && rt_opt.repeat != 1) snprintf(name, sizeof name, "%s-cycle%ld", rt_opt.name, ctl.cycles_done + 1);
  else snprintf(name, sizeof name, "%s", rt_opt.name);
  return name;
}

void rt_atexit(void) {
  if (!rt_collecting) return;
  pthread_mutex_lock(&ctl.lock);
  if (exit_written) {
    pthread_mutex_unlock(&ctl.lock);
    return;
  }
  exit_written = 1;
  if (!rt_proc.exit_ns) rt_proc.exit_ns = rt_mono_ns(); /* the program's end: the rest is ours */
  __atomic_store_n(&rt_exiting, 1, __ATOMIC_RELEASE);
  if (rt_opt.active) {
    long len = rt_opt.wait + rt_opt.warmup + rt_opt.active;
    long want = rt_opt.repeat ? rt_opt.repeat : 1;
    if (ctl.cycle_open) write_cycle_locked();
    else rt_write_trace(NULL, NULL); /* nothing to write: removes the spill files */
    if (ctl.cycles_done < want && rt_opt.repeat != 0)
      rt_say("the run had %ld step%s; the schedule wait=%ld warmup=%ld active=%ld repeat=%ld needs %ld; "
             "%ld of %ld cycle%s recorded%s",
             ctl.step_index + 1, ctl.step_index + 1 == 1 ? "" : "s", rt_opt.wait, rt_opt.warmup, rt_opt.active,
             rt_opt.repeat, rt_opt.skip_first + len * want, ctl.cycles_done, want, want == 1 ? "" : "s",
             rt_opt.step_name[0] ? "" : " (steps come from ncrt_step() / ncrt.step() or --step NAME)");
    else if (ctl.cycles_done == 0)
      rt_say("the run had %ld step%s; the schedule needs %ld for one cycle: nothing recorded", ctl.step_index + 1,
             ctl.step_index + 1 == 1 ? "" : "s", rt_opt.skip_first + len);
  } else if (rt_opt.dormant && !ctl.capture_on) {
    rt_write_trace(NULL, NULL); /* in-process, no region open: the profilers wrote theirs; remove the spill files */
  } else {
    __atomic_store_n(&recording, 0, __ATOMIC_RELEASE);
    if (rt_write_trace(NULL, rt_opt.name) == 1 && rt_opt.gate[0] && rt_name_count() > 1)
      rt_say("nothing recorded: no range matching '%s' was opened", rt_opt.gate);
  }
  pthread_mutex_unlock(&ctl.lock);
}

/* The exit hook is registered when libncrt is loaded, before the program's
 * own atexit handlers (it runs after them, so their ranges are kept), and
 * does nothing in a process that never recorded (ncrun itself). */
__attribute__((constructor)) static void rt_loaded(void) { atexit(rt_atexit); }

/* ---- the flusher thread ---- */


static void *flusher_main(void *arg) {
  (void)arg;
  rt_in_flusher = 1;
  /* the program's own threads come first: converting records to the trace
   * is work that can wait (nice 10, this thread only) */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
  for (;;) {
    struct timespec d = {0, RT_FLUSH_MS * 1000000L};
    nanosleep(&d, NULL);
    if (__atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE)) continue;
    rt_flush_tick();
  }
  return NULL;
}

/* Once per process. The parent's thread does not survive fork, and the
 * child starts its own only when a new thread records there (adopt): until
 * then its records reach the spill file only when a buffer fills and when
 * it ends, so a forked child SIGKILLed loses the rest (open; starting one
 * in fork_child would do, but ThreadSanitizer kills a child of a threaded
 * process that starts a thread: docs/reliability.md). */
void rt_flusher_start(void) {
  static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
  if (getenv(NCRT_ENV_FLUSH) && !strcmp(getenv(NCRT_ENV_FLUSH), "0")) return;
  pthread_mutex_lock(&start_lock);
  pid_t me = getpid();
  if (threads.flusher_pid != me) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 * 1024);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    if (pthread_create(&th, &at, flusher_main, NULL) == 0) threads.flusher_pid = me;
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  pthread_mutex_unlock(&start_lock);
}

/* Every lock is taken before fork, in the order they nest (a trace write
 * under ctl.lock takes the writer's; steps.lock is innermost), and given
 * back after it in the parent and in the child: re-initialising one the
 * child inherited locked is undefined. */
static void fork_prepare(void) {
  pthread_mutex_lock(&ctl.lock);
  rt_writer_fork_lock();
  pthread_mutex_lock(&threads.lock);
  rt_names_fork_lock();
  pthread_mutex_lock(&throttle_lock);
  pthread_mutex_lock(&steps.lock);
}
static void fork_unlock(void) {
  pthread_mutex_unlock(&steps.lock);
  pthread_mutex_unlock(&throttle_lock);
  rt_names_fork_unlock();
  pthread_mutex_unlock(&threads.lock);
  rt_writer_fork_unlock();
  pthread_mutex_unlock(&ctl.lock);
}
static void fork_parent(void) { fork_unlock(); }
/* The child keeps only its own thread (its open ranges, so that its pops
 * match, but not recorded) and no records: they belong to the parent's
 * trace. It writes its own, named by pid, from
 * its own spill files. */
static void fork_child(void) {
  fork_unlock();
  RtThread *me = tls_thread;
  threads.list = NULL;
  if (me) {
    me->inflight = 0;
    RtChunk *c = me->cur;
    if (c) {
      c->n = 0;
      c->spilled = (c->spilled & ~(uint64_t)0xffffffffu) + ((uint64_t)1 << 32);
    }
    /* the ranges open at fork are the parent's (its trace has them):
     * closed here they are not recorded again, open at exit not listed */
    for (uint32_t i = 0; i < me->sp; i++) me->stack[i].recorded = 0;
    me->tid = (uint32_t)syscall(SYS_gettid);
    me->next = NULL;
    me->dropped = 0;
    threads.list = me;
  }
  /* a forked child is a helper of its parent's rank, named by pid */
  if (rt_proc.is_rank) {
    size_t l = strlen(rt_opt.name);
    snprintf(rt_opt.name + l, sizeof rt_opt.name - l, "-pid%d", (int)getpid());
  } else {
    char *p = strrchr(rt_opt.name, '-');
    if (p && !strncmp(p, "-pid", 4)) snprintf(p, sizeof rt_opt.name - (size_t)(p - rt_opt.name), "-pid%d", (int)getpid());
  }
  rt_process_forked();
  exit_written = 0;
  __atomic_store_n(&rt_exiting, 0, __ATOMIC_RELEASE);
  rt_files_reset();
  rt_exitpaths_child();
}

static void global_init(void) {
  if (rt_options_load() < 0) return; /* rt_collecting stays 0 */
  if (rt_opt.dormant) ctl.user_on = 0; /* the Python package starts capture */
  rt_clock_init();
  rt_names_init();
  recompute();
  if (!rt_opt.step_name[0] && rt_opt.active) {
    /* explicit steps: step 0 runs from the start */
    pthread_mutex_lock(&ctl.lock);
    step_begin_locked();
    pthread_mutex_unlock(&ctl.lock);
  } else if (rt_opt.active) {
    ctl.sched_on = 0;
    recompute();
  } else if (!rt_opt.step_name[0]) {
    /* ncrt_step() ends step 0, which runs from the start, as
     * torch.profiler's first step() ends ProfilerStep#0 */
    tsteps_begin();
  }
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  if (pthread_key_create(&threads.exit_key, thread_exit) == 0)
    __atomic_store_n(&threads.exit_key_ok, 1, __ATOMIC_RELEASE);
  /* the writer reads the collector through this view only (writer.h) */
  static const RtCollectorView view = {
      .threads = rt_threads,
      .name_total_calls = rt_name_total_calls,
      .name_unrec = rt_name_unrec,
      .domain_name = rt_domain_name,
      .category_name = rt_category_name,
      .os_thread_name = rt_os_thread_name,
      .steps_take = rt_steps_take,
      .steps_seen = rt_steps_seen,
      .in_window = rt_in_window,
      .windows_text = rt_windows_text,
      .windows_consumed = rt_windows_consumed,
      .trace_name = rt_current_trace_name,
      .recording_off = rt_recording_off,
  };
  rt_writer_attach(&view);
  rt_files_reset();
  rt_collecting = 1;
  rt_exitpaths_init();
  rt_flusher_start();
}

void rt_init_once(void) { pthread_once(&once, global_init); }

static void set(NvtxFunctionTable tab, unsigned size, unsigned id, NvtxFunctionPointer fn) {
  if (id < size && tab[id]) *tab[id] = fn;
}

#define F(x) ((NvtxFunctionPointer)(x))

RT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
RT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  rt_init_once();
  if (!get || !rt_collecting) return 0;
  const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
  if (!cb || !cb->GetModuleFunctionTable) return 0;
  NvtxFunctionTable t = NULL;
  unsigned n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
    set(t, n, NVTX_CBID_CORE_MarkEx, F(h_mark_ex));
    set(t, n, NVTX_CBID_CORE_MarkA, F(h_mark_a));
    set(t, n, NVTX_CBID_CORE_MarkW, F(h_mark_w));
    set(t, n, NVTX_CBID_CORE_RangeStartEx, F(h_start_ex));
    set(t, n, NVTX_CBID_CORE_RangeStartA, F(h_start_a));
    set(t, n, NVTX_CBID_CORE_RangeStartW, F(h_start_w));
    set(t, n, NVTX_CBID_CORE_RangeEnd, F(h_end));
    set(t, n, NVTX_CBID_CORE_RangePushEx, F(h_push_ex));
    set(t, n, NVTX_CBID_CORE_RangePushA, F(h_push_a));
    set(t, n, NVTX_CBID_CORE_RangePushW, F(h_push_w));
    set(t, n, NVTX_CBID_CORE_RangePop, F(h_pop));
    set(t, n, NVTX_CBID_CORE_NameCategoryA, F(h_name_cat_a));
    set(t, n, NVTX_CBID_CORE_NameCategoryW, F(h_name_cat_w));
    set(t, n, NVTX_CBID_CORE_NameOsThreadA, F(h_name_thread_a));
    set(t, n, NVTX_CBID_CORE_NameOsThreadW, F(h_name_thread_w));
  }
  t = NULL;
  n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
    set(t, n, NVTX_CBID_CORE2_DomainMarkEx, F(h_dmark));
    set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, F(h_dstart));
    set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, F(h_dend));
    set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, F(h_dpush));
    set(t, n, NVTX_CBID_CORE2_DomainRangePop, F(h_dpop));
    set(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, F(h_dname_cat_a));
    set(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, F(h_dname_cat_w));
    set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, F(h_reg_a));
    set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, F(h_reg_w));
    set(t, n, NVTX_CBID_CORE2_DomainCreateA, F(h_dcreate_a));
    set(t, n, NVTX_CBID_CORE2_DomainCreateW, F(h_dcreate_w));
    set(t, n, NVTX_CBID_CORE2_DomainDestroy, F(h_ddestroy));
    set(t, n, NVTX_CBID_CORE2_Initialize, F(h_initialize));
  }
  return 1;
}

/* The CUDA driver's entry (CUDA_INJECTION64_PATH, during cuInit): the
 * collector first, then CUPTI (cupti.c). */
RT_EXPORT int InitializeInjection(void);
RT_EXPORT int InitializeInjection(void) {
  rt_init_once();
  rt_cupti_start();
  return 1;
}

uint64_t rt_now_ticks(void) { return now_ticks(); }
