/* model: a trace file loaded into compact, analysable form.
 *
 * Only what the analyses need is kept: one 48-byte Ev per complete event
 * (X, or a B/E pair), with times in integer nanoseconds, the name and thread
 * as interned ids, the correlation id and byte count from args, and the
 * event's index in the file (so `filter` can copy kept events verbatim in a
 * second pass). The JSON tree is never built.
 *
 * Names and pid/tid texts are interned in a Model shared by all loaded
 * traces, so the figures of several ranks aggregate by id.
 *
 * Ownership: the Model owns its Traces and everything in them;
 * model_free releases all. */
#ifndef NCT_MODEL_H
#define NCT_MODEL_H

#include "util.h"

typedef enum {
  K_NONE,            /* no "cat" (torch's legacy exporter): a CPU range */
  K_CPU_OP,
  K_USER_ANNOTATION,
  K_PYTHON_FUNCTION,
  K_CUDA_RUNTIME,
  K_CUDA_DRIVER,
  K_OVERHEAD,
  K_UNKNOWN,         /* a category we do not know: assumed a CPU range */
  /* not CPU ranges: */
  K_CUDA_SYNC,       /* GPU-side synchronisation spans; not GPU work */
  K_GPU_USER_ANNOTATION,
  K_KERNEL,
  K_GPU_MEMCPY,
  K_GPU_MEMSET,
  K_TRACE,           /* the profiler's own window ("Trace" category) */
  K_COUNT
} Kind;

static inline bool kind_is_cpu_range(int k) { return k <= K_UNKNOWN; }
static inline bool kind_is_gpu_op(int k) { return k == K_KERNEL || k == K_GPU_MEMCPY || k == K_GPU_MEMSET; }
const char *kind_name(int k);

typedef struct {
  int64_t ts, dur; /* ns */
  int64_t corr;    /* args.correlation, -1 if none */
  int64_t bytes;   /* args.bytes, -1 if none */
  uint32_t name;   /* Model.names */
  uint32_t thread; /* index into Trace.threads */
  uint32_t ord;    /* index of the event in traceEvents (B/E: of the B) */
  uint8_t kind;
  uint8_t flags;   /* EV_* */
} Ev;

/* A start/end range (ncrt writes them as X with args "start/end": true):
 * it may overlap its neighbours, so it stays out of the nesting. */
enum { EV_ASYNC = 1 };

typedef struct {
  uint32_t pid, tid; /* Model.ids: raw JSON text of the pid/tid values */
  int64_t label;     /* Model.names id of thread_name, -1 if none */
  bool gpu;          /* carries GPU ops */
  int64_t lane_of;   /* a lane of ncrt's start/end ranges ("ncrt lane of" in
                      * its thread_name): the index in Trace.threads of the
                      * thread they belong to, which holds its events after
                      * loading; -1 for a real thread */
  VEC(uint32_t) open; /* B events not yet closed by an E */
} Thread;

/* Things skipped or assumed while loading, reported with the summary. */
typedef struct {
  uint64_t events;      /* entries in traceEvents */
  uint64_t malformed;   /* skipped: missing/ill-typed ph, ts, dur */
  char *first_malformed; /* "file:line:col: what" of the first one */
  uint64_t negative;    /* skipped: negative duration */
  char *first_negative;
  uint64_t unknown_cat; /* kept as CPU ranges */
  VEC(uint32_t) unknown_cats; /* distinct names (Model.names), first 8 */
  uint64_t unmatched_end, unclosed_begin;
  uint64_t ignored_ph;  /* instant, counter, flow, async, ... */
  uint64_t cuda_sync;
} LoadNotes;

/* A name ncrt stopped recording (its trace's "ncrt.throttled"): the trace
 * holds only its first calls, so its count and times are a floor. */
typedef struct {
  uint32_t name;        /* Model.names */
  int64_t calls;        /* calls when it was throttled */
  int64_t total_calls;  /* all its calls, -1 when the trace does not say */
  double avg_us;        /* its mean duration then */
  int64_t from_ts;      /* ns: when recording stopped, -1 unknown */
  int64_t tid;          /* on which thread, -1 unknown */
  /* its unrecorded calls, timed by ncrt since (issue 40), ns: inclusive
   * (outermost calls of the name only), exclusive, summed; measured:
   * the trace gave them (older traces do not: figures are then scaled) */
  int64_t u_calls, u_incl, u_excl, u_sum;
  bool measured;
} Throttled;

/* A name whose recorded ranges held throttled calls ("ncrt.
 * throttled_inside"): their time, which the ranges' own time would
 * otherwise count. */
typedef struct {
  uint32_t name;
  int64_t ns;
} Hidden;

/* Who the process of a trace is (ncrt's "ncrt.process"): ranks are told
 * apart from their helper processes (DataLoader and Pool workers,
 * subprocesses), which belong to the rank they serve. Traces without it
 * (torch.profiler's, older ncrt ones) are each taken for a rank. */
typedef struct {
  bool known;
  bool is_rank;         /* a rank's main process */
  int64_t pid, ppid;
  char *start;          /* "ncrun", "exec", "fork", "spawn", "forkserver" */
  char *role;           /* "main", "rank", "dataloader worker", ... */
  char *detail;
  char *host;           /* "host": its "id" (hostid.h: machine, container, pid namespace), NULL unknown */
  char *host_name;      /* and its "name" */
} ProcInfo;

/* When the process lived ("ncrt.lifetime", ns on the events' clock): from
 * its start to the program's end (exit), then the collector's own exit work
 * until the trace was written. */
typedef struct {
  bool has_start, has_exit, has_written, died;
  int64_t start, exit, written;
} Lifetime;

typedef struct {
  char *path;
  bool legacy;          /* bare array layout */
  int64_t rank;         /* distributedInfo.rank, -1 if absent */
  int64_t world_size;   /* -1 if absent */
  bool has_base;
  int64_t base_ns;      /* baseTimeNanoseconds */
  VEC(Ev) ev;
  VEC(Thread) threads;
  I64Map thread_of;     /* pid<<32|tid -> thread index */
  I64Map process_label; /* pid -> Model.names id of process_name */
  LoadNotes notes;
  VEC(Throttled) throttled;
  VEC(Hidden) hidden;
  ProcInfo proc;
  Lifetime life;
  int64_t budget_bytes;   /* ncrt.disk_budget.bytes, 0: none or unknown */
  int64_t budget_hit_ts;  /* ns: recording stopped there (the budget was reached), -1: not */
} Trace;

/* What the args of every event of one name say (kept only when
 * Model.keep_args: the report's hover). A key's value is kept from the
 * first event (its raw JSON, cut at NAME_ARG_TEXT bytes); `varies` once
 * another event of the name has another value for it or lacks it. At most
 * NAME_ARG_KEYS keys per name; memory grows with names, not events. */
enum { NAME_ARG_KEYS = 12, NAME_ARG_TEXT = 160 };
typedef struct {
  char *key;
  size_t klen;    /* strlen(key): compared with every event's keys */
  char *val;      /* raw JSON (strings keep their quotes), maybe cut */
  bool cut;       /* val is the first NAME_ARG_TEXT bytes of a longer value */
  bool varies;
  uint64_t hash;  /* of the whole first value */
} NameArg;
typedef struct {
  uint32_t n;      /* keys in use */
  uint32_t events; /* events of the name seen, with args or not (saturating) */
  bool more;       /* keys past NAME_ARG_KEYS were left out */
  NameArg *keys;   /* NAME_ARG_KEYS slots, or NULL: no event of it had args */
} NameArgs;

/* An event consumer (sink.h); NULL: events are kept in Trace.ev. */
typedef struct EvSink EvSink;

typedef struct {
  Intern names;
  Intern ids;
  VEC(Trace *) traces;
  EvSink *sink;   /* NULL: the in-memory path; else events go there (sink.h) */
  bool strict;    /* skipped events are errors */
  bool keep_args; /* fill name_args while loading */
  VEC(NameArgs) name_args; /* by Model.names id; may be shorter than names */
} Model;

/* One finished event of trace t, as a reader hands it out (sink.h's
 * contract; depth -1: none): to m->sink when one is set, else appended to
 * t->ev (the in-memory path). 0, or -1: the sink gave up (not reported),
 * or more than 4 billion events (reported). model.c's JSON loader calls it;
 * another format's reader calls it the same way. */
int model_put_event(Model *m, Trace *t, const Ev *e, int64_t depth);

/* Load one file and append it to m->traces. 0, or -1 (reported). */
int model_load(Model *m, const char *path);
void model_free(Model *m);
/* Move from's traces (after into's own) and names into into, renumbered
 * as if they had been loaded there; from is freed. Returns from's name ids
 * to into's (owned by the caller: free), for tables built on from's ids. */
uint32_t *model_adopt(Model *into, Model *from);
/* Several rank processes (not workers) with the same distributedInfo.rank (two runs given as one,
 * e.g. run1/x-rank0 and run2/x-rank0): a warning per file, through
 * nct_warning. Summarising them as one run is what was asked; the warning
 * says what the per-rank figures then mean. */
void model_check_ranks(const Model *m);

/* The args record of a name, or NULL (none kept or none seen). */
const NameArgs *model_name_args(const Model *m, uint32_t name);

/* The throttle record of name in trace t, or NULL. */
const Throttled *trace_throttled(const Trace *t, uint32_t name);

/* pid or tid text for display (quotes stripped). */
const char *model_id_text(const Model *m, uint32_t id, Buf *tmp);
/* "GPU 0 stream 7", "thread 1234 (name)", ... for a thread. */
void model_thread_label(const Model *m, const Trace *t, uint32_t thread, Buf *out);

#endif
