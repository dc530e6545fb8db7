/* targets: which file a rule-file key names under SRC. The one resolver of
 * the tree run (main.c), --file (driver/onefile.c) and the tools
 * (tools/feedback.c), so that the three never disagree. Files are asked
 * about through a callback (the tree run knows its listing, the tools ask
 * the file system, --file knows its one path): this part reads no files.
 *
 * Ownership: a TargetHit owns its strings (target_hit_free). */
#ifndef NC_TARGETS_H
#define NC_TARGETS_H

#include <stdbool.h>

/* Is `rel` (relative to SRC, '/'-separated) a file there? */
typedef bool (*TargetHasFile)(void *ctx, const char *rel);

/* Does a key name files by path (a glob, a '/', or a C-family file name)
 * rather than a dotted Python module? */
bool target_key_is_path(const char *key);

typedef struct {
  char *rel;             /* the file named, relative to SRC, or NULL */
  bool file_path_missed; /* a filePath was given and names no file under SRC */
  char *module_path;     /* a module key as a path ('.' -> '/'), or NULL */
} TargetHit;

/* The one file a key names: its filePath first (relative to SRC, "./"
 * dropped; an absolute one when it lies under src_real, SRC's real path,
 * which may be NULL); then a path key without glob characters names that
 * path; a module key names p.py or p/__init__.py (p: the key with '/' for
 * '.'), also with SRC being the package itself (SRC's last component
 * dropped from the front of p). A glob names files through
 * target_glob_names instead. */
void target_resolve(const char *key, const char *file_path, const char *src_real, TargetHasFile has, void *ctx,
                    TargetHit *out);
void target_hit_free(TargetHit *h);

/* Does a path key (glob or literal path) name `rel`? */
bool target_glob_names(const char *key, const char *rel);

/* Does a target (its key, filePath, and whether the key is a path glob)
 * name the one file rel, as a tree run resolves it, with no SRC around
 * it (src_real as for target_resolve)? For --file runs (driver/onefile.c)
 * and the import hook (python/src/engine.c). */
bool target_names_file(const char *key, const char *file_path, bool path_glob, const char *rel,
                       const char *src_real);

#endif
