/* util: the one growable array, the one string builder, and small helpers
 * used by every stage of the rewriter.
 *
 * Ownership: a Buf owns its bytes (buf_free releases them); VEC arrays own
 * their element storage, not what elements point to. xmalloc and friends
 * never return NULL: running out of memory is reported and ends the process
 * (the rewriter is a command-line tool, unlike the runtime). */
#ifndef NC_UTIL_H
#define NC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define NC_VERSION "0.1.0"

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Internal invariant broken: abort with file:line. */
#define BUG(...) nc_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void nc_bug(const char *file, int line, const char *fmt, ...);

/* Growable array of T: struct { T *v; size_t n, cap; }. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define vec_push(a, x) do { \
    if ((a)->n == (a)->cap) { \
      (a)->cap = (a)->cap ? (a)->cap * 2 : 8; \
      (a)->v = xrealloc((a)->v, (a)->cap * sizeof *(a)->v); \
    } \
    (a)->v[(a)->n++] = (x); \
  } while (0)
#define vec_free(a) do { free((a)->v); (a)->v = NULL; (a)->n = (a)->cap = 0; } while (0)

typedef struct {
  char *s;      /* NUL-terminated while len < cap */
  size_t len, cap;
} Buf;

void buf_reserve(Buf *b, size_t extra);
void buf_add(Buf *b, const void *p, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_putc(Buf *b, char c);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
void buf_free(Buf *b);
/* s as a JSON string literal (also a YAML double-quoted scalar). */
void buf_json_string(Buf *b, const char *s);
/* Take ownership of the bytes; the Buf is reset. */
char *buf_steal(Buf *b);

/* Whole-file read; returns 0 or -1 with errno set. *out is malloc'ed and
 * NUL-terminated (the NUL is not counted in *len). */
int read_file(const char *path, char **out, size_t *len);

/* 64-bit content hash (FNV-1a over 8-byte words; fast, not cryptographic). */
uint64_t hash64(const void *p, size_t n, uint64_t seed);

/* fnmatch-style glob ('*', '?', '[...]'), where '*' also matches '/' and '.'. */
/* The Python module a relative path names: "pkg/mod.py" -> "pkg.mod",
 * "pkg/__init__.py" -> "pkg" (malloc'ed). */
char *module_of_path(const char *rel);
bool glob_match(const char *pat, const char *s);
bool has_glob_chars(const char *s);

#endif
