/* writer.h: what the writer's files share (included by them only).
 *
 * The writer turns what the collector recorded into traces. Its files, each
 * calling only the ones listed before it (tests/arch: no circles):
 *   gzout.c     one gzip stream with a byte buffer in front (or a plain
 *               file, or a capture in memory); the JSON puts
 *   perfetto.c  Perfetto's protobuf: packets, the ranges as TrackEvents, the
 *               JSON parts wrapped (the binary format, TRACE_PERFETTO)
 *   spill.c     the spill files written while the program runs (.raw
 *               blocks, .names, .gpu, the .info snapshot), the claims on
 *               threads' records, the saves on the ways out, the disk budget
 *   readback.c  the .raw blocks read back in order, for a conversion
 *   chrome.c    one trace in Kineto's layout from a TraceIn: events,
 *               start/end lanes, GPU work, the head and the tail
 *   convert.c   this process's own traces: the incremental conversion, the
 *               cycle and exit writes (rt_write_trace), the hand-over, the
 *               flusher's tick
 *   finalize.c  a dead (or handed-over) process's spill files to its trace
 *
 * Inputs: the collector is read only through rt_collector, the view that
 * collector.c hands over at set-up (rt_writer_attach); chrome.c reads only
 * the TraceIn it is given, which convert.c fills from this process and
 * finalize.c from the files a process left. Nothing here writes the
 * collector's state.
 *
 * Locking: every conversion and write runs under spill.lock (the
 * finalizer, in ncrun, has its own process); the spill paths of
 * spill.c take no lock (signal handlers and _exit use them). */
#ifndef NCRT_WRITER_H
#define NCRT_WRITER_H

#include "rt.h"
#include "ncrt_protocol.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

/* ---- gzout.c: one gzip stream with a byte buffer in front ----
 * Raw deflate between a gzip header and trailer written here (CRC-32 and
 * length kept as the bytes go in): one gzip member. g->err keeps the first
 * error; once set, nothing more is compressed. */
typedef struct {
  z_stream z;
  int fd;
  size_t n;
  int err;
  uint32_t crc, len;
  int plain;                         /* bytes go to fd as they are (no gzip) */
  char *mem;                         /* a capture (fd -1): the bytes kept here */
  size_t memn, memcap;
  char buf[1 << 17];
  unsigned char out[1 << 17];
} Gz;

int write_all(int fd, const void *p, size_t n); /* 0 or an errno */
int gz_open(Gz *g, int fd, int level);          /* the header written: 0 or an errno */
/* A trace file in `format` (rt.h): gzip at level for JSON, plain for
 * Perfetto's protobuf (its packets are dense already; docs/design.md) */
int gz_open_for(Gz *g, int fd, int level, int format);
void gz_capture(Gz *g);                         /* g (zeroed) keeps its bytes in g->mem */
void gz_drain(Gz *g, int mode);                 /* the buffer through deflate (Z_NO_FLUSH, Z_SYNC_FLUSH, ...) */
void gz_finish(Gz *g);                          /* the last block and the trailer; g->z ended */
void put_jstr(Gz *g, const char *s);            /* s as a JSON string */

static inline void need(Gz *g, size_t k) {
  if (sizeof g->buf - g->n < k) gz_drain(g, Z_NO_FLUSH);
}

static inline void put(Gz *g, const char *s, size_t k) {
  if (k > sizeof g->buf / 2) {
    for (size_t i = 0; i < k; i += 4096) put(g, s + i, k - i < 4096 ? k - i : 4096);
    return;
  }
  need(g, k);
  memcpy(g->buf + g->n, s, k);
  g->n += k;
}
/* "" lit: only a string literal compiles (sizeof of a pointer would cut it) */
#define PUTS(g, lit) put(g, "" lit, sizeof(lit) - 1)

static inline void put_u64(Gz *g, uint64_t v) {
  char tmp[24];
  int i = 24;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  put(g, tmp + i, (size_t)(24 - i));
}

static inline void put_i64(Gz *g, int64_t v) {
  if (v < 0) {
    PUTS(g, "-");
    put_u64(g, (uint64_t)0 - (uint64_t)v); /* -v overflows at INT64_MIN */
  } else {
    put_u64(g, (uint64_t)v);
  }
}

/* nanoseconds as microseconds with three decimals */
static inline void put_us(Gz *g, int64_t ns) {
  uint64_t a = (uint64_t)ns; /* the magnitude in unsigned: -INT64_MIN overflows */
  if (ns < 0) {
    PUTS(g, "-");
    a = (uint64_t)0 - a;
  }
  put_u64(g, a / 1000);
  char d[4] = {'.', (char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10)};
  put(g, d, 4);
}

/* The trace file's name ends so, for a format (rt.h) */
static inline const char *rt_trace_suffix(int format) {
  return format == TRACE_PERFETTO ? NCRT_PFTRACE_SUFFIX : ".pt" NCRT_TRACE_SUFFIX;
}

/* ---- spill.c: the spill files ---- */

/* The process's spill set and its state (see spill.c for the files). */
typedef struct {
  pthread_mutex_t lock;              /* every conversion and write (never the spill paths) */
  char prefix[1200];                 /* "<dir>/.ncrt-<PID>" */
  volatile int raw_fd, names_fd, gpu_fd;
  volatile uint64_t raw_end;         /* bytes reserved in .raw */
  uint64_t gpu_end, gpu_from;        /* bytes in .gpu; where the next trace's start (lock) */
  uint64_t gpu_work;                 /* GPU work (not API) records in .gpu, for the snapshot */
  uint64_t gpu_work_from;            /* gpu_work at gpu_from */
  uint64_t gpu_kernels;              /* kernels in .gpu, for the snapshot (tests wait on it) */
  volatile int err;                  /* errno of the first lost write */
  uint64_t trace_from;               /* where the records of the next trace start */
  volatile uint32_t names_saved;
} Spill;
extern Spill spill;
/* The collector as the writer sees it (rt_writer_attach) */
extern RtCollectorView rt_collector;

/* Every file of a process's spill set (the process's own clean-up and the
 * finalizer's use this one list) */
extern const char *const spill_sfx[];
extern const size_t nspill_sfx;

size_t s_cpy(char *d, size_t at, size_t cap, const char *s); /* async-signal-safe string building */
size_t s_u64(char *d, size_t at, size_t cap, uint64_t v);
void path_of(char *out, size_t cap, const char *suffix);    /* prefix + suffix */
/* Files in a run directory others may have planted names in (issue 42):
 * rt_open_new makes path anew for writing (what was there, a symlink
 * included, removed first; O_EXCL|O_NOFOLLOW), rt_open_own opens or makes a
 * file that must be ours (a plain file of this user with one name: never
 * a symlink's target nor a hard link to a file elsewhere). -1 and errno. */
int rt_open_new(const char *path, mode_t mode);
int rt_open_own(const char *path, int flags);
void spill_reset(void);              /* after fork: this process's own set (the files of an earlier one removed) */
void unlink_files(void);
void names_save(void);               /* new names to .names */
void info_save(int die);             /* the snapshot (.info) */
void gpu_save(void);                 /* CUPTI's complete records to .gpu (under spill.lock) */
void wait_claims(void);              /* until no thread is inside a claim (10 s at most) */
void spill_windows_update(void);     /* the capture windows, for the next snapshot (the flusher) */
void thread_comm(uint32_t tid, char *out, size_t cap); /* a thread's name from /proc */

/* A small buffered writer on a stack buffer (signal handlers included). */
typedef struct {
  int fd, err;
  size_t n;
  char b[2048];
} Out;
void o_flush(Out *o);
void o_put(Out *o, const char *s, size_t k);
void o_str(Out *o, const char *s);
void o_u64(Out *o, uint64_t v);
void o_json(Out *o, const char *s);  /* s as a JSON string (quotes included), at most 4096 bytes of it */

/* ---- readback.c: .raw read back ---- */

#define BLK_MAGIC 0x314b4c42u /* "BLK1" */
#define BLK_COMMIT 0x54494d4d4f43ull
typedef struct {
  uint32_t magic, tid, n, pad;
} BlkHdr;

typedef void (*BlockFn)(Gz *g, uint32_t tid, const RtRec *r, uint32_t n, void *arg);
/* How read_blocks treats a block that is not complete (a thread still
 * writing it): */
enum {
  READ_DEAD,  /* the process is gone: count its records lost, go on */
  READ_ALIVE, /* wait for it a little, then count it lost */
  READ_READY, /* stop before it (the flusher converts it next time) */
};
/* The blocks of fd in [from, to), fn on each (arg passed on); the first
 * `skip` records of the first block were converted before: `before` gets
 * them (NULL: nothing). READ_READY converts in slices and asks between()
 * after each: 1 stops (then *partial says how many records of the block
 * at *reached are converted). Returns the records lost. */
uint64_t read_blocks(int fd, uint64_t from, uint64_t to, int mode, BlockFn fn, BlockFn before, Gz *g, void *arg,
                     uint64_t *reached, uint32_t skip, uint32_t *partial, int (*between)(void));

/* ---- chrome.c: one trace ---- */

typedef struct {
  uint64_t id, start, end;
  uint32_t name, tid;
  uint8_t cat;
} SpanRec;

typedef struct {
  uint32_t tid, depth, name;
  uint16_t domain;
  uint64_t start; /* ticks */
} OpenFrame;

/* What a process's exit hands to the finalizer besides its spill files
 * and snapshot (.ncrt-PID.hand, hand_over): what the trace's writer reads
 * from the process's memory otherwise. */
typedef struct {
  uint32_t name;
  uint64_t calls, total;
  double avg_us;
  uint32_t tid;
  uint64_t from_ns;
  uint64_t u_incl_ns, u_excl_ns, u_sum_ns; /* its unrecorded calls' times (RtUnrec) */
  uint64_t u_calls;                         /* and how many were timed */
} HandThrottled;
typedef struct {
  uint32_t name;
  uint64_t ns;    /* throttled calls' time directly inside its recorded ranges */
} HandHidden;
typedef struct {
  uint64_t records;                  /* records left to convert at the hand-over */
  int body;                          /* .body goes on from body_to (else: all of .raw) */
  uint64_t body_to, crc, len, body_dropped;
  uint32_t body_skip;                /* records of the block at body_to converted already */
  uint64_t exit_ns, written_ns;
  long throttle_calls;
  double throttle_us;
  HandThrottled *thr;
  size_t nthr;
  HandHidden *hid;
  size_t nhid;
  uint64_t budget, budget_hit;
  uint64_t cupti_version;
  char step[600];                    /* JSON string */
  long steps;
  RtStep *stepv;                     /* ns */
  size_t nstep;
  SpanRec *spans;                    /* start/end ranges not ended yet (.body's carry) */
  size_t nspans;
  uint64_t pb_iid, pb_seq;           /* Perfetto .body: the first interning id and sequence left free */
} Hand;

/* Everything one trace is made from: the writer's explicit input. The
 * process fills it from its own memory (convert.c: in_process, live and
 * opt set), the finalizer from a dead process's files (finalize.c). */
typedef struct {
  int pid, rank, world, in_process;
  int format;                        /* TRACE_JSON or TRACE_PERFETTO */
  const Hand *hand;                  /* the finalizer, for a process that handed its exit over */
  const char *proc_name, *trace_name; /* raw text */
  uint64_t base, now;                 /* baseTimeNanoseconds; end of open ranges (mono ns) */
  int exiting;
  int raw;
  uint64_t from, to;
  uint32_t nthreads;
  uint32_t *tids;
  char **tnames; /* JSON strings */
  OpenFrame *open;
  size_t nopen;
  const char *(*name_json)(uint32_t id);                       /* a name as a JSON string */
  int (*loc_of)(uint32_t name, const char **file, int *line);  /* its file and line (NULL: none known) */
  const char *(*domain_json)(uint16_t);
  const char *(*cat_json)(uint32_t); /* NULL: no name */
  /* the clock: NULL is this process's (clock.c), else a dead one's pair */
  const RtClock *clock;
  uint64_t origin_ns;                /* its origin: ts 0 */
  int use_tsc;                       /* ncrt.clock */
  int (*devices)(const RtDevice **out); /* the GPUs (deviceProperties, occupancy) */
  /* capture windows: in_window (the process's, under its control lock), or
   * win[0..nwin) (end 0: open) */
  int (*in_window)(uint64_t ns);
  const uint64_t (*win)[2];
  size_t nwin;
  /* the process's own (in_process; NULL in the finalizer) */
  const RtCollectorView *live;       /* steps, throttled names' totals, windows consumed */
  const RtOptions *opt;              /* throttle, budget, schedule, step name */
  const volatile uint64_t *budget_hit;
  RtGpuRec *(*gpu_take)(size_t *n);  /* GPU records still in memory */
  const char *(*cupti_status)(void);
  uint32_t (*cupti_version)(void);
  const char *note;                  /* ncrt.finalized */
  const char *proc_json;             /* ncrt.process (NULL: none) */
  const char *backend;               /* distributedInfo.backend (NULL: "") */
  uint64_t pstart, pexit;            /* ncrt.lifetime: process start, program end (mono ns; 0 unknown) */
  int is_rank;                       /* file -rank<R>; else the name has -pid<P> already */
  const char *cupti;                 /* CUPTI status, as JSON (the finalizer) */
  uint64_t dropped;
  int gpu;                           /* .gpu, or -1 */
  uint64_t gfrom, gto;               /* its records of this trace */
} TraceIn;

typedef struct PbState PbState;

/* The body's state: start/end ranges seen so far, records lost */
typedef struct {
  int pid;
  SpanRec *spans;
  size_t nspans, capspans;
  uint64_t dropped;
  const TraceIn *in;                 /* the trace they go to */
  PbState *pb;                       /* a Perfetto trace's interning and sequences (else NULL) */
} BodyState;

/* ---- perfetto.c: Perfetto's protobuf ----
 * A .pftrace is a Trace message: a stream of TracePackets. Push/pop ranges
 * and marks are TrackEvents (SLICE_BEGIN + SLICE_END, written together when
 * the range ends; INSTANT), one packet sequence per thread, names interned;
 * everything else (metadata events, start/end ranges, GPU work, the
 * top-level members) is the JSON the Kineto layout has, embedded in
 * chrome_events.legacy_json_trace packets, so that the JSON pieces and the
 * ranges, decoded in file order, are the JSON trace (nctrace reads it so). */
PbState *pb_new(int pid, uint64_t first_iid, uint64_t first_seq); /* NULL: out of memory */
void pb_free(PbState *p);
void pb_next_ids(const PbState *p, uint64_t *iid, uint64_t *seq); /* the first ones still free */
/* The interning id of a range's kind (name, depth, category, domain,
 * closed by longjmp): *fresh when new, then the caller declares it. */
uint64_t pb_kind(PbState *p, uint32_t name, unsigned depth, unsigned cat, unsigned dom, int jumped, int *fresh);
/* Declare kind iid by its JSON: the event's name as a JSON string, then
 * what follows ts/dur in the JSON event. */
void pb_declare(PbState *p, uint64_t iid, const char *json, size_t jn);
/* A range [a, b] or a mark at a (ns from the trace's origin) on tid */
void pb_range(Gz *g, PbState *p, uint32_t tid, uint64_t a, uint64_t b, uint64_t iid);
void pb_mark(Gz *g, PbState *p, uint32_t tid, uint64_t a, uint64_t iid);
/* The process's track (at the head); a thread's name (at the tail) */
void pb_process(Gz *g, int pid, const char *name);
void pb_thread_name(Gz *g, int pid, uint32_t tid, const char *json_name);
/* A JSON piece: begin returns a capture to write it into, end wraps what
 * it holds in a packet on g */
Gz *pb_json_begin(void);
void pb_json_end(Gz *g, Gz *cap);


/* The head: the events array opens with the process's metadata. */
void trace_head(Gz *g, const TraceIn *s);
/* This trace's GPU records; the threads that launched GPU work keep
 * their ranges for attribution (launchers_known: any). */
RtGpuRec *gpu_setup(Gz *g, const TraceIn *s, size_t *ngpu);
int launchers_known(void);
/* BlockFns: the body's events (arg: BodyState); the launching threads'
 * ranges only, nothing written (arg unused) */
void body_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg);
void spans_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg);
/* Everything after the body; takes st->spans (the ones still open are
 * carried to the next trace: spans_carried) and gpu. */
void trace_tail(Gz *g, const TraceIn *s, BodyState *st, RtGpuRec *gpu, size_t ngpu);
size_t spans_carried(void);
/* A whole trace from s to path (a temporary name, then renamed); done: the
 * marker that says it is complete (NULL: none). 0 or an errno. */
int write_file(const char *path, const TraceIn *s, int level, const char *done);
int finish_file(const char *tmp, const char *path, const char *done, int err);

#endif
