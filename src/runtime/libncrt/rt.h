/* rt.h: internals shared by the files of libncrt, the collector.
 *
 * libncrt lives inside other people's programs. It is loaded by NVTX
 * (NVTX_INJECTION64_PATH) and by the CUDA driver (CUDA_INJECTION64_PATH),
 * records ranges into per-thread buffers and writes one Chrome trace per
 * process (and per active cycle). Nothing here may exit, abort or print to
 * stdout; failures print one "ncrt: ..." line on stderr and stop collecting.
 *
 * Ownership: every record, name and thread belongs to the collector and lives
 * until the process ends (or until a cycle is written, for records). Name
 * strings are interned once and never freed, so a name id is valid forever.
 *
 * Files, each calling only files listed before it (tests/arch/test_circles.py):
 * options.c (environment, this process's role and state, rt_say), clock.c
 * (ticks to ns), names.c (interned range names), devprops.c (the GPUs,
 * occupancy), cupti.c (CUDA activity); the writer (writer.h: gzout.c,
 * spill.c, readback.c, chrome.c, convert.c, finalize.c: spill files,
 * gzip'ed Chrome JSON, the finalizer of dead processes), which reads the
 * collector only through the RtCollectorView it is handed at set-up;
 * exitpaths.c (signals, _exit, kill/raise: the records saved on those ways
 * out); collector.c (NVTX and CUDA entry points, threads, capture control,
 * the flusher); longjmp.c (ranges a longjmp abandons closed at the jump). */
#ifndef NCRT_RT_H
#define NCRT_RT_H

#include <stdint.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "hostid.h"

#define RT_EXPORT __attribute__((visibility("default")))

/* ---- options (options.c) ---- */
typedef struct {
  int cpu, gpu, mem;            /* activities */
  char out_dir[1024];           /* where traces go (a run directory) */
  char name[256];               /* <name>-rank<R>.pt.trace.json.gz, or <name>-pid<P>... (rt_proc) */
  int rank, world_size;
  /* schedule over steps; active == 0: no schedule, record everything */
  long wait, warmup, active, repeat;
  long skip_first;              /* steps skipped once before the first cycle (torch's skip_first) */
  char step_name[256];          /* range name that marks a step, "" none */
  char gate[256];               /* fnmatch pattern; record only inside it */
  uint64_t disk_budget;         /* bytes of records a process may spill; 0: no limit */
  long throttle_calls;          /* 0: no throttle */
  double throttle_us;           /* 0: calls alone decide; else also an exclusive mean under it */
  int level;                    /* zlib level */
  int format;                   /* TRACE_JSON or TRACE_PERFETTO (NCRT_TRACE_FORMAT) */
  int quiet;
  int use_tsc;
  int dormant;                  /* NCRT_DORMANT: capture off until started, no trace at exit unless on */
  int test_term_in_claim;       /* NCRT_TEST_TERM_IN_CLAIM (tests only): whose claim gets SIGTERM, 1 the
                                 * flusher's, 2 a thread's own in _exit's save, 3 in its own spill;
                                 * see rt_spill_thread */
} RtOptions;

/* The trace's format: Kineto's gzip'ed JSON (<name>.pt.trace.json.gz), or
 * Perfetto's protobuf (<name>.pftrace: the ranges as TrackEvents, the rest
 * as the same JSON embedded; docs/design.md, "The binary trace"). */
enum { TRACE_JSON = 0, TRACE_PERFETTO = 1 };

extern RtOptions rt_opt;
int rt_options_load(void); /* -1: options libncrt cannot honour (said): record nothing */

/* ---- this process: who it is among the run's processes (options.c) ----
 * A trace names its process's parent, how it started and its role, so
 * nctrace can tell ranks from their helper processes (DataLoader workers,
 * Pool workers, subprocesses) instead of taking every file for a rank. */
typedef struct {
  int ppid;
  char start[16];               /* "ncrun" (the command ncrun ran), "exec", "fork", "spawn", "forkserver" */
  char role[64];                /* "main", "rank", "dataloader worker", "pool worker", "subprocess", ... */
  char role_detail[64];         /* e.g. the worker's id or multiprocessing name */
  int is_rank;                  /* the main process of a rank: its file is -rank<R> */
  char rank_from[32];           /* "RANK" (the variable), "torch.distributed", "" (none: rank 0 of 1) */
  uint64_t start_ns;            /* process start, CLOCK_MONOTONIC ns (0: unknown) */
  uint64_t exit_ns;             /* when the exit write began (0: not yet) */
  int node_rank, local_rank;    /* the launcher's (GROUP_RANK, LOCAL_RANK, SLURM_NODEID, ...), -1 unknown */
  uint64_t real0, mono0;        /* CLOCK_REALTIME and CLOCK_MONOTONIC ns read together at set-up */
  char backend[16];             /* torch.distributed's backend ("gloo", "nccl"; "" unknown): distributedInfo */
} RtProcess;
extern RtProcess rt_proc;
/* the host this process runs on (hostid.h): its private files' names, the
 * trace's ncrt.process.host */
extern NcHost rt_host;
/* after fork: the child's own facts (its parent is the process that forked) */
void rt_process_forked(void);
/* "role\t<role>\t<detail>" and "rank\t<R>\t<W>\t<from>" control verbs */
void rt_process_role(const char *role, const char *detail);
void rt_process_rank(int rank, int world, const char *from);
/* {"pid", "ppid", "start", "role", "detail", "rank", "is_rank", "rank_from",
 * "host": {"name", "boot_id", "pid_ns", "id", "node_rank", "local_rank"},
 * "clock": {"start": [realtime, monotonic], "now": [...]} (ns)}
 * into b (n bytes): its length, 0 if it did not fit */
size_t rt_process_json(char *b, size_t n);
void rt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The process's state (options.c holds them; the collector sets them) */
extern volatile int rt_collecting;  /* set up and recording in this process */
extern int rt_exiting;              /* set once the process is ending (__atomic access) */

/* ---- clock (clock.c) ---- */
/* Raw ticks on the hot path (TSC where invariant, else CLOCK_MONOTONIC ns);
 * rt_ticks_to_ns converts to CLOCK_MONOTONIC nanoseconds, the clock CUPTI
 * is given too. */
static inline uint64_t rt_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
void rt_clock_init(void);            /* the origin: once per process (a forked child again) */
void rt_clock_calibrate(void);
uint64_t rt_ticks_to_ns(uint64_t ticks);
uint64_t rt_clock_origin_ns(void);   /* CLOCK_MONOTONIC ns when we started */
uint64_t rt_clock_origin_tsc(void);  /* and the TSC then (both set once, at init: any thread may read them) */
/* A piece of the TSC mapping (clock.c): it starts at (tsc, ns), and its
 * ratio was measured at (mt, mn): (mn - ns0) / (mt - tsc0) ns per tick */
typedef struct {
  uint64_t tsc, ns, mt, mn;
} RtClockPiece;
#define RT_CLOCK_PIECES 48
/* A process's clock as its finalizer maps it (.info): the origin, one
 * (tsc, ns) pair after it, and the pieces the process mapped its ticks
 * with, so that both map every tick to the same ns (a part converted by
 * the process and the rest by the finalizer join without a step) */
typedef struct {
  int use_tsc;                  /* 0: ticks are CLOCK_MONOTONIC ns already */
  uint64_t tsc0, ns0, tsc1, ns1;
  int npiece;                   /* 0: the pair alone */
  RtClockPiece piece[RT_CLOCK_PIECES];
} RtClock;
uint64_t rt_clock_pair_ns(const RtClock *c, uint64_t ticks);
/* This process's pieces so far (at most RT_CLOCK_PIECES; lock free,
 * async-signal-safe: published pieces never change) */
int rt_clock_pieces(RtClockPiece *out);

/* ---- names ---- */
/* NAME_KEPT: judged by the throttle and kept (its mean was over US): the
 * decision is made once, so it never depends on when the machine was busy */
enum { NAME_GATE = 1, NAME_STEP = 2, NAME_THROTTLED = 4, NAME_CONTROL = 8, NAME_KEPT = 16 };
typedef struct {
  const char *str;
  uint32_t len;
  volatile uint8_t flags;
  const char *file;             /* source location, when known */
  int line;
  /* throttle: process-wide totals (under throttle_lock), then the report */
  uint64_t g_count, g_total;    /* calls recorded, their exclusive ticks */
  uint64_t calls_at_throttle;
  double avg_us_at_throttle;    /* exclusive mean of the recorded calls then */
  uint64_t throttled_at;        /* ticks: the end of the call that decided it */
  uint32_t throttled_tid;       /* on this thread */
  uint64_t skipped;             /* calls not recorded since (handed over by threads) */
  /* the calls not recorded are still timed (issue 40): their inclusive
   * (outermost of the name only), exclusive and summed ticks, and the
   * ticks of unrecorded calls directly inside this name's recorded ranges
   * (which the trace would otherwise count as this name's own time) */
  uint64_t u_calls, u_incl, u_excl, u_sum, hidden;
} RtName;
/* names.c: the table, in pages of RT_NAME_PAGE_N allocated as ids grow */
#define RT_NAME_PAGE_BITS 12
#define RT_NAME_PAGE_N (1u << RT_NAME_PAGE_BITS)
#define RT_NAME_PAGES 4096
extern RtName *rt_name_pages[RT_NAME_PAGES];
static inline RtName *rt_name(uint32_t id) {
  return &rt_name_pages[id >> RT_NAME_PAGE_BITS][id & (RT_NAME_PAGE_N - 1)];
}
uint32_t rt_name_count(void);
uint32_t rt_intern(const char *s, size_t len);
extern uint32_t rt_name_unknown;     /* "(unnamed)": what a name that cannot be interned gets */
void rt_names_init(void);
/* The names lock, which domains (collector.c) share: -1 when this thread
 * holds it already (a signal handler inside an intern) */
int rt_names_lock(void);
void rt_names_unlock(void);
void rt_names_fork_lock(void);
void rt_names_fork_unlock(void);
/* A throttled name's calls, recorded and not: its totals plus what live
 * threads still hold (read at exit, best effort while threads run). */
uint64_t rt_name_total_calls(uint32_t id);
/* The unrecorded calls' times of a name (RtName.u_*, hidden), in ns, with
 * what live threads still hold (best effort while threads run). */
typedef struct {
  uint64_t calls, incl_ns, excl_ns, sum_ns, hidden_ns;
} RtUnrec;
void rt_name_unrec(uint32_t id, RtUnrec *out);

/* ---- records ---- */
enum { REC_RANGE = 0, REC_MARK = 1, REC_SPAN_START = 2, REC_SPAN_END = 3, REC_RANGE_JUMPED = 4 };
typedef struct {
  uint64_t start, end;          /* ticks; end unused for marks */
  uint32_t name : 24;           /* names.c's ids are below 2^24 (RT_NAME_PAGES x RT_NAME_PAGE_N) */
  uint32_t depth_hi : 8;        /* the depth's high byte (rec_depth) */
  uint8_t domain;               /* domain id (ids above 255 share 255) */
  uint8_t kind;
  uint8_t cat;                  /* NVTX category, 255 = larger */
  uint8_t depth;                /* nesting depth on its thread: the low byte */
} RtRec;
/* A record's nesting depth, 16 bits (more is written as 65535): a deep
 * recursion (Lua's pcall chains nest 300 deep under a full trace) must
 * keep its depths, or nctrace cannot fold the ranges as it reads them. */
static inline unsigned rec_depth(const RtRec *r) { return r->depth | (unsigned)r->depth_hi << 8; }
static inline void rec_set_depth(RtRec *r, uint32_t d) {
  if (d > 0xffff) d = 0xffff;
  r->depth = (uint8_t)d;
  r->depth_hi = d >> 8;
}

/* A thread's record buffer. Records [0, n) are committed (n published by
 * the owner with release); "spilled" packs (generation << 32 | index): the
 * records below index were written to the process's spill file. Anyone may
 * claim [index, n) by compare-and-swap and write it (the flusher thread, a
 * fatal-signal handler, _exit); the owner, when the chunk is full, claims
 * the rest, waits until no claimer is still reading (RtThread.inflight),
 * and reuses the chunk under the next generation. */
typedef struct RtChunk {
  uint32_t cap;
  volatile uint32_t n;          /* published by the owner (release) */
  volatile uint64_t spilled;    /* generation << 32 | records already spilled */
  size_t bytes;                 /* mapping size */
  RtRec rec[];
} RtChunk;
void rt_chunk_free(RtChunk *c);

typedef struct {
  uint64_t start;
  uint64_t child;               /* ticks of the ranges directly inside, recorded or timed (exclusive time) */
  uint64_t hidden;              /* recorded: ticks of the throttled calls inside it that its range's
                                 * exclusive time in the trace holds (their time less the recorded
                                 * ranges below them) */
  uint64_t cov, meas;           /* unrecorded: ticks of the recorded ranges below it whose nearest
                                 * recorded ancestor is above it, and of the timed calls below it */
  uint64_t addr;                /* where the opener's scope object lives (ncrt.h), 0: unknown */
  uint32_t name;
  uint16_t domain;
  uint8_t recorded;
  uint8_t gate;                 /* this frame opened the capture gate */
  uint8_t cat;
  uint8_t counted;              /* its name's slot counts it open (RtStat.open) */
  uint8_t outer;                /* no frame of the same name was open below it */
} RtFrame;

/* longjmp.c: the process jumps to a frame whose stack pointer is target
 * (0: unknown) from here: close the ranges of the frames it abandons. */
void rt_longjmp_unwind(uint64_t target, uint64_t here);

/* Throttle counts of one name on one thread, in a small direct-mapped
 * table (slot: name id mod RT_NSTATS): a thread's state is bounded
 * whatever the number of names; a name that takes a slot hands the counts
 * of the one it evicts over to that name's totals. */
#define RT_NSTATS 1024
typedef struct {
  uint32_t name;                /* UINT32_MAX: empty */
  uint32_t open;                /* frames of the name open on this thread that it counts: a slot
                                 * with open frames is never taken by another name */
  uint64_t count, total;        /* calls and exclusive ticks not yet added to the name's */
  uint64_t limit;               /* add them when count reaches this; 0: new */
  uint64_t skipped;             /* calls of the (throttled) name not recorded, not yet handed over */
  uint64_t u_calls, u_incl, u_excl, u_sum; /* as RtName's, not yet handed over */
} RtStat;

typedef struct RtThread {
  struct RtThread *next;
  uint32_t tid;                 /* OS thread id */
  char tname[64];
  RtChunk *volatile cur;        /* the one buffer (NULL once the thread ended) */
  volatile uint32_t inflight;   /* claimers reading cur right now (none interrupted on its own
                                 * thread: a claim holds its signals, rt_spill_thread) */
  volatile uint8_t busy;        /* inside push/pop/mark: a signal handler's ranges are ignored */
  volatile uint8_t dead;        /* the thread ended; its buffer was spilled and unmapped */
  uint32_t ignored;             /* pushes ignored in a signal handler, their pops ignored too */
  RtFrame *stack;
  uint32_t sp, stack_cap;
  RtStat *stats;                 /* RT_NSTATS slots (a shared empty table until the first count) */
  uint32_t nstats_unused;
  volatile uint64_t dropped;
  /* tiny cache of ASCII message pointers -> name id */
  const char *cache_ptr[64];
  uint32_t cache_id[64];
  uint64_t last_ticks;          /* the latest timestamp taken on this thread (thread_now) */
} RtThread;

RtThread *rt_threads(void);     /* list head, newest first */
/* Copy frame i of another thread's open-range stack, which that thread
 * changes while we read: 1 if it is open, 0 past the top or once the thread
 * ended. A best-effort snapshot (a frame popped and pushed meanwhile reads
 * as either; the stack memory is never unmapped), so ThreadSanitizer does
 * not check it. */
int rt_frame_peek(const RtThread *t, uint32_t i, RtFrame *out) __attribute__((no_sanitize("thread"))); /* spill.c */

/* Spans started in one thread and possibly ended in another: joined by id
 * at write time. */

/* ---- domains ---- */
const char *rt_domain_name(uint16_t id);

/* ---- writer (writer.h: gzout.c, spill.c, readback.c, chrome.c, convert.c,
 * finalize.c) ---- */
/* Records do not stay in memory: when a thread's chunk fills, the thread
 * writes it to the process's spill file <dir>/.ncrt-<PID>.raw (pwrite at
 * an offset reserved by an atomic add: no lock, no malloc) and reuses it;
 * a flusher thread writes every thread's committed records, the new names
 * (.names) and a snapshot of open ranges and threads (.info) every
 * RT_FLUSH_MS. The trace is made from those files at exit (rt_write_trace)
 * or, when the process died or its exit handed a large conversion over
 * (under ncrun: convert.c, "the fast exit"), by ncrt_finalize_dir (ncrun,
 * finalize.c). The writer reads the collector only through the view the
 * collector hands it at set-up (RtCollectorView, below). */
#define RT_FLUSH_MS 250
/* Write every record since the last write (and GPU activity) to
 * <dir>/<name>-rank<R>.pt.trace.json.gz atomically (dir NULL: the output
 * directory; the spill files stay there either way); consumes the records.
 * name NULL: nothing written, the spill files removed at exit.
 * Returns 0, -1 on failure (said once), 1 when there was nothing to write. */
int rt_write_trace(const char *dir, const char *name);
/* set around rt_write_trace: write a trace even with nothing recorded (the
 * Python package's region ended: its trace must exist, empty or not) */
extern int rt_write_force;
/* Async-signal-safe: claim and write t's committed records. 0 ok, -1 lost. */
int rt_spill_thread(RtThread *t);
/* Async-signal-safe: spill every thread, write new names and the snapshot
 * (open ranges, thread names): what a finalizer needs if we die now. */
void rt_save_now(int dying);
/* This thread is inside a claim (rt_spill_thread) or a save of its own:
 * a fault handler then saves nothing more (async-signal-safe). */
int rt_in_save(void);
/* The flusher's periodic part (not async-signal-safe: none of it locks
 * anything the program's threads hold, though). */
void rt_flush_tick(void);
void rt_files_reset(void);      /* after fork: this process's own files */
void rt_writer_fork_lock(void);   /* fork: the writer's lock, taken in prepare */
void rt_writer_fork_unlock(void); /* and given back in parent and child */
extern __thread int rt_in_flusher; /* this thread is the flusher (set by collector.c) */
/* The disk budget (rt_opt.disk_budget) was reached: recording stopped for
 * good at this CLOCK_MONOTONIC ns (0: not reached). Set by the spill
 * path (async-signal-safe: one store), read by the capture rule. */
extern volatile uint64_t rt_budget_hit;
/* Hold every signal a handler may catch on this thread (the old mask in
 * *old), and give them back: a claim on records and a save on a way out run
 * to their end before any handler runs on their thread (spill.c; exitpaths.c
 * masks its handlers with the same set, rt_signals_held). */
void rt_signals_held(sigset_t *set);
void rt_signals_hold(sigset_t *old);
void rt_signals_restore(const sigset_t *old);
RT_EXPORT int ncrt_finalize_dir(const char *dir, int quiet);

/* ---- GPU (cupti.c) ---- */
typedef struct {
  uint8_t kind;                 /* GPU_KERNEL, ... */
  uint8_t copy_kind, src_kind, dst_kind;
  uint32_t device, context, stream, correlation;
  uint64_t start, end;          /* CLOCK_MONOTONIC ns */
  uint64_t bytes;
  uint32_t name;                /* interned name id */
  uint32_t tid, pid;            /* for API records */
  int32_t grid[3], block[3];
  uint32_t regs, shmem, cbid;
} RtGpuRec;
enum { GPU_KERNEL, GPU_MEMCPY, GPU_MEMSET, GPU_RUNTIME, GPU_DRIVER, GPU_MEMORY };

/* devprops.c: the GPUs, from the driver the program loaded (none: 0) */
#define RT_MAX_DEVICES 64
typedef struct {
  int id;
  char name[128];
  uint64_t total_mem, shmem_per_block, shmem_per_sm, shmem_per_block_optin;
  int cc_major, cc_minor, num_sms, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm;
  int regs_per_block, regs_per_sm, warp_size;
} RtDevice;
int rt_devices(const RtDevice **out);
int rt_devices_ours(uint32_t tid, uint64_t start, uint64_t end); /* a driver call of our own device queries? */
int rt_kernel_occupancy(const RtDevice *d, const int32_t grid[3], const int32_t block[3], uint32_t regs,
                        uint32_t shmem, double *blocks_per_sm, double *warps_per_sm, double *occupancy_pct);

void rt_cupti_start(void);          /* once CUDA calls InitializeInjection (collector.c) */
void rt_cupti_flush(void);          /* every record, even incomplete ones (at a write) */
void rt_cupti_flush_complete(void); /* buffers whose records are all complete (the flusher) */
/* Hand the writer all GPU records so far (caller frees with free()). */
RtGpuRec *rt_cupti_take(size_t *n);
const char *rt_cupti_status(void);
size_t rt_cupti_count(void);    /* GPU work (not API calls) waiting for the writer */
uint32_t rt_cupti_version(void);

/* ---- collector.c ---- */
void rt_init_once(void);
const char *rt_category_name(uint32_t cat);
const char *rt_os_thread_name(uint32_t tid);
uint64_t rt_now_ticks(void);
void rt_atexit(void);
const char *rt_current_trace_name(void);
void rt_recording_off(void);        /* async-signal-safe: the hot path stops recording */
/* exitpaths.c: signals and _exit (called by collector.c; calls spill.c) */
void rt_exitpaths_init(void);
void rt_exitpaths_child(void);
void rt_flusher_start(void);     /* collector.c: the flusher thread, once per process */
/* Capture windows (call with the collector's control lock held, as the
 * writer is): was capture on at CLOCK_MONOTONIC time ns? */
int rt_in_window(uint64_t ns);
/* A step for the trace (ProfilerStep#<index>): ticks, end 0 while open;
 * captured: capture was on when it began (a schedule's active step). */
typedef struct {
  long index;
  uint64_t start, end;
  uint32_t tid;
  uint8_t captured;
} RtStep;
/* The steps that have ended since the last call, oldest first (malloc'd,
 * the caller frees; 0 and NULL when none or out of memory). The one still
 * running stays. */
size_t rt_steps_take(RtStep **out);
long rt_steps_seen(void);         /* steps begun so far in this process */
int rt_windows_text(char *buf, size_t cap); /* "window A B" lines for the snapshot; -1: busy */
void rt_windows_consumed(void);

/* ---- the collector as the writer sees it ----
 * collector.c fills one at set-up and hands it over (rt_writer_attach,
 * spill.c, before anything is recorded); the writer calls the collector
 * through it only, so the collector calls the writer and never the other
 * way round. Each is the collector's rt_<field> (trace_name:
 * rt_current_trace_name). */
typedef struct {
  RtThread *(*threads)(void);
  uint64_t (*name_total_calls)(uint32_t id);
  void (*name_unrec)(uint32_t id, RtUnrec *out);
  const char *(*domain_name)(uint16_t id);
  const char *(*category_name)(uint32_t cat);
  const char *(*os_thread_name)(uint32_t tid);
  size_t (*steps_take)(RtStep **out);
  long (*steps_seen)(void);
  int (*in_window)(uint64_t ns);
  int (*windows_text)(char *buf, size_t cap);
  void (*windows_consumed)(void);
  const char *(*trace_name)(void);
  void (*recording_off)(void);  /* async-signal-safe */
} RtCollectorView;
void rt_writer_attach(const RtCollectorView *v);

#endif
