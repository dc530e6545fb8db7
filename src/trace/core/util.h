/* util: the string interner, the hash maps, figure formatting and the error
 * reporter used by every part of nctrace, on top of ncbase.h (allocation,
 * VEC, Buf, BUG; shared with the rewriter).
 *
 * Ownership: an Intern table owns every string it hands out (valid until
 * intern_free). */
#ifndef NCT_UTIL_H
#define NCT_UTIL_H

#include "ncbase.h"

/* The trace core (util, reader, inflate) never prints: its errors and
 * warnings go to nct_say, which the program sets (nctrace: after erasing
 * its progress bar, "nctrace: error: ..."; ncrewrite's tracescan speaks as
 * ncrewrite). `where` is a position ("file:line:col") or NULL for the
 * program's name; `level` "error", "warning" or NULL (a note); NULL
 * nct_say: not shown. */
extern void (*nct_say)(const char *level, const char *where, const char *msg);
/* Report an error and return -1, so callers write `return nct_error(...)`. */
int nct_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void nct_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A note with no level ("nctrace: <msg>"): what NCTRACE_SPLIT_REPORT asks for. */
void nct_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same at a position. */
void nct_vsay(const char *level, const char *where, const char *fmt, va_list ap);
/* Set on a thread whose errors must not be reported (a speculative reader:
 * whoever redoes its work reports them). */
extern __thread bool nct_silent;
/* Set on a worker thread: its messages are kept there (in order), for
 * nct_replay to say once the threads are joined, so that what two threads
 * say comes out in the order one thread would have said it. */
extern __thread Buf *nct_capture;
void nct_replay(const Buf *b);

/* Append s with &, <, >, " escaped for HTML. */
void buf_html(Buf *b, const char *s);
/* Append a nanosecond figure as milliseconds or microseconds with three
 * decimals, rounded half away from zero. Integer arithmetic only, so the
 * text is the same on every machine. */
void buf_ms(Buf *b, int64_t ns);
void buf_us(Buf *b, int64_t ns);
/* A count as written on a command line: decimal digits only, no sign, no
 * overflow; false otherwise. */
bool parse_count(const char *s, size_t *out);

/* Does name hold any of words (NULL-terminated, lower case) as a
 * substring, ignoring case (the first 255 bytes of name)? */
bool name_has_any(const char *name, const char *const *words);

uint64_t hash_bytes(const void *p, size_t n);

/* a + b, held at INT64_MAX / INT64_MIN rather than overflowing: figures
 * summed over ranks, streams and merged partial summaries (partial.h)
 * that someone else's file may have made huge */
static inline int64_t i64_sat(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
/* a * k (k >= 0), held the same way */
static inline int64_t i64_sat_mul(int64_t a, int64_t k) {
  int64_t r;
  return __builtin_mul_overflow(a, k, &r) ? (a > 0 ? INT64_MAX : INT64_MIN) : r;
}

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
