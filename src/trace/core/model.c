/* model: load a Chrome trace into compact events (see model.h). */
#include "model.h"

#include "reader.h"
#include "sink.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const KIND_NAMES[K_COUNT] = {
  [K_NONE] = "(none)", [K_CPU_OP] = "cpu_op", [K_USER_ANNOTATION] = "user_annotation",
  [K_PYTHON_FUNCTION] = "python_function", [K_CUDA_RUNTIME] = "cuda_runtime",
  [K_CUDA_DRIVER] = "cuda_driver", [K_OVERHEAD] = "overhead", [K_UNKNOWN] = "unknown",
  [K_CUDA_SYNC] = "cuda_sync", [K_GPU_USER_ANNOTATION] = "gpu_user_annotation",
  [K_KERNEL] = "kernel", [K_GPU_MEMCPY] = "gpu_memcpy", [K_GPU_MEMSET] = "gpu_memset",
  [K_TRACE] = "Trace",
};

const char *kind_name(int k) { return k >= 0 && k < K_COUNT ? KIND_NAMES[k] : "?"; }

static int kind_of_cat(Span c) {
  /* most events are one of a few categories: compare by length first */
  switch (c.n) {
  case 6:
    if (!memcmp(c.s, "kernel", 6)) return K_KERNEL;
    if (!memcmp(c.s, "cpu_op", 6)) return K_CPU_OP;
    if (!memcmp(c.s, "Kernel", 6)) return K_KERNEL;
    if (!memcmp(c.s, "Memcpy", 6)) return K_GPU_MEMCPY;
    if (!memcmp(c.s, "Memset", 6)) return K_GPU_MEMSET;
    break;
  case 12:
    if (!memcmp(c.s, "cuda_runtime", 12)) return K_CUDA_RUNTIME;
    break;
  case 15:
    if (!memcmp(c.s, "user_annotation", 15)) return K_USER_ANNOTATION;
    if (!memcmp(c.s, "python_function", 15)) return K_PYTHON_FUNCTION;
    break;
  }
  for (int k = K_CPU_OP; k < K_COUNT; k++)
    if (k != K_UNKNOWN && span_eq(c, KIND_NAMES[k])) return k;
  if (span_eq(c, "Runtime")) return K_CUDA_RUNTIME;
  if (span_eq(c, "Operator")) return K_CPU_OP;
  return K_UNKNOWN;
}

enum { TCACHE = 8 };

typedef struct {
  char p[40], t[40];
  size_t pn, tn;
  uint32_t thread;
  bool used;
} ThreadCacheEntry;

typedef struct Half Half;

typedef struct {
  Model *m;
  Trace *t;
  Buf tmp, tmp2;
  ThreadCacheEntry cache[TCACHE];
  unsigned next;
  unsigned last; /* the cache entry hit last */
  bool saw_be;  /* B/E events: a split load cannot pair them across halves */
  Half *half;   /* the second half of a split load, or NULL */
  /* a binary trace's ranges (on_direct): what each kind and track is */
  I64Map kind_of;       /* DirectEv.kind -> index in kinds */
  VEC(struct DirectKind) kinds;
  VEC(uint32_t) track_thread; /* DirectEv.track -> thread index + 1, 0 unknown */
} Loader;

/* A kind of range of a binary trace: its name, depth and args, read once
 * from its JSON (text: "{" and its REST after the first byte) */
struct DirectKind {
  uint32_t name;
  int64_t depth;
  char *text;
  MemberVec args;
};

static uint32_t thread_index(Loader *L, uint32_t pid, uint32_t tid) {
  int64_t key = (int64_t)((uint64_t)pid << 32 | tid), idx;
  if (i64map_get(&L->t->thread_of, key, &idx)) return (uint32_t)idx;
  Thread th = {0};
  th.pid = pid;
  th.tid = tid;
  th.label = -1;
  th.lane_of = -1;
  vec_push(&L->t->threads, th);
  i64map_put(&L->t->thread_of, key, (int64_t)L->t->threads.n - 1);
  return (uint32_t)L->t->threads.n - 1;
}

/* a few bytes: a loop is cheaper than a call to memcmp */
static inline bool same_bytes(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static inline bool cache_hit(const ThreadCacheEntry *c, Span pid, Span tid) {
  return c->used && c->pn == pid.n && c->tn == tid.n && same_bytes(c->t, tid.s, tid.n) && same_bytes(c->p, pid.s, pid.n);
}

/* The thread of an event by the raw text of its pid and tid, through a
 * small cache of recent pairs (events alternate between a few threads,
 * in blocks: the last hit is tried first). */
static uint32_t thread_of_event(Loader *L, Span pid, Span tid) {
  if (!pid.s) pid = (Span){"0", 1};
  if (!tid.s) tid = (Span){"0", 1};
  if (cache_hit(&L->cache[L->last], pid, tid)) return L->cache[L->last].thread;
  for (unsigned i = 0; i < TCACHE; i++)
    if (cache_hit(&L->cache[i], pid, tid)) {
      L->last = i;
      return L->cache[i].thread;
    }
  uint32_t th = thread_index(L, intern(&L->m->ids, pid.s, pid.n), intern(&L->m->ids, tid.s, tid.n));
  if (pid.n <= sizeof L->cache[0].p && tid.n <= sizeof L->cache[0].t) {
    ThreadCacheEntry *c = &L->cache[L->next++ % TCACHE];
    memcpy(c->p, pid.s, pid.n);
    memcpy(c->t, tid.s, tid.n);
    c->pn = pid.n;
    c->tn = tid.n;
    c->thread = th;
    c->used = true;
  }
  return th;
}

/* ---- what each name's args say (Model.keep_args) ---- */

static NameArgs *name_args_slot(Model *m, uint32_t name) {
  if (name >= m->name_args.n) {
    vec_grow(&m->name_args, (size_t)name + 1);
    memset(m->name_args.v + m->name_args.n, 0, ((size_t)name + 1 - m->name_args.n) * sizeof *m->name_args.v);
    m->name_args.n = (size_t)name + 1;
  }
  return &m->name_args.v[name];
}

static bool name_arg_is(const NameArg *k, const char *key, size_t kn) {
  return k->klen == kn && !memcmp(k->key, key, kn);
}

/* The key among a's, trying position hint first (events of a name usually
 * list their args in one order). */
static NameArg *name_arg_find(NameArgs *a, const char *key, size_t kn, uint32_t hint) {
  if (hint < a->n && name_arg_is(&a->keys[hint], key, kn)) return &a->keys[hint];
  for (uint32_t i = 0; i < a->n; i++)
    if (name_arg_is(&a->keys[i], key, kn)) return &a->keys[i];
  return NULL;
}

/* A key first seen (the name's first event with args, or a later one with
 * a key the first lacked: then it varies, as it was absent before). */
static void name_arg_add(NameArgs *a, const char *key, size_t kn, const char *val, size_t vn, uint64_t h,
                         bool varies) {
  if (a->n == NAME_ARG_KEYS) {
    a->more = true;
    return;
  }
  NameArg *k = &a->keys[a->n++];
  k->key = xstrndup(key, kn);
  k->klen = kn;
  k->cut = vn > NAME_ARG_TEXT;
  k->val = xstrndup(val, k->cut ? NAME_ARG_TEXT : vn);
  k->hash = h;
  k->varies = varies;
}

/* One event's args (from the reader's member list; na = 0: it has none)
 * into its name's record: a hash per value, no allocation after a name's
 * first event with args. A key some events of the name lack varies. */
static void name_args_note(Model *m, uint32_t name, const Member *am, size_t na) {
  NameArgs *a = name_args_slot(m, name);
  bool earlier = a->events > 0; /* events of this name before this one */
  if (a->events < UINT32_MAX) a->events++;
  if (!na) {
    for (uint32_t i = 0; i < a->n; i++) a->keys[i].varies = true;
    return;
  }
  bool first = !a->keys;
  if (first) a->keys = xcalloc(NAME_ARG_KEYS, sizeof *a->keys);
  uint32_t seen = 0;
  for (size_t k = 0; k < na; k++) {
    uint64_t h = hash_bytes(am[k].val.s, am[k].val.n);
    NameArg *x = first ? NULL : name_arg_find(a, am[k].key.s, am[k].key.n, (uint32_t)k);
    if (x) {
      x->varies |= x->hash != h;
      seen++;
    } else {
      name_arg_add(a, am[k].key.s, am[k].key.n, am[k].val.s, am[k].val.n, h, earlier);
      seen += !earlier;
    }
  }
  /* a key of earlier events that this one lacks */
  if (earlier && seen < a->n)
    for (uint32_t i = 0; i < a->n; i++) {
      bool here = false;
      for (size_t k = 0; k < na && !here; k++)
        here = name_arg_is(&a->keys[i], am[k].key.s, am[k].key.n);
      a->keys[i].varies |= !here;
    }
}

/* The second half's record of a name into the first's (split loading). */
static void name_args_merge(Model *m, uint32_t name, NameArgs *b) {
  if (!b->events) return;
  NameArgs *a = name_args_slot(m, name);
  if (!b->keys || !a->keys) {
    /* one side had no args at all: what the other says varies, if both ran */
    NameArgs *k = b->keys ? b : a;
    uint32_t other = b->keys ? a->events : b->events;
    for (uint32_t i = 0; k->keys && other && i < k->n; i++) k->keys[i].varies = true;
    if (b->keys) {
      uint32_t ev = a->events;
      *a = *b;
      a->events = ev + b->events < ev ? UINT32_MAX : ev + b->events;
      memset(b, 0, sizeof *b);
    } else {
      a->events = a->events + b->events < a->events ? UINT32_MAX : a->events + b->events;
    }
    return;
  }
  for (uint32_t i = 0; i < b->n; i++) {
    NameArg *y = &b->keys[i], *x = name_arg_find(a, y->key, y->klen, i);
    if (x) x->varies |= y->varies || x->hash != y->hash;
    else name_arg_add(a, y->key, y->klen, y->val, strlen(y->val), y->hash, true);
  }
  for (uint32_t i = 0; i < a->n; i++)
    if (!name_arg_find(b, a->keys[i].key, a->keys[i].klen, i)) a->keys[i].varies = true;
  a->more |= b->more;
  a->events = a->events + b->events < a->events ? UINT32_MAX : a->events + b->events;
}

static void name_args_free(Model *m) {
  for (size_t i = 0; i < m->name_args.n; i++) {
    NameArgs *a = &m->name_args.v[i];
    for (uint32_t k = 0; k < a->n; k++) free(a->keys[k].key), free(a->keys[k].val);
    free(a->keys);
  }
  vec_free(&m->name_args);
}

const NameArgs *model_name_args(const Model *m, uint32_t name) {
  return name < m->name_args.n && m->name_args.v[name].keys ? &m->name_args.v[name] : NULL;
}

static void note_first(char **slot, Walker *w, const char *at, const char *what) {
  if (*slot) return;
  Buf b = {0};
  buf_printf(&b, "%s: %s", walk_where(w, at), what);
  *slot = b.s;
}

/* A name as the model keeps it: at most 64 KiB (cut at a character's
 * start). A trace may say anything: 60 MB names, each distinct, from 60 KB
 * of gzip, cost gigabytes in the names and in every output naming them. */
enum { MAX_NAME = 64 << 10 };
static uint32_t name_id(Loader *L, const char *s, size_t n) {
  if (n > MAX_NAME) {
    n = MAX_NAME;
    while (n && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
  }
  return intern(&L->m->names, s, n);
}

/* A trace's times stay within +-2^62 ns (146 years) and its durations
 * below 2^62: an end (ts + dur) and a difference of two times then never
 * overflow, wherever they are computed (issue 42: a file may say anything) */
#define TIME_LIMIT ((int64_t)1 << 62)
static bool time_ok(int64_t ts) { return ts > -TIME_LIMIT && ts < TIME_LIMIT; }
static bool dur_ok(int64_t dur) { return dur < TIME_LIMIT; }

/* A skipped event: counted and reported; an error under --strict. */
static int skip_event(Loader *L, Walker *w, const char *at, uint64_t *count, char **first, const char *what) {
  if (L->m->strict) return walk_error(w, at, "%s", what);
  (*count)++;
  note_first(first, w, at, what);
  return 0;
}

/* "ncrt": {"throttled": [{"name", "calls", "avg_us"[, "total_calls"]}, ...]}:
 * the names libncrt stopped recording. Anything else in it is ignored. */
static char *span_dup(Loader *L, Span v) {
  Span s;
  return span_string(v, &L->tmp, &s) ? xstrndup(s.s, s.n) : NULL;
}

/* "host": {"name", "id", ...}: where the process ran */
static void read_host(Loader *L, Span v) {
  ObjIter it;
  Member f;
  ProcInfo *p = &L->t->proc;
  if (!obj_iter_init(&it, v)) return;
  while (obj_iter_next(&it, &f)) {
    if (span_eq(f.key, "id")) free(p->host), p->host = span_dup(L, f.val);
    else if (span_eq(f.key, "name")) free(p->host_name), p->host_name = span_dup(L, f.val);
  }
}

/* "process": {"pid", "ppid", "start", "role", "detail", "is_rank", "host"} */
static void read_process(Loader *L, Span v) {
  ObjIter it;
  Member f;
  ProcInfo *p = &L->t->proc;
  if (!obj_iter_init(&it, v)) return;
  p->known = true;
  p->is_rank = true;
  while (obj_iter_next(&it, &f)) {
    if (span_eq(f.key, "pid")) span_int(f.val, &p->pid);
    else if (span_eq(f.key, "ppid")) span_int(f.val, &p->ppid);
    else if (span_eq(f.key, "start")) free(p->start), p->start = span_dup(L, f.val);
    else if (span_eq(f.key, "role")) free(p->role), p->role = span_dup(L, f.val);
    else if (span_eq(f.key, "detail")) free(p->detail), p->detail = span_dup(L, f.val);
    else if (span_eq(f.key, "is_rank")) p->is_rank = f.val.n == 4 && !memcmp(f.val.s, "true", 4);
    else if (span_eq(f.key, "host")) read_host(L, f.val);
  }
}

/* "lifetime": {"start", "exit", "written" (µs, as ts), "died"} */
static void read_lifetime(Loader *L, Span v) {
  ObjIter it;
  Member f;
  Lifetime *l = &L->t->life;
  if (!obj_iter_init(&it, v)) return;
  while (obj_iter_next(&it, &f)) {
    if (span_eq(f.key, "start")) l->has_start = span_us_to_ns(f.val, &l->start);
    else if (span_eq(f.key, "exit")) l->has_exit = span_us_to_ns(f.val, &l->exit);
    else if (span_eq(f.key, "written")) l->has_written = span_us_to_ns(f.val, &l->written);
    else if (span_eq(f.key, "died")) l->died = f.val.n == 4 && !memcmp(f.val.s, "true", 4);
  }
}

static void read_throttled(Loader *L, Span ncrt) {
  ObjIter it, arr, fields;
  Member mb, f;
  Span elem, s;
  if (!obj_iter_init(&it, ncrt)) return;
  while (obj_iter_next(&it, &mb)) {
    if (span_eq(mb.key, "process")) read_process(L, mb.val);
    else if (span_eq(mb.key, "lifetime")) read_lifetime(L, mb.val);
    else if (span_eq(mb.key, "disk_budget")) {
      /* {"bytes", "reached_ts"}: recording stopped at the budget */
      ObjIter bi;
      Member bm;
      if (obj_iter_init(&bi, mb.val))
        while (obj_iter_next(&bi, &bm)) {
          if (span_eq(bm.key, "bytes")) span_int(bm.val, &L->t->budget_bytes);
          else if (span_eq(bm.key, "reached_ts")) span_us_to_ns(bm.val, &L->t->budget_hit_ts);
        }
    }
    if (!span_eq(mb.key, "throttled") || !arr_iter_init(&arr, mb.val)) continue;
    while (arr_iter_next(&arr, &elem)) {
      Throttled th = {0, -1, -1, 0, -1, -1, 0, 0, 0, 0, false};
      int got = 0;
      bool named = false;
      if (!obj_iter_init(&fields, elem)) continue;
      while (obj_iter_next(&fields, &f)) {
        if (span_eq(f.key, "name") && span_string(f.val, &L->tmp, &s)) {
          th.name = name_id(L, s.s, s.n);
          named = true;
        } else if (span_eq(f.key, "calls")) span_int(f.val, &th.calls);
        else if (span_eq(f.key, "total_calls")) span_int(f.val, &th.total_calls);
        else if (span_eq(f.key, "avg_us")) span_double(f.val, &th.avg_us);
        else if (span_eq(f.key, "from_ts")) span_us_to_ns(f.val, &th.from_ts);
        else if (span_eq(f.key, "tid")) span_int(f.val, &th.tid);
        else if (span_eq(f.key, "unrecorded_calls")) got += span_int(f.val, &th.u_calls);
        else if (span_eq(f.key, "unrecorded_incl_us")) got += span_us_to_ns(f.val, &th.u_incl);
        else if (span_eq(f.key, "unrecorded_excl_us")) got += span_us_to_ns(f.val, &th.u_excl);
        else if (span_eq(f.key, "unrecorded_sum_us")) got += span_us_to_ns(f.val, &th.u_sum);
      }
      th.measured = got == 4 && th.total_calls >= 0;
      if (named) vec_push(&L->t->throttled, th);
    }
  }
}

/* "ncrt": {"throttled_inside": [{"name", "us"}, ...]} */
static void read_hidden(Loader *L, Span ncrt) {
  ObjIter it, arr, fields;
  Member mb, f;
  Span elem, s;
  if (!obj_iter_init(&it, ncrt)) return;
  while (obj_iter_next(&it, &mb)) {
    if (!span_eq(mb.key, "throttled_inside") || !arr_iter_init(&arr, mb.val)) continue;
    while (arr_iter_next(&arr, &elem)) {
      Hidden h = {0, -1};
      bool named = false;
      if (!obj_iter_init(&fields, elem)) continue;
      while (obj_iter_next(&fields, &f)) {
        if (span_eq(f.key, "name") && span_string(f.val, &L->tmp, &s)) {
          h.name = intern(&L->m->names, s.s, s.n);
          named = true;
        } else if (span_eq(f.key, "us")) span_us_to_ns(f.val, &h.ns);
      }
      if (named && h.ns > 0) vec_push(&L->t->hidden, h);
    }
  }
}

static int on_header(void *ctx, Walker *w, Span key, Span val) {
  Loader *L = ctx;
  if (span_eq(key, "baseTimeNanoseconds")) {
    if (!span_int(val, &L->t->base_ns)) return walk_error(w, val.s, "baseTimeNanoseconds is not an integer");
    L->t->has_base = true;
  } else if (span_eq(key, "distributedInfo")) {
    ObjIter it;
    Member mb;
    if (!obj_iter_init(&it, val)) return 0;
    while (obj_iter_next(&it, &mb)) {
      if (span_eq(mb.key, "rank")) span_int(mb.val, &L->t->rank);
      else if (span_eq(mb.key, "world_size")) span_int(mb.val, &L->t->world_size);
    }
  } else if (span_eq(key, "ncrt")) {
    read_throttled(L, val);
    read_hidden(L, val);
  }
  return 0;
}

static int on_event(void *ctx, Walker *w, const Member *mem, size_t n, Span raw) {
  Loader *L = ctx;
  Trace *t = L->t;
  LoadNotes *nt = &t->notes;
  nt->events++;
  Span ph = {0}, cat = {0}, name = {0}, pid = {0}, tid = {0}, ts = {0}, dur = {0}, args = {0}, depth = {0};
  for (size_t i = 0; i < n; i++) {
    Span k = mem[i].key;
    switch (k.n) {
    case 2:
      if (k.s[0] == 'p' && k.s[1] == 'h') ph = mem[i].val;
      else if (k.s[0] == 't' && k.s[1] == 's') ts = mem[i].val;
      break;
    case 3:
      if (!memcmp(k.s, "cat", 3)) cat = mem[i].val;
      else if (!memcmp(k.s, "pid", 3)) pid = mem[i].val;
      else if (!memcmp(k.s, "tid", 3)) tid = mem[i].val;
      else if (!memcmp(k.s, "dur", 3)) dur = mem[i].val;
      break;
    case 4:
      if (!memcmp(k.s, "name", 4)) name = mem[i].val;
      else if (!memcmp(k.s, "args", 4)) args = mem[i].val;
      break;
    case 5:
      if (!memcmp(k.s, "depth", 5)) depth = mem[i].val; /* ncrt's nesting depth: only a sink reads it */
      break;
    }
  }
  Span phs;
  if (!ph.s || !span_string(ph, &L->tmp, &phs) || phs.n != 1)
    return skip_event(L, w, raw.s, &nt->malformed, &nt->first_malformed, "event without a one-letter \"ph\"");
  char p = phs.s[0];
  if (p == 'M') {
    /* process_name / thread_name metadata */
    Span nm, an;
    if (!name.s || !span_string(name, &L->tmp, &nm) || !args.s) return 0;
    bool proc = span_eq(nm, "process_name"), thr = span_eq(nm, "thread_name");
    if (!proc && !thr) return 0;
    size_t na;
    const Member *am = walk_args(w, &na);
    uint32_t pidid = intern(&L->m->ids, pid.s ? pid.s : "0", pid.s ? pid.n : 1);
    for (size_t k = 0; k < na; k++) {
      if (thr && span_eq(am[k].key, "ncrt lane of") && am[k].val.n && am[k].val.s[0] != '"') {
        /* until the load ends: Model.ids of the real thread's tid */
        uint32_t tidid = intern(&L->m->ids, tid.s ? tid.s : "0", tid.s ? tid.n : 1);
        t->threads.v[thread_index(L, pidid, tidid)].lane_of = intern(&L->m->ids, am[k].val.s, am[k].val.n);
      }
      if (!span_eq(am[k].key, "name") || !span_string(am[k].val, &L->tmp2, &an)) continue;
      uint32_t label = name_id(L, an.s, an.n);
      if (proc) {
        i64map_put(&t->process_label, pidid, label);
      } else {
        uint32_t tidid = intern(&L->m->ids, tid.s ? tid.s : "0", tid.s ? tid.n : 1);
        uint32_t ti = thread_index(L, pidid, tidid); /* may move t->threads.v */
        t->threads.v[ti].label = label;
      }
    }
    return 0;
  }
  if (p != 'X' && p != 'B' && p != 'E') {
    nt->ignored_ph++;
    return 0;
  }
  if (p != 'X') L->saw_be = true;
  Ev e = {0};
  e.corr = e.bytes = -1;
  e.ord = (uint32_t)walk_ordinal(w);
  if (!ts.s || !span_us_to_ns(ts, &e.ts))
    return skip_event(L, w, raw.s, &nt->malformed, &nt->first_malformed,
                      ts.s ? "\"ts\" is not a number" : "event without \"ts\"");
  if (!time_ok(e.ts))
    return skip_event(L, w, raw.s, &nt->malformed, &nt->first_malformed, "\"ts\" beyond 2^62 ns (146 years)");
  e.thread = thread_of_event(L, pid, tid);
  Thread *th = &t->threads.v[e.thread];
  if (p == 'E') {
    if (!th->open.n) {
      nt->unmatched_end++;
      return 0;
    }
    Ev *b = &t->ev.v[th->open.v[--th->open.n]];
    b->dur = e.ts - b->ts;
    if (b->dur < 0) {
      b->dur = 0;
      nt->negative++;
      note_first(&nt->first_negative, w, raw.s, "\"E\" before its \"B\"");
    }
    return 0;
  }
  if (p == 'X') {
    if (!dur.s || !span_us_to_ns(dur, &e.dur))
      return skip_event(L, w, raw.s, &nt->malformed, &nt->first_malformed,
                        dur.s ? "\"dur\" is not a number" : "complete event without \"dur\"");
    if (e.dur < 0) return skip_event(L, w, raw.s, &nt->negative, &nt->first_negative, "negative \"dur\"");
    if (!dur_ok(e.dur))
      return skip_event(L, w, raw.s, &nt->malformed, &nt->first_malformed, "\"dur\" beyond 2^62 ns (146 years)");
  } else {
    e.dur = -1; /* open until its E */
  }
  Span c, nm;
  if (!cat.s) {
    e.kind = K_NONE;
  } else if (!span_string(cat, &L->tmp, &c)) {
    return skip_event(L, w, raw.s, &nt->malformed, &nt->first_malformed, "\"cat\" is not a string");
  } else {
    e.kind = (uint8_t)kind_of_cat(c);
    if (e.kind == K_UNKNOWN) {
      nt->unknown_cat++;
      if (nt->unknown_cats.n < 8) {
        uint32_t id = name_id(L, c.s, c.n);
        bool seen = false;
        for (size_t i = 0; i < nt->unknown_cats.n; i++) seen |= nt->unknown_cats.v[i] == id;
        if (!seen) vec_push(&nt->unknown_cats, id);
      }
    }
  }
  if (!name.s || !span_string(name, &L->tmp, &nm))
    return skip_event(L, w, raw.s, &nt->malformed, &nt->first_malformed,
                      name.s ? "\"name\" is not a string" : "event without \"name\"");
  e.name = name_id(L, nm.s, nm.n);
  if (L->m->keep_args) {
    size_t na = 0;
    const Member *am = args.s ? walk_args(w, &na) : NULL;
    name_args_note(L->m, e.name, am, na);
  }
  if (e.kind == K_CUDA_SYNC) nt->cuda_sync++;
  if (kind_is_gpu_op(e.kind) || e.kind == K_GPU_USER_ANNOTATION || e.kind == K_CUDA_SYNC) th->gpu = true;
  if (args.s && (kind_is_gpu_op(e.kind) || e.kind == K_CUDA_RUNTIME || e.kind == K_CUDA_DRIVER)) {
    size_t na;
    const Member *am = walk_args(w, &na);
    for (size_t k = 0; k < na; k++) {
      Span key = am[k].key;
      if (key.n == 11 && !memcmp(key.s, "correlation", 11)) span_int(am[k].val, &e.corr);
      else if (key.n == 5 && !memcmp(key.s, "bytes", 5)) span_int(am[k].val, &e.bytes);
    }
  }
  /* the raw text is searched first: walking the args of every range would
   * cost the big-trace reader a tenth of its speed */
  if (args.s && e.kind == K_USER_ANNOTATION && p == 'X' && memmem(args.s, args.n, "\"start/end\"", 11)) {
    size_t na;
    const Member *am = walk_args(w, &na);
    for (size_t k = 0; k < na; k++)
      if (span_eq(am[k].key, "start/end") && am[k].val.n == 4 && !memcmp(am[k].val.s, "true", 4))
        e.flags |= EV_ASYNC;
  }
  if (L->m->sink) {
    EvSink *k = L->m->sink;
    if (p == 'B') return k->give_up(k, "B/E events");
    int64_t d = -1;
    if (depth.s && (!span_int(depth, &d) || d < 0)) d = -1;
    return model_put_event(L->m, t, &e, d);
  }
  if (t->ev.n >= UINT32_MAX) return walk_error(w, raw.s, "more than 4 billion events");
  if (p == 'B') {
    vec_push(&t->ev, e); /* its dur comes with its E */
    vec_push(&th->open, (uint32_t)(t->ev.n - 1));
    return 0;
  }
  return model_put_event(L->m, t, &e, -1);
}

/* A binary trace's range or mark (pbread.h), with no JSON to scan: the
 * same Ev as on_event makes from the range's JSON text (the two agree:
 * runtime/perfetto compares the summaries both ways). */
static struct DirectKind *direct_kind(Loader *L, const DirectEv *d) {
  int64_t key = (int64_t)d->kind, at; /* pbread: an index, one per name definition (never a literal id beside an iid) */
  if (i64map_get(&L->kind_of, key, &at)) return &L->kinds.v[at];
  struct DirectKind k = {0};
  Span nm, name = {d->name, d->name_n};
  k.name = span_string(name, &L->tmp, &nm) ? name_id(L, nm.s, nm.n) : intern(&L->m->names, "?", 1);
  k.depth = -1;
  k.text = xmalloc(d->rest_n + 1);
  memcpy(k.text, d->rest, d->rest_n);
  k.text[d->rest_n] = 0;
  if (d->rest_n) k.text[0] = '{'; /* ,"depth":2,"args":{..}} as an object */
  ObjIter it, ia;
  Member mm;
  if (d->rest_n > 1 && obj_iter_init(&it, (Span){k.text, d->rest_n}))
    while (obj_iter_next(&it, &mm)) {
      if (span_eq(mm.key, "depth") && (!span_int(mm.val, &k.depth) || k.depth < 0)) k.depth = -1;
      if (span_eq(mm.key, "args") && obj_iter_init(&ia, mm.val))
        while (obj_iter_next(&ia, &mm)) vec_push(&k.args, mm);
    }
  vec_push(&L->kinds, k);
  i64map_put(&L->kind_of, key, (int64_t)L->kinds.n - 1);
  return &L->kinds.v[L->kinds.n - 1];
}

static int on_direct(void *ctx, Walker *w, const DirectEv *d) {
  Loader *L = ctx;
  Trace *t = L->t;
  t->notes.events++;
  if (d->dur < 0) { /* a mark: as on_event, an instant is not a range */
    t->notes.ignored_ph++;
    return 0;
  }
  if (!time_ok(d->ts) || !dur_ok(d->dur)) /* as on_event: malformed, skipped */
    return skip_event(L, w, NULL, &t->notes.malformed, &t->notes.first_malformed, "a time beyond 2^62 ns (146 years)");
  while (L->track_thread.n <= d->track) vec_push(&L->track_thread, 0);
  uint32_t *tt = &L->track_thread.v[d->track];
  if (!*tt) {
    char p[24], q[24];
    int pn = snprintf(p, sizeof p, "%lld", (long long)d->pid), qn = snprintf(q, sizeof q, "%lld", (long long)d->tid);
    *tt = 1 + thread_of_event(L, (Span){p, (size_t)pn}, (Span){q, (size_t)qn});
  }
  struct DirectKind *k = direct_kind(L, d);
  Ev e = {0};
  e.ts = d->ts;
  e.dur = d->dur;
  e.corr = e.bytes = -1;
  e.name = k->name;
  e.thread = *tt - 1;
  e.ord = (uint32_t)walk_ordinal(w);
  e.kind = K_USER_ANNOTATION;
  if (L->m->keep_args) name_args_note(L->m, e.name, k->args.v, k->args.n);
  return model_put_event(L->m, t, &e, k->depth);
}

static void direct_free(Loader *L) {
  for (size_t i = 0; i < L->kinds.n; i++) {
    free(L->kinds.v[i].text);
    vec_free(&L->kinds.v[i].args);
  }
  vec_free(&L->kinds);
  i64map_free(&L->kind_of);
  vec_free(&L->track_thread);
}

int model_put_event(Model *m, Trace *t, const Ev *e, int64_t depth) {
  if (m->sink) return m->sink->event(m->sink, t, e, depth);
  if (t->ev.n >= UINT32_MAX) return nct_error("%s: more than 4 billion events", t->path);
  vec_push(&t->ev, *e);
  return 0;
}

/* ---- split loading ----
 *
 * A plain (not gzip) file of SPLIT_MIN bytes or more is read by two
 * threads: this one from the start, a second one from an event boundary
 * near the middle, each into its own events and name tables. The boundary
 * is a guess (a '{' after "},", a newline and blanks: a newline cannot be
 * inside a JSON string, but the object could be nested in some args); the
 * first reader checks it when it gets there, and only if it lands exactly
 * on it, both halves are complete and no B/E events pair across them, are
 * the second half's events taken (renumbered into this trace). Otherwise
 * the first reader simply goes on and the second half is thrown away: the
 * result is always the sequential one (tests/trace/test_split.py). */
enum { SPLIT_MIN = 32 << 20 };

struct Half {
  pthread_t th;
  Model m;
  Trace t;
  Loader L;
  const char *path;
  uint64_t at;
  int rc;
};

static void *half_main(void *arg) {
  Half *h = arg;
  nct_silent = true; /* the first reader reports any error again, if it matters */
  Visitor v = {on_header, on_event, &h->L, NULL, NULL};
  h->rc = trace_walk_from(h->path, &v, h->at);
  return NULL;
}

/* Where the second half may start: 0 if nowhere (or not worth it). */
static uint64_t split_point(const char *path) {
  if (!trace_second_thread() || trace_is_perfetto(path)) return 0;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  uint64_t at = 0;
  unsigned char head[2] = {0};
  static __thread char win[1 << 16];
  if (fread(head, 1, 2, f) == 2 && !(head[0] == 0x1f && head[1] == 0x8b) && fseeko(f, 0, SEEK_END) == 0) {
    off_t size = ftello(f);
    if (size >= SPLIT_MIN && fseeko(f, size / 2, SEEK_SET) == 0) {
      size_t n = fread(win, 1, sizeof win, f);
      for (size_t i = 0; i + 1 < n && !at; i++) {
        if (win[i] != '}') continue;
        size_t j = i + 1;
        while (j < n && (win[j] == ' ' || win[j] == '\t' || win[j] == '\r')) j++;
        if (j >= n || win[j] != ',') continue;
        bool nl = false;
        for (j++; j < n && (win[j] == ' ' || win[j] == '\t' || win[j] == '\r' || win[j] == '\n'); j++)
          nl |= win[j] == '\n';
        if (nl && j < n && win[j] == '{') at = (uint64_t)(size / 2) + j;
      }
    }
  }
  fclose(f);
  return at;
}

/* Everything a Trace owns (not the Trace itself). */
static void trace_free_fields(Trace *t) {
  free(t->path);
  vec_free(&t->ev);
  for (size_t j = 0; j < t->threads.n; j++) vec_free(&t->threads.v[j].open);
  vec_free(&t->threads);
  i64map_free(&t->thread_of);
  i64map_free(&t->process_label);
  free(t->notes.first_malformed);
  free(t->notes.first_negative);
  vec_free(&t->notes.unknown_cats);
  vec_free(&t->throttled);
  vec_free(&t->hidden);
  free(t->proc.start);
  free(t->proc.role);
  free(t->proc.detail);
  free(t->proc.host);
  free(t->proc.host_name);
}

static void half_free(Half *h) {
  trace_free_fields(&h->t);
  intern_free(&h->m.names);
  intern_free(&h->m.ids);
  name_args_free(&h->m);
  buf_free(&h->L.tmp);
  buf_free(&h->L.tmp2);
  free(h);
}

static uint32_t *remap(Intern *to, const Intern *from) {
  size_t n = intern_count(from);
  uint32_t *map = xmalloc((n ? n : 1) * sizeof *map);
  for (size_t i = 0; i < n; i++) map[i] = intern(to, intern_str(from, (uint32_t)i), from->len.v[i]);
  return map;
}

/* The second half's events and tables, renumbered into L's trace. */
static void half_merge(Loader *L, Half *h, uint64_t events_before) {
  Trace *t = L->t, *u = &h->t;
  uint32_t *names = remap(&L->m->names, &h->m.names), *ids = remap(&L->m->ids, &h->m.ids);
  uint32_t *threads = xmalloc((u->threads.n ? u->threads.n : 1) * sizeof *threads);
  for (size_t i = 0; i < u->threads.n; i++) {
    const Thread *x = &u->threads.v[i];
    threads[i] = thread_index(L, ids[x->pid], ids[x->tid]);
    Thread *y = &t->threads.v[threads[i]];
    if (x->label >= 0) y->label = names[x->label]; /* later metadata wins, as in one pass */
    if (x->lane_of >= 0) y->lane_of = ids[x->lane_of];
    y->gpu |= x->gpu;
  }
  for (size_t i = 0; i < h->m.name_args.n; i++) name_args_merge(L->m, names[i], &h->m.name_args.v[i]);
  vec_grow(&t->ev, t->ev.n + u->ev.n);
  for (size_t i = 0; i < u->ev.n; i++) {
    Ev e = u->ev.v[i];
    e.name = names[e.name];
    e.thread = threads[e.thread];
    e.ord += (uint32_t)events_before;
    t->ev.v[t->ev.n++] = e;
  }
  for (size_t i = 0; i < u->process_label.cap; i++)
    if (u->process_label.keys[i] != INT64_MIN)
      i64map_put(&t->process_label, ids[u->process_label.keys[i]], names[u->process_label.vals[i]]);
  LoadNotes *a = &t->notes, *b = &u->notes;
  a->events += b->events;
  a->malformed += b->malformed;
  a->negative += b->negative;
  a->unknown_cat += b->unknown_cat;
  a->unmatched_end += b->unmatched_end;
  a->ignored_ph += b->ignored_ph;
  a->cuda_sync += b->cuda_sync;
  if (!a->first_malformed) a->first_malformed = b->first_malformed, b->first_malformed = NULL;
  if (!a->first_negative) a->first_negative = b->first_negative, b->first_negative = NULL;
  for (size_t i = 0; i < b->unknown_cats.n && a->unknown_cats.n < 8; i++) {
    uint32_t id = names[b->unknown_cats.v[i]];
    bool seen = false;
    for (size_t k = 0; k < a->unknown_cats.n; k++) seen |= a->unknown_cats.v[k] == id;
    if (!seen) vec_push(&a->unknown_cats, id);
  }
  /* header members after the events (Kineto writes some there) */
  if (u->has_base) t->has_base = true, t->base_ns = u->base_ns;
  if (u->rank >= 0) t->rank = u->rank;
  if (u->world_size >= 0) t->world_size = u->world_size;
  for (size_t i = 0; i < u->throttled.n; i++) {
    Throttled th = u->throttled.v[i];
    th.name = names[th.name];
    vec_push(&t->throttled, th);
  }
  for (size_t i = 0; i < u->hidden.n; i++) {
    Hidden hd = u->hidden.v[i];
    hd.name = names[hd.name];
    vec_push(&t->hidden, hd);
  }
  if (u->proc.known) {
    free(t->proc.start), free(t->proc.role), free(t->proc.detail), free(t->proc.host), free(t->proc.host_name);
    t->proc = u->proc;
    memset(&u->proc, 0, sizeof u->proc);
  }
  if (u->life.has_written || u->life.has_start || u->life.has_exit) t->life = u->life;
  if (u->budget_bytes) t->budget_bytes = u->budget_bytes;
  if (u->budget_hit_ts >= 0) t->budget_hit_ts = u->budget_hit_ts;
  free(names);
  free(ids);
  free(threads);
}

uint32_t *model_adopt(Model *into, Model *from) {
  uint32_t *names = remap(&into->names, &from->names), *ids = remap(&into->ids, &from->ids);
  for (size_t i = 0; i < from->name_args.n; i++) name_args_merge(into, names[i], &from->name_args.v[i]);
  for (size_t ti = 0; ti < from->traces.n; ti++) {
    Trace *t = from->traces.v[ti];
    i64map_free(&t->thread_of);
    for (size_t i = 0; i < t->threads.n; i++) {
      Thread *x = &t->threads.v[i];
      x->pid = ids[x->pid];
      x->tid = ids[x->tid];
      if (x->label >= 0) x->label = names[x->label];
      i64map_put(&t->thread_of, (int64_t)((uint64_t)x->pid << 32 | x->tid), (int64_t)i);
    }
    I64Map pl = {0};
    for (size_t i = 0; i < t->process_label.cap; i++)
      if (t->process_label.keys[i] != INT64_MIN)
        i64map_put(&pl, ids[t->process_label.keys[i]], names[t->process_label.vals[i]]);
    i64map_free(&t->process_label);
    t->process_label = pl;
    for (size_t i = 0; i < t->notes.unknown_cats.n; i++) t->notes.unknown_cats.v[i] = names[t->notes.unknown_cats.v[i]];
    for (size_t i = 0; i < t->throttled.n; i++) t->throttled.v[i].name = names[t->throttled.v[i].name];
    for (size_t i = 0; i < t->hidden.n; i++) t->hidden.v[i].name = names[t->hidden.v[i].name];
    for (size_t i = 0; i < t->ev.n; i++) t->ev.v[i].name = names[t->ev.v[i].name];
    vec_push(&into->traces, t);
  }
  vec_free(&from->traces);
  model_free(from);
  free(ids);
  return names;
}

static bool on_split(void *ctx, bool exact, uint64_t events) {
  Loader *L = ctx;
  Half *h = L->half;
  if (!h) return false;
  pthread_join(h->th, NULL);
  L->half = NULL;
  bool take = exact && h->rc == 0 && !h->L.saw_be && !L->saw_be;
  if (getenv("NCTRACE_SPLIT_REPORT"))
    nct_note("split load of %s at byte %llu: %s", L->t->path, (unsigned long long)h->at,
            take ? "taken" : !exact ? "not an event boundary" : h->rc ? "second half failed" : "B/E events");
  if (take) half_merge(L, h, events);
  half_free(h);
  return take;
}

static int load_file(Model *m, const char *path);

/* A run directory (what ncrun prints): every trace in it, ranks in order. */
static int load_dir(Model *m, const char *dir) {
  char **files;
  int n = trace_dir_files(dir, &files);
  if (n < 0) return -1;
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (!rc && load_file(m, files[i]) < 0) rc = -1;
    free(files[i]);
  }
  free(files);
  return rc;
}

int model_load(Model *m, const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return load_dir(m, path);
  return load_file(m, path);
}

/* ncrt writes start/end ranges on lanes (virtual threads, so that viewers
 * see no improper overlap); their events go back to the thread they belong
 * to, where the analyses expect them (EV_ASYNC: outside the nesting). The
 * lanes stay, empty, with lane_of turned into that thread's index. */
static void fold_lanes(Loader *L) {
  Trace *t = L->t;
  size_t n = t->threads.n;
  uint32_t *to = NULL;
  for (size_t i = 0; i < n; i++) {
    if (t->threads.v[i].lane_of < 0) continue;
    if (!to) {
      to = xmalloc(n * sizeof *to);
      for (size_t k = 0; k < n; k++) to[k] = (uint32_t)k;
    }
    uint32_t real = thread_index(L, t->threads.v[i].pid, (uint32_t)t->threads.v[i].lane_of); /* may add one */
    t->threads.v[i].lane_of = real;
    to[i] = real;
  }
  if (!to) return;
  for (size_t i = 0; i < t->ev.n; i++) t->ev.v[i].thread = to[t->ev.v[i].thread];
  free(to);
}

static int load_file(Model *m, const char *path) {
  Trace *t = xcalloc(1, sizeof *t);
  t->path = xstrdup(path);
  t->rank = t->world_size = -1;
  t->budget_hit_ts = -1;
  vec_push(&m->traces, t);
  Loader L = {.m = m, .t = t};
  /* a sink folds each thread's events in file order: one reader only */
  uint64_t split = m->sink ? 0 : split_point(path);
  if (m->sink) m->sink->trace_begin(m->sink, t);
  if (split) {
    Half *h = xcalloc(1, sizeof *h);
    h->path = path;
    h->at = split;
    h->t.rank = h->t.world_size = -1;
    h->t.budget_hit_ts = -1;
    h->m.strict = m->strict;
    h->m.keep_args = m->keep_args;
    h->L.m = &h->m;
    h->L.t = &h->t;
    if (pthread_create(&h->th, NULL, half_main, h) == 0) L.half = h;
    else free(h), split = 0;
  }
  Visitor v = {on_header, on_event, &L, on_split, on_direct};
  int rc = trace_walk_split(path, &v, &t->legacy, split);
  if (L.half) on_split(&L, false, 0); /* never reached the boundary: not used */
  else if (!split && getenv("NCTRACE_SPLIT_REPORT")) nct_note("%s read by one thread", path);
  buf_free(&L.tmp);
  buf_free(&L.tmp2);
  direct_free(&L);
  if (rc < 0) return -1;
  fold_lanes(&L);
  if (m->sink) return m->sink->trace_end(m->sink, t);
  /* B without E: dropped (their end is unknown) */
  for (size_t i = 0; i < t->threads.n; i++) {
    t->notes.unclosed_begin += t->threads.v[i].open.n;
    vec_free(&t->threads.v[i].open);
  }
  if (t->notes.unclosed_begin) {
    size_t k = 0;
    for (size_t i = 0; i < t->ev.n; i++)
      if (t->ev.v[i].dur >= 0) t->ev.v[k++] = t->ev.v[i];
    t->ev.n = k;
  }
  return 0;
}

void model_check_ranks(const Model *m) {
  for (size_t i = 0; i < m->traces.n; i++) {
    const Trace *a = m->traces.v[i];
    if (a->rank < 0 || (a->proc.known && !a->proc.is_rank)) continue;
    for (size_t j = 0; j < i; j++) {
      const Trace *b = m->traces.v[j];
      if (b->rank != a->rank || (b->proc.known && !b->proc.is_rank)) continue;
      nct_warning("rank %lld is in both %s and %s: they are summarised as two ranks of one run (per-rank and "
                  "slow-rank figures mix the files); to compare two runs, summarise each on its own",
                  (long long)a->rank, b->path, a->path);
      break; /* one warning per file */
    }
  }
}

void model_free(Model *m) {
  for (size_t i = 0; i < m->traces.n; i++) {
    trace_free_fields(m->traces.v[i]);
    free(m->traces.v[i]);
  }
  vec_free(&m->traces);
  intern_free(&m->names);
  intern_free(&m->ids);
  name_args_free(m);
}

const Throttled *trace_throttled(const Trace *t, uint32_t name) {
  for (size_t i = 0; i < t->throttled.n; i++)
    if (t->throttled.v[i].name == name) return &t->throttled.v[i];
  return NULL;
}

const char *model_id_text(const Model *m, uint32_t id, Buf *tmp) {
  const char *s = intern_str(&m->ids, id);
  size_t n = strlen(s);
  if (n >= 2 && s[0] == '"') {
    tmp->len = 0;
    buf_add(tmp, s + 1, n - 2);
    return tmp->s;
  }
  return s;
}

void model_thread_label(const Model *m, const Trace *t, uint32_t thread, Buf *out) {
  const Thread *th = &t->threads.v[thread];
  Buf tmp = {0};
  if (th->gpu) {
    buf_printf(out, "GPU %s", model_id_text(m, th->pid, &tmp));
    buf_printf(out, " stream %s", model_id_text(m, th->tid, &tmp));
  } else {
    buf_printf(out, "pid %s", model_id_text(m, th->pid, &tmp));
    buf_printf(out, " tid %s", model_id_text(m, th->tid, &tmp));
  }
  if (th->label >= 0) buf_printf(out, " (%s)", intern_str(&m->names, (uint32_t)th->label));
  buf_free(&tmp);
}
