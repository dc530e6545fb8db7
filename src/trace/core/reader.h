/* reader: a streaming reader for Chrome-trace files.
 *
 * Why our own scanner and not a library: the traces are one big array of
 * small flat objects, and every command needs the raw bytes of each event
 * (filter and merge copy them through unchanged) plus a handful of fields.
 * A pull scanner over a sliding window gives both without copying: each
 * event is scanned in place, its members are handed out as (key, raw value)
 * spans into the window, and the window only ever holds the event being
 * read. An event that straddles the end of the window is rescanned after a
 * refill (events are a few hundred bytes, so this costs nothing). The
 * scanner validates full JSON syntax (strings, escapes, numbers, nesting)
 * and reports errors as file:line:col. gzip input is read with zlib's gz*
 * interface, which also reads plain files, so .json and .json.gz are the
 * same code path; a truncated or corrupt gzip stream is an error.
 *
 * Layouts: an object with "traceEvents": [...] (Kineto, ncrt) or a bare
 * array of events (torch's legacy exporter); a Perfetto protobuf trace is
 * read as the JSON it stands for (pbread.h). Members other than traceEvents
 * go to on_header with their raw value.
 *
 * Ownership: spans handed to callbacks are valid only during the call. */
#ifndef NCT_READER_H
#define NCT_READER_H

#include "pbread.h"
#include "util.h"

typedef struct {
  const char *s; /* raw JSON text (strings keep their quotes) */
  size_t n;
} Span;

typedef struct {
  Span key; /* key content without quotes, escapes not decoded */
  Span val;
} Member;

typedef VEC(Member) MemberVec;
typedef struct Walker Walker;



typedef struct {
  /* Both return 0 to go on, -1 to stop (after reporting). */
  int (*on_header)(void *ctx, Walker *w, Span key, Span val);
  int (*on_event)(void *ctx, Walker *w, const Member *m, size_t n, Span raw);
  void *ctx;
  /* A split load reached the first event at or after split_at (exact: at
   * it, after `events` events). Return true to stop there: another reader
   * has the rest. Optional (NULL: never stop). */
  bool (*on_split)(void *ctx, bool exact, uint64_t events);
  /* A binary trace's range or mark, handed over without its JSON text
   * (optional: NULL, and such events come as JSON text to on_event, which
   * filter and merge need to copy them) */
  int (*on_direct)(void *ctx, Walker *w, const DirectEv *e);
} Visitor;

/* May a read use a second thread? Not with NCTRACE_THREADS=1 or on one
 * core. */
bool trace_second_thread(void);
/* Set on a thread that is itself one of several reading at once (partial.h):
 * it reads on its own, without a second thread. */
extern __thread bool trace_one_thread;
/* A split load of a plain file: trace_walk_split stops at the event
 * starting at byte split_at if on_split agrees; trace_walk_from reads the
 * events from that byte to the end (and the top-level members after them). */
int trace_walk_split(const char *path, const Visitor *v, bool *legacy, uint64_t split_at);
int trace_walk_from(const char *path, const Visitor *v, uint64_t offset);
/* Reads the whole file, calling the visitor; 0 or -1 (error reported).
 * *legacy is set when the file is a bare array of events. */
int trace_walk(const char *path, const Visitor *v, bool *legacy);

/* A Perfetto protobuf trace (pbread.h): read as the JSON it stands for,
 * never split. */
bool trace_is_perfetto(const char *path);

/* The traces of a run directory (what ncrun prints): every *.trace.json,
 * *.trace.json.gz and *.pftrace(.gz) in it, ranks in order (ncrun's "-rankN", then the
 * name). Returns their count (> 0) and malloc'ed paths in *out (each and
 * the array freed by the caller), or -1 (reported: unreadable, or no
 * trace in it). */
int trace_dir_files(const char *dir, char ***out);
/* That order, of two file names (no directory): <0, 0, >0. */
int trace_name_cmp(const char *a, const char *b);

/* Report an error at a position inside a span handed to a callback:
 * prints "path:line:col: error: msg" and returns -1. */
/* The progress bar a reader drives while it reads a file (nctrace sets its
 * terminal bar; NULL: none). The reader itself never draws. */
typedef struct {
  void (*begin)(const char *path, uint64_t size);
  void (*update)(uint64_t done);
  void (*clear)(void);
} NctProgress;
extern const NctProgress *nct_progress;

int walk_error(Walker *w, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same position as text "path:line:col" (in a static buffer). */
const char *walk_where(Walker *w, const char *at);
/* Members of the current event's "args" object (n = 0 if none), found in
 * the same pass as the event's own members. */
const Member *walk_args(const Walker *w, size_t *n);
/* Index of the current event in traceEvents. */
uint64_t walk_ordinal(const Walker *w);

/* Value helpers on complete, already validated spans. */
bool span_eq(Span s, const char *lit);
/* A JSON string's content: points into the span when it has no escapes,
 * else decoded into tmp (UTF-8). false when the value is not a string. */
bool span_string(Span v, Buf *tmp, Span *out);
/* A JSON number in microseconds, as integer nanoseconds (rounded to the
 * nearest ns). false when not a number or out of range. */
bool span_us_to_ns(Span v, int64_t *ns);
/* A JSON integer (a number with an integral value). */
bool span_int(Span v, int64_t *out);
/* A JSON number as double. */
bool span_double(Span v, double *out);

/* Iterate the members of an object span: returns false at the end. */
typedef struct {
  const char *p, *end;
} ObjIter;
bool obj_iter_init(ObjIter *it, Span obj);
bool obj_iter_next(ObjIter *it, Member *m);
/* Iterate the elements of an array span (the same ObjIter): false at the end. */
bool arr_iter_init(ObjIter *it, Span arr);
bool arr_iter_next(ObjIter *it, Span *elem);

#endif
