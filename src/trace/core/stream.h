/* stream: `nctrace summary` in memory that does not grow with the events.
 *
 * The loader hands every event to a sink (sink.h) that folds it at once
 * and keeps none: per name the summary's row (count, inclusive, exclusive,
 * sum, max), per trace its extents, top-level ranges (for the coverage) and
 * step rows, per thread a stack of pending ranges no deeper than the
 * thread's nesting. The Summary that comes out is the one summary_compute
 * gives for the same files, figure for figure (tests/trace/test_stream.py).
 *
 * It works on ncrt's traces: each range is written when it ends, with its
 * nesting depth ("depth"), so a thread's ranges come children first, in the
 * order they end. Pending ranges wait on a per-thread stack of segments
 * (runs of ranges at one depth): a range at depth d claims the segments
 * deeper than d that lie inside it (its children, whatever depths throttled
 * ranges left out) and sums their durations for its exclusive time.
 * Segments deeper than d left before it belong to ranges whose recorded
 * parent is shallower (a throttled range held them): nothing at depth d or
 * deeper can claim them any more, so they move to depth d. A depth keeps
 * its latest SEGS segments apart (its parent may claim only those: the
 * ones before were a throttled sibling's) and merges older ones, so a stack
 * holds at most 2 SEGS segments per level of the nesting.
 * Inclusive time counts a name's outermost instances only (recursion once):
 * each group carries, per name, the outermost time its subtrees already
 * counted; a range of name N adds its duration less what its subtree
 * counted for N, and its subtree's table becomes {N: its duration} merged
 * with the rest (smaller into larger; memory: depth x distinct names).
 *
 * The fold checks as it goes that this gives the nesting the in-memory walk
 * finds by time (per thread: ends in order; a claimed group starts inside
 * its claimer and sorts after it, a zero-length range claims nothing; the
 * group left on top ends before the range starts). What it cannot fold it
 * gives up on, and the caller re-reads the files into memory (summary.c):
 *  - a range without "depth" (torch.profiler's and other foreign traces),
 *    or not in end order;
 *  - a segment its claimer contains only in part: depths and times
 *    disagree (zero-length ranges at another's start or end, equal starts
 *    and lengths), or a range with more than SEGS children at a depth where
 *    a throttled range held recorded ones just before (merged segments);
 *  - GPU ops or CUDA runtime/driver calls (attribution by correlation id
 *    needs the GPU ops, which come last in the file), B/E pairs;
 *  - more than PEND_TOPS disjoint ranges in a group that no parent claims
 *    (they are top-level for the coverage), and ranges other than start/end
 *    ones on a start/end lane.
 * What it keeps besides the stacks grows with rarer things than events:
 * names (a row each), step ranges (a StepRow each: the median needs them
 * all) and disjoint top-level ranges (16 bytes each, merged as they touch).
 *
 * The split two-thread read of a big plain file is not used (a thread's
 * stack at the split point is unknown): one reading thread. */
#ifndef NCT_STREAM_H
#define NCT_STREAM_H

#include "analyze.h"

/* The summary of the files or run directories paths[0..n) into *s (opt as
 * summary_compute's), their traces loaded into m without events (m->sink
 * set while reading, NULL after). Returns 1: done; 0: they cannot be
 * summarised streaming (*why says what, a static string; m holds what was
 * read; the caller frees m and loads them into memory); -1: a file could
 * not be read (reported by the reader). */
int stream_summary(Model *m, const char *const *paths, size_t n, const SummaryOptions *opt, Summary *s,
                   const char **why);

/* The same, up to the fold: s and p as summary_fold leaves them (p's
 * rows owned by the caller, sumparts_free; empty unless 1 is returned). */
int stream_fold(Model *m, const char *const *paths, size_t n, const SummaryOptions *opt, Summary *s, SumParts *p,
                const char **why);

#endif
