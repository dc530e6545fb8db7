/* reader: sliding-window JSON scanner for Chrome traces (see reader.h). */
#include "reader.h"

const NctProgress *nct_progress;
#include "inflate.h"
#include "pbread.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum { SCAN_OK, SCAN_MORE, SCAN_ERR };
/* MAX_WINDOW bounds one event (or one header value): the window doubles to
 * hold it, and a gzip bomb's one huge string would take the memory
 * (docs/reliability.md, "Hostile input") */
enum { MAX_DEPTH = 256, INIT_WINDOW = 4 << 20, MAX_WINDOW = 64 << 20 };

struct Walker {
  const char *path;
  gzFile gz;
  Inflater *inf;       /* a gzip input's inflating thread (inflate.c), or NULL */
  PbRead *pb;          /* a Perfetto trace, read as the JSON it stands for (pbread.h), or NULL */
  char *buf;
  size_t cap;
  const char *p, *end; /* unread window [p, end) inside buf */
  bool eof;
  uint64_t dropped;      /* bytes dropped from the window so far */
  uint64_t ordinal;
  /* scan status */
  int st;
  const char *err_at;
  const char *err_msg;
  MemberVec members;
  MemberVec args; /* members of the current event's "args" object */
  Buf keybuf;
  /* a split load (trace_walk with split_at): the events from split_at on
   * are another thread's */
  uint64_t split_at;
  bool progress; /* this reader draws the progress bar (not a split's second half) */
};

static const char *fail(Walker *w, const char *at, const char *msg) {
  w->st = SCAN_ERR;
  w->err_at = at;
  w->err_msg = msg;
  return NULL;
}

static const char *more(Walker *w) {
  w->st = SCAN_MORE;
  return NULL;
}

/* Line and column of a byte offset: counted only when an error is
 * reported, by reading the file again (counting newlines while scanning
 * would cost more than the scan itself). */
static void position(Walker *w, const char *at, uint64_t *line, uint64_t *col) {
  uint64_t off = w->dropped + (uint64_t)(at - w->buf), l = 1, c = 1, done = 0;
  gzFile g = gzopen(w->path, "rb");
  char chunk[1 << 16];
  while (g && done < off) {
    uint64_t want = off - done < sizeof chunk ? off - done : sizeof chunk;
    int got = gzread(g, chunk, (unsigned)want);
    if (got <= 0) break;
    for (int i = 0; i < got; i++) {
      if (chunk[i] == '\n') {
        l++;
        c = 1;
      } else {
        c++;
      }
    }
    done += (uint64_t)got;
  }
  if (g) gzclose(g);
  *line = l;
  *col = c;
}

const char *walk_where(Walker *w, const char *at) {
  static __thread char text[4096];
  if (!at) at = w->p; /* where the walk is */
  if (w->pb) { /* no line in a binary file: the place in the JSON it stands for */
    snprintf(text, sizeof text, "%s: (its JSON, byte %llu)", w->path,
             (unsigned long long)(w->dropped + (uint64_t)(at - w->buf)));
    return text;
  }
  uint64_t line, col;
  position(w, at, &line, &col);
  snprintf(text, sizeof text, "%s:%llu:%llu", w->path, (unsigned long long)line,
           (unsigned long long)col);
  return text;
}

int walk_error(Walker *w, const char *at, const char *fmt, ...) {
  if (nct_silent) return -1;
  va_list ap;
  va_start(ap, fmt);
  nct_vsay("error", walk_where(w, at), fmt, ap);
  va_end(ap);
  return -1;
}

uint64_t walk_ordinal(const Walker *w) { return w->ordinal; }

const Member *walk_args(const Walker *w, size_t *n) {
  *n = w->args.n;
  return w->args.v;
}

/* Keep [p, end), drop the rest, read more. 0, or -1 on a read error. */
static int refill(Walker *w) {
  if (w->p == w->buf && (size_t)(w->end - w->p) == w->cap && w->cap >= MAX_WINDOW)
    return walk_error(w, w->p, "an event or value of more than %d MiB (the reader's limit)", MAX_WINDOW >> 20);
  w->dropped += (uint64_t)(w->p - w->buf);
  size_t keep = (size_t)(w->end - w->p);
  if (keep && w->p != w->buf) memmove(w->buf, w->p, keep);
  /* more than half the window is one unscanned event: double it now, not
   * once it is full (each refill rescans the event: reading a few MiB
   * at a time, a 60 MiB one was rescanned fifteen times) */
  if (keep == w->cap || (keep > w->cap / 2 && w->cap < MAX_WINDOW)) {
    w->cap *= 2;
    w->buf = xrealloc(w->buf, w->cap);
  }
  w->p = w->buf;
  w->end = w->buf + keep;
  size_t room = w->cap - keep;
  if (room > (1u << 30)) room = 1u << 30;
  int got, zerr = Z_OK;
  const char *zmsg;
  uint64_t zoff;
  if (w->pb) {
    long k = pbread_read(w->pb, w->buf + keep, room);
    if (k < 0) return -1; /* reported */
    got = (int)k;
    zmsg = "";
    zoff = pbread_offset(w->pb);
  } else if (w->inf) {
    got = inflater_read(w->inf, w->buf + keep, room, &zerr, &zmsg, &zoff);
  } else {
    got = gzread(w->gz, w->buf + keep, (unsigned)room);
    zmsg = gzerror(w->gz, &zerr);
    zoff = (uint64_t)gzoffset(w->gz);
  }
  if (got < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR)) {
    if (zerr == Z_ERRNO) return nct_error("%s: read failed: %s", w->path, strerror(errno));
    size_t pl = strlen(w->path); /* zlib prefixes the message with the path */
    if (!strncmp(zmsg, w->path, pl) && !strncmp(zmsg + pl, ": ", 2)) zmsg += pl + 2;
    return nct_error("%s: corrupt gzip data: %s", w->path, zmsg);
  }
  if (got == 0) {
    if (zerr == Z_BUF_ERROR)
      return nct_error("%s: truncated gzip stream (unexpected end of file after %llu bytes)", w->path,
                   (unsigned long long)(w->dropped + (uint64_t)(w->end - w->buf)));
    w->eof = true;
  }
  w->end += got;
  if (w->progress && nct_progress) nct_progress->update(zoff);
  return 0;
}

static inline const char *skip_ws(const char *p, const char *end) {
  if (p < end && (unsigned char)*p > ' ') return p; /* compact JSON: usually no blank */
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  return p;
}

/* Bytes that end the fast part of a string: '"', '\\' and controls. */
static unsigned char STR_STOP[256];
static void init_tables(void) {
  for (int c = 0; c < 0x20; c++) STR_STOP[c] = 1;
  STR_STOP['"'] = STR_STOP['\\'] = 1;
}

/* p at '"'; returns the byte after the closing quote. Inlined: its
 * prologue was a third of its cost on the short keys of every event
 * (callgrind). */
static inline __attribute__((always_inline)) const char *scan_string(Walker *w, const char *p,
                                                                     const char *end) {
  const char *start = p++;
  for (;;) {
#ifdef __SSE2__
    /* 16 bytes at a time: stop at '"', '\\' or a byte below 0x20 */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
    while (end - p >= 16) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
      __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                 _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
      int mask = _mm_movemask_epi8(hit);
      if (mask) {
        p += __builtin_ctz((unsigned)mask);
        goto stop;
      }
      p += 16;
    }
#endif
    while (end - p >= 4) {
      if (STR_STOP[(unsigned char)p[0]]) goto stop;
      if (STR_STOP[(unsigned char)p[1]]) { p += 1; goto stop; }
      if (STR_STOP[(unsigned char)p[2]]) { p += 2; goto stop; }
      if (STR_STOP[(unsigned char)p[3]]) { p += 3; goto stop; }
      p += 4;
    }
    while (p < end && !STR_STOP[(unsigned char)*p]) p++;
  stop:
    if (p >= end) return w->eof ? fail(w, start, "unterminated string") : more(w);
    if (*p == '"') return p + 1;
    if ((unsigned char)*p < 0x20) return fail(w, p, "control character inside a string");
    /* backslash */
    if (p + 1 >= end) return w->eof ? fail(w, start, "unterminated string") : more(w);
    char e = p[1];
    if (e == 'u') {
      if (p + 6 > end) return w->eof ? fail(w, start, "unterminated string") : more(w);
      for (int i = 2; i < 6; i++) {
        char h = p[i];
        if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
          return fail(w, p, "bad \\u escape");
      }
      p += 6;
    } else if (e && strchr("\"\\/bfnrt", e)) {
      p += 2;
    } else {
      return fail(w, p, "bad escape in string");
    }
  }
}

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

static inline bool is_num_byte(char c) {
  return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static const char *scan_number(Walker *w, const char *p, const char *end) {
  const char *start = p;
  /* one pass for the usual case: a valid number followed, inside the
   * window, by a byte that cannot continue one; anything else (an invalid
   * number, the window's end) takes the two passes below, which decide
   * and report exactly as before */
  const char *f = p;
  if (f < end && *f == '-') f++;
  if (f < end && is_digit(*f)) {
    if (*f == '0') f++;
    else while (f < end && is_digit(*f)) f++;
    bool ok = true;
    if (f < end && *f == '.') {
      f++;
      ok = f < end && is_digit(*f);
      while (f < end && is_digit(*f)) f++;
    }
    if (ok && f < end && (*f == 'e' || *f == 'E')) {
      f++;
      if (f < end && (*f == '+' || *f == '-')) f++;
      ok = f < end && is_digit(*f);
      while (f < end && is_digit(*f)) f++;
    }
    if (ok && f < end && !is_num_byte(*f)) return f;
  }
  const char *q = p;
  while (q < end && is_num_byte(*q)) q++;
  if (q == end && !w->eof) return more(w);
  /* validate -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? over [start, q) */
  const char *s = start;
  if (s < q && *s == '-') s++;
  if (s >= q || !is_digit(*s)) return fail(w, start, "bad number");
  if (*s == '0') s++;
  else while (s < q && is_digit(*s)) s++;
  if (s < q && *s == '.') {
    s++;
    if (s >= q || !is_digit(*s)) return fail(w, start, "bad number");
    while (s < q && is_digit(*s)) s++;
  }
  if (s < q && (*s == 'e' || *s == 'E')) {
    s++;
    if (s < q && (*s == '+' || *s == '-')) s++;
    if (s >= q || !is_digit(*s)) return fail(w, start, "bad number");
    while (s < q && is_digit(*s)) s++;
  }
  if (s != q) return fail(w, start, "bad number");
  return q;
}

static const char *scan_value(Walker *w, const char *p, const char *end, int depth);

static const char *scan_literal(Walker *w, const char *p, const char *end, const char *lit) {
  size_t n = strlen(lit);
  size_t have = (size_t)(end - p);
  if (memcmp(p, lit, have < n ? have : n) != 0) return fail(w, p, "unexpected character");
  if (have < n) return w->eof ? fail(w, p, "unexpected end of input") : more(w);
  return p + n;
}

static const char *eoi(Walker *w, const char *at) {
  return w->eof ? fail(w, at, "unexpected end of input (is the file truncated?)") : more(w);
}

/* p at '{' or '['. Members go to out when it is non-NULL (objects only);
 * those of an "args" object member go to args_out in the same pass. */
static const char *scan_container(Walker *w, const char *p, const char *end, int depth, MemberVec *out,
                                  MemberVec *args_out) {
  if (depth > MAX_DEPTH) return fail(w, p, "nesting too deep");
  char close = *p == '{' ? '}' : ']';
  bool obj = *p == '{';
  const char *open = p;
  p = skip_ws(p + 1, end);
  if (p >= end) return eoi(w, open);
  if (*p == close) return p + 1;
  for (;;) {
    Member m = {{0, 0}, {0, 0}};
    if (obj) {
      if (*p != '"') return fail(w, p, "expected a string key");
      const char *k = p;
      p = scan_string(w, p, end);
      if (!p) return NULL;
      m.key.s = k + 1;
      m.key.n = (size_t)(p - k - 2);
      p = skip_ws(p, end);
      if (p >= end) return eoi(w, open);
      if (*p != ':') return fail(w, p, "expected ':'");
      p = skip_ws(p + 1, end);
      if (p >= end) return eoi(w, open);
    }
    const char *v = p;
    if (args_out && *p == '{' && m.key.n == 4 && !memcmp(m.key.s, "args", 4))
      p = scan_container(w, p, end, depth + 1, args_out, NULL);
    else
      p = scan_value(w, p, end, depth + 1);
    if (!p) return NULL;
    if (out) {
      m.val.s = v;
      m.val.n = (size_t)(p - v);
      vec_push(out, m);
    }
    p = skip_ws(p, end);
    if (p >= end) return eoi(w, open);
    if (*p == close) return p + 1;
    if (*p != ',') return fail(w, p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    p = skip_ws(p + 1, end);
    if (p >= end) return eoi(w, open);
  }
}

static const char *scan_value(Walker *w, const char *p, const char *end, int depth) {
  if (p >= end) return eoi(w, p);
  switch (*p) {
  case '"': return scan_string(w, p, end);
  case '{':
  case '[': return scan_container(w, p, end, depth, NULL, NULL);
  case 't': return scan_literal(w, p, end, "true");
  case 'f': return scan_literal(w, p, end, "false");
  case 'n': return scan_literal(w, p, end, "null");
  default:
    if (*p == '-' || is_digit(*p)) return scan_number(w, p, end);
    return fail(w, p, "unexpected character");
  }
}

/* Make sure at least one non-space byte is in the window; false at EOF. */
static int need(Walker *w, bool *have) {
  for (;;) {
    w->p = skip_ws(w->p, w->end);
    if (w->p < w->end) {
      *have = true;
      return 0;
    }
    if (w->eof) {
      *have = false;
      return 0;
    }
    if (refill(w) < 0) return -1;
  }
}

/* Run one restartable unit: fn scans from w->p and returns its end. */
typedef const char *(*UnitFn)(Walker *w, const char *p, const char *end, void *arg);

static const char *run_unit(Walker *w, UnitFn fn, void *arg) {
  for (;;) {
    w->st = SCAN_OK;
    const char *q = fn(w, w->p, w->end, arg);
    if (q) return q;
    if (w->st == SCAN_ERR) {
      walk_error(w, w->err_at, "%s", w->err_msg);
      return NULL;
    }
    if (w->eof) {
      walk_error(w, w->end, "unexpected end of input (is the file truncated?)");
      return NULL;
    }
    if (refill(w) < 0) return NULL;
  }
}

static const char *unit_value(Walker *w, const char *p, const char *end, void *arg) {
  (void)arg;
  return scan_value(w, p, end, 0);
}

static const char *unit_event(Walker *w, const char *p, const char *end, void *arg) {
  (void)arg;
  w->members.n = 0;
  w->args.n = 0;
  if (*p != '{') return fail(w, p, "a trace event must be an object");
  return scan_container(w, p, end, 0, &w->members, &w->args);
}

/* A top-level key, the colon, and the first byte of the value. */
static const char *unit_key(Walker *w, const char *p, const char *end, void *arg) {
  if (*p != '"') return fail(w, p, "expected a string key");
  const char *q = scan_string(w, p, end);
  if (!q) return NULL;
  q = skip_ws(q, end);
  if (q >= end) return eoi(w, p);
  if (*q != ':') return fail(w, q, "expected ':'");
  q = skip_ws(q + 1, end);
  if (q >= end) return eoi(w, p);
  return q;
}

/* 1: the events from here on are another reader's (a split load). */
static int split_here(Walker *w, const Visitor *v) {
  uint64_t at = w->dropped + (uint64_t)(w->p - w->buf);
  if (!w->split_at || at < w->split_at) return 0;
  bool exact = at == w->split_at;
  w->split_at = 0;
  return v->on_split && v->on_split(v->ctx, exact, w->ordinal) ? 1 : 0;
}

/* 0 at the array's end, 1 when a split load hands the rest over, -1. */
static int walk_events(Walker *w, const Visitor *v) {
  /* w->p is just past '[' (or at an element, for a split load's second half) */
  bool have;
  if (need(w, &have) < 0) return -1;
  if (!have) return walk_error(w, w->p, "unexpected end of input inside traceEvents");
  if (*w->p == ']') {
    w->p++;
    return 0;
  }
  for (;;) {
    if (split_here(w, v)) return 1;
    if (*w->p == '\x01' && w->pb) { /* a binary trace's range, handed over as it is (pbread.h) */
      DirectEv e;
      if (!pbread_pop(w->pb, &e)) return walk_error(w, w->p, "a range with nothing behind it (a bug in pbread)");
      if (v->on_direct(v->ctx, w, &e) < 0) return -1;
      w->ordinal++;
      w->p++;
    } else {
      const char *q = run_unit(w, unit_event, NULL);
      if (!q) return -1;
      Span raw = {w->p, (size_t)(q - w->p)}; /* w->p: the window may have moved */
      if (v->on_event && v->on_event(v->ctx, w, w->members.v, w->members.n, raw) < 0) return -1;
      w->ordinal++;
      w->p = q;
    }
    if (need(w, &have) < 0) return -1;
    if (!have) return walk_error(w, w->p, "unexpected end of input inside traceEvents");
    if (*w->p == ']') {
      w->p++;
      return 0;
    }
    if (*w->p != ',') return walk_error(w, w->p, "expected ',' or ']' after a trace event");
    w->p++;
    if (need(w, &have) < 0) return -1;
    if (!have) return walk_error(w, w->p, "unexpected end of input inside traceEvents");
  }
}

/* The members of the top-level object, from just past '{' (first) or
 * just past a member's value. 1 when a split load hands the rest over. */
static int walk_members(Walker *w, const Visitor *v, bool first, bool *seen_events) {
  bool have;
  for (;;) {
    if (need(w, &have) < 0) return -1;
    if (!have) return walk_error(w, w->p, "unexpected end of input in the top-level object");
    if (*w->p == '}') {
      w->p++;
      return 0;
    }
    if (!first) {
      if (*w->p != ',') return walk_error(w, w->p, "expected ',' or '}'");
      w->p++;
      if (need(w, &have) < 0) return -1;
      if (!have) return walk_error(w, w->p, "unexpected end of input in the top-level object");
    }
    first = false;
    const char *vstart = run_unit(w, unit_key, NULL);
    if (!vstart) return -1;
    Span key = {w->p + 1, 0};
    const char *kq = w->p + 1;
    while (*kq != '"') kq += *kq == '\\' ? 2 : 1;
    key.n = (size_t)(kq - key.s);
    if (span_eq(key, "traceEvents") && *vstart == '[') {
      *seen_events = true;
      w->p = vstart + 1;
      int r = walk_events(w, v);
      if (r) return r;
    } else {
      /* the value may need refills, which move the window: keep a copy
       * of the key */
      w->keybuf.len = 0;
      buf_add(&w->keybuf, key.s, key.n);
      w->p = vstart;
      const char *q = run_unit(w, unit_value, NULL);
      if (!q) return -1;
      Span kc = {w->keybuf.s, w->keybuf.len};
      Span val = {w->p, (size_t)(q - w->p)};
      if (v->on_header && v->on_header(v->ctx, w, kc, val) < 0) return -1;
      w->p = q;
    }
  }
}

static int walk_end(Walker *w) {
  bool have;
  if (need(w, &have) < 0) return -1;
  if (have) return walk_error(w, w->p, "trailing data after the trace");
  return 0;
}

static int walk_top(Walker *w, const Visitor *v, bool *legacy) {
  bool have;
  if (need(w, &have) < 0) return -1;
  if (!have) return nct_error("%s: empty file", w->path);
  int r;
  if (*w->p == '[') {
    *legacy = true;
    w->p++;
    r = walk_events(w, v);
  } else if (*w->p == '{') {
    w->p++;
    bool seen_events = false;
    r = walk_members(w, v, true, &seen_events);
    if (!r && !seen_events) return nct_error("%s: no \"traceEvents\" array: not a Chrome trace", w->path);
  } else {
    return walk_error(w, w->p, "not a Chrome trace: expected '{' or '['");
  }
  if (r) return r < 0 ? -1 : 0; /* split: the rest is checked by its reader */
  return walk_end(w);
}

__thread bool trace_one_thread;

bool trace_second_thread(void) {
  if (trace_one_thread) return false;
  const char *env = getenv("NCTRACE_THREADS");
  return !(env && atoi(env) == 1) && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

/* inflate: gzip input may be inflated on a second thread (not for a split
 * load's second half, which only reads plain files) */
static int walker_open(Walker *w, const char *path, bool inflate) {
  memset(w, 0, sizeof *w);
  w->path = path;
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, init_tables);
  w->gz = gzopen(path, "rb");
  if (!w->gz) return nct_error("%s: cannot open: %s", path, strerror(errno ? errno : ENOMEM));
  struct stat sb;
  uint64_t size = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
  /* a small file, a small window and buffer (the window grows for an event
   * that needs it): a file of 1 MiB or more, or of unknown size, gets the
   * full ones. Small inputs cost what they hold (the fuzzers read
   * thousands a second). */
  size_t window = 64 << 10;
  while (window < INIT_WINDOW && (!size || window < size * 4)) window *= 2;
  gzbuffer(w->gz, window < (1u << 20) ? (unsigned)window : 1u << 20);
  w->progress = !nct_silent && !trace_one_thread; /* one bar: not while several threads read */
  if (w->progress && nct_progress) nct_progress->begin(path, size);
  if (pbread_sniff(w->gz, path)) w->pb = pbread_open(w->gz, path);
  /* gzip of 1 MB or more (some 10 MB of JSON): inflate on a second core */
  else if (inflate && size >= (1u << 20) && !gzdirect(w->gz) && trace_second_thread())
    w->inf = inflater_start(w->gz);
  if (w->inf && getenv("NCTRACE_SPLIT_REPORT")) nct_note("%s inflated on a second thread", path);
  w->cap = window;
  w->buf = xmalloc(w->cap);
  w->p = w->end = w->buf;
  return 0;
}

static void walker_close(Walker *w) {
  if (w->progress && nct_progress) nct_progress->clear();
  inflater_stop(w->inf);
  pbread_close(w->pb);
  gzclose(w->gz);
  free(w->buf);
  vec_free(&w->members);
  vec_free(&w->args);
  buf_free(&w->keybuf);
}

int trace_walk_split(const char *path, const Visitor *v, bool *legacy, uint64_t split_at) {
  Walker w;
  *legacy = false;
  if (walker_open(&w, path, true) < 0) return -1;
  if (w.pb && v->on_direct) pbread_direct(w.pb);
  w.split_at = split_at;
  int rc = walk_top(&w, v, legacy);
  walker_close(&w);
  return rc;
}

int trace_walk(const char *path, const Visitor *v, bool *legacy) { return trace_walk_split(path, v, legacy, 0); }

int trace_walk_from(const char *path, const Visitor *v, uint64_t offset) {
  Walker w;
  if (walker_open(&w, path, false) < 0) return -1;
  int rc = -1;
  if (!w.pb && gzdirect(w.gz) && gzseek(w.gz, (z_off_t)offset, SEEK_SET) == (z_off_t)offset) {
    w.dropped = offset;
    bool seen = true;
    rc = walk_events(&w, v);
    if (rc == 0) rc = walk_members(&w, v, false, &seen);
    if (rc == 0) rc = walk_end(&w);
  }
  walker_close(&w);
  return rc < 0 ? -1 : 0;
}

bool trace_is_perfetto(const char *path) {
  gzFile g = gzopen(path, "rb");
  bool pb = g && pbread_sniff(g, path);
  if (g) gzclose(g);
  return pb;
}

/* ---- value helpers ---- */

bool span_eq(Span s, const char *lit) {
  size_t n = strlen(lit);
  return s.n == n && memcmp(s.s, lit, n) == 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

static void put_utf8(Buf *b, uint32_t cp) {
  if (cp < 0x80) {
    buf_putc(b, (char)cp);
  } else if (cp < 0x800) {
    buf_putc(b, (char)(0xC0 | (cp >> 6)));
    buf_putc(b, (char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    buf_putc(b, (char)(0xE0 | (cp >> 12)));
    buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
    buf_putc(b, (char)(0x80 | (cp & 0x3F)));
  } else {
    buf_putc(b, (char)(0xF0 | (cp >> 18)));
    buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
    buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
    buf_putc(b, (char)(0x80 | (cp & 0x3F)));
  }
}

bool span_string(Span v, Buf *tmp, Span *out) {
  if (v.n < 2 || v.s[0] != '"') return false;
  const char *s = v.s + 1, *e = v.s + v.n - 1;
  if (!memchr(s, '\\', (size_t)(e - s))) {
    out->s = s;
    out->n = (size_t)(e - s);
    return true;
  }
  tmp->len = 0;
  buf_reserve(tmp, (size_t)(e - s));
  while (s < e) {
    if (*s != '\\') {
      buf_putc(tmp, *s++);
      continue;
    }
    char c = s[1];
    s += 2;
    switch (c) {
    case 'n': buf_putc(tmp, '\n'); break;
    case 't': buf_putc(tmp, '\t'); break;
    case 'r': buf_putc(tmp, '\r'); break;
    case 'b': buf_putc(tmp, '\b'); break;
    case 'f': buf_putc(tmp, '\f'); break;
    case 'u': {
      uint32_t cp = (uint32_t)(hexval(s[0]) << 12 | hexval(s[1]) << 8 | hexval(s[2]) << 4 | hexval(s[3]));
      s += 4;
      if (cp >= 0xD800 && cp < 0xDC00 && e - s >= 6 && s[0] == '\\' && s[1] == 'u') {
        uint32_t lo = (uint32_t)(hexval(s[2]) << 12 | hexval(s[3]) << 8 | hexval(s[4]) << 4 | hexval(s[5]));
        if (lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          s += 6;
        }
      }
      if (cp == 0) cp = 0xFFFD; /* keep names NUL-free */
      put_utf8(tmp, cp);
      break;
    }
    default: buf_putc(tmp, c); break; /* \" \\ \/ */
    }
  }
  out->s = tmp->s;
  out->n = tmp->len;
  return true;
}

bool span_double(Span v, double *out) {
  if (!v.n || !(v.s[0] == '-' || is_digit(v.s[0]))) return false;
  char tmp[64];
  if (v.n >= sizeof tmp) return false;
  memcpy(tmp, v.s, v.n);
  tmp[v.n] = 0;
  char *endp;
  *out = strtod(tmp, &endp);
  return *endp == 0 && isfinite(*out);
}

bool span_us_to_ns(Span v, int64_t *ns) {
  const char *s = v.s, *e = v.s + v.n;
  if (s >= e) return false;
  bool neg = *s == '-';
  if (neg) s++;
  if (s >= e || !is_digit(*s)) return false;
  uint64_t ip = 0;
  int nd = 0;
  while (s < e && is_digit(*s)) {
    ip = ip * 10 + (uint64_t)(*s++ - '0');
    if (++nd > 16) goto slow;
  }
  if (ip > 9223372036854774ULL) goto slow;
  uint64_t frac = 0;
  int fd = 0;
  bool round_up = false;
  if (s < e && *s == '.') {
    s++;
    while (s < e && is_digit(*s)) {
      if (fd < 3) {
        frac = frac * 10 + (uint64_t)(*s - '0');
        fd++;
      } else if (fd == 3) {
        round_up = *s >= '5';
        fd++;
      }
      s++;
    }
  }
  if (s != e) goto slow; /* exponent */
  while (fd < 3) {
    frac *= 10;
    fd++;
  }
  int64_t r = (int64_t)(ip * 1000 + frac + (round_up ? 1 : 0));
  *ns = neg ? -r : r;
  return true;
slow: {
  double d;
  if (!span_double(v, &d)) return false;
  d *= 1000.0;
  if (!(d > -9.2e18 && d < 9.2e18)) return false;
  *ns = llround(d);
  return true;
}
}

bool span_int(Span v, int64_t *out) {
  const char *s = v.s, *e = v.s + v.n;
  if (s >= e) return false;
  bool neg = *s == '-';
  if (neg) s++;
  if (s >= e) return false;
  uint64_t x = 0;
  int nd = 0;
  while (s < e && is_digit(*s)) {
    if (++nd > 19 || x > (uint64_t)INT64_MAX / 10) return false;
    x = x * 10 + (uint64_t)(*s++ - '0');
    if (x > (uint64_t)INT64_MAX) return false;
  }
  if (s != e) {
    double d;
    if (!span_double(v, &d) || d != floor(d) || fabs(d) > 9e15) return false;
    *out = (int64_t)d;
    return true;
  }
  *out = neg ? -(int64_t)x : (int64_t)x;
  return true;
}

/* Inside the brackets of v, if it opens with `open` */
static bool iter_init(ObjIter *it, Span v, char open) {
  if (v.n < 2 || v.s[0] != open) return false;
  it->p = v.s + 1;
  it->end = v.s + v.n - 1;
  return true;
}

bool obj_iter_init(ObjIter *it, Span obj) { return iter_init(it, obj, '{'); }

bool obj_iter_next(ObjIter *it, Member *m) {
  Walker w = {0};
  w.eof = true;
  const char *p = skip_ws(it->p, it->end);
  if (p < it->end && *p == ',') p = skip_ws(p + 1, it->end);
  if (p >= it->end || *p != '"') return false;
  const char *k = p;
  p = scan_string(&w, p, it->end);
  if (!p) return false;
  m->key.s = k + 1;
  m->key.n = (size_t)(p - k - 2);
  p = skip_ws(p, it->end);
  if (p >= it->end || *p != ':') return false;
  p = skip_ws(p + 1, it->end);
  const char *v = p;
  p = scan_value(&w, p, it->end, 0);
  if (!p) return false;
  m->val.s = v;
  m->val.n = (size_t)(p - v);
  it->p = p;
  return true;
}

bool arr_iter_init(ObjIter *it, Span arr) { return iter_init(it, arr, '['); }

bool arr_iter_next(ObjIter *it, Span *elem) {
  Walker w = {0};
  w.eof = true;
  const char *p = skip_ws(it->p, it->end);
  if (p < it->end && *p == ',') p = skip_ws(p + 1, it->end);
  if (p >= it->end) return false;
  const char *v = p;
  p = scan_value(&w, p, it->end, 0);
  if (!p) return false;
  elem->s = v;
  elem->n = (size_t)(p - v);
  it->p = p;
  return true;
}

/* ---- run directories ---- */

static int trace_name(const struct dirent *d) {
  size_t l = strlen(d->d_name);
  return d->d_name[0] != '.' && ((l > 11 && !strcmp(d->d_name + l - 11, ".trace.json")) ||
                                 (l > 14 && !strcmp(d->d_name + l - 14, ".trace.json.gz")) ||
                                 (l > 8 && !strcmp(d->d_name + l - 8, ".pftrace")) ||
                                 (l > 11 && !strcmp(d->d_name + l - 11, ".pftrace.gz")));
}

static long rank_of(const char *name) {
  const char *r = strstr(name, "-rank");
  return r ? strtol(r + 5, NULL, 10) : -1;
}

int trace_name_cmp(const char *a, const char *b) {
  long x = rank_of(a), y = rank_of(b);
  if (x != y) return x < y ? -1 : 1;
  return strcmp(a, b);
}

static int by_rank(const struct dirent **a, const struct dirent **b) {
  return trace_name_cmp((*a)->d_name, (*b)->d_name);
}

int trace_dir_files(const char *dir, char ***out) {
  struct dirent **list;
  *out = NULL;
  int n = scandir(dir, &list, trace_name, by_rank);
  if (n < 0) return nct_error("%s: %s", dir, strerror(errno));
  if (!n) {
    free(list);
    return nct_error("%s: no trace in this directory (*.trace.json, *.trace.json.gz or *.pftrace)", dir);
  }
  char **v = xmalloc((size_t)n * sizeof *v);
  for (int i = 0; i < n; i++) {
    v[i] = xasprintf("%s/%s", dir, list[i]->d_name);
    free(list[i]);
  }
  free(list);
  *out = v;
  return n;
}
