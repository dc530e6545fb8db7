/* ncbase: allocation, the string builder, the internal-error abort. */
#include "ncbase.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* the command's own name, so one library speaks as ncrewrite or nctrace */
static const char *prog(void) { return program_invocation_short_name; }

static NcFatalHandler fatal_handler;
static void *fatal_ctx;

void nc_set_fatal_handler(NcFatalHandler h, void *ctx) {
  fatal_ctx = ctx;
  fatal_handler = h;
}

/* the host's handler, with the message (a fixed buffer: memory may be out) */
static void to_handler(const char *fmt, ...) {
  if (!fatal_handler) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fatal_handler(msg, fatal_ctx);
}

static _Noreturn void oom(size_t n) {
  to_handler("out of memory (%zu bytes)", n);
  fprintf(stderr, "%s: out of memory (%zu bytes)\n", prog(), n);
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
  if (fatal_handler) {
    char what[400];
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    to_handler("internal error at %s:%d: %s", file, line, what);
  }
  fprintf(stderr, "%s: internal error at %s:%d: ", prog(), file, line);
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

void buf_putc(Buf *b, char c) {
  buf_reserve(b, 1);
  b->s[b->len++] = c;
  b->s[b->len] = 0;
}

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

static size_t edit_distance(const char *a, const char *b, size_t cap) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return cap + 1;
  size_t d[65][65];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
        c = d[i - 2][j - 2] + 1;
      d[i][j] = c;
    }
  return d[la][lb];
}

const char *nearest_word(const char *word, const char *const *cands, size_t n) {
  size_t len = strlen(word), limit = len / 3;
  if (limit < 1) limit = 1;
  if (limit > 3) limit = 3;
  const char *best = NULL;
  size_t bd = limit + 1;
  for (size_t i = 0; i < n; i++) {
    if (!cands[i] || !strcmp(cands[i], word)) continue;
    size_t k = edit_distance(word, cands[i], limit);
    if (k < bd) bd = k, best = cands[i];
  }
  return best;
}

uint64_t fnv1a64(const void *p, size_t n) {
  const unsigned char *c = p;
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}
