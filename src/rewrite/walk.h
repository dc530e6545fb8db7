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

typedef struct { VEC(Entry) v; } Entries;

/* Walk `src` (a directory). Entries whose device/inode equal (skip_dev,
 * skip_ino) are not entered (OUT inside SRC). Returns 0 or -1 on a fatal
 * error (SRC unreadable); per-entry problems are warnings in d. */
int walk_tree(const char *src, dev_t skip_dev, ino_t skip_ino, Entries *out, Diags *d);
void entries_free(Entries *e);

#endif
