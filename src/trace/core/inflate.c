/* inflate: a gzip trace is inflated by a second thread, a few blocks ahead
 * of the scan. Inflating is a third of the time it takes to read a .json.gz
 * (about 1 s of 3 s for 1 GB of JSON), and a deflate stream cannot be
 * entered in the middle as a plain file can (model.c's split), so running it
 * beside the scanner is what a second core can do for a gzip input.
 *
 * The scanner's reads keep gzread's contract (bytes, 0 at the end, and
 * zlib's error state beside them), so reader.c treats both the same. */
#include "inflate.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { NSLOT = 4, SLOT = 4 << 20 };

typedef struct {
  char *data;
  int len;           /* gzread's result: bytes, 0 at the end, -1 on error */
  size_t pos;        /* bytes of it the scanner has taken */
  int zerr;          /* gzerror's state after this read */
  int err;           /* errno after it (zerr Z_ERRNO: errno is this thread's) */
  char msg[256];
  uint64_t offset;   /* compressed bytes read so far (for the progress bar) */
} Slot;

struct Inflater {
  gzFile gz;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t filled, emptied;
  Slot slot[NSLOT];
  size_t head, count; /* the oldest filled slot; how many are filled */
  bool stop, started;
};

static void *inflate_main(void *arg) {
  Inflater *f = arg;
  for (;;) {
    pthread_mutex_lock(&f->lock);
    while (f->count == NSLOT && !f->stop) pthread_cond_wait(&f->emptied, &f->lock);
    bool stop = f->stop;
    Slot *s = &f->slot[(f->head + f->count) % NSLOT];
    pthread_mutex_unlock(&f->lock);
    if (stop) break;
    errno = 0;
    s->len = gzread(f->gz, s->data, SLOT);
    s->err = errno;
    const char *m = gzerror(f->gz, &s->zerr);
    snprintf(s->msg, sizeof s->msg, "%s", m ? m : "");
    s->offset = (uint64_t)gzoffset(f->gz);
    s->pos = 0;
    bool last = s->len <= 0 || (s->zerr != Z_OK && s->zerr != Z_BUF_ERROR);
    pthread_mutex_lock(&f->lock);
    f->count++;
    pthread_cond_signal(&f->filled);
    pthread_mutex_unlock(&f->lock);
    if (last) break; /* the end (or an error) stays in its slot for every later read */
  }
  return NULL;
}

Inflater *inflater_start(gzFile gz) {
  Inflater *f = xcalloc(1, sizeof *f);
  f->gz = gz;
  for (int i = 0; i < NSLOT; i++) f->slot[i].data = xmalloc(SLOT);
  pthread_mutex_init(&f->lock, NULL);
  pthread_cond_init(&f->filled, NULL);
  pthread_cond_init(&f->emptied, NULL);
  f->started = pthread_create(&f->thread, NULL, inflate_main, f) == 0;
  if (!f->started) {
    inflater_stop(f);
    return NULL; /* the caller reads on its own */
  }
  return f;
}

int inflater_read(Inflater *f, char *dst, size_t room, int *zerr, const char **zmsg, uint64_t *offset) {
  pthread_mutex_lock(&f->lock);
  while (f->count == 0) pthread_cond_wait(&f->filled, &f->lock);
  Slot *s = &f->slot[f->head];
  pthread_mutex_unlock(&f->lock);
  *zerr = s->zerr;
  *zmsg = s->msg;
  errno = s->err;
  *offset = s->offset;
  if (s->len <= 0) return s->len;
  size_t n = (size_t)s->len - s->pos;
  if (n > room) n = room;
  memcpy(dst, s->data + s->pos, n);
  s->pos += n;
  if (s->pos == (size_t)s->len) {
    pthread_mutex_lock(&f->lock);
    f->head = (f->head + 1) % NSLOT;
    f->count--;
    pthread_cond_signal(&f->emptied);
    pthread_mutex_unlock(&f->lock);
  }
  return (int)n;
}

void inflater_stop(Inflater *f) {
  if (!f) return;
  pthread_mutex_lock(&f->lock);
  f->stop = true;
  pthread_cond_signal(&f->emptied);
  pthread_mutex_unlock(&f->lock);
  if (f->started) pthread_join(f->thread, NULL);
  for (int i = 0; i < NSLOT; i++) free(f->slot[i].data);
  pthread_mutex_destroy(&f->lock);
  pthread_cond_destroy(&f->filled);
  pthread_cond_destroy(&f->emptied);
  free(f);
}
