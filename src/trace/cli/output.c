/* output: buffered plain or single-stream gzip output (see output.h). */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { OUT_BUF = 1 << 20 };

struct Output {
  char *path;
  FILE *f;
  bool gz, failed;
  z_stream z;
  unsigned char *zbuf;
  char *buf;
  size_t len;
};

static void flush_plain(Output *o, const void *p, size_t n) {
  if (n && fwrite(p, 1, n, o->f) != n) o->failed = true;
}

static void deflate_some(Output *o, const void *p, size_t n, int flush) {
  o->z.next_in = (unsigned char *)p;
  o->z.avail_in = (unsigned)n;
  do {
    o->z.next_out = o->zbuf;
    o->z.avail_out = OUT_BUF;
    int rc = deflate(&o->z, flush);
    if (rc == Z_STREAM_ERROR) BUG("deflate: stream error");
    flush_plain(o, o->zbuf, OUT_BUF - o->z.avail_out);
  } while (o->z.avail_out == 0 || (flush == Z_FINISH && o->z.avail_in));
}

static void drain(Output *o) {
  if (!o->len) return;
  if (o->gz) deflate_some(o, o->buf, o->len, Z_NO_FLUSH);
  else flush_plain(o, o->buf, o->len);
  o->len = 0;
}

Output *out_open(const char *path) {
  Output *o = xcalloc(1, sizeof *o);
  o->path = xstrdup(path);
  size_t n = strlen(path);
  o->gz = n > 3 && !strcmp(path + n - 3, ".gz");
  o->f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
  if (!o->f) {
    nct_error("%s: cannot write: %s", path, strerror(errno));
    free(o->path);
    free(o);
    return NULL;
  }
  if (o->gz) {
    if (deflateInit2(&o->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) BUG("deflateInit2 failed");
    o->zbuf = xmalloc(OUT_BUF);
  }
  o->buf = xmalloc(OUT_BUF);
  return o;
}

void out_write(Output *o, const void *p, size_t n) {
  if (o->len + n > OUT_BUF) drain(o);
  if (n > OUT_BUF) {
    if (o->gz) deflate_some(o, p, n, Z_NO_FLUSH);
    else flush_plain(o, p, n);
    return;
  }
  memcpy(o->buf + o->len, p, n);
  o->len += n;
}

void out_puts(Output *o, const char *s) { out_write(o, s, strlen(s)); }

int out_close(Output *o) {
  drain(o);
  if (o->gz) {
    deflate_some(o, "", 0, Z_FINISH);
    deflateEnd(&o->z);
  }
  if (o->f != stdout) {
    if (fclose(o->f) != 0) o->failed = true;
  } else if (fflush(o->f) != 0) {
    o->failed = true;
  }
  int rc = o->failed ? nct_error("%s: write failed", o->path) : 0;
  free(o->path);
  free(o->zbuf);
  free(o->buf);
  free(o);
  return rc;
}

int out_write_file(const char *path, const Buf *b) {
  Output *o = out_open(path);
  if (!o) return -1;
  out_write(o, b->s, b->len);
  return out_close(o);
}
