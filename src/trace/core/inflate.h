/* inflate: gzip input inflated by a second thread, ahead of the scan. */
#ifndef NCT_INFLATE_H
#define NCT_INFLATE_H

#include <stdbool.h>
#include <stdint.h>
#include <zlib.h>

typedef struct Inflater Inflater;

/* Start inflating gz (opened, not yet read from) on a thread of its own;
 * from now on only the inflater reads gz. NULL if no thread could start. */
Inflater *inflater_start(gzFile gz);
/* Up to `room` bytes into dst, as gzread returns them (0 at the end, -1 on
 * an error), with gzerror's state after that read (and errno set as that
 * read left it) and the compressed bytes read so far. Blocks until the
 * thread has inflated them. */
int inflater_read(Inflater *f, char *dst, size_t room, int *zerr, const char **zmsg, uint64_t *offset);
/* Stop the thread (it finishes the block it is inflating) and free f. */
void inflater_stop(Inflater *f);

#endif
