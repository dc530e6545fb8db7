/* progress: a one-line bar on stderr while a big trace is read. Shown only
 * when stderr is a terminal, not under -q, and for files worth watching
 * (large, or taking a while); erased before any message and at the end of
 * each file, so logs and pipes never see it. Single-threaded. */
#ifndef NCT_PROGRESS_H
#define NCT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* -q: never draw. */
void progress_set_quiet(bool quiet);
/* A file of `size` bytes (on disk: compressed for .gz) is being read. */
void progress_begin(const char *path, uint64_t size);
/* `done` bytes of it have been read. */
void progress_update(uint64_t done);
/* Erase the bar if drawn (before a message, and at the end of a file). */
void progress_clear(void);
/* The trace core's messages (nct_say) as nctrace prints them: the bar
 * erased, then "where: level: msg" on stderr (the Python package's
 * in-process commands use it too). */
void progress_say(const char *level, const char *where, const char *msg);

#endif
