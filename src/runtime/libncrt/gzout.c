/* gzout.c: one gzip stream with a byte buffer in front (Gz, writer.h).
 * Raw deflate between a gzip header and trailer written here, CRC-32 and
 * length kept as the bytes go in: one gzip member (Perfetto reads only the
 * first), which a finalizer can go on with after a sync flush (finalize.c,
 * resume_file). The puts of JSON text are inline in writer.h.
 *
 * A plain Gz (gz_open_for a Perfetto trace) writes its bytes as they are;
 * a capture (gz_capture) keeps them in memory, for a piece of JSON that a
 * packet wraps (perfetto.c).
 *
 * Contract: the first error stays in g->err and stops the compression;
 * the caller checks it once, at the end. No lock, no global state. */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

/* A capture's bytes to its memory (gz_capture) */
static void keep(Gz *g) {
  if (g->memn + g->n + 1 > g->memcap) {
    size_t cap = g->memcap ? g->memcap : 1 << 16;
    while (cap < g->memn + g->n + 1) cap *= 2;
    char *m = realloc(g->mem, cap);
    if (!m) {
      g->err = ENOMEM;
      return;
    }
    g->mem = m;
    g->memcap = cap;
  }
  memcpy(g->mem + g->memn, g->buf, g->n);
  g->memn += g->n;
  g->mem[g->memn] = 0;
}

void gz_drain(Gz *g, int mode) {
  if (g->err) { /* the file is lost already: stop compressing */
    g->n = 0;
    return;
  }
  if (g->plain) {
    if (g->fd < 0) keep(g);
    else g->err = write_all(g->fd, g->buf, g->n);
    g->n = 0;
    return;
  }
  g->crc = (uint32_t)crc32(g->crc, (const unsigned char *)g->buf, (uInt)g->n);
  g->len += (uint32_t)g->n;
  g->z.next_in = (unsigned char *)g->buf;
  g->z.avail_in = (uInt)g->n;
  do {
    g->z.next_out = g->out;
    g->z.avail_out = sizeof g->out;
    if (deflate(&g->z, mode) == Z_STREAM_ERROR) g->err = EINVAL;
    size_t have = sizeof g->out - g->z.avail_out;
    if (have && !g->err) g->err = write_all(g->fd, g->out, have);
  } while (g->z.avail_out == 0);
  g->n = 0;
}

int gz_open(Gz *g, int fd, int level) {
  static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  g->fd = fd;
  g->crc = (uint32_t)crc32(0, NULL, 0);
  if (deflateInit2(&g->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return ENOMEM;
  return write_all(fd, hdr, sizeof hdr);
}

int gz_open_for(Gz *g, int fd, int level, int format) {
  if (format != TRACE_PERFETTO) return gz_open(g, fd, level);
  g->fd = fd;
  g->plain = 1;
  return 0;
}

void gz_capture(Gz *g) {
  g->fd = -1;
  g->plain = 1;
}

void gz_finish(Gz *g) {
  if (g->plain) {
    gz_drain(g, Z_FINISH);
    return;
  }
  gz_drain(g, Z_FINISH);
  deflateEnd(&g->z);
  unsigned char t[8];
  for (int i = 0; i < 4; i++) {
    t[i] = (unsigned char)(g->crc >> (8 * i));
    t[4 + i] = (unsigned char)(g->len >> (8 * i));
  }
  if (!g->err) g->err = write_all(g->fd, t, 8);
}

void put_jstr(Gz *g, const char *s) {
  need(g, 2);
  g->buf[g->n++] = '"';
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    need(g, 8);
    if (*p == '"' || *p == '\\') {
      g->buf[g->n++] = '\\';
      g->buf[g->n++] = (char)*p;
    } else if (*p < 0x20) {
      g->n += (size_t)snprintf(g->buf + g->n, 8, "\\u%04x", *p);
    } else {
      g->buf[g->n++] = (char)*p;
    }
  }
  need(g, 1);
  g->buf[g->n++] = '"';
}
