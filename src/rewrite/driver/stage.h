/* stage: a tree run as one transaction on OUT. Every file the run writes
 * goes to OUT/.ncrewrite/stage first; only when all of them were written and
 * each can go in place do they move into OUT. A run that fails leaves OUT as
 * it was; runs on one OUT take turns (a lock on the directory). */
#ifndef NC_STAGE_H
#define NC_STAGE_H

#include <stdbool.h>
#include <sys/types.h>

#include "diag.h"

typedef struct Stage Stage;

/* Make OUT (and its missing parents, undone on a rollback), lock it (flock
 * on the directory: no file is made, a run that dies releases it; waits,
 * saying so unless quiet) and clear what an interrupted run left in the
 * stage. NULL with a message in d if OUT cannot be made. */
Stage *stage_begin(const char *out_root, bool quiet, Diags *d);
/* The stage's directory (the manifest is written under it too). */
const char *stage_root(Stage *s);
/* Make the stage directory, once, on the first write: a run that writes
 * nothing (an up-to-date tree, even on a read-only OUT) makes nothing.
 * 0, or -1 with errno. Thread-safe. */
int stage_ready(Stage *s);
/* Write OUT/rel (a file, a link) into the stage; messages name OUT/rel.
 * Thread-safe. */
int stage_file(Stage *s, const char *rel, const void *data, size_t n, mode_t mode, Diags *d);
int stage_symlink(Stage *s, const char *rel, const char *target, Diags *d);

/* Before anything in OUT changes: can OUT/rel take the staged file? Every
 * parent must be a directory, missing (made now, remembered) or a stale file
 * (gone(ctx, its path under OUT): removed before the moves), and rel no
 * directory unless it holds only stale files. -1 with the reason in d. */
typedef bool (*StageGone)(void *ctx, const char *rel);
int stage_prepare(Stage *s, const char *rel, StageGone gone, void *ctx, Diags *d);
/* After the stale files went: move stage/rel to OUT/rel. */
int stage_move(Stage *s, const char *rel, Diags *d);
/* Remove the stage and unlock; unless committed, also the directories this
 * run made in OUT (OUT itself if it made it) where they are empty. */
void stage_end(Stage *s, bool committed);

#endif
