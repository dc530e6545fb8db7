/* emit: writing files atomically. Every file is written to a temporary name
 * in its final directory and renamed into place, so a reader (or a crash)
 * never sees half a file. A tree run writes through stage.c, which makes the
 * whole run one transaction. Nothing here ever writes under SRC: the driver
 * refuses OUT == SRC and OUT containing SRC before anything is written. */
#ifndef NC_EMIT_H
#define NC_EMIT_H

#include <sys/types.h>

#include "diag.h"

/* Create the parent directories of OUT/rel. */
int emit_mkdirs(const char *out_root, const char *rel, Diags *d);
/* Atomically write OUT/rel with `mode`; returns 0 or -1 (message in d). */
int emit_file(const char *out_root, const char *rel, const void *data, size_t n, mode_t mode, Diags *d);
/* Remove OUT/rel (a file this tool wrote earlier); missing is fine. */
void emit_remove(const char *out_root, const char *rel);

/* The same under `root`, naming files `shown`/rel in messages (the stage
 * writes files that messages call OUT/rel). */
int emit_file_in(const char *root, const char *shown, const char *rel, const void *data, size_t n, mode_t mode,
                 Diags *d);
/* Atomically (re)create the symlink root/rel -> target. */
int emit_symlink_in(const char *root, const char *shown, const char *rel, const char *target, Diags *d);

#endif
