/* writer.c: the collected records as one Chrome-trace file in the layout
 * torch.profiler/Kineto writes, gzip'ed as ONE stream (Perfetto reads only
 * the first gzip member), written to a temporary name and renamed so that a
 * reader never sees half a trace.
 *
 * Top level: schemaVersion, deviceProperties, distributedInfo, displayTimeUnit,
 * baseTimeNanoseconds (CLOCK_REALTIME ns of our clock origin), traceName,
 * traceEvents, and "ncrt" (throttled names, dropped records, CUPTI status).
 * ts/dur are µs with 3 decimals relative to baseTimeNanoseconds.
 *
 * Events: push/pop ranges are ph X cat user_annotation on (pid, tid);
 * start/end ranges, which may overlap or end on another thread, are async
 * ph b/e pairs with an id; marks are ph i. GPU work (cupti.c) becomes
 * kernel / gpu_memcpy / gpu_memset on (device, stream), API calls become
 * cuda_runtime / cuda_driver on (pid, tid), joined by ac2g flows, and each
 * kernel names the innermost range open on the launching thread when it was
 * launched (args.range), summed up as gpu_user_annotation spans.
 *
 * The writer consumes what it writes: chunks it has read are freed. A
 * process that recorded nothing writes no file; one whose file name is
 * already taken by another process (a subprocess with the same rank)
 * writes <name>-pid<PID>-rank<R>.trace.json.gz instead. */
#define _GNU_SOURCE
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ---- one gzip stream with a byte buffer in front ---- */

typedef struct {
  z_stream z;
  FILE *f;
  size_t n;
  int err;
  char buf[1 << 17];
  unsigned char out[1 << 17];
} Gz;

static void gz_drain(Gz *g, int mode) {
  if (g->err) { /* the file is lost already: stop compressing */
    g->n = 0;
    return;
  }
  g->z.next_in = (unsigned char *)g->buf;
  g->z.avail_in = (uInt)g->n;
  do {
    g->z.next_out = g->out;
    g->z.avail_out = sizeof g->out;
    if (deflate(&g->z, mode) == Z_STREAM_ERROR) g->err = EINVAL;
    size_t have = sizeof g->out - g->z.avail_out;
    if (have && !g->err && fwrite(g->out, 1, have, g->f) != have) g->err = errno ? errno : EIO;
  } while (g->z.avail_out == 0);
  g->n = 0;
}

static inline void need(Gz *g, size_t k) {
  if (sizeof g->buf - g->n < k) gz_drain(g, Z_NO_FLUSH);
}

static inline void put(Gz *g, const char *s, size_t k) {
  if (k > sizeof g->buf / 2) {
    for (size_t i = 0; i < k; i += 4096) put(g, s + i, k - i < 4096 ? k - i : 4096);
    return;
  }
  need(g, k);
  memcpy(g->buf + g->n, s, k);
  g->n += k;
}
/* "" lit: only a string literal compiles (sizeof of a pointer would cut it) */
#define PUTS(g, lit) put(g, "" lit, sizeof(lit) - 1)

static inline void put_u64(Gz *g, uint64_t v) {
  char tmp[24];
  int i = 24;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  put(g, tmp + i, (size_t)(24 - i));
}

static inline void put_i64(Gz *g, int64_t v) {
  if (v < 0) {
    PUTS(g, "-");
    put_u64(g, (uint64_t)(-v));
  } else {
    put_u64(g, (uint64_t)v);
  }
}

/* nanoseconds as microseconds with three decimals */
static inline void put_us(Gz *g, int64_t ns) {
  if (ns < 0) {
    PUTS(g, "-");
    ns = -ns;
  }
  put_u64(g, (uint64_t)ns / 1000);
  char d[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
  put(g, d, 4);
}

static void put_jstr(Gz *g, const char *s) {
  need(g, 2);
  g->buf[g->n++] = '"';
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    need(g, 8);
    if (*p == '"' || *p == '\\') {
      g->buf[g->n++] = '\\';
      g->buf[g->n++] = (char)*p;
    } else if (*p < 0x20) {
      g->n += (size_t)snprintf(g->buf + g->n, 8, "\\u%04x", *p);
    } else {
      g->buf[g->n++] = (char)*p;
    }
  }
  need(g, 1);
  g->buf[g->n++] = '"';
}

/* Names are written escaped once and cached. */
static char **esc_cache;
static uint32_t esc_n;

static const char *esc_name(uint32_t id) {
  if (id >= esc_n) {
    uint32_t n = esc_n ? esc_n : 1024;
    while (n <= id) n *= 2;
    char **c = realloc(esc_cache, n * sizeof *c);
    if (!c) return "\"?\"";
    memset(c + esc_n, 0, (n - esc_n) * sizeof *c);
    esc_cache = c;
    esc_n = n;
  }
  if (!esc_cache[id]) {
    const char *s = rt_name(id)->str;
    size_t len = strlen(s);
    char *e = malloc(len * 6 + 3), *q = e;
    if (!e) return "\"?\"";
    *q++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
      if (*p == '"' || *p == '\\') {
        *q++ = '\\';
        *q++ = (char)*p;
      } else if (*p < 0x20) {
        q += sprintf(q, "\\u%04x", *p);
      } else {
        *q++ = (char)*p;
      }
    }
    *q++ = '"';
    *q = 0;
    esc_cache[id] = e;
  }
  return esc_cache[id];
}

static inline void put_name(Gz *g, uint32_t id) {
  const char *e = esc_name(id);
  put(g, e, strlen(e));
}

/* ---- ranges of launching threads, for attribution ---- */

typedef struct {
  uint64_t start, end; /* ns */
  uint32_t name;
  uint32_t depth;
} Span;

typedef struct {
  uint32_t tid;
  Span *v;
  size_t n, cap;
} TidSpans;

static TidSpans *tid_spans;
static size_t tid_spans_n;

static TidSpans *spans_for(uint32_t tid) {
  for (size_t i = 0; i < tid_spans_n; i++)
    if (tid_spans[i].tid == tid) return &tid_spans[i];
  return NULL;
}

static void spans_add(TidSpans *s, uint64_t a, uint64_t b, uint32_t name, uint32_t depth) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    Span *v = realloc(s->v, cap * sizeof *v);
    if (!v) return;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = (Span){a, b, name, depth};
}

static int span_cmp(const void *a, const void *b) {
  const Span *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* innermost range on tid containing time t, or NULL */
static const Span *innermost(uint32_t tid, uint64_t t) {
  TidSpans *s = spans_for(tid);
  if (!s || !s->n) return NULL;
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->v[mid].start <= t) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo, k = 0; i-- > 0 && k < 1000000; k++)
    if (s->v[i].end >= t) return &s->v[i];
  return NULL;
}

/* ---- the trace ---- */

typedef struct {
  uint64_t id, start, end;
  uint32_t name, tid;
  uint8_t cat;
} SpanRec;

static int64_t rel(uint64_t ns) { return (int64_t)(ns - rt_clock_origin_ns()); }

/* The start of a user_annotation event: complete (X, dur follows) or
 * instant (a mark), up to and including its ts. */
static void put_annotation(Gz *g, int instant, uint32_t name, int pid, uint64_t tid, uint64_t ts_ns) {
  if (instant) PUTS(g, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
  else PUTS(g, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
  put_name(g, name);
  PUTS(g, ",\"pid\":");
  put_i64(g, pid);
  PUTS(g, ",\"tid\":");
  put_u64(g, tid);
  PUTS(g, ",\"ts\":");
  put_us(g, rel(ts_ns));
}

/* deviceProperties, with Kineto's field names */
static void put_devices(Gz *g) {
  const RtDevice *d;
  int n = rt_devices(&d);
  for (int i = 0; i < n; i++) {
    char buf[768];
    if (i) PUTS(g, ",");
    PUTS(g, "\n  {\"id\": "); /* PUTS takes literals only (sizeof) */
    put_i64(g, d[i].id);
    PUTS(g, ", \"name\": ");
    put_jstr(g, d[i].name);
    snprintf(buf, sizeof buf,
             ", \"totalGlobalMem\": %llu, \"computeMajor\": %d, \"computeMinor\": %d, \"maxThreadsPerBlock\": %d, "
             "\"maxThreadsPerMultiprocessor\": %d, \"regsPerBlock\": %d, \"regsPerMultiprocessor\": %d, "
             "\"warpSize\": %d, \"sharedMemPerBlock\": %llu, \"sharedMemPerMultiprocessor\": %llu, "
             "\"numSms\": %d, \"sharedMemPerBlockOptin\": %llu}",
             (unsigned long long)d[i].total_mem, d[i].cc_major, d[i].cc_minor, d[i].max_threads_per_block,
             d[i].max_threads_per_sm, d[i].regs_per_block, d[i].regs_per_sm, d[i].warp_size,
             (unsigned long long)d[i].shmem_per_block, (unsigned long long)d[i].shmem_per_sm, d[i].num_sms,
             (unsigned long long)d[i].shmem_per_block_optin);
    put(g, buf, strlen(buf));
  }
}

/* Starts still open at a cycle's write, for the next write. */
static SpanRec *span_carry;
static size_t span_carry_n;

/* One start/end range as an X event; end_tid 0: still open at exit. */
static void put_span(Gz *g, int pid, const SpanRec *b, uint64_t end, uint32_t end_tid) {
  put_annotation(g, 0, b->name, pid, b->tid, b->start);
  PUTS(g, ",\"dur\":");
  put_us(g, (int64_t)(end - b->start));
  PUTS(g, ",\"args\":{\"start/end\":true,\"range id\":");
  put_u64(g, b->id);
  if (!end_tid) {
    PUTS(g, ",\"open at exit\":true");
  } else if (end_tid != b->tid) {
    PUTS(g, ",\"end thread\":");
    put_u64(g, end_tid);
  }
  PUTS(g, "}}");
}

static void write_thread_names(Gz *g, int pid) {
  for (RtThread *t = rt_threads(); t; t = t->next) {
    const char *nm = rt_os_thread_name(t->tid);
    char comm[64] = "";
    if (!nm) {
      char path[64];
      snprintf(path, sizeof path, "/proc/self/task/%u/comm", t->tid);
      FILE *f = fopen(path, "r");
      if (f) {
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
        fclose(f);
      }
      if (!comm[0]) snprintf(comm, sizeof comm, "thread %u", t->tid);
      nm = comm;
    }
    PUTS(g, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_i64(g, pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, t->tid);
    PUTS(g, ",\"args\":{\"name\":");
    put_jstr(g, nm);
    PUTS(g, "}}");
    PUTS(g, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_i64(g, pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, t->tid);
    PUTS(g, ",\"args\":{\"sort_index\":");
    put_u64(g, t->tid);
    PUTS(g, "}}");
  }
}

static void put_range_args(Gz *g, uint32_t name, unsigned depth, unsigned cat, uint16_t dom) {
  PUTS(g, ",\"args\":{\"depth\":");
  put_u64(g, depth);
  RtName *nm = rt_name(name);
  if (nm->file) {
    PUTS(g, ",\"file\":");
    put_jstr(g, nm->file);
    PUTS(g, ",\"line\":");
    put_i64(g, nm->line);
  }
  if (dom) {
    PUTS(g, ",\"domain\":");
    put_jstr(g, rt_domain_name(dom));
  }
  if (cat) {
    const char *cn = rt_category_name(cat);
    PUTS(g, ",\"category\":");
    if (cn) put_jstr(g, cn);
    else put_u64(g, cat);
  }
  PUTS(g, "}}");
}

static const char *copy_kind(unsigned k) {
  /* CUpti_ActivityMemcpyKind */
  static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA",
                                      "DtoD", "HtoH", "PtoP"};
  return k < sizeof names / sizeof *names ? names[k] : "Unknown";
}
static const char *mem_kind(unsigned k) {
  /* CUpti_ActivityMemoryKind */
  static const char *const names[] = {"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed",
                                      "Device Static", "Managed Static"};
  return k < sizeof names / sizeof *names ? names[k] : "Unknown";
}

static int write_gpu(Gz *g, int pid, RtGpuRec *v, size_t n) {
  /* correlation -> API record */
  size_t cap = 1;
  while (cap < n * 2 + 2) cap *= 2;
  uint32_t *map = calloc(cap, sizeof *map); /* index + 1 */
  if (!map) return -1;
  for (size_t i = 0; i < n; i++)
    if ((v[i].kind == GPU_RUNTIME || v[i].kind == GPU_DRIVER) && v[i].correlation) {
      size_t j = (v[i].correlation * 2654435761u) & (cap - 1);
      while (map[j]) j = (j + 1) & (cap - 1);
      map[j] = (uint32_t)i + 1;
    }
  /* gpu_user_annotation: one span per (range instance, device, stream) */
  typedef struct {
    const Span *s;
    uint32_t device, stream;
    uint64_t a, b;
  } Ann;
  Ann *ann = NULL;
  size_t nann = 0, capann = 0;
  for (size_t i = 0; i < n; i++) {
    RtGpuRec *r = &v[i];
    int dev = r->kind == GPU_KERNEL || r->kind == GPU_MEMCPY || r->kind == GPU_MEMSET;
    const Span *sp = NULL;
    RtGpuRec *api = NULL;
    if (dev && r->correlation) {
      size_t j = (r->correlation * 2654435761u) & (cap - 1);
      while (map[j]) {
        if (v[map[j] - 1].correlation == r->correlation) {
          api = &v[map[j] - 1];
          break;
        }
        j = (j + 1) & (cap - 1);
      }
      if (api) sp = innermost(api->tid, api->start);
    }
    /* GPU work counts where it was launched: inside a capture window */
    if (!rt_in_window(api ? api->start : r->start)) continue;
    PUTS(g, ",\n{\"ph\":\"X\",\"cat\":");
    switch (r->kind) {
    case GPU_KERNEL: PUTS(g, "\"kernel\""); break;
    case GPU_MEMCPY: PUTS(g, "\"gpu_memcpy\""); break;
    case GPU_MEMSET: PUTS(g, "\"gpu_memset\""); break;
    case GPU_RUNTIME: PUTS(g, "\"cuda_runtime\""); break;
    case GPU_DRIVER: PUTS(g, "\"cuda_driver\""); break;
    default: PUTS(g, "\"gpu_memory\""); break;
    }
    PUTS(g, ",\"name\":");
    if (r->kind == GPU_MEMCPY) {
      char nm[128];
      snprintf(nm, sizeof nm, "Memcpy %s (%s -> %s)", copy_kind(r->copy_kind), mem_kind(r->src_kind),
               mem_kind(r->dst_kind));
      put_jstr(g, nm);
    } else if (r->kind == GPU_MEMSET) {
      char nm[64];
      snprintf(nm, sizeof nm, "Memset (%s)", mem_kind(r->dst_kind));
      put_jstr(g, nm);
    } else {
      put_name(g, r->name);
    }
    PUTS(g, ",\"pid\":");
    if (dev) put_u64(g, r->device);
    else put_i64(g, r->kind == GPU_MEMORY ? pid : (int64_t)r->pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, dev ? r->stream : r->tid);
    PUTS(g, ",\"ts\":");
    put_us(g, rel(r->start));
    PUTS(g, ",\"dur\":");
    put_us(g, (int64_t)(r->end > r->start ? r->end - r->start : 0));
    PUTS(g, ",\"args\":{\"correlation\":");
    put_u64(g, r->correlation);
    if (dev) {
      PUTS(g, ",\"device\":");
      put_u64(g, r->device);
      PUTS(g, ",\"context\":");
      put_u64(g, r->context);
      PUTS(g, ",\"stream\":");
      put_u64(g, r->stream);
    }
    if (r->kind == GPU_KERNEL) {
      char buf[160];
      snprintf(buf, sizeof buf, ",\"registers per thread\":%u,\"shared memory\":%u,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]",
               r->regs, r->shmem, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2]);
      put(g, buf, strlen(buf));
      double bps, wps, occ;
      if (rt_kernel_occupancy(rt_device((int)r->device), r->grid, r->block, r->regs, r->shmem, &bps, &wps, &occ)) {
        snprintf(buf, sizeof buf, ",\"blocks per SM\":%.6g,\"warps per SM\":%.6g,\"est. achieved occupancy %%\":%.0f",
                 bps, wps, occ);
        put(g, buf, strlen(buf));
      }
    }
    if (r->kind == GPU_MEMCPY || r->kind == GPU_MEMSET || r->kind == GPU_MEMORY) {
      PUTS(g, ",\"bytes\":");
      put_u64(g, r->bytes);
      if (r->end > r->start && r->kind != GPU_MEMORY) {
        char buf[64];
        snprintf(buf, sizeof buf, ",\"memory bandwidth (GB/s)\":%.3f", (double)r->bytes / (double)(r->end - r->start));
        put(g, buf, strlen(buf));
      }
    }
    if (r->kind == GPU_RUNTIME || r->kind == GPU_DRIVER) {
      PUTS(g, ",\"cbid\":");
      put_u64(g, r->cbid);
    }
    if (sp) {
      PUTS(g, ",\"range\":");
      put_name(g, sp->name);
    }
    PUTS(g, "}}");
    if (dev && api) {
      /* flow: launch -> GPU work */
      PUTS(g, ",\n{\"ph\":\"s\",\"id\":");
      put_u64(g, r->correlation);
      PUTS(g, ",\"pid\":");
      put_i64(g, (int64_t)api->pid);
      PUTS(g, ",\"tid\":");
      put_u64(g, api->tid);
      PUTS(g, ",\"ts\":");
      put_us(g, rel(api->start));
      PUTS(g, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
      PUTS(g, ",\n{\"ph\":\"f\",\"id\":");
      put_u64(g, r->correlation);
      PUTS(g, ",\"pid\":");
      put_u64(g, r->device);
      PUTS(g, ",\"tid\":");
      put_u64(g, r->stream);
      PUTS(g, ",\"ts\":");
      put_us(g, rel(r->start));
      PUTS(g, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
    }
    if (sp) {
      size_t k;
      for (k = 0; k < nann; k++)
        if (ann[k].s == sp && ann[k].device == r->device && ann[k].stream == r->stream) break;
      if (k == nann) {
        if (nann == capann) {
          capann = capann ? capann * 2 : 64;
          Ann *na = realloc(ann, capann * sizeof *na);
          if (!na) continue;
          ann = na;
        }
        ann[nann++] = (Ann){sp, r->device, r->stream, r->start, r->end};
      } else {
        if (r->start < ann[k].a) ann[k].a = r->start;
        if (r->end > ann[k].b) ann[k].b = r->end;
      }
    }
  }
  for (size_t k = 0; k < nann; k++) {
    PUTS(g, ",\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":");
    put_name(g, ann[k].s->name);
    PUTS(g, ",\"pid\":");
    put_u64(g, ann[k].device);
    PUTS(g, ",\"tid\":");
    put_u64(g, ann[k].stream);
    PUTS(g, ",\"ts\":");
    put_us(g, rel(ann[k].a));
    PUTS(g, ",\"dur\":");
    put_us(g, (int64_t)(ann[k].b - ann[k].a));
    PUTS(g, ",\"args\":{}}");
  }
  free(ann);
  free(map);
  return 0;
}

static void write_body(Gz *g, const char *trace_name) {
  int pid = (int)getpid();
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  uint64_t real_now = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
  uint64_t base = real_now - (rt_mono_ns() - rt_clock_origin_ns());

  size_t ngpu = 0;
  RtGpuRec *gpu = rt_cupti_take(&ngpu);
  /* threads that launched GPU work keep their ranges for attribution */
  for (size_t i = 0; i < ngpu; i++)
    if ((gpu[i].kind == GPU_RUNTIME || gpu[i].kind == GPU_DRIVER) && !spans_for(gpu[i].tid)) {
      TidSpans *ns = realloc(tid_spans, (tid_spans_n + 1) * sizeof *ns);
      if (!ns) break;
      tid_spans = ns;
      tid_spans[tid_spans_n++] = (TidSpans){gpu[i].tid, NULL, 0, 0};
    }

  PUTS(g, "{\n\"schemaVersion\": 1,\n\"deviceProperties\": [");
  put_devices(g);
  PUTS(g, "],\n\"distributedInfo\": {\"backend\": \"\", \"rank\": ");
  put_i64(g, rt_opt.rank);
  PUTS(g, ", \"world_size\": ");
  put_i64(g, rt_opt.world_size);
  PUTS(g, "},\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": ");
  put_u64(g, base);
  PUTS(g, ",\n\"traceName\": ");
  put_jstr(g, trace_name);
  PUTS(g, ",\n\"traceEvents\": [\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
  put_i64(g, pid);
  PUTS(g, ",\"tid\":0,\"args\":{\"name\":");
  put_jstr(g, rt_opt.name);
  PUTS(g, "}}");
  PUTS(g, ",\n{\"name\":\"process_labels\",\"ph\":\"M\",\"ts\":0,\"pid\":");
  put_i64(g, pid);
  PUTS(g, ",\"tid\":0,\"args\":{\"labels\":\"rank ");
  put_i64(g, rt_opt.rank);
  PUTS(g, "\"}}");
  write_thread_names(g, pid);

  SpanRec *spans = span_carry;
  size_t nspans = span_carry_n, capspans = span_carry_n;
  span_carry = NULL;
  span_carry_n = 0;
  uint64_t dropped = 0;
  for (RtThread *t = rt_threads(); t; t = t->next) {
    pthread_mutex_lock(&t->lock);
    dropped += t->dropped;
    TidSpans *keep = spans_for(t->tid);
    RtChunk *c = t->head;
    while (c) {
      uint32_t n = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);
      for (uint32_t i = c->read; i < n; i++) {
        const RtRec *r = &c->rec[i];
        uint64_t a = rt_ticks_to_ns(r->start);
        if (r->kind == REC_RANGE) {
          uint64_t b = rt_ticks_to_ns(r->end);
          put_annotation(g, 0, r->name, pid, t->tid, a);
          PUTS(g, ",\"dur\":");
          put_us(g, (int64_t)(b - a));
          put_range_args(g, r->name, r->depth, r->cat, r->domain);
          if (keep) spans_add(keep, a, b, r->name, r->depth);
        } else if (r->kind == REC_MARK) {
          put_annotation(g, 1, r->name, pid, t->tid, a);
          put_range_args(g, r->name, r->depth, r->cat, r->domain);
        } else {
          if (nspans == capspans) {
            capspans = capspans ? capspans * 2 : 256;
            SpanRec *ns = realloc(spans, capspans * sizeof *ns);
            if (!ns) {
              dropped++;
              continue;
            }
            spans = ns;
          }
          spans[nspans++] = (SpanRec){r->end, a, r->kind == REC_SPAN_END, r->name, t->tid, r->cat};
        }
      }
      c->read = n;
      if (c != t->cur) {
        RtChunk *next = c->next;
        rt_chunk_free(c);
        t->head = c = next;
      } else {
        break;
      }
    }
    pthread_mutex_unlock(&t->lock);
  }

  /* Ranges still open when the process ends, on every thread (a stack is
   * never freed, so reading another thread's is safe; a thread that is
   * still running may be a frame off). Cycle writes skip them: the frame
   * is recorded when it closes, in a later cycle. */
  uint64_t now = rt_mono_ns();
  for (RtThread *t = rt_exiting ? rt_threads() : NULL; t; t = t->next) {
    const RtFrame *open = __atomic_load_n(&t->stack, __ATOMIC_ACQUIRE);
    uint32_t nopen = __atomic_load_n(&t->sp, __ATOMIC_ACQUIRE);
    TidSpans *keep_open = spans_for(t->tid);
    for (uint32_t i = 0; i < nopen; i++) {
      if (!open[i].recorded) continue;
      uint64_t a = rt_ticks_to_ns(open[i].start);
      put_annotation(g, 0, open[i].name, pid, t->tid, a);
      PUTS(g, ",\"dur\":");
      put_us(g, (int64_t)(now - a));
      PUTS(g, ",\"args\":{\"depth\":");
      put_u64(g, i);
      PUTS(g, ",\"open at exit\":true}}");
      if (keep_open) spans_add(keep_open, a, now, open[i].name, i);
    }
  }

  /* Start/end ranges become X events on the thread that started them (the
   * Kineto layout has no b/e pairs): start records carry the name, end
   * records the id. A start with no end yet is written open at exit, or
   * left for the next cycle. */
  size_t hcap = 1;
  while (hcap < nspans * 2 + 2) hcap *= 2;
  uint32_t *h = calloc(hcap, sizeof *h);
  uint8_t *ended = calloc(nspans + 1, 1);
  for (size_t i = 0; h && i < nspans; i++)
    if (!spans[i].end) {
      size_t j = (spans[i].id * 2654435761u) & (hcap - 1);
      while (h[j]) j = (j + 1) & (hcap - 1);
      h[j] = (uint32_t)i + 1;
    }
  for (size_t i = 0; h && ended && i < nspans; i++) {
    const SpanRec *e = &spans[i], *b = NULL;
    if (!e->end) continue;
    for (size_t j = (e->id * 2654435761u) & (hcap - 1); h[j]; j = (j + 1) & (hcap - 1))
      if (spans[h[j] - 1].id == e->id) {
        b = &spans[h[j] - 1];
        ended[h[j] - 1] = 1;
        break;
      }
    if (b) put_span(g, pid, b, e->start, e->tid);
    /* else its start was not recorded (before a cycle, or throttled) */
  }
  /* starts with no end: open at exit, or carried to the next cycle's write */
  size_t nkeep = 0;
  for (size_t i = 0; h && ended && i < nspans; i++) {
    if (spans[i].end || ended[i]) continue;
    if (rt_exiting) put_span(g, pid, &spans[i], now, 0);
    else spans[nkeep++] = spans[i];
  }
  free(ended);
  free(h);
  span_carry = nkeep ? spans : NULL;
  span_carry_n = nkeep;
  if (!nkeep) free(spans);

  if (ngpu) {
    for (size_t i = 0; i < tid_spans_n; i++) qsort(tid_spans[i].v, tid_spans[i].n, sizeof(Span), span_cmp);
    write_gpu(g, pid, gpu, ngpu);
  }
  for (size_t i = 0; i < tid_spans_n; i++) free(tid_spans[i].v);
  free(tid_spans);
  tid_spans = NULL;
  tid_spans_n = 0;
  free(gpu);
  rt_windows_consumed();

  PUTS(g, "\n],\n\"ncrt\": {\"throttle\": {\"calls\": ");
  put_i64(g, rt_opt.throttle_calls);
  char buf[128];
  snprintf(buf, sizeof buf, ", \"avg_us\": %g}, \"throttled\": [", rt_opt.throttle_us);
  put(g, buf, strlen(buf));
  uint32_t nn = rt_name_count();
  int first = 1;
  for (uint32_t i = 0; i < nn; i++) {
    RtName *nm = rt_name(i);
    if (!(nm->flags & NAME_THROTTLED)) continue;
    if (first) PUTS(g, "\n  {\"name\": ");
    else PUTS(g, ",\n  {\"name\": ");
    first = 0;
    put_name(g, i);
    snprintf(buf, sizeof buf, ", \"calls\": %llu, \"avg_us\": %.3f}", (unsigned long long)nm->calls_at_throttle,
             nm->avg_us_at_throttle);
    put(g, buf, strlen(buf));
  }
  PUTS(g, "],\n  \"dropped\": ");
  put_u64(g, dropped);
  PUTS(g, ", \"cupti\": ");
  put_jstr(g, rt_cupti_status());
  PUTS(g, ", \"cupti_version\": ");
  put_u64(g, rt_cupti_version());
  PUTS(g, ", \"clock\": ");
  put_jstr(g, rt_opt.use_tsc ? "tsc" : "monotonic");
  PUTS(g, "}\n}\n");
}

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

/* Anything to write? Processes that recorded nothing (a launcher, a shell)
 * leave no file. */
static int have_records(void) {
  if (rt_cupti_count()) return 1;
  int any = 0;
  for (RtThread *t = rt_threads(); t && !any; t = t->next) {
    if (rt_exiting) {
      const RtFrame *open = __atomic_load_n(&t->stack, __ATOMIC_ACQUIRE);
      uint32_t nopen = __atomic_load_n(&t->sp, __ATOMIC_ACQUIRE);
      for (uint32_t i = 0; i < nopen && !any; i++) any = open[i].recorded;
    }
    pthread_mutex_lock(&t->lock);
    for (RtChunk *c = t->head; c && !any; c = c->next) any = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE) > c->read;
    pthread_mutex_unlock(&t->lock);
  }
  return any;
}

/* Paths this process wrote: another process's file of the same name (a
 * subprocess with the same rank) is never replaced. */
static char *written[32];
static int nwritten;

static int wrote(const char *path) {
  for (int i = 0; i < nwritten; i++)
    if (!strcmp(written[i], path)) return 1;
  return 0;
}

int rt_write_trace(const char *name) {
  pthread_mutex_lock(&write_lock);
  rt_cupti_flush();
  if (!have_records()) {
    pthread_mutex_unlock(&write_lock);
    return 1;
  }
  rt_clock_calibrate();
  char path[2048], tmp[2100];
  snprintf(path, sizeof path, "%s/%s-rank%d.trace.json.gz", rt_opt.out_dir, name, rt_opt.rank);
  if (access(path, F_OK) == 0 && !wrote(path))
    snprintf(path, sizeof path, "%s/%s-pid%d-rank%d.trace.json.gz", rt_opt.out_dir, name, (int)getpid(),
             rt_opt.rank);
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
  Gz *g = calloc(1, sizeof *g);
  int rc = -1;
  if (!g) goto out;
  g->f = fopen(tmp, "wb");
  if (!g->f) {
    rt_say("cannot write %s: %m", tmp);
    goto out;
  }
  if (deflateInit2(&g->z, rt_opt.level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    fclose(g->f);
    unlink(tmp);
    goto out;
  }
  write_body(g, name);
  gz_drain(g, Z_FINISH);
  deflateEnd(&g->z);
  if (fclose(g->f) != 0 && !g->err) g->err = errno ? errno : EIO;
  if (!g->err && rename(tmp, path) != 0) g->err = errno;
  if (g->err) {
    /* a full disk loses the trace, never the program: say why, once */
    rt_say("cannot write %s: %s; the trace of this process is lost", path, strerror(g->err));
    unlink(tmp);
    goto out;
  }
  rc = 0;
  if (nwritten < 32 && !wrote(path)) written[nwritten++] = strdup(path);
  if (getenv("NCRT_VERBOSE")) rt_say("trace written to %s", path);
out:
  free(g);
  pthread_mutex_unlock(&write_lock);
  return rc;
}
