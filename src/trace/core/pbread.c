/* pbread: Perfetto protobuf to Kineto JSON (pbread.h). The file is read in
 * blocks; each TracePacket is decoded in place, and what it stands for is
 * appended to an output buffer that pbread_read hands out. */
#include "pbread.h"

#include "util.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IN_BLOCK = 1 << 20, MAX_PACKET = 64 << 20 }; /* a packet is one event or JSON piece: the reader's limit */
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3 };
/* A name given as text is kept to 64 KiB (as the model keeps names), an
 * ncrt kind's text (name and args) to 1 MiB: what a file defines costs
 * what it is worth, not what it says (issue 42) */
enum { MAX_NAME = 64 << 10, MAX_KIND_TEXT = 1 << 20 };

/* n, or less: at most MAX_NAME, cut at a character's start */
static size_t name_len(const uint8_t *s, size_t n) {
  if (n <= MAX_NAME) return n;
  n = MAX_NAME;
  while (n && (s[n] & 0xc0) == 0x80) n--;
  return n;
}
/* A name reference (Open.kind, event's ref): an interned iid (name_iid,
 * below 2^63: a larger one is refused, it would read as a literal), or
 * LITERAL | the id of a name given as text (TrackEvent.name) */
#define LITERAL (1ull << 63)

/* One name definition. Kinds are never freed nor changed before
 * pbread_close: a DirectEv points into them while it waits in the queue,
 * so an iid given again gets a new Kind (kind_of points to the newest). */
typedef struct {
  char *json; /* the name as a JSON string, then the rest of the event (its "}" included) */
  size_t name_n, n;
} Kind;

typedef struct {
  int64_t ts;
  uint64_t kind;
} Open;

typedef struct {
  uint64_t uuid;
  int64_t pid, tid;
  VEC(Open) open;
} Track;

typedef VEC(DirectEv) DirectQ;

struct PbRead {
  gzFile gz;
  const char *path;
  uint8_t *in;
  size_t in_n, in_p, in_cap;
  uint64_t in_off; /* file offset of in[0] */
  bool in_eof;
  Buf out;
  size_t out_p;
  bool started, made_up, ended;
  bool closed;      /* ours: the last JSON piece ended the document ("}\n") */
  VEC(Kind) kinds;  /* every definition, in the order given: memory follows the input's content */
  I64Map kind_of;   /* iid -> index in kinds */
  Intern lits;      /* names given as text */
  VEC(uint32_t) lit_kind; /* lits id -> 1 + index in kinds (0: not made yet) */
  uint32_t unknown; /* 1 + index in kinds of "?" (an iid never given) */
  bool direct;      /* ranges as 0x01 and a DirectEv (pbread_direct) */
  DirectQ q;        /* direct events handed out as text, not popped yet */
  size_t qh;
  VEC(Track) tracks;
  I64Map track_of;  /* uuid -> index in tracks */
  I64Map seq_track; /* sequence -> its default track's uuid */
  uint64_t last_seq; /* the last default-track event's sequence and track (+1; 0 none) */
  size_t last_track;
  Buf tmp;
  int err;
};

/* ---- input ---- */

static int fail(PbRead *r, const char *what) {
  if (!r->err) nct_error("%s: byte %llu: %s", r->path, (unsigned long long)(r->in_off + r->in_p), what);
  r->err = 1;
  return -1;
}

/* At least k bytes from in_p on (fewer only at the end of the file) */
static int have(PbRead *r, size_t k) {
  while (r->in_n - r->in_p < k && !r->in_eof) {
    size_t keep = r->in_n - r->in_p;
    if (r->in_p) memmove(r->in, r->in + r->in_p, keep);
    r->in_off += r->in_p;
    r->in_p = 0;
    r->in_n = keep;
    size_t cap = IN_BLOCK;
    while (cap < k + 16) cap *= 2;
    if (r->in_cap < cap + IN_BLOCK) { /* grown once, not at every read (a copy each time under ASan) */
      uint8_t *b = realloc(r->in, cap + IN_BLOCK);
      if (!b) return fail(r, "out of memory");
      r->in = b;
      r->in_cap = cap + IN_BLOCK;
    }
    size_t room = r->in_cap - r->in_n; /* all of it: a big packet in a few reads */
    int got = gzread(r->gz, r->in + r->in_n, (unsigned)(room < (1u << 30) ? room : 1u << 30));
    int zerr;
    const char *msg = gzerror(r->gz, &zerr);
    if (got < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR)) return fail(r, zerr == Z_ERRNO ? strerror(errno) : msg);
    if (got == 0) r->in_eof = true;
    r->in_n += (size_t)got;
  }
  return 0;
}

/* ---- wire format ---- */

static bool varint(const uint8_t **p, const uint8_t *e, uint64_t *v) {
  uint64_t x = 0;
  for (int s = 0; s < 64 && *p < e; s += 7) {
    uint8_t b = *(*p)++;
    x |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) {
      *v = x;
      return true;
    }
  }
  return false;
}

typedef struct {
  uint32_t field, wire;
  uint64_t v;             /* a varint's value */
  const uint8_t *s;       /* a LEN field's bytes */
  size_t n;
} Field;

/* The next field of [*p, e): false at the end or on bad bytes (*bad set) */
static bool next_field(const uint8_t **p, const uint8_t *e, Field *f, bool *bad) {
  if (*p >= e) return false;
  uint64_t tag;
  if (!varint(p, e, &tag)) goto broken;
  f->field = (uint32_t)(tag >> 3);
  f->wire = (uint32_t)(tag & 7);
  switch (f->wire) {
  case 0:
    if (!varint(p, e, &f->v)) goto broken;
    return true;
  case 1:
  case 5: {
    size_t k = f->wire == 1 ? 8 : 4;
    if ((size_t)(e - *p) < k) goto broken;
    f->v = 0;
    for (size_t i = 0; i < k; i++) f->v |= (uint64_t)(*p)[i] << (8 * i);
    *p += k;
    return true;
  }
  case 2:
    if (!varint(p, e, &f->v) || f->v > (uint64_t)(e - *p)) goto broken;
    f->s = *p;
    f->n = (size_t)f->v;
    *p += f->n;
    return true;
  default:
    break;
  }
broken:
  *bad = true;
  return false;
}

/* ---- output ---- */

/* Decimal digits of v at q (no snprintf: this runs per event) */
static inline char *digits(char *q, uint64_t v) {
  char t[24];
  int i = 24;
  do {
    t[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  memcpy(q, t + i, (size_t)(24 - i));
  return q + (24 - i);
}

static inline char *put_int(char *q, int64_t v) {
  if (v < 0) {
    *q++ = '-';
    return digits(q, (uint64_t)0 - (uint64_t)v);
  }
  return digits(q, (uint64_t)v);
}

/* ns as µs with three decimals, as the JSON writer puts them */
static inline char *put_us(char *q, int64_t ns) {
  uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  if (ns < 0) *q++ = '-';
  q = digits(q, a / 1000);
  unsigned f = (unsigned)(a % 1000);
  q[0] = '.';
  q[1] = (char)('0' + f / 100);
  q[2] = (char)('0' + f / 10 % 10);
  q[3] = (char)('0' + f % 10);
  return q + 4;
}

#define LIT(q, s) (memcpy((q), (s), sizeof(s) - 1), (q) + sizeof(s) - 1)

/* The JSON object's start, when the trace gives none (not ours) */
static void start(PbRead *r) {
  if (r->started) return;
  r->started = r->made_up = true;
  buf_puts(&r->out, "{\"traceEvents\": [\n{\"name\":\"process_labels\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,"
                    "\"args\":{\"labels\":\"a Perfetto trace\"}}");
}

static Track *track(PbRead *r, uint64_t uuid) {
  int64_t key = (int64_t)uuid == INT64_MIN ? INT64_MIN + 1 : (int64_t)uuid, at;
  if (i64map_get(&r->track_of, key, &at)) return &r->tracks.v[at];
  Track t = {uuid, 0, (int64_t)(uint32_t)uuid, {0}};
  vec_push(&r->tracks, t);
  i64map_put(&r->track_of, key, (int64_t)r->tracks.n - 1);
  return &r->tracks.v[r->tracks.n - 1];
}

/* A new kind: json (owned from now on), its name's length and its length */
static uint32_t kind_new(PbRead *r, char *json, size_t name_n, size_t n) {
  Kind k = {json, name_n, n};
  vec_push(&r->kinds, k);
  return (uint32_t)(r->kinds.n - 1);
}

/* A name as text (NUL-terminated) as a kind's JSON: a JSON string, then "}" */
static uint32_t kind_of_text(PbRead *r, const char *text) {
  r->tmp.len = 0;
  buf_json_string(&r->tmp, text);
  size_t name_n = r->tmp.len;
  buf_putc(&r->tmp, '}');
  return kind_new(r, xstrdup(r->tmp.s), name_n, r->tmp.len);
}

/* The kind a reference stands for now (its index in kinds: DirectEv.kind,
 * so a literal and an iid of the same number never meet); a name without
 * ncrt's text gets "}", an iid never given "?" */
static uint32_t kind_ref(PbRead *r, uint64_t ref) {
  int64_t at;
  if (ref & LITERAL) {
    uint32_t id = (uint32_t)(ref & ~LITERAL);
    assert(id < intern_count(&r->lits)); /* made by track_event from text */
    while (r->lit_kind.n <= id) vec_push(&r->lit_kind, 0);
    if (!r->lit_kind.v[id]) r->lit_kind.v[id] = 1 + kind_of_text(r, intern_str(&r->lits, id));
    return r->lit_kind.v[id] - 1;
  }
  if (i64map_get(&r->kind_of, (int64_t)ref, &at)) return (uint32_t)at;
  if (!r->unknown) r->unknown = 1 + kind_new(r, xstrdup("\"?\"}"), 3, 4);
  return r->unknown - 1;
}

static void event(PbRead *r, Track *t, int type, int64_t ts, int64_t dur, uint64_t kind) {
  start(r);
  uint32_t ki = kind_ref(r, kind);
  const Kind *k = &r->kinds.v[ki];
  const char *s = k->json;
  size_t n = k->n, nn = k->name_n;
  if (r->direct) { /* the walker takes it from the queue at the 0x01 */
    DirectEv e = {ts, type == INSTANT ? -1 : dur, t->pid, t->tid, (uint32_t)(t - r->tracks.v), ki,
                  s, nn, s + nn, n - nn};
    vec_push(&r->q, e);
    buf_add(&r->out, ",\x01", 2);
    return;
  }
  buf_reserve(&r->out, n + 160);
  char *q = r->out.s + r->out.len;
  if (type == INSTANT) q = LIT(q, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
  else q = LIT(q, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
  memcpy(q, s, nn);
  q += nn;
  q = LIT(q, ",\"pid\":");
  q = put_int(q, t->pid);
  q = LIT(q, ",\"tid\":");
  q = put_int(q, t->tid);
  q = LIT(q, ",\"ts\":");
  q = put_us(q, ts);
  if (type != INSTANT) {
    q = LIT(q, ",\"dur\":");
    q = put_us(q, dur);
  }
  memcpy(q, s + nn, n - nn);
  q += n - nn;
  r->out.len = (size_t)(q - r->out.s);
  r->out.s[r->out.len] = 0;
}

/* ---- messages ---- */

/* A message of field 1 (a varint) and field 2 (bytes), as EventName,
 * DebugAnnotationName and ChromeLegacyJsonTrace are: 0 and NULL when absent */
static void number_and_bytes(Field m, uint64_t *v, const uint8_t **b, size_t *n, bool *bad) {
  Field g;
  *v = 0, *b = NULL, *n = 0;
  for (const uint8_t *q = m.s; next_field(&q, m.s + m.n, &g, bad);) {
    if (g.field == 1 && g.wire == 0) *v = g.v;
    else if (g.field == 2 && g.wire == 2) *b = g.s, *n = g.n;
  }
}

static void interned(PbRead *r, const uint8_t *p, const uint8_t *e, bool *bad) {
  Field f;
  while (next_field(&p, e, &f, bad)) {
    if (f.wire != 2 || (f.field != 2 && f.field != 3)) continue;
    uint64_t iid;
    const uint8_t *s;
    size_t n;
    number_and_bytes(f, &iid, &s, &n, bad);
    if (!iid || iid & LITERAL || !s) continue; /* iid 0 is none; past 2^63 is refused where used */
    int64_t at;
    bool given = i64map_get(&r->kind_of, (int64_t)iid, &at);
    uint32_t ki;
    if (f.field == 3) { /* ncrt's text: "ncrt:" NAME_JSON REST */
      if (n < 6 || n > MAX_KIND_TEXT || memcmp(s, "ncrt:", 5) || s[5] != '"') continue;
      size_t j = 6;
      while (j < n && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      if (j >= n) continue;
      char *json = xmalloc(n - 5 + 1);
      memcpy(json, s + 5, n - 5);
      json[n - 5] = 0;
      ki = kind_new(r, json, j + 1 - 5, n - 5);
    } else if (!given) { /* a name alone: as a JSON string, then "}" */
      n = name_len(s, n);
      char *text = xmalloc(n + 1);
      memcpy(text, s, n);
      text[n] = 0;
      ki = kind_of_text(r, text);
      free(text);
    } else {
      continue;
    }
    i64map_put(&r->kind_of, (int64_t)iid, ki);
  }
}

static void descriptor(PbRead *r, const uint8_t *p, const uint8_t *e, bool *bad) {
  Field f, g;
  uint64_t uuid = 0;
  int64_t pid = -1, tid = -1;
  const uint8_t *name = NULL;
  size_t nn = 0;
  bool process = false;
  while (next_field(&p, e, &f, bad)) {
    if (f.field == 1 && f.wire == 0) uuid = f.v;
    else if ((f.field == 3 || f.field == 4) && f.wire == 2) {
      process = f.field == 3;
      for (const uint8_t *q = f.s; next_field(&q, f.s + f.n, &g, bad);) {
        if (g.field == 1 && g.wire == 0) pid = (int32_t)g.v;
        else if (g.field == 2 && g.wire == 0) tid = (int32_t)g.v;
        else if (g.field == (process ? 6u : 5u) && g.wire == 2) name = g.s, nn = g.n;
      }
    }
  }
  if (!uuid || pid < 0) return;
  Track *t = track(r, uuid);
  t->pid = pid;
  t->tid = process ? 0 : tid >= 0 ? tid : pid;
  if (!name || !r->made_up) return; /* ours: the JSON names them */
  char *text = xmalloc(nn + 1);
  memcpy(text, name, nn);
  text[nn] = 0;
  buf_puts(&r->out, process ? ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":"
                            : ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
  buf_printf(&r->out, "%lld,\"tid\":%lld,\"args\":{\"name\":", (long long)t->pid, (long long)t->tid);
  buf_json_string(&r->out, text);
  buf_puts(&r->out, "}}");
  free(text);
}

static void slice(PbRead *r, int type, uint64_t kind, bool has_uuid, uint64_t uuid, uint64_t seq, int64_t ts);

static int track_event(PbRead *r, const uint8_t *p, const uint8_t *e, uint64_t seq, int64_t ts, bool *bad) {
  Field f;
  int type = 0;
  uint64_t kind = 0, uuid = 0;
  bool has_uuid = false;
  while (next_field(&p, e, &f, bad)) {
    if (f.field == 9 && f.wire == 0) type = (int)f.v;
    else if (f.field == 10 && f.wire == 0 && f.v & LITERAL) return fail(r, "a name_iid of 2^63 or more (out of range)");
    else if (f.field == 10 && f.wire == 0) kind = f.v;
    else if (f.field == 23 && f.wire == 2) kind = LITERAL | intern(&r->lits, (const char *)f.s, name_len(f.s, f.n));
    else if (f.field == 11 && f.wire == 0) uuid = f.v, has_uuid = true;
  }
  slice(r, type, kind, has_uuid, uuid, seq, ts);
  return 0;
}

/* A slice's begin or end, an instant, on the event's track (or its
 * sequence's default one: the last one is remembered, events of one
 * sequence come in runs) */
static void slice(PbRead *r, int type, uint64_t kind, bool has_uuid, uint64_t uuid, uint64_t seq, int64_t ts) {
  Track *t;
  if (!has_uuid && r->last_track && r->last_seq == seq) {
    t = &r->tracks.v[r->last_track - 1];
  } else {
    int64_t def;
    if (!has_uuid && i64map_get(&r->seq_track, (int64_t)seq, &def)) uuid = (uint64_t)def;
    t = track(r, uuid);
    if (!has_uuid) r->last_seq = seq, r->last_track = (size_t)(t - r->tracks.v) + 1;
  }
  if (type == SLICE_BEGIN) {
    Open o = {ts, kind};
    vec_push(&t->open, o);
  } else if (type == SLICE_END && t->open.n) {
    Open o = t->open.v[--t->open.n];
    int64_t dur; /* the clock's values are the file's: saturated, never overflowed */
    if (__builtin_sub_overflow(ts, o.ts, &dur)) dur = ts < o.ts ? INT64_MIN : INT64_MAX;
    event(r, t, SLICE_END, o.ts, dur, o.kind);
  } else if (type == INSTANT) {
    event(r, t, INSTANT, ts, 0, kind);
  }
}

static void defaults(PbRead *r, const uint8_t *p, const uint8_t *e, uint64_t seq, bool *bad) {
  Field f, g;
  while (next_field(&p, e, &f, bad))
    if (f.field == 11 && f.wire == 2)
      for (const uint8_t *q = f.s; next_field(&q, f.s + f.n, &g, bad);)
        if (g.field == 11 && g.wire == 0) {
          i64map_put(&r->seq_track, (int64_t)seq, (int64_t)g.v);
          r->last_track = 0; /* a sequence's default changed */
        }
}

/* chrome_events: the JSON pieces (legacy_json_trace, USER_TRACE) */
static void chrome_events(PbRead *r, const uint8_t *p, const uint8_t *e, bool *bad) {
  Field f;
  while (next_field(&p, e, &f, bad)) {
    if (f.field != 5 || f.wire != 2) continue;
    uint64_t type;
    const uint8_t *s;
    size_t n;
    number_and_bytes(f, &type, &s, &n, bad);
    if (type != 0 || !s) continue;
    if (!r->started) r->started = true; /* ours: the first piece opens the object */
    else if (r->made_up) continue;      /* a foreign trace's JSON: not ours to join */
    buf_add(&r->out, s, n);
    r->closed = n >= 2 && s[n - 2] == '}' && s[n - 1] == '\n'; /* events end "}", the object "}\n" */
  }
}

/* The packets ncrt writes for its ranges, field by field in its order
 * (perfetto.c, event_packet): timestamp, sequence, track_event {type,
 * name_iid?}, sequence_flags 2. true when p..e is one (and done). */
static bool fast_event(PbRead *r, const uint8_t *p, const uint8_t *e) {
  uint64_t ts, seq, len, type, iid = 0;
  if (p >= e || *p++ != 0x40 || !varint(&p, e, &ts)) return false;
  if (p >= e || *p++ != 0x50 || !varint(&p, e, &seq)) return false;
  if (p >= e || *p++ != 0x5a || !varint(&p, e, &len) || len > (uint64_t)(e - p)) return false;
  const uint8_t *te = p + len;
  if (p >= te || *p++ != 0x48 || !varint(&p, te, &type)) return false;
  if (p < te && (*p++ != 0x50 || !varint(&p, te, &iid) || iid & LITERAL)) return false; /* refused by track_event */
  if (p != te || e - p != 2 || p[0] != 0x68 || p[1] != 0x02) return false;
  slice(r, (int)type, iid, false, 0, seq, (int64_t)ts);
  return true;
}

static int packet(PbRead *r, const uint8_t *p, const uint8_t *e) {
  if (fast_event(r, p, e)) return 0;
  Field f;
  bool bad = false;
  uint64_t seq = 0;
  int64_t ts = 0;
  const uint8_t *te = NULL, *te_end = NULL;
  /* interned data and defaults before the event that may use them */
  for (const uint8_t *q = p; next_field(&q, e, &f, &bad);) {
    if (f.field == 8 && f.wire == 0) ts = (int64_t)f.v;
    else if (f.field == 10 && f.wire == 0) seq = f.v;
  }
  for (const uint8_t *q = p; next_field(&q, e, &f, &bad);) {
    if (f.wire != 2) continue;
    switch (f.field) {
    case 12: interned(r, f.s, f.s + f.n, &bad); break;
    case 59: defaults(r, f.s, f.s + f.n, seq, &bad); break;
    case 60: descriptor(r, f.s, f.s + f.n, &bad); break;
    case 5: chrome_events(r, f.s, f.s + f.n, &bad); break;
    case 11: te = f.s, te_end = f.s + f.n; break;
    default: break;
    }
  }
  if (te && track_event(r, te, te_end, seq, ts, &bad) < 0) return -1;
  return bad ? fail(r, "not a valid Perfetto TracePacket") : 0;
}

/* Decode packets until out holds `want` bytes or the file ends */
static int decode_more(PbRead *r, size_t want) {
  /* the queue too stays bounded: at most 64 Ki events ahead of the walker */
  while (r->out.len - r->out_p < want && r->q.n - r->qh < (1u << 16) && !r->ended) {
    if (have(r, 11) < 0) return -1;
    if (r->in_p == r->in_n) { /* the end */
      if (r->started && !r->made_up && !r->closed)
        return fail(r, "the file ends before its trace does (truncated?)");
      if (!r->started) start(r);
      if (r->made_up) buf_puts(&r->out, "\n]}\n");
      r->ended = true;
      break;
    }
    const uint8_t *p = r->in + r->in_p, *e = r->in + r->in_n, *q;
    uint64_t tag, len;
    bool tag_ok = (q = p, varint(&p, e, &tag));
    if (!tag_ok || (tag & 7) != 2 || (q = p, !varint(&p, e, &len))) {
      /* a varint the file's end cut (every byte to the end continues it,
       * fewer than ten): the packet's tag or length, cut short */
      bool cut = (!tag_ok || (tag & 7) == 2) && e - q < 10;
      for (const uint8_t *x = q; cut && x < e; x++) cut = *x & 0x80;
      if (cut) return fail(r, "the file ends inside a packet (truncated)");
      return fail(r, "not a Perfetto trace packet (expected field 1, length-delimited)");
    }
    if (len > MAX_PACKET) return fail(r, "a packet of more than 64 MiB (the reader's limit)");
    size_t head = (size_t)(p - (r->in + r->in_p));
    if (have(r, head + (size_t)len) < 0) return -1;
    if (r->in_n - r->in_p < head + len) return fail(r, "the file ends inside a packet (truncated)");
    p = r->in + r->in_p + head;
    r->in_p += head + (size_t)len;
    if (tag >> 3 == 1 && packet(r, p, p + len) < 0) return -1;
  }
  return 0;
}

/* ---- the interface ---- */

bool pbread_sniff(gzFile gz, const char *path) {
  static const char *const names[] = {".pftrace", ".pftrace.gz", ".perfetto-trace", ".perfetto-trace.gz"};
  size_t l = strlen(path);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    size_t k = strlen(names[i]);
    if (l > k && !strcmp(path + l - k, names[i])) return true;
  }
  unsigned char b[64];
  int n = gzread(gz, b, sizeof b);
  gzrewind(gz);
  if (n < 2 || b[0] != 0x0a) return false;
  for (int i = 0; i < n; i++) {
    if (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') continue;
    return b[i] != '{' && b[i] != '[';
  }
  return false;
}

PbRead *pbread_open(gzFile gz, const char *path) {
  PbRead *r = xcalloc(1, sizeof *r);
  r->gz = gz;
  r->path = path;
  return r;
}

long pbread_read(PbRead *r, char *dst, size_t room) {
  if (r->err) return -1;
  if (r->out_p == r->out.len) {
    r->out.len = r->out_p = 0;
    /* a window's worth at a time (the reader asks for up to 1 GiB) */
    if (decode_more(r, room < (1u << 20) ? room : (1u << 20)) < 0) return -1;
  }
  size_t k = r->out.len - r->out_p;
  if (k > room) k = room;
  memcpy(dst, r->out.s + r->out_p, k);
  r->out_p += k;
  return (long)k;
}

void pbread_direct(PbRead *r) { r->direct = true; }

bool pbread_pop(PbRead *r, DirectEv *e) {
  if (r->qh >= r->q.n) return false;
  *e = r->q.v[r->qh++];
  if (r->qh == r->q.n) r->q.n = r->qh = 0;
  return true;
}

uint64_t pbread_offset(const PbRead *r) { return r->in_off + r->in_p; }

void pbread_close(PbRead *r) {
  if (!r) return;
  free(r->in);
  buf_free(&r->out);
  buf_free(&r->tmp);
  for (size_t i = 0; i < r->kinds.n; i++) free(r->kinds.v[i].json);
  vec_free(&r->kinds);
  i64map_free(&r->kind_of);
  intern_free(&r->lits);
  vec_free(&r->lit_kind);
  vec_free(&r->q);
  for (size_t i = 0; i < r->tracks.n; i++) vec_free(&r->tracks.v[i].open);
  vec_free(&r->tracks);
  i64map_free(&r->track_of);
  i64map_free(&r->seq_track);
  free(r);
}
