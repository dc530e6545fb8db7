/* diff: runs compared, name by name -- what `nctrace diff A B` (or
 * `nctrace diff A1 A2 -- B1 B2`) prints and what the comparison view of
 * `nctrace report` draws: one implementation for both.
 *
 * Input: each side is one or more runs, each as the analysis core already
 * computed it (a Model and its Summary, summary_compute with the same step
 * glob everywhere); nothing is read or parsed again. Ranges are matched by
 * the name the summary shows (range_row_name: numbered step names are one
 * row, the step glob), kernels (every GPU op name) by name; the Models
 * intern names separately, so matching is by string.
 *
 * Figures: per range name, count, inclusive, exclusive and GPU time
 * (RangeRow's meaning, docs/nctrace.md); per kernel name, count and summed
 * GPU time. When every run has steps and their counts differ, each run's
 * counts and times are divided by its step count (the total over its
 * ranks), so the rows compare one step (DiffResult.per_step); times stay
 * integer nanoseconds, rounded half away from zero. A side's figure is the
 * mean over its runs (one run: that run's). A name missing in a run has
 * zeros there.
 *
 * Noise (noise.h; docs/nctrace.md, "Noise"): each row's tested figure
 * (ranges: inclusive time; kernels: GPU time) gets a verdict. With two or
 * more runs on both sides, from the run-to-run spread of the per-run
 * figures (NOISE_RUNS); otherwise from the spread of the per-call
 * durations, counts taken as exact (NOISE_CALLS; needs 0 or >= 2 calls on
 * each side); otherwise unknown. The overview's mean step is tested the
 * same way (its calls are the steps); the totals (self time of all ranges,
 * GPU op time) are one sample per run, so only several runs per side give
 * them a verdict.
 *
 * Order: significant rows first, then unknown, then within noise; within
 * each, by the size of the change: the largest |B - A| of the row's times
 * (ranges: inclusive, exclusive, GPU; kernels: GPU), then |B - A| of the
 * count, then the name (byte order). The same inputs give the same result.
 *
 * Memory: per-call spreads are kept as moments per name (count, mean, sum
 * of squared deviations), never per event.
 *
 * Ownership: the DiffResult owns its rows and copies of their names, so it
 * outlives the Models; diff_free releases it. Pure computation: nothing
 * printed, nothing exits. */
#ifndef NCT_DIFF_H
#define NCT_DIFF_H

#include "analyze.h"
#include "noise.h"

/* One run as given: its loaded traces and their summary. */
typedef struct {
  const Model *m;
  const Summary *s;
} DiffRun;

/* One side of a row. count is fractional when per step or a mean over runs. */
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
  uint64_t count_a, count_b; /* the real instance counts over a side's runs, never divided */
  int64_t change; /* the sort key: largest |B - A| of the times, ns */
  NoiseVerdict noise; /* of the tested figure (ranges: incl, kernels: gpu), ns */
} DiffRow;

/* What a side brings to the comparison besides its rows. */
typedef struct {
  size_t runs;         /* runs given for this side */
  size_t files, ranks; /* traces loaded over its runs; most distinct rank numbers of one run */
  uint64_t steps;      /* step instances over all its runs and ranks */
  int64_t step_mean;   /* mean step duration, ns (mean of its runs' means; 0 without steps) */
  int64_t range_self;  /* Summary.range_excl_total, ns (per step when per_step; mean over runs) */
  int64_t gpu_total;   /* Summary.kernel_total: all GPU ops, ns (the same way) */
} DiffRunInfo;

typedef VEC(DiffRow) DiffRows;

typedef struct {
  DiffRunInfo a, b;
  bool per_step;            /* rows and totals are per step (step counts differ) */
  DiffRows ranges;          /* CPU range names */
  DiffRows kernels;         /* GPU op names */
  size_t only_a[2], only_b[2]; /* names only in A / only in B: [0] ranges, [1] kernels */
  NoiseVerdict step_noise;  /* of the mean step */
  NoiseVerdict self_noise;  /* of the self time of all ranges */
  NoiseVerdict gpu_noise;   /* of the GPU op time */
  const char *step_glob;    /* the summaries' step glob (not owned) */
} DiffResult;

/* na >= 1 runs of side A, nb >= 1 of side B. */
void diff_compute(const DiffRun *a, size_t na, const DiffRun *b, size_t nb, DiffResult *out);
void diff_free(DiffResult *d);

/* B - A in percent of A; false (nothing to divide by) when A is 0. */
bool diff_pct(int64_t a, int64_t b, double *pct);

#endif
