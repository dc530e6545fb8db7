/* walk: list the source tree, in a fixed (sorted) order, without following
 * symbolic links and without entering OUT when OUT lies inside SRC.
 * Ownership: Entries owns its strings; entries_free releases them. */
#ifndef NC_WALK_H
#define NC_WALK_H

#include <sys/types.h>

#include "diag.h"

typedef struct {
  char *rel;          /* relative to SRC, '/'-separated */
  mode_t mode;        /* lstat mode */
  off_t size;
  int64_t mtime_ns;
  ino_t ino;
  char *link;         /* symlink target as written, or NULL */
} Entry;

typedef struct {
  char *rel;          /* a path left out of the walk */
  char *why;          /* the reason, for --explain */
} Skipped;

typedef struct {
  VEC(Entry) v;
  VEC(Skipped) skipped; /* in walk order */
} Entries;

/* Walk `src` (a directory). Entries whose device/inode equal (skip_dev,
 * skip_ino) are not entered (OUT inside SRC). Left out as well, with the
 * reason in out->skipped: hidden directories (.git, .venv, .tox, ...),
 * __pycache__, node_modules, virtual environments (a directory holding
 * pyvenv.cfg or conda-meta/), other shadow trees (.ncrewrite/manifest.json)
 * and every path matching one of the `excl` globs (a glob without '/'
 * matches a file or directory name at any depth; one with '/' the path
 * relative to SRC; a trailing '/' matches directories only).
 * Returns 0 or -1 on a fatal error (SRC unreadable); per-entry problems are
 * warnings in d. */
int walk_tree(const char *src, dev_t skip_dev, ino_t skip_ino, const char *const *excl, size_t nexcl, Entries *out,
              Diags *d);
void entries_free(Entries *e);

#endif
