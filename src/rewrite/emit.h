/* emit: writing the shadow tree. Every file is written to a temporary name
 * in its final directory and renamed into place, so a reader (or a crash)
 * never sees half a file. Nothing here ever writes under SRC: the driver
 * refuses OUT == SRC and OUT containing SRC before anything is written. */
#ifndef NC_EMIT_H
#define NC_EMIT_H

#include <stdbool.h>
#include <sys/types.h>

#include "diag.h"

/* Create the parent directories of OUT/rel. */
int emit_mkdirs(const char *out_root, const char *rel, Diags *d);
/* Atomically write OUT/rel with `mode`; returns 0 or -1 (message in d). */
int emit_file(const char *out_root, const char *rel, const void *data, size_t n, mode_t mode, Diags *d);
/* Atomically (re)create the symlink OUT/rel -> target. */
int emit_symlink(const char *out_root, const char *rel, const char *target, Diags *d);
/* Remove OUT/rel (a file this tool wrote earlier); missing is fine. */
void emit_remove(const char *out_root, const char *rel);

/* A tree run writes every file under OUT/.ncrewrite/stage first (with
 * emit_file/emit_symlink, the stage as root) and moves them into OUT only
 * once all were written and each can go in place: a run that fails leaves OUT
 * as it was. The moves are renames within one file system; they cannot run
 * out of space. */
/* Lock OUT (flock on the directory: no file is made, and a run that dies
 * releases it) so that two runs on one OUT take turns instead of clearing
 * each other's stage; waits, saying so unless quiet. The fd to close at the
 * end, or -1. */
int emit_lock(const char *out_root, bool quiet);
/* Make an empty stage (removing what an interrupted run left); its path, or
 * NULL (message in d). */
char *emit_stage_open(const char *out_root, Diags *d);
/* Could OUT/rel be replaced: every parent a directory, missing or a file
 * that goes (gone(ctx, its path under OUT): a stale file, removed before the
 * moves), and rel not a directory unless it holds only files that go. */
typedef bool (*EmitGone)(void *ctx, const char *rel);
int emit_stage_check(const char *out_root, const char *rel, EmitGone gone, void *ctx, Diags *d);
/* Move stage/rel to OUT/rel (first removing the empty directories left
 * where a directory of stale files was in the way). */
int emit_stage_commit(const char *out_root, const char *stage, const char *rel, Diags *d);
/* Remove the stage; after a rollback also OUT/.ncrewrite if empty and, with
 * out_was_new, OUT (if empty). */
void emit_stage_close(const char *out_root, const char *stage, bool rolled_back, bool out_was_new);

#endif
