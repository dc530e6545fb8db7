/* perfetto.c: Perfetto's protobuf trace format (TRACE_PERFETTO, writer.h).
 *
 * Why: converting every range to JSON and deflating it cost about 0.4 µs
 * a range, most of a full trace's cost (docs/design.md, "The binary
 * trace"). A range here is two small packets (SLICE_BEGIN, SLICE_END) of
 * varints, written as they are: ~40 bytes and a few tens of ns.
 *
 * What is written, in Trace.packet order (field numbers as in Perfetto's
 * protos; the subset is docs/perfetto_subset.proto, which protoc decodes
 * the files with in the tests):
 *   - TrackDescriptors: the process (uuid PROC_UUID(pid), name) and each
 *     thread (uuid THREAD_UUID(pid, tid), pid, tid; its name at the tail);
 *   - per thread one packet sequence (trusted_packet_sequence_id): its first
 *     packet clears the incremental state and sets the default track, later
 *     ones need it (sequence_flags 2);
 *   - InternedData.event_names: a "kind" of range is its name with its depth,
 *     category, domain and longjmp flag (what the JSON event says besides
 *     its times); each kind has one interning id in the file, and each
 *     sequence gets the names it uses. The first time a kind appears in the
 *     file, debug_annotation_names gives the same iid the text
 *     "ncrt:" NAME_JSON REST: the event's name as a JSON string and the
 *     JSON that follows its ts/dur in the Kineto layout (nctrace rebuilds
 *     the JSON event from it; Perfetto never refers to these entries);
 *   - a range: SLICE_BEGIN (ts = start) with its name_iid, SLICE_END (ts =
 *     end), written together when the range ends (the records are in end
 *     order: Perfetto sorts the packets by time when it loads them); a
 *     mark: INSTANT. Times are ns from the trace's origin, the JSON's ts;
 *   - chrome_events.legacy_json_trace (USER_TRACE): the JSON of the rest,
 *     in pieces, so that the pieces with the ranges in between, in file
 *     order, are the Kineto JSON trace.
 *
 * Contract: pure encoding into a Gz; no lock, no global state but the
 * PbState handed in (one per trace being written). Out of memory sets
 * g->err (the trace is lost, said by the caller) and never aborts. */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PROC_UUID(pid) (((uint64_t)(uint32_t)(pid) << 32) | 0xffffffffull)
#define THREAD_UUID(pid, tid) (((uint64_t)(uint32_t)(pid) << 32) | (uint32_t)(tid))

enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };

typedef struct {
  uint32_t tid;
  uint32_t seq;
  uint8_t *have;  /* bit per iid: its name given on this sequence */
  size_t nhave;   /* bytes */
} PbThread;

typedef struct {
  char *name, *json; /* NULL: not declared yet */
  size_t jn;
  int given;         /* its ncrt: text is in the file */
} PbKind;

struct PbState {
  int pid;
  uint64_t first_iid, next_iid;
  uint64_t next_seq;
  /* kind key -> iid: open addressing, keys + 1 (0 empty) */
  uint64_t *keys, *iids;
  size_t cap, n;
  PbKind *kinds; /* by iid - first_iid */
  size_t nkinds;
  PbThread *th;
  size_t nth, capth;
  size_t last; /* the thread of the last record (a block is one thread's) */
};

/* ---- encoding ---- */

static inline size_t put_varint(uint8_t *b, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  b[n++] = (uint8_t)v;
  return n;
}

static inline size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* A growable message being built (the packets that are not on the hot path) */
typedef struct {
  uint8_t *b;
  size_t n, cap;
  int err;
} Msg;

static void m_need(Msg *m, size_t k) {
  if (m->n + k <= m->cap) return;
  size_t cap = m->cap ? m->cap : 256;
  while (cap < m->n + k) cap *= 2;
  uint8_t *b = realloc(m->b, cap);
  if (!b) {
    m->err = 1;
    return;
  }
  m->b = b;
  m->cap = cap;
}

static void m_varint(Msg *m, uint64_t v) {
  m_need(m, 10);
  if (!m->err) m->n += put_varint(m->b + m->n, v);
}

static void m_uint(Msg *m, unsigned field, uint64_t v) {
  m_varint(m, (uint64_t)field << 3);
  m_varint(m, v);
}

static void m_bytes(Msg *m, unsigned field, const void *p, size_t k) {
  m_varint(m, (uint64_t)field << 3 | 2);
  m_varint(m, k);
  m_need(m, k);
  if (!m->err) {
    memcpy(m->b + m->n, p, k);
    m->n += k;
  }
}

static void m_str(Msg *m, unsigned field, const char *s) { m_bytes(m, field, s, strlen(s)); }

/* inner as a field of m; inner freed */
static void m_msg(Msg *m, unsigned field, Msg *inner) {
  if (inner->err) m->err = 1;
  else m_bytes(m, field, inner->b, inner->n);
  free(inner->b);
  *inner = (Msg){0};
}

/* m as one TracePacket of the Trace (field 1); m freed */
static void put_packet(Gz *g, Msg *m) {
  if (m->err) {
    if (!g->err) g->err = ENOMEM;
  } else {
    uint8_t h[11];
    h[0] = 0x0a;
    size_t k = 1 + put_varint(h + 1, m->n);
    put(g, (const char *)h, k);
    put(g, (const char *)m->b, m->n);
  }
  free(m->b);
  *m = (Msg){0};
}

/* ---- state ---- */

PbState *pb_new(int pid, uint64_t first_iid, uint64_t first_seq) {
  PbState *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->pid = pid;
  p->first_iid = p->next_iid = first_iid ? first_iid : 1;
  p->next_seq = first_seq ? first_seq : 1;
  return p;
}

void pb_free(PbState *p) {
  if (!p) return;
  for (size_t i = 0; i < p->nkinds; i++) {
    free(p->kinds[i].name);
    free(p->kinds[i].json);
  }
  free(p->kinds);
  for (size_t i = 0; i < p->nth; i++) free(p->th[i].have);
  free(p->th);
  free(p->keys);
  free(p->iids);
  free(p);
}

void pb_next_ids(const PbState *p, uint64_t *iid, uint64_t *seq) {
  *iid = p->next_iid;
  *seq = p->next_seq;
}

static inline uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

static int grow_keys(PbState *p) {
  size_t cap = p->cap ? p->cap * 2 : 1024;
  uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
  if (!k || !v) {
    free(k);
    free(v);
    return -1;
  }
  for (size_t i = 0; i < p->cap; i++) {
    if (!p->keys[i]) continue;
    size_t j = mix(p->keys[i]) & (cap - 1);
    while (k[j]) j = (j + 1) & (cap - 1);
    k[j] = p->keys[i];
    v[j] = p->iids[i];
  }
  free(p->keys);
  free(p->iids);
  p->keys = k;
  p->iids = v;
  p->cap = cap;
  return 0;
}

uint64_t pb_kind(PbState *p, uint32_t name, unsigned depth, unsigned cat, unsigned dom, int jumped, int *fresh) {
  /* name 24 bits, depth 16, category and domain 8 each (RtRec), the flag */
  uint64_t key = ((uint64_t)(name & 0xffffff) << 33 | (uint64_t)(depth & 0xffff) << 17 | (uint64_t)(cat & 0xff) << 9 |
                  (uint64_t)(dom & 0xff) << 1 | (jumped ? 1u : 0u)) + 1;
  *fresh = 0;
  if ((p->n + 1) * 2 > p->cap && grow_keys(p)) return 0;
  size_t j = mix(key) & (p->cap - 1);
  while (p->keys[j]) {
    if (p->keys[j] == key) return p->iids[j];
    j = (j + 1) & (p->cap - 1);
  }
  size_t at = (size_t)(p->next_iid - p->first_iid);
  if (at >= p->nkinds) {
    size_t nk = p->nkinds ? p->nkinds * 2 : 256;
    PbKind *k = realloc(p->kinds, nk * sizeof *k);
    if (!k) return 0;
    memset(k + p->nkinds, 0, (nk - p->nkinds) * sizeof *k);
    p->kinds = k;
    p->nkinds = nk;
  }
  p->keys[j] = key;
  p->iids[j] = p->next_iid++;
  p->n++;
  *fresh = 1;
  return p->iids[j];
}

static char *unjson(const char *j, size_t n);

void pb_declare(PbState *p, uint64_t iid, const char *json, size_t jn) {
  PbKind *k = &p->kinds[iid - p->first_iid];
  size_t e = 1; /* the name: the leading JSON string */
  while (e < jn && json[e] != '"') e += json[e] == '\\' ? 2 : 1;
  k->name = unjson(json, e + 1 <= jn ? e + 1 : jn);
  k->json = malloc(jn + 1);
  if (k->json) {
    memcpy(k->json, json, jn);
    k->json[jn] = 0;
  }
  k->jn = jn;
}

static PbThread *thread_of(Gz *g, PbState *p, uint32_t tid) {
  if (p->last < p->nth && p->th[p->last].tid == tid) return &p->th[p->last];
  for (size_t i = p->nth; i-- > 0;)
    if (p->th[i].tid == tid) return &p->th[p->last = i];
  if (p->nth == p->capth) {
    size_t cap = p->capth ? p->capth * 2 : 16;
    PbThread *t = realloc(p->th, cap * sizeof *t);
    if (!t) return NULL;
    p->th = t;
    p->capth = cap;
  }
  p->last = p->nth;
  PbThread *t = &p->th[p->nth++];
  *t = (PbThread){tid, (uint32_t)p->next_seq++, NULL, 0};
  /* its track, then the sequence's first packet: state cleared, default track */
  Msg m = {0}, d = {0}, th = {0}, def = {0}, ted = {0};
  m_uint(&th, 1, (uint64_t)(uint32_t)p->pid);
  m_uint(&th, 2, tid);
  m_uint(&d, 1, THREAD_UUID(p->pid, tid));
  m_msg(&d, 4, &th);
  m_msg(&m, 60, &d);
  put_packet(g, &m);
  m_uint(&m, 10, t->seq);
  m_uint(&m, 13, SEQ_CLEARED);
  m_uint(&ted, 11, THREAD_UUID(p->pid, tid));
  m_msg(&def, 11, &ted);
  m_msg(&m, 59, &def);
  put_packet(g, &m);
  return t;
}

/* The kind's name on t's sequence (and its ncrt: text once in the file) */
static void intern(Gz *g, PbState *p, PbThread *t, uint64_t iid) {
  size_t at = (size_t)(iid - p->first_iid);
  if (at / 8 >= t->nhave) {
    size_t nb = t->nhave ? t->nhave * 2 : 64;
    while (nb <= at / 8) nb *= 2;
    uint8_t *h = realloc(t->have, nb);
    if (!h) {
      if (!g->err) g->err = ENOMEM;
      return;
    }
    memset(h + t->nhave, 0, nb - t->nhave);
    t->have = h;
    t->nhave = nb;
  }
  if (t->have[at / 8] & (1u << (at % 8))) return;
  t->have[at / 8] |= (uint8_t)(1u << (at % 8));
  PbKind *k = &p->kinds[at];
  if (!k->name || !k->json) {
    if (!g->err) g->err = ENOMEM;
    return;
  }
  Msg m = {0}, in = {0}, e = {0};
  m_uint(&e, 1, iid);
  m_str(&e, 2, k->name);
  m_msg(&in, 2, &e);
  if (!k->given) { /* the first sequence to use it: the JSON, once */
    k->given = 1;
    m_uint(&e, 1, iid);
    m_varint(&e, 2 << 3 | 2);
    m_varint(&e, 5 + k->jn);
    m_need(&e, 5 + k->jn);
    if (!e.err) {
      memcpy(e.b + e.n, "ncrt:", 5);
      memcpy(e.b + e.n + 5, k->json, k->jn);
      e.n += 5 + k->jn;
    }
    m_msg(&in, 3, &e);
  }
  m_uint(&m, 10, t->seq);
  m_msg(&m, 12, &in);
  m_uint(&m, 13, SEQ_NEEDS_STATE);
  put_packet(g, &m);
}

/* One TrackEvent packet of type `type` at ts on t's sequence (iid 0: none) */
static inline size_t event_packet(uint8_t *b, uint64_t ts, uint32_t seq, unsigned type, uint64_t iid) {
  size_t te = 2 + (iid ? 1 + varint_len(iid) : 0);
  size_t body = 1 + varint_len(ts) + 1 + varint_len(seq) + 1 + varint_len(te) + te + 2;
  size_t n = 0;
  b[n++] = 0x0a; /* Trace.packet */
  n += put_varint(b + n, body);
  b[n++] = 0x40; /* timestamp */
  n += put_varint(b + n, ts);
  b[n++] = 0x50; /* trusted_packet_sequence_id */
  n += put_varint(b + n, seq);
  b[n++] = 0x5a; /* track_event */
  n += put_varint(b + n, te);
  b[n++] = 0x48; /* type */
  b[n++] = (uint8_t)type;
  if (iid) {
    b[n++] = 0x50; /* name_iid */
    n += put_varint(b + n, iid);
  }
  b[n++] = 0x68; /* sequence_flags */
  b[n++] = SEQ_NEEDS_STATE;
  return n;
}

/* tid's sequence with kind iid's name on it, or NULL (g->err set) */
static PbThread *ready(Gz *g, PbState *p, uint32_t tid, uint64_t iid) {
  PbThread *t = thread_of(g, p, tid);
  if (!t || !iid) {
    if (!g->err) g->err = ENOMEM;
    return NULL;
  }
  intern(g, p, t, iid);
  return t;
}

void pb_range(Gz *g, PbState *p, uint32_t tid, uint64_t a, uint64_t b, uint64_t iid) {
  PbThread *t = ready(g, p, tid, iid);
  if (!t) return;
  uint8_t buf[96];
  size_t n = event_packet(buf, a, t->seq, 1, iid);
  n += event_packet(buf + n, b, t->seq, 2, 0);
  put(g, (const char *)buf, n);
}

void pb_mark(Gz *g, PbState *p, uint32_t tid, uint64_t a, uint64_t iid) {
  PbThread *t = ready(g, p, tid, iid);
  if (!t) return;
  uint8_t buf[48];
  put(g, (const char *)buf, event_packet(buf, a, t->seq, 3, iid));
}

void pb_process(Gz *g, int pid, const char *name) {
  Msg m = {0}, d = {0}, pr = {0};
  m_uint(&pr, 1, (uint64_t)(uint32_t)pid);
  m_str(&pr, 6, name);
  m_uint(&d, 1, PROC_UUID(pid));
  m_msg(&d, 3, &pr);
  m_msg(&m, 60, &d);
  put_packet(g, &m);
}

/* A JSON string's text (j[0..n), with its quotes; the escapes esc_name
 * and put_jstr write) */
static char *unjson(const char *j, size_t n) {
  char *o = malloc(n + 1), *q = o;
  if (!o) return NULL;
  const char *s = j + (*j == '"'), *end = j + n - (n > 1 && j[n - 1] == '"');
  while (s < end) {
    if (*s == '\\' && s + 1 < end) {
      s++;
      if (*s == 'u' && end - s >= 5) {
        unsigned v = (unsigned)strtoul((char[5]){s[1], s[2], s[3], s[4], 0}, NULL, 16);
        *q++ = (char)(v < 0x80 ? v : '?');
        s += 5;
        continue;
      }
      *q++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
      s++;
      continue;
    }
    *q++ = *s++;
  }
  *q = 0;
  return o;
}

void pb_thread_name(Gz *g, int pid, uint32_t tid, const char *json_name) {
  char *name = unjson(json_name, strlen(json_name));
  Msg m = {0}, d = {0}, th = {0};
  m_uint(&th, 1, (uint64_t)(uint32_t)pid);
  m_uint(&th, 2, tid);
  m_str(&th, 5, name ? name : "");
  m_uint(&d, 1, THREAD_UUID(pid, tid));
  m_msg(&d, 4, &th);
  m_msg(&m, 60, &d);
  put_packet(g, &m);
  free(name);
}

Gz *pb_json_begin(void) {
  Gz *c = calloc(1, sizeof *c);
  if (c) gz_capture(c);
  return c;
}

void pb_json_end(Gz *g, Gz *cap) {
  if (!cap) {
    if (!g->err) g->err = ENOMEM;
    return;
  }
  gz_drain(cap, Z_NO_FLUSH);
  if (cap->err && !g->err) g->err = cap->err;
  /* in pieces of at most 1 MiB (a packet stays small for readers) */
  for (size_t at = 0; !g->err && at < cap->memn;) {
    size_t k = cap->memn - at < (1u << 20) ? cap->memn - at : (1u << 20);
    /* never inside a UTF-8 sequence: each piece is a valid string */
    while (at + k < cap->memn && k > 4 && ((unsigned char)cap->mem[at + k] & 0xc0) == 0x80) k--;
    Msg m = {0}, b = {0}, l = {0};
    m_uint(&l, 1, 0); /* USER_TRACE */
    m_bytes(&l, 2, cap->mem + at, k);
    m_msg(&b, 5, &l);
    m_msg(&m, 5, &b);
    put_packet(g, &m);
    at += k;
  }
  free(cap->mem);
  free(cap);
}
