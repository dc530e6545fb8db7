/* manifest: what a run wrote, for people and for the next run.
 *   OUT/.ncrewrite/manifest.json  deterministic: SRC's real path, then per
 *       file the action, the ranges inserted (name, kind, original and
 *       output lines, rule) and the line map; same bytes for the same inputs.
 *   OUT/.ncrewrite/cache.json     not deterministic (stat data): lets a
 *       second run skip files whose input, rules and output are unchanged.
 * Ownership: a FileResult owns its strings and vectors (result_free). */
#ifndef NC_MANIFEST_H
#define NC_MANIFEST_H

#include "edits.h"
#include "rewrite.h"

typedef struct {
  char *name;
  const char *kind;
  int line0, line1, out0, out1;
  char *rule_at;   /* "rules.yaml:12:9" or NULL */
  char *unranged;  /* RangeRec's: callees without a range of their own, or NULL */
} RangeOut;

typedef struct {
  char *rel;
  const char *action;  /* rewritten, copied, symlink, unparsable, already-instrumented, failed */
  uint64_t src_hash, out_hash;
  int64_t src_size, src_mtime, out_size, out_mtime;
  uint64_t src_ino;
  VEC(RangeOut) ranges;
  LineMap map;
  size_t nranges;      /* ranges.n, or for a cached result the count in entry */
  char *entry;         /* cached result: its manifest.json entry as written
                        * (ranges and line map stay text: parsing them was
                        * most of an unchanged run's time) */
  RuleResults rules;   /* what the file made of each rule naming it (rewrite_run), kept in
                        * cache.json so that a cached file reports the same */
  Diags diags;         /* rendered diagnostics for this file */
  bool changed;        /* output written (or would be) this run */
  bool cached;         /* taken from cache.json */
} FileResult;

void result_free(FileResult *r);

/* Write both files atomically. `source`: SRC's real path, recorded so that
 * traces and reports can lead from a shadow file back to the user's own
 * (ncrt's source locations, nctrace report's source view). Returns 0 or -1
 * (message in d). */
int manifest_write(const char *out_root, const char *source, const char *rules_path, const Rules *rules,
                   const char *options, FileResult *res, size_t n, Diags *d);

/* Load cache.json; entries whose digest (of `rules`)/options differ are not
 * loaded. With rules NULL, entries are loaded whatever their digest, without
 * their rule results (to find files a previous run wrote). Returns the
 * number of entries (sorted by rel). */
size_t cache_load(const char *out_root, const Rules *rules, const char *options, FileResult **out);

/* manifest.json as the tools read it (drill, prune): per file its path and
 * the ranges it holds. The one reader of what manifest_write writes. */
typedef struct {
  char *rel;
  VEC(RangeOut) ranges; /* kind: one of the rewriters' static strings */
} ManifestFile;
typedef struct {
  char *source; /* SRC's real path as recorded, or NULL (older manifests) */
  VEC(ManifestFile) files;
} Manifest;
/* Read OUT_ROOT/.ncrewrite/manifest.json: 0, or -1 when it is missing or
 * not a manifest. manifest_free releases it. */
int manifest_read(const char *out_root, Manifest *m);
void manifest_free(Manifest *m);

#endif
