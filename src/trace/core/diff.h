/* diff: two runs compared, name by name -- what `nctrace diff A B` prints
 * and what a comparison view of `nctrace report` can draw.
 *
 * Input: each run as the analysis core already computed it (a Model and
 * its Summary, summary_compute with the same step glob on both sides);
 * nothing is read or parsed again. Ranges are matched by the name the
 * summary shows (range_row_name: numbered step names are one row, the step
 * glob), kernels (every GPU op name) by name; the two Models intern names
 * separately, so matching is by string.
 *
 * Figures: per range name, count, inclusive, exclusive and GPU time
 * (RangeRow's meaning, docs/nctrace.md); per kernel name, count and summed
 * GPU time. When both runs have steps and their counts differ, every count
 * and time is divided by its run's step count (the total over its ranks),
 * so the rows compare one step of each run (DiffResult.per_step); times
 * stay integer nanoseconds, rounded half away from zero. Otherwise totals
 * are compared as they are. A name missing on one side has zeros there.
 *
 * Order: each table by the size of its change, largest first: the largest
 * |B - A| of the row's times (ranges: inclusive, exclusive, GPU; kernels:
 * GPU), then |B - A| of the count, then the name (byte order). The
 * result is the same for the same inputs.
 *
 * Ownership: the DiffResult owns its rows and copies of their names, so it
 * outlives both Models; diff_free releases it. Pure computation: nothing
 * printed, nothing exits. */
#ifndef NCT_DIFF_H
#define NCT_DIFF_H

#include "analyze.h"

/* One run as given: its loaded traces and their summary. */
typedef struct {
  const Model *m;
  const Summary *s;
} DiffRun;

/* One side of a row. count is fractional when per step. */
typedef struct {
  double count;
  int64_t incl, excl, gpu; /* ns; kernels: incl = excl = 0, gpu = total */
} DiffSide;

enum { DIFF_IN_A = 1, DIFF_IN_B = 2 }; /* DiffRow.in: where the name occurs */

typedef struct {
  char *name;
  uint32_t kinds; /* ranges: the Kind mask of both runs (bit k: kind k) */
  uint8_t in;     /* DIFF_IN_A | DIFF_IN_B */
  DiffSide a, b;  /* zero where the name is absent */
  uint64_t count_a, count_b; /* the runs' real instance counts, never divided */
  int64_t change; /* the sort key: largest |B - A| of the times, ns */
} DiffRow;

/* What a run brings to the comparison besides its rows. */
typedef struct {
  size_t files, ranks; /* traces loaded; distinct rank numbers among them */
  uint64_t steps;      /* step instances over all its ranks */
  int64_t step_mean;   /* mean step duration, ns (0 without steps) */
  int64_t range_self;  /* Summary.range_excl_total, ns (per step when per_step) */
  int64_t gpu_total;   /* Summary.kernel_total: all GPU ops, ns (per step when per_step) */
} DiffRunInfo;

typedef VEC(DiffRow) DiffRows;

typedef struct {
  DiffRunInfo a, b;
  bool per_step;            /* rows and totals are per step (step counts differ) */
  DiffRows ranges;          /* CPU range names */
  DiffRows kernels;         /* GPU op names */
  size_t only_a[2], only_b[2]; /* names only in A / only in B: [0] ranges, [1] kernels */
  const char *step_glob;    /* the summaries' step glob (not owned) */
} DiffResult;

void diff_compute(const DiffRun *a, const DiffRun *b, DiffResult *out);
void diff_free(DiffResult *d);

/* B - A in percent of A; false (nothing to divide by) when A is 0. */
bool diff_pct(int64_t a, int64_t b, double *pct);

#endif
