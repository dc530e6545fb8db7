/* util: allocation, growable strings, file reading, hashing, globbing. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static _Noreturn void oom(size_t n) {
  fprintf(stderr, "ncrewrite: out of memory (%zu bytes)\n", n);
  exit(2);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom(n);
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) oom(n * size);
  return p;
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) oom(n);
  return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n) {
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *xasprintf(const char *fmt, ...) {
  Buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  return buf_steal(&b);
}

_Noreturn void nc_bug(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "ncrewrite: internal error at %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

void buf_reserve(Buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  b->s = xrealloc(b->s, cap);
  b->cap = cap;
}

void buf_add(Buf *b, const void *p, size_t n) {
  buf_reserve(b, n);
  if (n) memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = 0;
}

void buf_puts(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

void buf_putc(Buf *b, char c) { buf_add(b, &c, 1); }

void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) BUG("bad format");
  buf_reserve(b, (size_t)n);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void buf_free(Buf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}

void buf_json_string(Buf *b, const char *s) {
  buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') buf_putc(b, '\\'), buf_putc(b, (char)*p);
    else if (*p == '\n') buf_puts(b, "\\n");
    else if (*p == '\t') buf_puts(b, "\\t");
    else if (*p == '\r') buf_puts(b, "\\r");
    else if (*p < 0x20) buf_printf(b, "\\u%04x", *p);
    else buf_putc(b, (char)*p);
  }
  buf_putc(b, '"');
}

char *buf_steal(Buf *b) {
  if (!b->s) buf_reserve(b, 0), b->s[0] = 0;
  char *s = b->s;
  b->s = NULL;
  b->len = b->cap = 0;
  return s;
}

int read_file(const char *path, char **out, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) < 0) goto fail;
  if (S_ISDIR(st.st_mode)) { errno = EISDIR; goto fail; }
  size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
  char *p = xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) p = xrealloc(p, cap *= 2);
    ssize_t r = read(fd, p + n, cap - n - 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      free(p);
      goto fail;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  p[n] = 0;
  *out = p;
  *len = n;
  return 0;
fail:;
  int e = errno;
  close(fd);
  errno = e;
  return -1;
}

uint64_t hash64(const void *p, size_t n, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull ^ seed;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
    s += 8;
    n -= 8;
  }
  while (n--) h = (h ^ *s++) * 1099511628211ull;
  h ^= h >> 32;
  return h;
}

bool glob_match(const char *pat, const char *s) { return fnmatch(pat, s, 0) == 0; }

bool has_glob_chars(const char *s) { return strpbrk(s, "*?[") != NULL; }

char *module_of_path(const char *rel) {
  size_t n = strlen(rel);
  if (n > 3 && !strcmp(rel + n - 3, ".py")) n -= 3;
  else if (n > 4 && !strcmp(rel + n - 4, ".pyw")) n -= 4;
  char *m = xstrndup(rel, n);
  for (char *p = m; *p; p++)
    if (*p == '/') *p = '.';
  size_t ml = strlen(m);
  if (ml >= 9 && !strcmp(m + ml - 9, ".__init__")) m[ml - 9] = 0;
  return m;
}
