/* edits: "edit, don't rebuild". Stages never print a syntax tree; they add
 * edits (byte range of the original -> replacement text). edits_apply sorts
 * them, rejects overlaps (an internal error: the planners must not produce
 * them) and applies them in one pass, so every byte outside an edit is copied
 * unchanged. It also derives the line map (original line -> output line).
 *
 * Ordering: zero-width insertions at the same offset are applied in
 * increasing `order`, then in the order they were added.
 * Ownership: Edits owns the replacement texts; edits_free releases them. */
#ifndef NC_EDITS_H
#define NC_EDITS_H

#include "util.h"

typedef struct {
  size_t start, end;  /* byte range in the original, end exclusive */
  char *text;
  int order;
  size_t seq;
} Edit;

typedef struct {
  VEC(Edit) v;
} Edits;

/* One line-map entry: from original line `orig` on, output line =
 * orig + delta (until the next entry). */
typedef struct { int orig, delta; } LineShift;
typedef struct { VEC(LineShift) v; } LineMap;

void edits_add(Edits *e, size_t start, size_t end, const char *text, int order);
void edits_addf(Edits *e, size_t start, size_t end, int order, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Sort the edits and apply them to src into out (appended), filling map
 * (when not NULL).
 * Returns 0, or -1 if two edits overlap (nothing is written then; the
 * caller reports it). An edit past the end of src is a BUG(). */
int edits_apply(Edits *e, const char *src, size_t len, Buf *out, LineMap *map);
void edits_free(Edits *e);

/* Output line of an original 1-based line. */
int linemap_get(const LineMap *m, int orig);
void linemap_free(LineMap *m);

/* Unified diff of the applied edits: hunks built straight from the edit
 * list (no diff algorithm needed: we know what changed). `a`/`b` label the
 * files. Call after edits_apply (edits are sorted then). */
void edits_diff(const Edits *e, const char *src, size_t len, const char *out, size_t outlen,
                const LineMap *map, const char *a, const char *b, Buf *diff);

#endif
