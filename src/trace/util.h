/* util: the growable array, the string builder, a string interner and the
 * error reporter used by every part of nctrace (copied in spirit from
 * src/rewrite/util.h; nctrace shares no code with the rewriter).
 *
 * Ownership: a Buf owns its bytes; VEC arrays own their element storage;
 * an Intern table owns every string it hands out (valid until intern_free).
 * xmalloc and friends never return NULL: running out of memory ends the
 * process with a message (nctrace is a command-line tool). */
#ifndef NCT_UTIL_H
#define NCT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#define BUG(...) nct_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void nct_bug(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Print "nctrace: error: ..." and return -1, so callers write
 * `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set on a thread whose errors must not be printed (a speculative reader:
 * whoever redoes its work reports them). */
extern __thread bool nct_silent;
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
  char *s; /* NUL-terminated while cap > 0 */
  size_t len, cap;
} Buf;

void buf_reserve(Buf *b, size_t extra);
void buf_add(Buf *b, const void *p, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_putc(Buf *b, char c);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(Buf *b);
/* Append s as a JSON string literal (quotes included). */
void buf_json_str(Buf *b, const char *s);
/* Append s with &, <, >, " escaped for HTML. */
void buf_html(Buf *b, const char *s);
/* Append a nanosecond figure as milliseconds or microseconds with three
 * decimals, rounded half away from zero. Integer arithmetic only, so the
 * text is the same on every machine. */
void buf_ms(Buf *b, int64_t ns);
void buf_us(Buf *b, int64_t ns);

uint64_t hash_bytes(const void *p, size_t n);

/* String interner: equal byte strings get the same id (0, 1, 2, ...).
 * Strings are stored NUL-terminated; intern_str(t, id) is valid until
 * intern_free. */
typedef struct {
  uint32_t *slots;   /* id+1, 0 = empty */
  size_t nslots;
  VEC(uint32_t) off; /* offset of each string in `bytes` */
  VEC(uint32_t) len;
  VEC(uint32_t) hash;
  Buf bytes;
} Intern;

uint32_t intern(Intern *t, const char *s, size_t n);
/* -1 when absent. */
int64_t intern_find(const Intern *t, const char *s, size_t n);
static inline const char *intern_str(const Intern *t, uint32_t id) {
  return t->bytes.s + t->off.v[id];
}
static inline size_t intern_count(const Intern *t) { return t->off.n; }
void intern_free(Intern *t);

/* Int64 -> int64 hash map (open addressing); keys must not be INT64_MIN. */
typedef struct {
  int64_t *keys, *vals;
  size_t cap, n;
} I64Map;

void i64map_put(I64Map *m, int64_t key, int64_t val);
/* Adds to the value (0 when absent). */
void i64map_add(I64Map *m, int64_t key, int64_t val);
bool i64map_get(const I64Map *m, int64_t key, int64_t *val);
void i64map_free(I64Map *m);

/* Correlation id -> value. Kineto's correlation ids are dense (1..N), so a
 * plain array indexed by id - min is used when the ids are dense enough
 * (cache-friendly; a hash map costs a cache miss per lookup at millions of
 * launches); otherwise it falls back to an I64Map. Build with corrmap_init
 * over the ids that will be stored. Values must not be INT64_MIN. */
typedef struct {
  bool dense;
  int64_t lo;
  size_t n;
  int64_t *v;
  I64Map map;
} CorrMap;

void corrmap_init(CorrMap *c, int64_t lo, int64_t hi, size_t count);
void corrmap_put(CorrMap *c, int64_t key, int64_t val);
void corrmap_add(CorrMap *c, int64_t key, int64_t val);
bool corrmap_get(const CorrMap *c, int64_t key, int64_t *val);
void corrmap_free(CorrMap *c);

#endif
