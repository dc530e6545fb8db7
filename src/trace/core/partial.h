/* partial: a summary's work split up and put back together (issue 41).
 *
 * A SumState is a summary before it is finished: the traces without their
 * events, their names, and what the fold made of them (summary_fold or
 * stream_fold: the Summary's counters, ranks, steps, streams, per-rank
 * times, and the rows by name). The state of some traces merged with the
 * state of the traces that follow them is the state of all of them, figure
 * for figure: every figure is a sum, a maximum, or a list by trace, and
 * names and traces are renumbered as if one process had read them all in
 * that order (model_adopt). Only a kernel's standard deviation is combined
 * by formula (Chan's) where one pass would run Welford's through both: the
 * same to rounding.
 *
 * Two uses:
 *  - `nctrace summary` folds its traces one at a time (memory: one trace's
 *    fold, not all the events) on two threads, each a contiguous share of
 *    the files, and merges the states in order;
 *  - `nctrace summary --partial -o F` writes a state to F (a small text
 *    file: names, traces' descriptions, rows), and `nctrace summary F...`
 *    merges such files: each node summarises the traces it holds, and one
 *    place gets the summary of all without moving a trace.
 *
 * The file (sumstate_write, sumstate_read) is line-based text, one record
 * per line, fields separated by one space, strings quoted with \\, \" and
 * \xHH escapes, "-" for none; it starts "nctrace-partial 1". Reading
 * trusts nothing in it: every count and index is checked against what the
 * file itself holds, and memory follows its lines.
 *
 * Ownership: a SumState owns its Model, Summary, rows and env text;
 * sumstate_free. */
#ifndef NCT_PARTIAL_H
#define NCT_PARTIAL_H

#include "analyze.h"

typedef struct {
  Model m;     /* traces without events (unless kept), names */
  Summary s;   /* folded, not finished */
  SumParts p;  /* rows by m.names id (p.nn may be short of the names: the rest are empty) */
  char *env;   /* the first run's env.json text (report_source.h), or NULL */
  const char *mem_why; /* a trace was read into memory: why (static), else NULL */
} SumState;

/* Fold paths[0..n) (files or run directories) into st: one trace at a
 * time, streamed where stream_fold can, else in memory; on up to threads
 * threads (each a contiguous share, messages said in order; 0: all of
 * them as one fold, as before there were states to merge). keep_events:
 * load them all into one Model in memory instead and keep the events (what
 * the Nsight joins need). 0, or -1 (reported). */
int sumstate_fold(SumState *st, const char *const *paths, size_t n, const SummaryOptions *opt, bool strict,
                  bool stream, bool keep_events, unsigned threads);
/* from's traces after into's: into becomes the state of both; from is
 * freed. */
void sumstate_merge(SumState *into, SumState *from);
/* The traces put in the order a run directory lists them (trace_dir_files:
 * the rank in the name, then the name), as if every node's traces were in
 * one directory; the figures by trace follow. */
void sumstate_sort(SumState *st);
/* The Summary (st->s) finished: summary_finish. */
void sumstate_finish(SumState *st);
void sumstate_free(SumState *st);

/* Does the file at path start as a partial summary does? */
bool sumstate_is_partial(const char *path);
void sumstate_write(const SumState *st, Buf *out);
/* A partial file into st (empty before). 0, or -1 (reported: PATH:LINE:
 * error: ...). Its step glob must be opt's (the fold depended on it). */
int sumstate_read(SumState *st, const char *path, const SummaryOptions *opt);
/* The same from memory (the fuzz target's way in); path names it. */
int sumstate_parse(SumState *st, const char *path, const char *text, size_t len, const SummaryOptions *opt);

#endif
