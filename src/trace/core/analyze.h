/* analyze: from loaded traces to a Summary -- every figure `summary` and
 * `report` print. Deterministic: the same traces give the same Summary
 * (ties are broken by name, integer nanoseconds throughout).
 *
 * Ownership: the Summary owns its arrays and strings; it refers to names by
 * Model.names id, so the Model must outlive it. summary_free releases it. */
#ifndef NCT_ANALYZE_H
#define NCT_ANALYZE_H

#include "model.h"

/* HTA-style thresholds (docs/nctrace.md). */
#define KERNEL_WAIT_NS 30000        /* a gap up to this is launch overhead */
#define LAUNCH_CPU_OUTLIER_NS 50000 /* launch call longer than this */
#define LAUNCH_DELAY_OUTLIER_NS 100000
#define TINY_KERNEL_NS 10000

typedef struct {
  const char *step_glob; /* range names that mark iterations */
  size_t top_ranges, top_kernels;
} SummaryOptions;

typedef struct {
  uint32_t name;
  uint32_t kinds;  /* bit mask of Kind */
  uint64_t count;
  int64_t incl;    /* outermost instances only (recursion counted once) */
  int64_t excl;
  int64_t gpu;     /* GPU time of ops launched inside, outermost only */
  int64_t sum;     /* all instances' durations (for the mean) */
  int64_t max;
  int64_t async_excl; /* the part of excl from start/end ranges (not in range_excl_total) */
  uint32_t merged;    /* > 1: this row is that many step names (ProfilerStep#1, #2, ...) as one */
} RangeRow;

enum { CLASS_COMPUTE, CLASS_COMM, CLASS_MEMORY };

typedef struct {
  uint32_t name;
  uint8_t kind, cls;
  uint64_t count;
  int64_t total, min, max;
  double mean, m2; /* Welford, ns */
} KernelRow;

typedef struct {
  size_t trace;
  uint32_t thread;
  uint64_t ops;
  int64_t span, busy, idle, host_wait, kernel_wait, other;
} StreamRow;

typedef struct {
  size_t trace;
  uint32_t name;
  int64_t ts, dur, gpu;
} StepRow;

typedef struct {
  uint64_t count;
  int64_t mean, min, max, median, std;
} Stats;

/* How much of a process's life its ranges cover. The life runs from the
 * process's start (else its first event) to the program's end (else its
 * last event); the uncovered part is split into before the first top-level
 * range (start-up, imports), gaps between top-level ranges (any thread),
 * and after the last one (interpreter shutdown, atexit); the collector's
 * own exit work (writing the trace) follows the program's end and is
 * counted apart, as the profiler's. */
typedef struct {
  bool start_known, end_known, died;
  int64_t start, end;     /* ns */
  int64_t wall, covered, before, gaps, after, profiler_exit;
} Coverage;

typedef struct {
  size_t trace;
  int64_t rank;           /* distributedInfo.rank or the file's position; a
                           * helper process's: the rank it serves */
  bool is_rank;           /* a rank's main process (else a worker of rank) */
  Coverage cov;
  uint64_t events, ranges, gpu_ops;
  int64_t cpu_first, cpu_last; /* CPU ranges' extent */
  int64_t gpu_first, gpu_last, gpu_span;
  int64_t busy, compute, comm, memory, noncompute, idle, overlap;
  Stats steps;
} RankRow;

typedef struct {
  uint64_t count, cpu_outliers, delay_outliers, unmatched;
  int64_t cpu_total, cpu_max, delay_total, delay_max, delay_outlier_total;
  struct { size_t trace; uint32_t name; int64_t ts, cpu, delay; } worst[5];
  size_t nworst;
} LaunchStats;

enum { COPY_H2D, COPY_D2H, COPY_D2D, COPY_OTHER, COPY_MEMSET, COPY_KINDS };

typedef struct {
  uint64_t count, unknown_bytes, pageable;
  int64_t bytes, time;
} CopyRow;

typedef enum {
  B_HOST_WAIT, B_TINY_KERNELS, B_SYNC, B_DOMINANT_RANGE, B_DOMINANT_KERNEL,
  B_SLOW_RANK, B_SLOW_STEP, B_LAUNCH_DELAY, B_LOW_OVERLAP, B_WAITS_ON_WORKERS, B_STRAGGLER, B_KINDS
} BottleneckKind;

typedef struct {
  BottleneckKind kind;
  int64_t score; /* time at stake, ns */
  char *title, *evidence, *recommendation;
} Bottleneck;

/* The per-rank view (rankview.c): a range name's exclusive time on each
 * rank's main process, side by side, for the names whose time differs
 * most across ranks. */
typedef struct {
  uint32_t name;
  int64_t *per;        /* exclusive ns, one per Summary.rank_cols entry */
  int64_t lo, hi;      /* the smallest and the largest of them */
  size_t lo_at, hi_at; /* their columns */
} RankSpread;

enum { RANK_SPREAD_TOP = 8 };

/* A range whose exclusive time holds calls to functions without a range
 * of their own (issue 40): the shadow tree's manifest lists them for C
 * function ranges, and those the trace has no range of are named here
 * (filled by the commands that know the run: report_source.h). */
typedef struct {
  uint32_t name;   /* Model.names */
  int64_t excl;    /* the range's exclusive time, ns */
  char *calls;     /* ", "-separated (owned) */
} UnrangedRow;

typedef struct {
  VEC(RangeRow) ranges;   /* sorted: inclusive desc, name */
  VEC(KernelRow) kernels; /* sorted: total desc, name */
  VEC(RangeRow) gpu_annotations;
  VEC(StreamRow) streams;
  VEC(StepRow) steps;
  VEC(RankRow) ranks;     /* one per trace (process): ranks and their helpers */
  size_t nranks;          /* distinct ranks among them */
  LaunchStats launch;
  CopyRow copies[COPY_KINDS];
  uint64_t sync_calls, sync_copies;
  int64_t sync_time, sync_copy_time;
  uint64_t clipped, unattributed_gpu, zero_ranges, stream_overlaps;
  uint64_t async_ranges; /* start/end ranges, outside the nesting */
  int64_t range_excl_total, kernel_total;
  uint64_t kernel_count, tiny_kernels;
  int64_t tiny_launch_cpu;
  VEC(Bottleneck) bottlenecks; /* ranked */
  VEC(UnrangedRow) unranged;   /* by exclusive time, desc (empty: no manifest known) */
  SummaryOptions opt;
  I64Map rank_excl;       /* (trace << 32 | name) -> exclusive ns: summary_rank_range */
  VEC(size_t) rank_cols;  /* the per-rank view's columns: ranks' main processes (s->ranks index), by rank */
  VEC(RankSpread) spread; /* at most RANK_SPREAD_TOP, widest first */
  int64_t wait_name;      /* the straggler finding: the name the others wait in (-1: none) */
  int64_t wait_ns;        /* and their wait there, over all of them */
} Summary;

/* Sort event indices by (thread, start, longest first, file order): the
 * order in which a stack walk sees ranges nest. */
void trace_sort_by_thread(const Trace *t, uint32_t *idx, size_t n);

/* A start/end range (EV_ASYNC) into its name's row: outside the nesting,
 * its whole duration exclusive (the in-memory walk and stream.c) */
void range_row_async(RangeRow *r, const Ev *e);

/* b's figures added to a's (the same name's rows: several step names as
 * one, or two folds merged, partial.h): sums saturate, the max is the
 * larger. a's name stays. */
void range_row_add(RangeRow *a, const RangeRow *b);
/* A range row's name as shown: the step glob for merged step rows. */
const char *range_row_name(const Model *m, const Summary *s, const RangeRow *r);
void summary_compute(const Model *m, const SummaryOptions *opt, Summary *s);

/* summary_compute in two halves, for folds combined before they are
 * finished (partial.h): the rows by name id (nn = the names when folded;
 * owned, sumparts_free) that summary_finish takes. */
typedef struct {
  RangeRow *rows, *annots;
  KernelRow *krows;
  size_t nn;
} SumParts;
/* The traces of m folded into s (its counters, ranks, steps, streams,
 * per-rank times) and p's rows; the events are read, not kept. */
void summary_fold(const Model *m, const SummaryOptions *opt, Summary *s, SumParts *p);
void sumparts_free(SumParts *p);
void summary_free(Summary *s);

/* ---- what summary_compute shares with a streaming fold (stream.h) ----
 * A fold fills per-name rows (indexed by Model.names id, nn of them), the
 * Summary's counters and step rows, and one RankRow per trace; these finish
 * them exactly as summary_compute finishes its own. */
typedef struct {
  int64_t a, b;
} Interval;
/* count, mean, min, max, median, std of v[0..n) (sorted here, in place) */
Stats stats_of(int64_t *v, size_t n);
/* A trace's row before its events: rank, events, extents unset. */
void rank_row_init(RankRow *rr, const Trace *t, size_t ti);
/* The trace's coverage from its top-level ranges (tops: any order, sorted
 * here; gpu: the row's GPU extent counts), step statistics from the step
 * rows of the trace so far, the row pushed onto s->ranks. */
void summary_add_rank(Summary *s, const Trace *t, RankRow *rr, bool gpu, Interval *tops, size_t ntops);
/* Steps' rows merged, non-empty rows collected and sorted, bottlenecks:
 * s->opt set, s->ranks and s->steps complete. rows, annots and krows stay
 * the caller's (their contents are changed). */
void summary_finish(const Model *m, Summary *s, RangeRow *rows, RangeRow *annots, KernelRow *krows, size_t nn);


/* rankview.c: a closed range's exclusive time into its trace's share of
 * its name (both the in-memory walk and stream.c's fold call it) */
void summary_rank_range(Summary *s, size_t trace, uint32_t name, int64_t excl);
/* the columns and the widest names (s->ranks complete) */
void rankview_build(const Model *m, Summary *s);
/* The straggler of synchronous training, from the per-rank view: one rank
 * has much less time than every other in some name (the others wait
 * there: a collective) and much more in another (what it does meanwhile).
 * Fills title, evidence, recommendation, the score (the others' wait) and
 * s->wait_name/wait_ns; false when no rank fits. */
bool rankview_straggler(const Model *m, Summary *s, Buf *t, Buf *e, Buf *r, int64_t *score);
void rankview_free(Summary *s);

const char *copy_kind_name(int k);
const char *class_name(int c);
int kernel_class(const char *name, int kind);

#endif
