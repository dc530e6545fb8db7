/* ncbase: what every command-line part of ncrewrite (the rewriter, nctrace,
 * the fuzz targets) builds on: allocation that cannot fail, the one growable
 * array, the one string builder, and the internal-error abort. The runtime
 * (libncrt) does not use it: it runs inside other programs and never exits.
 *
 * Ownership: a Buf owns its bytes (buf_free releases them); VEC arrays own
 * their element storage, not what elements point to. xmalloc and friends
 * never return NULL: running out of memory is reported ("<program>: out of
 * memory") and ends the process with status 2, unless a fatal handler is
 * set (below). */
#ifndef NC_BASE_H
#define NC_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The project's version, printed by --version (CMake's project() sets it). */
#ifndef NC_VERSION
#define NC_VERSION "unknown"
#endif

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Internal invariant broken: abort with file:line (or the fatal handler). */
#define BUG(...) nc_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void nc_bug(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Out of memory and broken invariants, when this code runs inside another
 * program (the compiler core in a Python extension): the handler is called
 * first, with the message ("out of memory (N bytes)", "internal error at
 * F:L: ...") and ctx, from the thread that failed. It must not return (it
 * longjmps back to the host's entry point, as jq's jq_set_nomem_handler
 * lets its host do); if it returns, or none is set, the message goes to
 * stderr and the process ends (status 2, or abort for a bug). One handler
 * per process; NULL removes it. */
typedef void (*NcFatalHandler)(const char *msg, void *ctx);
void nc_set_fatal_handler(NcFatalHandler h, void *ctx);

/* Growable array of T: struct { T *v; size_t n, cap; }. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define vec_grow(a, want) do { \
    if ((want) > (a)->cap) { \
      size_t c_ = (a)->cap ? (a)->cap : 8; \
      while (c_ < (want)) c_ *= 2; \
      (a)->v = xrealloc((a)->v, c_ * sizeof *(a)->v); \
      (a)->cap = c_; \
    } \
  } while (0)
#define vec_push(a, x) do { vec_grow((a), (a)->n + 1); (a)->v[(a)->n++] = (x); } while (0)
#define vec_free(a) do { free((a)->v); (a)->v = NULL; (a)->n = (a)->cap = 0; } while (0)

typedef struct {
  char *s;      /* NUL-terminated while cap > 0 */
  size_t len, cap;
} Buf;

void buf_reserve(Buf *b, size_t extra);
void buf_add(Buf *b, const void *p, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_putc(Buf *b, char c);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
void buf_free(Buf *b);
/* s as a JSON string literal, quotes included (also a YAML double-quoted
 * scalar). */
void buf_json_string(Buf *b, const char *s);
/* Take ownership of the bytes (never NULL); the Buf is reset. */
char *buf_steal(Buf *b);

/* "Did you mean": the candidate nearest to word by edit distance (a swap
 * of two neighbours counts one), if it is within a third of the word's
 * length (at least 1, at most 3) and not word itself; else NULL. */
const char *nearest_word(const char *word, const char *const *cands, size_t n);

/* FNV-1a 64 of n bytes: ncrun records a shadow tree's manifest by it in
 * env.json and drill/prune compare (one definition for both sides). */
uint64_t fnv1a64(const void *p, size_t n);

#endif
