/* tracefig: per-name figures of a trace's ranges, for drill and prune:
 * calls, inclusive and exclusive time (a range's duration minus that of the
 * ranges nested directly in it on its thread), and where each name was
 * first seen (file, line). Names and threads are interned in hash tables:
 * a trace has 10^6 ranges or more and a full trace thousands of names.
 *
 * Ownership: Figures owns every string in it; figures_free releases it. */
#ifndef NC_TRACEFIG_H
#define NC_TRACEFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "ncbase.h"

/* Strings kept once each, found by hash (a linear scan per range was most
 * of drill's time). Open addressing; slot holds index + 1, 0 is empty. */
typedef struct {
  VEC(char *) s;
  size_t *slot, cap;
} Intern;

/* One range name's figures. */
typedef struct {
  const char *name; /* the Figures' names own it */
  char *file;
  int64_t line;
  int64_t incl, excl; /* ns */
  uint64_t count;
} Agg;

/* One range as recorded, for the nesting walk. */
typedef struct {
  size_t thread; /* index into Figures.threads */
  int64_t ts, dur, child;
  size_t agg;
} Occ;

typedef struct {
  VEC(Agg) aggs; /* aggs.v[i] is names.s.v[i] until drill sorts them */
  VEC(Occ) occs;
  Intern names, threads;
} Figures;

/* Read every user-annotation range of `trace` (a file or a run directory):
 * 0, or -1 after tracescan printed why (f is then still to be freed). */
int figures_load(const char *trace, Figures *f);
/* Did a range of this name run (one call or more) in the trace? */
bool figures_ran(const Figures *f, const char *name);
void figures_free(Figures *f);

#endif
