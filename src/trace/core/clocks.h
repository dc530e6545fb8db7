/* clocks: one timeline for traces from several hosts.
 *
 * Each trace's timestamps are relative to its baseTimeNanoseconds, its
 * host's real-time clock when the trace began; hosts' real-time clocks
 * differ (NTP keeps them within milliseconds at best, a container's clock
 * is its host's, a misconfigured node's anything). Within a host the
 * traces share one clock. Across hosts the ends of a collective (a
 * barrier, an all-reduce, an NCCL kernel) are moments every rank leaves
 * together, within microseconds on a real network: the k-th end of such a
 * name on each rank is one moment, and each host's offset from the first
 * host (the host of the lowest rank) is the median of the differences,
 * its uncertainty from their spread. clock_align applies the offsets to
 * the traces' base_ns, so that whatever reads base_ns (merge, report's
 * timeline) sees one clock.
 *
 * Ownership: ClockAlign owns its arrays and strings; clock_align_free. */
#ifndef NCT_CLOCKS_H
#define NCT_CLOCKS_H

#include "model.h"

typedef struct {
  char *id;            /* ncrt.process.host.id ("" unknown: traces without it) */
  char *name;          /* its hostname */
  int64_t lo_rank, hi_rank; /* the ranks (main processes) on it, -1 none */
  bool reference;      /* the host the others are aligned to */
  bool aligned;        /* the reference, or an offset was estimated */
  int64_t offset_ns;   /* added to its traces' base */
  int64_t uncert_ns;   /* the offset's uncertainty (1.4826 MAD / sqrt(n)) */
  int64_t spread_ns;   /* one anchor's spread (1.4826 MAD of the differences) */
  size_t anchors;      /* differences used */
  bool bounded;        /* causality bounds the offset: lo_ns <= offset_ns <= hi_ns */
  int64_t lo_ns, hi_ns;
  char *anchor;        /* the collective's name */
} HostClock;

typedef struct {
  VEC(HostClock) hosts;
  /* per trace (Model.traces index): the ends (absolute ns, the trace's
   * own clock) of each collective name, collected while its events are
   * in memory */
  VEC(struct ClockEnds *) ends;
} ClockAlign;

/* The ends of trace ti's collectives (before its events are freed). */
void clock_collect(ClockAlign *ca, const Model *m, size_t ti);
/* Estimate each host's offset and add it to its traces' base_ns; one
 * warning (nct_warning) per host that cannot be aligned. 0, or -1 when
 * some host could not be aligned. */
int clock_align(ClockAlign *ca, Model *m);
/* "clocks: host b (ranks 2-3) is +250.012 ms from host a (ranks 0-1), ±
 * 0.004 ms, from 16 ends of barrier: corrected" per aligned host other
 * than the reference; nothing when there is one host. */
void clock_align_text(const ClockAlign *ca, Buf *out);
void clock_align_free(ClockAlign *ca);

#endif
