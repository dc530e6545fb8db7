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
 * start/end ranges, which may overlap or end on another thread, are X
 * events on lanes of their thread (put_spans); marks are ph i. GPU work (cupti.c) becomes
 * kernel / gpu_memcpy / gpu_memset on (device, stream), API calls become
 * cuda_runtime / cuda_driver on (pid, tid), joined by ac2g flows, and each
 * kernel names the innermost range open on the launching thread when it was
 * launched (args.range), summed up as gpu_user_annotation spans.
 *
 * The writer consumes what it writes: chunks it has read are freed. A
 * process that recorded nothing writes no file; one whose file name is
 * already taken by another process (a subprocess with the same rank)
 * writes <name>-pid<PID>-rank<R>.pt.trace.json.gz instead. */
#define _GNU_SOURCE
#include "rt.h"
#include "ncrt_protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* ---- one gzip stream with a byte buffer in front ----
 * Raw deflate between a gzip header and trailer written here (CRC-32 and
 * length kept as the bytes go in): one gzip member, as before. */

typedef struct {
  z_stream z;
  int fd;
  size_t n;
  int err;
  uint32_t crc, len;
  char buf[1 << 17];
  unsigned char out[1 << 17];
} Gz;

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

static void gz_drain(Gz *g, int mode) {
  if (g->err) { /* the file is lost already: stop compressing */
    g->n = 0;
    return;
  }
  g->crc = (uint32_t)crc32(g->crc, (const unsigned char *)g->buf, (uInt)g->n);
  g->len += (uint32_t)g->n;
  g->z.next_in = (unsigned char *)g->buf;
  g->z.avail_in = (uInt)g->n;
  do {
    g->z.next_out = g->out;
    g->z.avail_out = sizeof g->out;
    if (deflate(&g->z, mode) == Z_STREAM_ERROR) g->err = EINVAL;
    size_t have = sizeof g->out - g->z.avail_out;
    if (have && !g->err) g->err = write_all(g->fd, g->out, have);
  } while (g->z.avail_out == 0);
  g->n = 0;
}

static int gz_open(Gz *g, int fd, int level) {
  static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  g->fd = fd;
  g->crc = (uint32_t)crc32(0, NULL, 0);
  if (deflateInit2(&g->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return ENOMEM;
  return write_all(fd, hdr, sizeof hdr);
}

static void gz_finish(Gz *g) {
  gz_drain(g, Z_FINISH);
  deflateEnd(&g->z);
  unsigned char t[8];
  for (int i = 0; i < 4; i++) {
    t[i] = (unsigned char)(g->crc >> (8 * i));
    t[4 + i] = (unsigned char)(g->len >> (8 * i));
  }
  if (!g->err) g->err = write_all(g->fd, t, 8);
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

/* names as JSON strings: from memory, or from a dead process's .names */
static const char *(*name_json)(uint32_t id) = esc_name;

static inline void put_name(Gz *g, uint32_t id) {
  const char *e = name_json(id);
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

/* Start/end ranges overlap freely (generators, async code), but viewers
 * require the X events of one thread to nest (Perfetto drops or misdraws
 * the rest). So they go on tracks of their own: lanes of the thread that
 * started them, each lane holding ranges that are disjoint or properly
 * nested, packed first-fit in start order. A lane is a virtual thread
 * LANE_TID(lane, tid): above every real tid (pid_max is at most 2^22), in
 * 32 bits (Perfetto reads tids as uint32), named "<thread> spans[ N]";
 * args.thread names the real thread, which is what nctrace attributes
 * them to. Past MAX_LANES concurrent ranges the last lane takes the rest
 * (they may overlap there; args "lane full" says so). */
enum { MAX_LANES = 512 };
#define LANE_TID(lane, tid) (0x80000000u + ((uint32_t)(lane) << 22) + ((tid) & 0x3fffffu))

typedef struct {
  SpanRec b;
  uint64_t end;
  uint32_t end_tid; /* 0: still open at exit */
  uint16_t lane;
  uint8_t full;
} DoneSpan;

static int done_cmp(const void *a, const void *b) {
  const DoneSpan *x = a, *y = b;
  if (x->b.tid != y->b.tid) return x->b.tid < y->b.tid ? -1 : 1;
  if (x->b.start != y->b.start) return x->b.start < y->b.start ? -1 : 1;
  if (x->end != y->end) return x->end > y->end ? -1 : 1; /* outer first */
  return x->b.id < y->b.id ? -1 : x->b.id > y->b.id;
}

/* Lanes for one thread's ranges v[0..n) (sorted by done_cmp): each lane is a
 * stack of the ends of its open ranges. Returns the number of lanes used. */
static unsigned assign_lanes(DoneSpan *v, size_t n) {
  typedef struct {
    uint64_t *end;
    size_t n, cap;
  } Lane;
  Lane *lanes = calloc(MAX_LANES, sizeof *lanes); /* not on the stack: a fatal
                                                  * signal's handler writes too */
  unsigned used = 0;
  for (size_t i = 0; i < n && lanes; i++) {
    uint64_t a = v[i].b.start, b = v[i].end;
    unsigned k = 0;
    for (; k < used; k++) {
      Lane *l = &lanes[k];
      while (l->n && l->end[l->n - 1] <= a) l->n--;
      if (!l->n || b <= l->end[l->n - 1]) break;
    }
    if (k == used && used < MAX_LANES) lanes[used++] = (Lane){NULL, 0, 0};
    if (k == used) { /* every lane taken */
      k = MAX_LANES - 1;
      v[i].full = 1;
    }
    Lane *l = &lanes[k];
    if (l->n == l->cap) {
      size_t cap = l->cap ? l->cap * 2 : 8;
      uint64_t *ne = realloc(l->end, cap * sizeof *ne);
      if (ne) l->end = ne, l->cap = cap;
    }
    if (l->n < l->cap) l->end[l->n++] = b;
    v[i].lane = (uint16_t)k;
  }
  for (unsigned k = 0; k < used; k++) free(lanes[k].end);
  free(lanes);
  return used ? used : 1; /* without memory, all on lane 0 */
}

/* args.file and args.line of a name, when known (ncrt_source_location; the
 * Python module sends the user's own file in a shadow tree) */
static int mem_loc(uint32_t name, const char **file, int *line) {
  RtName *nm = rt_name(name);
  *file = nm->file, *line = nm->line;
  return nm->file != NULL;
}
/* in the process, from the names; in the finalizer, from what a process's
 * exit handed over (.hand), none for a process that died */
static int (*loc_of)(uint32_t name, const char **file, int *line) = mem_loc;

/* "file":F,"line":L, members of an event's args */
static void put_file_line(Gz *g, const char *file, int line) {
  PUTS(g, "\"file\":");
  put_jstr(g, file);
  PUTS(g, ",\"line\":");
  put_i64(g, line);
}

/* a name's location, when known, after other args */
static void put_location(Gz *g, uint32_t name) {
  const char *file;
  int line;
  if (loc_of && loc_of(name, &file, &line)) {
    PUTS(g, ",");
    put_file_line(g, file, line);
  }
}

/* One start/end range as an X event on its lane (its location when known:
 * loc_of). */
static void put_span(Gz *g, int pid, const DoneSpan *d) {
  const SpanRec *b = &d->b;
  put_annotation(g, 0, b->name, pid, LANE_TID(d->lane, b->tid), b->start);
  PUTS(g, ",\"dur\":");
  put_us(g, (int64_t)(d->end - b->start));
  PUTS(g, ",\"range id\":"); /* per call: beside args, as a range's depth is */
  put_u64(g, b->id);
  PUTS(g, ",\"args\":{\"start/end\":true,\"thread\":");
  put_u64(g, b->tid);
  if (!d->end_tid) {
    PUTS(g, ",\"open at exit\":true");
  } else if (d->end_tid != b->tid) {
    PUTS(g, ",\"end thread\":");
    put_u64(g, d->end_tid);
  }
  if (d->full) PUTS(g, ",\"lane full\":true");
  put_location(g, b->name);
  PUTS(g, "}}");
}

/* thread_name and thread_sort_index of a thread's lanes 0..nl-1, after the
 * thread itself: name is its JSON-quoted name, or NULL. */
static void put_lane_names(Gz *g, int pid, uint32_t tid, const char *name, unsigned nl) {
  char buf[96];
  for (unsigned k = 0; k < nl; k++) {
    PUTS(g, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_i64(g, pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, LANE_TID(k, tid));
    PUTS(g, ",\"args\":{\"name\":");
    size_t nn = name ? strlen(name) : 0;
    if (nn >= 2) {
      put(g, name, nn - 1); /* without its closing quote */
    } else {
      snprintf(buf, sizeof buf, "\"thread %u", tid);
      put(g, buf, strlen(buf));
    }
    if (k) snprintf(buf, sizeof buf, " spans %u\",\"ncrt lane of\":%u}}", k + 1, tid);
    else snprintf(buf, sizeof buf, " spans\",\"ncrt lane of\":%u}}", tid);
    put(g, buf, strlen(buf));
    PUTS(g, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_i64(g, pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, LANE_TID(k, tid));
    PUTS(g, ",\"args\":{\"sort_index\":");
    put_u64(g, tid);
    PUTS(g, "}}");
  }
}


/* The steps that ended since the last write (rt_steps_take) as torch's
 * ProfilerStep#N user annotations, which HTA and TensorBoard look for. The
 * step still running at exit is not written: after the last ncrt_step(),
 * called where prof.step() would be, it holds the program's teardown. A
 * step recorded outside capture (a schedule's wait and warmup, a closed
 * gate) is left out, as torch.profiler records none there. */
static void put_step_list(Gz *g, int pid, const RtStep *v, size_t n, int ns) {
  for (size_t i = 0; i < n; i++) {
    uint64_t a = ns ? v[i].start : rt_ticks_to_ns(v[i].start), b = ns ? v[i].end : rt_ticks_to_ns(v[i].end);
    /* begun under capture (the schedule opened it just before), or with
     * its middle in a capture window: windows are CLOCK_MONOTONIC, steps
     * ticks, and a step of a few hundred ns that closes a cycle could see
     * its middle land after the window's end by the clocks' mapping
     * (runtime/schedule-range lost ProfilerStep#7 in a loaded run) */
    if (b < a || !(v[i].captured || rt_in_window(a + (b - a) / 2))) continue;
    PUTS(g, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#");
    put_i64(g, v[i].index);
    PUTS(g, "\",\"pid\":");
    put_i64(g, pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, v[i].tid);
    PUTS(g, ",\"ts\":");
    put_us(g, rel(a));
    PUTS(g, ",\"dur\":");
    put_us(g, (int64_t)(b - a));
    PUTS(g, ",\"args\":{\"ncrt step\":true}}");
  }
}
static void put_steps(Gz *g, int pid) {
  RtStep *v;
  size_t n = rt_steps_take(&v);
  put_step_list(g, pid, v, n, 0);
  free(v);
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

/* ---- spill files ----
 *
 * <dir>/.ncrt-<PID>.raw    blocks: {magic, tid, n, 0} n records, commit
 *                          word (BLK_COMMIT ^ n); the offset is reserved
 *                          by an atomic add, the block written by one
 *                          pwritev, so threads never wait for each other
 * <dir>/.ncrt-<PID>.names  "ID "JSON-string"\n", appended (a name may come
 *                          twice: the same text)
 * <dir>/.ncrt-<PID>.gpu    GPU activity (RtGpuRec, fixed size, appended by
 *                          the flusher about once a second from the CUPTI
 *                          buffers whose records are all complete; a
 *                          record cut short at death is ignored)
 * <dir>/.ncrt-<PID>.info   what a finalizer needs besides: clock, names of
 *                          the process, threads, domains, categories and
 *                          the ranges open at the snapshot; replaced whole
 *                          (rename) every RT_FLUSH_MS and at death
 * Everything written here from a signal handler or _exit is
 * async-signal-safe: open, pwritev, write, rename, no lock, no malloc. */

#define BLK_MAGIC 0x314b4c42u /* "BLK1" */
#define BLK_COMMIT 0x54494d4d4f43ull
typedef struct {
  uint32_t magic, tid, n, pad;
} BlkHdr;

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static char file_prefix[1200]; /* "<dir>/.ncrt-<PID>" */
static volatile int raw_fd = -1, names_fd = -1, gpu_fd = -1;
static volatile uint64_t raw_end;   /* bytes reserved in .raw */
static uint64_t gpu_end, gpu_from;  /* bytes in .gpu; where the next trace's start (write_lock) */
static uint64_t gpu_work;           /* GPU work (not API) records in .gpu, for the snapshot */
static uint64_t gpu_work_from;      /* gpu_work at gpu_from */
static uint64_t gpu_kernels;        /* kernels in .gpu, for the snapshot (tests wait on it) */
static char devices_json[4096];     /* "device" lines, for a finalizer (flusher) */
/* "windows" and "window" lines, for a finalizer: the flusher fills the
 * buffer not published, then publishes it (a death snapshot reads it) */
static char windows_buf[2][64 * 1024];
static char *volatile windows_text = windows_buf[0];
static volatile int spill_err;      /* errno of the first lost write */
static uint64_t trace_from;         /* where the records of the next trace start */
static volatile uint32_t names_saved;

static size_t s_cpy(char *d, size_t at, size_t cap, const char *s) {
  while (*s && at + 1 < cap) d[at++] = *s++;
  d[at] = 0;
  return at;
}
static size_t s_u64(char *d, size_t at, size_t cap, uint64_t v) {
  char t[24];
  int i = 24;
  do {
    t[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (i < 24 && at + 1 < cap) d[at++] = t[i++];
  d[at] = 0;
  return at;
}
static void path_of(char *out, size_t cap, const char *suffix) { s_cpy(out, s_cpy(out, 0, cap, file_prefix), cap, suffix); }

/* Every file of a process's spill set (the process's own cleanup and the
 * finalizer's use this one list) */
static const char *const spill_sfx[] = {".raw",       ".names",      ".gpu",  ".body",     ".info",
                                        ".info.tmpF", ".info.tmpH", ".done", ".done.tmp", ".hand",
                                        ".hand.tmp"};
#define NSPILL_SFX (sizeof spill_sfx / sizeof *spill_sfx)

static void unlink_files(void) {
  char p[1300];
  for (size_t i = 0; i < NSPILL_SFX; i++) {
    path_of(p, sizeof p, spill_sfx[i]);
    unlink(p);
  }
}

static void inc_forget(void);

/* fork: the write lock is taken before (after ctl_lock, as a trace write
 * under ctl_lock takes it) and given back after, in parent and child, so
 * the child never has a lock the parent's flusher held (collector.c) */
void rt_writer_fork_lock(void) { pthread_mutex_lock(&write_lock); }
void rt_writer_fork_unlock(void) { pthread_mutex_unlock(&write_lock); }

void rt_files_reset(void) {
  /* after fork the descriptors are the parent's files: let go of them */
  inc_forget();
  if (raw_fd >= 0) close(raw_fd);
  if (names_fd >= 0) close(names_fd);
  if (gpu_fd >= 0) close(gpu_fd);
  raw_fd = names_fd = gpu_fd = -1;
  gpu_end = gpu_from = gpu_work = gpu_work_from = gpu_kernels = 0;
  devices_json[0] = 0;
  raw_end = 0;
  spill_err = 0;
  trace_from = 0;
  names_saved = 0;
  size_t at = s_cpy(file_prefix, 0, sizeof file_prefix, rt_opt.out_dir);
  at = s_cpy(file_prefix, at, sizeof file_prefix, "/.ncrt-");
  at = s_u64(file_prefix, at, sizeof file_prefix, (uint64_t)getpid());
  /* An earlier process with this pid (pids wrap: 32768 here) that handed
   * its exit over, not finalized yet while the run goes on: its set stays
   * for ncrun, and this process takes the stem .ncrt-PID~K instead. */
  char p[1300];
  for (unsigned k = 1; k < 1000; k++) {
    path_of(p, sizeof p, ".hand");
    if (access(p, F_OK) != 0) break;
    s_u64(file_prefix, s_cpy(file_prefix, at, sizeof file_prefix, "~"), sizeof file_prefix, k);
  }
  unlink_files(); /* a stale set from an earlier process with this pid */
}

static int lazy_open(volatile int *slot, const char *suffix, int flags) {
  int fd = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
  if (fd >= 0) return fd;
  char p[1300];
  path_of(p, sizeof p, suffix);
  fd = open(p, flags | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = 0;
    __atomic_compare_exchange_n(&spill_err, &e, errno ? errno : EIO, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return -1;
  }
  int exp = -1;
  if (!__atomic_compare_exchange_n(slot, &exp, fd, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    close(fd);
    return exp;
  }
  return fd;
}

/* The run's records so far, every process together: under ncrun, a
 * counter in <run dir>/.ncrt-budget that each process maps shared (a fork
 * keeps the mapping; ncrun removes the file), so the disk budget is the
 * run's; without ncrun, this process's own. Mapped at the first block
 * (open, ftruncate, mmap: system calls, no lock, no malloc). */
static volatile uint64_t *run_spilled;
static volatile int run_spilled_tried;

static volatile uint64_t *budget_counter(void) {
  volatile uint64_t *c = __atomic_load_n(&run_spilled, __ATOMIC_ACQUIRE); /* pairs with the store below */
  if (c || __atomic_exchange_n(&run_spilled_tried, 1, __ATOMIC_SEQ_CST)) return c;
  if (!getenv(NCRT_ENV_ROOT_PID)) return NULL;
  char p[1300];
  size_t at = s_cpy(p, 0, sizeof p, rt_opt.out_dir);
  s_cpy(p, at, sizeof p, "/.ncrt-budget");
  int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size < (off_t)sizeof(uint64_t) && ftruncate(fd, sizeof(uint64_t)) != 0) {
    close(fd);
    return NULL;
  }
  void *m = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return NULL;
  __atomic_store_n(&run_spilled, (volatile uint64_t *)m, __ATOMIC_RELEASE);
  return (volatile uint64_t *)m;
}

static int write_block(uint32_t tid, const RtRec *r, uint32_t n) {
  if (spill_err) return -1;
  int fd = lazy_open(&raw_fd, ".raw", O_RDWR);
  if (fd < 0) return -1;
  BlkHdr h = {BLK_MAGIC, tid, n, 0};
  uint64_t commit = BLK_COMMIT ^ n;
  size_t size = sizeof h + (size_t)n * sizeof *r + sizeof commit;
  uint64_t off = __atomic_fetch_add(&raw_end, size, __ATOMIC_SEQ_CST);
  /* the disk budget: the block that reaches it is written whole (nothing
   * recorded is lost), and recording stops there for good */
  volatile uint64_t *shared = rt_opt.disk_budget ? budget_counter() : NULL;
  uint64_t spilled = shared ? __atomic_add_fetch(shared, size, __ATOMIC_SEQ_CST) : off + size;
  if (rt_opt.disk_budget && spilled >= rt_opt.disk_budget && !__atomic_load_n(&rt_budget_hit, __ATOMIC_ACQUIRE)) {
    uint64_t zero = 0, now = rt_mono_ns();
    if (__atomic_compare_exchange_n(&rt_budget_hit, &zero, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      rt_recording_off();
      if (!rt_opt.quiet) {
        static const char m[] = "ncrt: the disk budget was reached: recording stopped (the trace says when; "
                                "ncrun --disk-budget SIZE or off changes it)\n";
        ssize_t wr = write(2, m, sizeof m - 1);
        (void)wr;
      }
    }
  }
  struct iovec v[3] = {{&h, sizeof h}, {(void *)r, (size_t)n * sizeof *r}, {&commit, sizeof commit}};
  int iv = 0;
  while (iv < 3) {
    ssize_t w = pwritev(fd, v + iv, 3 - iv, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = 0;
      __atomic_compare_exchange_n(&spill_err, &e, w < 0 ? errno : ENOSPC, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      return -1;
    }
    off += (uint64_t)w;
    while (iv < 3 && (size_t)w >= v[iv].iov_len) w -= (ssize_t)v[iv++].iov_len;
    if (iv < 3) {
      v[iv].iov_base = (char *)v[iv].iov_base + w;
      v[iv].iov_len -= (size_t)w;
    }
  }
  return 0;
}

/* another thread's open frame i (rt.h) */
int rt_frame_peek(const RtThread *t, uint32_t i, RtFrame *out) {
  if (i >= __atomic_load_n(&t->sp, __ATOMIC_ACQUIRE) || __atomic_load_n(&t->dead, __ATOMIC_ACQUIRE)) return 0;
  const RtFrame *f = &__atomic_load_n(&t->stack, __ATOMIC_ACQUIRE)[i];
  /* field by field (a memcpy would be checked by TSan's interceptor) */
  out->start = f->start, out->addr = f->addr, out->name = f->name, out->domain = f->domain;
  out->recorded = f->recorded, out->gate = f->gate, out->cat = f->cat;
  return 1;
}

void rt_clock_set(int use_tsc, uint64_t a, uint64_t b, uint64_t c, uint64_t d);
static volatile int dying; /* rt_save_now(1) began: the process is dying */

/* A claim runs to its end with the thread's signals held (rt_signals_hold;
 * the flusher holds them all its life): a handler that ran inside one (a
 * fatal signal's save, the program's own) could neither wait for it, on its
 * own thread, nor write its records. A pool worker terminated inside
 * _exit's save waited 10 s on itself that way and lost the claim's records,
 * and a signal inside a thread's own spill lost them without a word
 * (runtime/term-in-own-claim); so no thread ever waits for a claim of its
 * own. Two system calls per claim: claims come once per full buffer, once
 * per thread at its end and at a save. */
/* This thread is inside a claim or a save of its own (a fault handler must
 * not save again on top of it: it would wait for its own claim). */
static __thread int in_save;
int rt_in_save(void) { return in_save; }

int rt_spill_thread(RtThread *t) {
  int rc = 0, hold = !rt_in_flusher;
  sigset_t old;
  if (hold) rt_signals_hold(&old);
  in_save++;
  __atomic_add_fetch(&t->inflight, 1, __ATOMIC_SEQ_CST);
  RtChunk *c = __atomic_load_n(&t->cur, __ATOMIC_SEQ_CST);
  if (c) {
    uint64_t s = __atomic_load_n(&c->spilled, __ATOMIC_SEQ_CST);
    uint32_t idx = (uint32_t)s, n = __atomic_load_n(&c->n, __ATOMIC_SEQ_CST);
    int claimed = n > idx && n <= c->cap &&
                   __atomic_compare_exchange_n(&c->spilled, &s, (s & ~(uint64_t)0xffffffffu) | n, 0,
                                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    if (claimed && __builtin_expect(rt_opt.test_term_in_claim, 0)) {
      if (rt_opt.test_term_in_claim == 1 && rt_in_flusher) {
        /* tests only: the exit write must wait for this claim (it ran
         * without it when the claim was on its own thread's chunk) */
        rt_opt.test_term_in_claim = 0;
        kill(getpid(), SIGTERM);
        struct timespec d = {0, 300000000};
        nanosleep(&d, NULL);
      } else if (rt_opt.test_term_in_claim >= 2 && !rt_in_flusher && (rt_opt.test_term_in_claim == 2) == !!dying &&
                 t->tid == (uint32_t)syscall(SYS_gettid)) {
        /* tests only: SIGTERM to this very thread inside its claim on its
         * own records (a pool worker in _exit's save, terminated; a thread
         * spilling its full buffer or ending): held until the claim ends */
        rt_opt.test_term_in_claim = 0;
        syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGTERM);
      }
    }
    if (claimed && write_block(t->tid, &c->rec[idx], n - idx)) {
      __atomic_add_fetch(&t->dropped, n - idx, __ATOMIC_RELAXED);
      rc = -1;
    }
  }
  __atomic_sub_fetch(&t->inflight, 1, __ATOMIC_SEQ_CST);
  in_save--;
  if (hold) rt_signals_restore(&old);
  return rc;
}

/* A small buffered writer on a stack buffer (signal handlers included). */
typedef struct {
  int fd, err;
  size_t n;
  char b[2048];
} Out;
static void o_flush(Out *o) {
  if (o->n && !o->err) o->err = write_all(o->fd, o->b, o->n);
  o->n = 0;
}
static void o_put(Out *o, const char *s, size_t k) {
  while (k) {
    if (o->n == sizeof o->b) o_flush(o);
    size_t m = sizeof o->b - o->n < k ? sizeof o->b - o->n : k;
    memcpy(o->b + o->n, s, m);
    o->n += m;
    s += m;
    k -= m;
  }
}
static void o_str(Out *o, const char *s) { o_put(o, s, strlen(s)); }
static void o_u64(Out *o, uint64_t v) {
  char t[24];
  size_t k = s_u64(t, 0, sizeof t, v);
  o_put(o, t, k);
}
/* s as a JSON string (quotes included), at most 4096 bytes of it */
static void o_json(Out *o, const char *s) {
  static const char hex[] = "0123456789abcdef";
  o_put(o, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p && p - (const unsigned char *)s < 4096; p++) {
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p};
      o_put(o, e, 2);
    } else if (*p < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
      o_put(o, e, 6);
    } else {
      o_put(o, (const char *)p, 1);
    }
  }
  o_put(o, "\"", 1);
}

static void names_save(void) {
  uint32_t n = rt_name_count(), from = __atomic_load_n(&names_saved, __ATOMIC_SEQ_CST);
  if (from >= n) return;
  Out o;
  o.fd = lazy_open(&names_fd, ".names", O_WRONLY | O_APPEND);
  o.err = 0;
  o.n = 0;
  if (o.fd < 0) return;
  for (uint32_t i = from; i < n; i++) {
    o_u64(&o, i);
    o_put(&o, " ", 1);
    o_json(&o, rt_name(i)->str);
    o_put(&o, "\n", 1);
  }
  o_flush(&o);
  if (!o.err) __atomic_compare_exchange_n(&names_saved, &from, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static void thread_comm(uint32_t tid, char *out, size_t cap) {
  char p[64];
  size_t at = s_cpy(p, 0, sizeof p, "/proc/self/task/");
  at = s_u64(p, at, sizeof p, tid);
  s_cpy(p, at, sizeof p, "/comm");
  out[0] = 0;
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t r = read(fd, out, cap - 1);
    close(fd);
    if (r > 0) {
      out[r] = 0;
      out[strcspn(out, "\n")] = 0;
    }
  }
  if (!out[0]) s_u64(out, s_cpy(out, 0, cap, "thread "), cap, tid);
}

static void info_save(int die) {
  char tmp[1300], fin[1300];
  path_of(tmp, sizeof tmp, die ? ".info.tmpH" : ".info.tmpF");
  path_of(fin, sizeof fin, ".info");
  Out o;
  o.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  o.err = 0;
  o.n = 0;
  if (o.fd < 0) return;
  struct timespec m, r;
  clock_gettime(CLOCK_MONOTONIC, &m);
  clock_gettime(CLOCK_REALTIME, &r);
  uint64_t mono = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
  uint64_t real = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
  uint64_t t0, n0, t1, n1;
  rt_clock_params(&t0, &n0, &t1, &n1);
  t1 = t0;
#if defined(__x86_64__)
  if (rt_opt.use_tsc) t1 = __rdtsc();
#endif
  o_str(&o, "ncrt-info 1\npid ");
  o_u64(&o, (uint64_t)getpid());
  o_str(&o, "\nrank ");
  o_u64(&o, (uint64_t)rt_opt.rank);
  o_str(&o, "\nworld ");
  o_u64(&o, (uint64_t)rt_opt.world_size);
  o_str(&o, "\nlevel ");
  o_u64(&o, (uint64_t)rt_opt.level);
  o_str(&o, "\nclock ");
  o_u64(&o, (uint64_t)rt_opt.use_tsc);
  o_put(&o, " ", 1);
  o_u64(&o, t0);
  o_put(&o, " ", 1);
  o_u64(&o, n0);
  o_put(&o, " ", 1);
  o_u64(&o, t1);
  o_put(&o, " ", 1);
  o_u64(&o, mono);
  o_str(&o, "\nbase ");
  o_u64(&o, real - (mono - n0));
  o_str(&o, "\nnow ");
  o_u64(&o, mono);
  o_str(&o, "\nfrom ");
  o_u64(&o, trace_from);
  o_str(&o, "\ngpu ");
  o_u64(&o, gpu_from);
  o_put(&o, " ", 1);
  o_u64(&o, gpu_end);
  o_put(&o, " ", 1);
  o_u64(&o, gpu_work);
  o_put(&o, " ", 1);
  o_u64(&o, gpu_kernels);
  o_str(&o, "\ncupti ");
  o_json(&o, rt_cupti_status());
  uint64_t dropped = 0;
  for (RtThread *t = rt_threads(); t; t = t->next) dropped += t->dropped;
  o_str(&o, "\ndropped ");
  o_u64(&o, dropped);
  o_str(&o, "\nname ");
  o_json(&o, rt_opt.name);
  {
    char pj[512];
    if (rt_process_json(pj, sizeof pj)) {
      o_str(&o, "\nprocess ");
      o_str(&o, pj);
    }
    o_str(&o, "\npstart ");
    o_u64(&o, rt_proc.start_ns);
    o_str(&o, "\nisrank ");
    o_u64(&o, (uint64_t)rt_proc.is_rank);
  }
  o_str(&o, "\ntrace ");
  o_json(&o, rt_current_trace_name());
  o_put(&o, "\n", 1);
  o_str(&o, devices_json);
  o_str(&o, __atomic_load_n(&windows_text, __ATOMIC_ACQUIRE));
  for (uint16_t d = 1; d < 1024; d++) {
    const char *dn = rt_domain_name(d);
    if (!strcmp(dn, "?")) break;
    o_str(&o, "domain ");
    o_u64(&o, d);
    o_put(&o, " ", 1);
    o_json(&o, dn);
    o_put(&o, "\n", 1);
  }
  for (uint32_t c = 1; c < 256; c++) {
    const char *cn = rt_category_name(c);
    if (!cn) continue;
    o_str(&o, "cat ");
    o_u64(&o, c);
    o_put(&o, " ", 1);
    o_json(&o, cn);
    o_put(&o, "\n", 1);
  }
  for (RtThread *t = rt_threads(); t; t = t->next) {
    char comm[64];
    /* another thread's struct, read while it runs (or is being reused):
     * tid and dead atomically; its open frames are a best-effort copy */
    uint32_t tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
    const char *nm = rt_os_thread_name(tid);
    if (!nm) {
      thread_comm(tid, comm, sizeof comm);
      nm = comm;
    }
    o_str(&o, "thread ");
    o_u64(&o, tid);
    o_put(&o, " ", 1);
    o_json(&o, nm);
    o_put(&o, "\n", 1);
    RtFrame f;
    for (uint32_t i = 0; rt_frame_peek(t, i, &f); i++) {
      if (!f.recorded) continue;
      o_str(&o, "open ");
      o_u64(&o, tid);
      o_put(&o, " ", 1);
      o_u64(&o, i);
      o_put(&o, " ", 1);
      o_u64(&o, f.start);
      o_put(&o, " ", 1);
      o_u64(&o, f.name);
      o_put(&o, " ", 1);
      o_u64(&o, f.domain);
      o_put(&o, "\n", 1);
    }
  }
  o_str(&o, "end\n");
  o_flush(&o);
  close(o.fd);
  /* the snapshot taken at death wins over the flusher's */
  if (o.err || (!die && dying)) unlink(tmp);
  else rename(tmp, fin);
}

/* A thread that claimed records before us (one ending right now: its TLS
 * destructor spills its buffer; the flusher, spilling any thread's chunk,
 * this one's too) may not have reserved its block yet: wait until no thread
 * is inside a claim, so every claimed record lies below the end read next,
 * on every way out (the exit write, and the snapshot taken as a signal ends
 * the process: a claim the process dies in is never written). Not waiting
 * on the signal path lost the flusher's claim (runtime/term-in-claim). None
 * of the claims is ours: a claim holds its thread's signals to its end
 * (rt_spill_thread), so a handler never runs inside one. Bounded (10 s): a
 * thread stopped inside a claim (a debugger, a stalled disk) must not hang
 * the exit; giving up is said on stderr, naming whose records were lost.
 * Async-signal-safe (atomics, nanosleep, clock_gettime, write). */
static void wait_claims(void) {
  uint64_t give_up = rt_mono_ns() + 10000000000u;
  uint32_t stuck_tid = 0, stuck_n = 0, nstuck = 0;
  for (RtThread *t = rt_threads(); t; t = t->next) {
    while (__atomic_load_n(&t->inflight, __ATOMIC_SEQ_CST) && rt_mono_ns() < give_up) {
      struct timespec d = {0, 20000};
      nanosleep(&d, NULL);
    }
    uint32_t k = __atomic_load_n(&t->inflight, __ATOMIC_SEQ_CST);
    if (k && !nstuck++) stuck_tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE), stuck_n = k;
  }
  if (nstuck && !rt_opt.quiet) {
    /* says so (write(2): signal-safe): the records of those claims are lost */
    /* "... (process P, thread T's records: K claims open, and N more
     * threads'; waited in thread W) ..." */
    char m[300];
    size_t at = s_cpy(m, 0, sizeof m, "ncrt: a thread still held records after 10 s (process ");
    at = s_u64(m, at, sizeof m, (uint64_t)getpid());
    at = s_cpy(m, at, sizeof m, ", thread ");
    at = s_u64(m, at, sizeof m, stuck_tid);
    at = s_cpy(m, at, sizeof m, "'s records: ");
    at = s_u64(m, at, sizeof m, stuck_n);
    at = s_cpy(m, at, sizeof m, stuck_n == 1 ? " claim open" : " claims open");
    if (nstuck > 1) {
      at = s_cpy(m, at, sizeof m, ", and ");
      at = s_u64(m, at, sizeof m, nstuck - 1);
      at = s_cpy(m, at, sizeof m, " more thread's");
    }
    at = s_cpy(m, at, sizeof m, "; waited in thread ");
    at = s_u64(m, at, sizeof m, (uint64_t)syscall(SYS_gettid));
    at = s_cpy(m, at, sizeof m, "); the records they held are lost\n");
    ssize_t w = write(2, m, at);
    (void)w;
  }
}

void rt_save_now(int die) {
  if (!rt_collecting || !rt_threads()) return;
  in_save++;
  if (die) dying = 1;
  for (RtThread *t = rt_threads(); t; t = t->next) rt_spill_thread(t);
  if (die) wait_claims();
  if (__atomic_load_n(&raw_end, __ATOMIC_ACQUIRE) || gpu_end || die) { /* else nothing recorded yet */
    names_save();
    info_save(die);
  }
  in_save--;
}

/* The devices as "device" lines of the snapshot (built here, off any signal
 * path, once the driver answers). */
static void devices_cache(void) {
  const RtDevice *d;
  int n = rt_devices(&d);
  size_t at = 0;
  for (int i = 0; i < n && at < sizeof devices_json; i++) {
    Out o = {-1, 0, 0, {0}};
    o_json(&o, d[i].name); /* JSON-escaped name into o.b (no fd: never flushed) */
    int k = snprintf(devices_json + at, sizeof devices_json - at,
                     "device %d %llu %d %d %d %d %d %d %d %d %d %llu %llu %llu %.*s\n", d[i].id,
                     (unsigned long long)d[i].total_mem, d[i].cc_major, d[i].cc_minor, d[i].num_sms,
                     d[i].max_threads_per_block, d[i].max_threads_per_sm, d[i].max_blocks_per_sm, d[i].regs_per_block,
                     d[i].regs_per_sm, d[i].warp_size, (unsigned long long)d[i].shmem_per_block,
                     (unsigned long long)d[i].shmem_per_sm, (unsigned long long)d[i].shmem_per_block_optin,
                     (int)o.n, o.b);
    if (k < 0 || (size_t)k >= sizeof devices_json - at) break;
    at += (size_t)k;
  }
  devices_json[at] = 0;
}

/* GPU records that CUPTI handed over, appended to .gpu (the flusher, under
 * write_lock): memory holds about a second of GPU activity at most. */
static void gpu_save(void) {
  rt_cupti_flush_complete();
  size_t n = 0;
  RtGpuRec *v = rt_cupti_take(&n);
  if (n && !spill_err) {
    /* written in sequence by the flusher alone (under write_lock), from a
     * new empty file; the writer reads it with pread */
    int fd = lazy_open(&gpu_fd, ".gpu", O_RDWR);
    int e = fd >= 0 ? write_all(fd, v, n * sizeof *v) : 0;
    if (e) {
      int none = 0;
      __atomic_compare_exchange_n(&spill_err, &none, e, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    if (fd >= 0 && !e) {
      gpu_end += n * sizeof *v;
      for (size_t i = 0; i < n; i++) {
        gpu_work += v[i].kind != GPU_RUNTIME && v[i].kind != GPU_DRIVER;
        gpu_kernels += v[i].kind == GPU_KERNEL;
      }
    }
    if (!devices_json[0] && gpu_kernels) devices_cache(); /* a kernel ran: the driver is up */
  }
  free(v);
}

static void inc_tick(void);

/* The flusher's tick; never at the same time as a write (which may remove
 * the files at exit), and never waiting for one. GPU activity every fourth
 * tick: a flush of CUPTI's buffers is not free. */
void rt_flush_tick(void) {
  static unsigned ticks;
  if (pthread_mutex_trylock(&write_lock)) return;
  if (!__atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE)) {
    if (++ticks % 4 == 0) gpu_save();
    static char w[sizeof windows_buf[0] - 32];
    if (rt_windows_text(w, sizeof w) == 0) {
      size_t k = 0;
      for (const char *p = w; *p; p++) k += *p == '\n';
      char *next = windows_text == windows_buf[0] ? windows_buf[1] : windows_buf[0];
      snprintf(next, sizeof windows_buf[0], "windows %zu\n%s", k, w);
      __atomic_store_n(&windows_text, next, __ATOMIC_RELEASE);
    }
    rt_save_now(0);
    inc_tick();
  }
  pthread_mutex_unlock(&write_lock);
}

/* ---- the trace, from the spill file ---- */

typedef struct {
  uint32_t tid, depth, name;
  uint16_t domain;
  uint64_t start; /* ticks */
} OpenFrame;

/* What a process's exit hands to the finalizer besides its spill files
 * and snapshot (.ncrt-PID.hand, hand_over): what the trace's writer reads
 * from the process's memory otherwise. */
typedef struct {
  uint32_t name;
  uint64_t calls, total;
  double avg_us;
  uint32_t tid;
  uint64_t from_ns;
} HandThrottled;
typedef struct {
  uint64_t records;                  /* records left to convert at the hand-over */
  int body;                          /* .body goes on from body_to (else: all of .raw) */
  uint64_t body_to, crc, len, body_dropped;
  uint32_t body_skip;                /* records of the block at body_to converted already */
  uint64_t exit_ns, written_ns;
  long throttle_calls;
  double throttle_us;
  HandThrottled *thr;
  size_t nthr;
  uint64_t budget, budget_hit;
  uint64_t cupti_version;
  char step[600];                    /* JSON string */
  long steps;
  RtStep *stepv;                     /* ns */
  size_t nstep;
  SpanRec *spans;                    /* start/end ranges not ended yet (.body's carry) */
  size_t nspans;
} Hand;

typedef struct {
  int pid, rank, world, in_process;
  const Hand *hand;                  /* the finalizer, for a process that handed its exit over */
  const char *proc_name, *trace_name; /* raw text */
  uint64_t base, now;                 /* baseTimeNanoseconds; end of open ranges (mono ns) */
  int exiting;
  int raw;
  uint64_t from, to;
  uint32_t nthreads;
  uint32_t *tids;
  char **tnames; /* JSON strings */
  OpenFrame *open;
  size_t nopen;
  const char *(*domain_json)(uint16_t);
  const char *(*cat_json)(uint32_t); /* NULL: no name */
  const char *note;                  /* ncrt.finalized */
  const char *proc_json;             /* ncrt.process (NULL: none) */
  uint64_t pstart, pexit;            /* ncrt.lifetime: process start, program end (mono ns; 0 unknown) */
  int is_rank;                       /* file -rank<R>; else the name has -pid<P> already */
  const char *cupti;                 /* CUPTI status, as text */
  uint64_t dropped;
  int gpu;                           /* .gpu, or -1 */
  uint64_t gfrom, gto;               /* its records of this trace */
} Src;

/* This trace's GPU records: [gfrom, gto) of .gpu (a record cut short at
 * death left out), then, in the process, what CUPTI still holds. */
static RtGpuRec *gpu_records(Gz *g, const Src *s, size_t *n) {
  size_t nf = s->gpu >= 0 && s->gto > s->gfrom ? (size_t)((s->gto - s->gfrom) / sizeof(RtGpuRec)) : 0, nm = 0;
  RtGpuRec *mem = s->in_process ? rt_cupti_take(&nm) : NULL;
  *n = 0;
  if (!nf) {
    *n = nm;
    return mem;
  }
  RtGpuRec *v = malloc((nf + nm) * sizeof *v);
  if (!v) {
    *n = nm;
    if (!g->err) g->err = ENOMEM;
    return mem;
  }
  ssize_t r = pread(s->gpu, v, nf * sizeof *v, (off_t)s->gfrom);
  nf = r > 0 ? (size_t)r / sizeof *v : 0;
  if (nm) memcpy(v + nf, mem, nm * sizeof *v);
  free(mem);
  *n = nf + nm;
  return v;
}

static const Src *src;

/* A range's depth is a member of the event, not of its args: args hold
 * what is the same for every call of a name (its file and line, domain,
 * category) and the rare per-call flags, so a viewer that keys a function
 * by its name and args (speedscope: name + JSON of args) sees one function
 * per range name; an event with nothing for args has none. Viewers ignore
 * members they do not know (Perfetto, chrome://tracing, TensorBoard). */
static void put_range_args(Gz *g, uint32_t name, unsigned depth, unsigned cat, uint16_t dom, int jumped) {
  PUTS(g, ",\"depth\":");
  put_u64(g, depth);
  const char *file = NULL;
  int line = 0;
  /* in the process from its names, in the finalizer from a hand-over (loc_of) */
  int located = loc_of && loc_of(name, &file, &line);
  if (!located && !dom && !cat && !jumped) {
    PUTS(g, "}");
    return;
  }
  PUTS(g, ",\"args\":{");
  int n = 0; /* members written: a comma before each but the first */
  if (located) {
    put_file_line(g, file, line);
    n++;
  }
  if (dom) {
    const char *d = src->domain_json(dom);
    if (n++) PUTS(g, ",");
    PUTS(g, "\"domain\":");
    put(g, d, strlen(d));
  }
  if (cat) {
    const char *cn = src->cat_json(cat);
    if (n++) PUTS(g, ",");
    PUTS(g, "\"category\":");
    if (cn) put(g, cn, strlen(cn));
    else put_u64(g, cat);
  }
  /* closed when a longjmp left its frame (longjmp.c) */
  if (jumped) {
    if (n++) PUTS(g, ",");
    PUTS(g, "\"longjmp\":true");
  }
  PUTS(g, "}}");
}

/* Read the spill file's blocks in [from, to), calling fn on each. An
 * incomplete block (a thread still writing it) is waited for a little when
 * the process is alive, else counted as lost. */
typedef void (*BlockFn)(Gz *g, uint32_t tid, const RtRec *r, uint32_t n, void *arg);
static int inc_between(void);
static void spans_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg);
static void body_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg);
/* The flusher converts a block in slices of RB_SLICE records and stops
 * between two when the process exits (a 2 MiB block is ~87 000 records:
 * 30 ms of CPU, a second at nice 10 on a loaded machine, which the exit
 * waited for): rb_partial says how many records of the block at the
 * position it reached are converted, and the next read of that block
 * (rb_skip, consumed by read_blocks) starts after them. Under write_lock,
 * or the finalizer's own. */
#define RB_SLICE 4096u
static uint32_t rb_skip, rb_partial;
/* How read_blocks treats a block that is not complete (a thread still
 * writing it): */
enum {
  READ_DEAD,  /* the process is gone: count its records lost, go on */
  READ_ALIVE, /* wait for it a little, then count it lost */
  READ_READY, /* stop before it (the flusher converts it next time) */
};
static uint64_t read_blocks(int fd, uint64_t from, uint64_t to, int mode, BlockFn fn, Gz *g, void *arg,
                            uint64_t *reached) {
  uint64_t lost = 0;
  uint32_t skip = rb_skip;
  rb_skip = 0;
  rb_partial = 0;
  int tries_max = mode == READ_ALIVE ? 200 : 1;
  size_t cap = sizeof(BlkHdr) + (2u << 20) + 8;
  char *buf = malloc(cap);
  uint64_t off = from;
  if (!buf) {
    if (!g->err) g->err = ENOMEM; /* a trace without the records would be a lie */
    to = from;
  }
  while (off + sizeof(BlkHdr) + 8 <= to) {
    BlkHdr h;
    int ok = 0;
    for (int tries = 0; tries < tries_max; tries++) {
      if (pread(fd, &h, sizeof h, (off_t)off) == (ssize_t)sizeof h && h.magic == BLK_MAGIC) {
        ok = 1;
        break;
      }
      struct timespec d = {0, 250000};
      if (tries + 1 < tries_max) nanosleep(&d, NULL);
    }
    if (!ok || (uint64_t)h.n * sizeof(RtRec) + sizeof h + 8 > cap) break;
    size_t body = (size_t)h.n * sizeof(RtRec) + 8;
    ok = 0;
    for (int tries = 0; tries < tries_max; tries++) {
      if (pread(fd, buf, body, (off_t)(off + sizeof h)) == (ssize_t)body) {
        uint64_t c;
        memcpy(&c, buf + body - 8, 8);
        if (c == (BLK_COMMIT ^ h.n)) {
          ok = 1;
          break;
        }
      }
      struct timespec d = {0, 250000};
      if (tries + 1 < tries_max) nanosleep(&d, NULL);
    }
    if (!ok && mode == READ_READY) break;
    const RtRec *recs = (const RtRec *)buf;
    uint32_t first = skip < h.n ? skip : 0;
    skip = 0;
    /* records converted before (the block's first, by an earlier read that
     * stopped inside it): their ranges still count for GPU attribution */
    if (ok && first && fn == body_block) spans_block(g, h.tid, recs, first, NULL);
    if (ok && mode == READ_READY) {
      uint32_t k = first;
      while (k < h.n) {
        uint32_t m = h.n - k < RB_SLICE ? h.n - k : RB_SLICE;
        fn(g, h.tid, recs + k, m, arg);
        k += m;
        if (k < h.n && inc_between()) break;
      }
      if (k < h.n) { /* exiting: the rest of this block is the exit's */
        rb_partial = k;
        break;
      }
    } else if (ok) {
      fn(g, h.tid, recs + first, h.n - first, arg);
    } else {
      lost += h.n - first;
    }
    off += sizeof h + body;
    if (mode == READ_READY && inc_between()) break;
  }
  free(buf);
  if (reached) *reached = off;
  return lost;
}

typedef struct {
  int pid;
  SpanRec *spans;
  size_t nspans, capspans;
  uint64_t dropped;
} BodyState;

static void body_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg) {
  BodyState *st = arg;
  TidSpans *keep = spans_for(tid);
  for (uint32_t i = 0; i < n; i++) {
    const RtRec *r = &recs[i];
    uint64_t a = rt_ticks_to_ns(r->start);
    if (r->kind == REC_RANGE || r->kind == REC_RANGE_JUMPED) {
      uint64_t b = rt_ticks_to_ns(r->end);
      put_annotation(g, 0, r->name, st->pid, tid, a);
      PUTS(g, ",\"dur\":");
      put_us(g, (int64_t)(b - a));
      put_range_args(g, r->name, r->depth, r->cat, r->domain, r->kind == REC_RANGE_JUMPED);
      if (keep) spans_add(keep, a, b, r->name, r->depth);
    } else if (r->kind == REC_MARK) {
      put_annotation(g, 1, r->name, st->pid, tid, a);
      put_range_args(g, r->name, r->depth, r->cat, r->domain, 0);
    } else {
      if (st->nspans == st->capspans) {
        size_t cap = st->capspans ? st->capspans * 2 : 256;
        SpanRec *ns = realloc(st->spans, cap * sizeof *ns);
        if (!ns) {
          st->dropped++;
          continue;
        }
        st->spans = ns;
        st->capspans = cap;
      }
      st->spans[st->nspans++] = (SpanRec){r->end, a, r->kind == REC_SPAN_END, r->name, tid, r->cat};
    }
  }
}

/* The head: the events array opens with the process's metadata. The
 * top-level members that are known only at the end (devices, base time,
 * trace name, the ncrt object) follow the array (trace_tail), so the body
 * can be written while the program runs (incremental conversion below). */
static void trace_head(Gz *g, const Src *s) {
  PUTS(g, "{\n\"traceEvents\": [\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
  put_i64(g, s->pid);
  PUTS(g, ",\"tid\":0,\"args\":{\"name\":");
  put_jstr(g, s->proc_name);
  PUTS(g, "}}");
  PUTS(g, ",\n{\"name\":\"process_labels\",\"ph\":\"M\",\"ts\":0,\"pid\":");
  put_i64(g, s->pid);
  PUTS(g, ",\"tid\":0,\"args\":{\"labels\":\"rank ");
  put_i64(g, s->rank);
  PUTS(g, "\"}}");
}

/* GPU records of this trace; the threads that launched GPU work keep
 * their ranges (tid_spans) for attribution. */
static RtGpuRec *gpu_setup(Gz *g, const Src *s, size_t *ngpu) {
  RtGpuRec *gpu = gpu_records(g, s, ngpu);
  for (size_t i = 0; i < *ngpu; i++)
    if ((gpu[i].kind == GPU_RUNTIME || gpu[i].kind == GPU_DRIVER) && !spans_for(gpu[i].tid)) {
      TidSpans *ns = realloc(tid_spans, (tid_spans_n + 1) * sizeof *ns);
      if (!ns) break;
      tid_spans = ns;
      tid_spans[tid_spans_n++] = (TidSpans){gpu[i].tid, NULL, 0, 0};
    }
  return gpu;
}

static void trace_tail(Gz *g, const Src *s, BodyState *st, RtGpuRec *gpu, size_t ngpu);

/* The start/end ranges done[0..n) on their lanes, then the lanes' names. */
static void put_spans(Gz *g, const Src *s, int pid, DoneSpan *done, size_t n) {
  qsort(done, n, sizeof *done, done_cmp);
  for (size_t a = 0, z; a < n; a = z) {
    for (z = a; z < n && done[z].b.tid == done[a].b.tid; z++) {}
    unsigned nl = assign_lanes(done + a, z - a);
    for (size_t i = a; i < z; i++) put_span(g, pid, &done[i]);
    const char *name = NULL;
    for (uint32_t i = 0; i < s->nthreads; i++)
      if (s->tids[i] == done[a].b.tid) name = s->tnames[i];
    put_lane_names(g, pid, done[a].b.tid, name, nl);
  }
}

static void push_done(Gz *g, DoneSpan **v, size_t *n, size_t *cap, DoneSpan d) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    DoneSpan *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) {
      if (!g->err) g->err = ENOMEM;
      return;
    }
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = d;
}

static void write_from(Gz *g, const Src *s) {
  src = s;
  int pid = s->pid;
  size_t ngpu = 0;
  RtGpuRec *gpu = gpu_setup(g, s, &ngpu);
  trace_head(g, s);
  BodyState st = {pid, span_carry, span_carry_n, span_carry_n, s->dropped};
  span_carry = NULL;
  span_carry_n = 0;
  st.dropped += read_blocks(s->raw, s->from, s->to, s->in_process ? READ_ALIVE : READ_DEAD, body_block, g, &st, NULL);
  trace_tail(g, s, &st, gpu, ngpu);
}

/* Everything after the body: ranges open at the end, start/end ranges,
 * GPU work, thread names, then the top-level members. */
static void trace_tail(Gz *g, const Src *s, BodyState *st_, RtGpuRec *gpu, size_t ngpu) {
  BodyState st = *st_;
  int pid = s->pid;
  SpanRec *spans = st.spans;
  size_t nspans = st.nspans;

  /* Ranges still open when the process ended (or at its last snapshot) */
  uint64_t now = s->now;
  for (size_t i = 0; s->exiting && i < s->nopen; i++) {
    const OpenFrame *f = &s->open[i];
    uint64_t a = rt_ticks_to_ns(f->start);
    put_annotation(g, 0, f->name, pid, f->tid, a);
    PUTS(g, ",\"dur\":");
    put_us(g, (int64_t)(now > a ? now - a : 0));
    PUTS(g, ",\"depth\":");
    put_u64(g, f->depth);
    PUTS(g, ",\"args\":{\"open at exit\":true");
    if (f->domain) {
      const char *d = s->domain_json(f->domain);
      PUTS(g, ",\"domain\":");
      put(g, d, strlen(d));
    }
    PUTS(g, "}}");
    TidSpans *keep_open = spans_for(f->tid);
    if (keep_open) spans_add(keep_open, a, now, f->name, f->depth);
  }

  /* Start/end ranges become X events on lanes of the thread that started
   * them (put_spans) */
  size_t hcap = 1;
  while (hcap < nspans * 2 + 2) hcap *= 2;
  uint32_t *h = calloc(hcap, sizeof *h);
  uint8_t *ended = calloc(nspans + 1, 1);
  if ((!h || !ended) && nspans && !g->err) g->err = ENOMEM;
  DoneSpan *done = NULL;
  size_t ndone = 0, capdone = 0;
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
    if (b) push_done(g, &done, &ndone, &capdone, (DoneSpan){*b, e->start, e->tid ? e->tid : b->tid, 0, 0});
  }
  size_t nkeep = 0;
  for (size_t i = 0; h && ended && i < nspans; i++) {
    if (spans[i].end || ended[i]) continue;
    if (s->exiting) push_done(g, &done, &ndone, &capdone, (DoneSpan){spans[i], now, 0, 0, 0});
    else spans[nkeep++] = spans[i];
  }
  if (ndone) put_spans(g, s, pid, done, ndone);
  free(done);
  free(ended);
  free(h);
  span_carry = nkeep ? spans : NULL;
  span_carry_n = nkeep;
  if (!nkeep) free(spans);
  if (s->in_process) put_steps(g, pid);
  else if (s->hand) put_step_list(g, pid, s->hand->stepv, s->hand->nstep, 1);

  if (ngpu) {
    for (size_t i = 0; i < tid_spans_n; i++) qsort(tid_spans[i].v, tid_spans[i].n, sizeof(Span), span_cmp);
    write_gpu(g, pid, gpu, ngpu);
  }
  for (size_t i = 0; i < tid_spans_n; i++) free(tid_spans[i].v);
  free(tid_spans);
  tid_spans = NULL;
  tid_spans_n = 0;
  free(gpu);
  if (s->in_process) rt_windows_consumed();

  for (uint32_t i = 0; i < s->nthreads; i++) {
    PUTS(g, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_i64(g, pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, s->tids[i]);
    PUTS(g, ",\"args\":{\"name\":");
    put(g, s->tnames[i], strlen(s->tnames[i]));
    PUTS(g, "}}");
    PUTS(g, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_i64(g, pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, s->tids[i]);
    PUTS(g, ",\"args\":{\"sort_index\":");
    put_u64(g, s->tids[i]);
    PUTS(g, "}}");
  }
  PUTS(g, "\n],\n\"schemaVersion\": 1,\n\"deviceProperties\": [");
  put_devices(g);
  PUTS(g, "],\n\"distributedInfo\": {\"backend\": \"\", \"rank\": ");
  put_i64(g, s->rank);
  PUTS(g, ", \"world_size\": ");
  put_i64(g, s->world);
  PUTS(g, "},\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": ");
  put_u64(g, s->base);
  PUTS(g, ",\n\"traceName\": ");
  put_jstr(g, s->trace_name);
  PUTS(g, ",\n\"ncrt\": {\"throttle\": {\"calls\": ");
  const Hand *hd = s->hand;
  put_i64(g, s->in_process ? rt_opt.throttle_calls : hd ? hd->throttle_calls : 0);
  char buf[160];
  double th_us = s->in_process ? rt_opt.throttle_us : hd ? hd->throttle_us : 0.0;
  snprintf(buf, sizeof buf, ", \"avg_us\": %g, \"rule\": \"%s\"}, \"throttled\": [", th_us,
           th_us > 0 ? "calls, then an exclusive mean under avg_us (judged once)" : "calls");
  put(g, buf, strlen(buf));
  uint32_t nn = s->in_process ? rt_name_count() : 0;
  int first = 1;
  for (uint32_t i = 0; i < nn; i++) {
    RtName *nm = rt_name(i);
    if (!(__atomic_load_n(&nm->flags, __ATOMIC_ACQUIRE) & NAME_THROTTLED)) continue;
    if (first) PUTS(g, "\n  {\"name\": ");
    else PUTS(g, ",\n  {\"name\": ");
    first = 0;
    put_name(g, i);
    /* from which call and where: the calls recorded, then all of them
     * (counted, not timed, since), the exclusive mean then, and the moment
     * and thread at which recording stopped */
    snprintf(buf, sizeof buf, ", \"calls\": %llu, \"total_calls\": %llu, \"avg_us\": %.3f, \"tid\": %u, \"from_ts\": ",
             (unsigned long long)nm->calls_at_throttle, (unsigned long long)rt_name_total_calls(i),
             nm->avg_us_at_throttle, nm->throttled_tid);
    put(g, buf, strlen(buf));
    put_us(g, rel(rt_ticks_to_ns(nm->throttled_at)));
    PUTS(g, "}");
  }
  for (size_t i = 0; hd && i < hd->nthr; i++) { /* as above, handed over */
    const HandThrottled *ht = &hd->thr[i];
    if (first) PUTS(g, "\n  {\"name\": ");
    else PUTS(g, ",\n  {\"name\": ");
    first = 0;
    put_name(g, ht->name);
    snprintf(buf, sizeof buf, ", \"calls\": %llu, \"total_calls\": %llu, \"avg_us\": %.3f, \"tid\": %u, \"from_ts\": ",
             (unsigned long long)ht->calls, (unsigned long long)ht->total, ht->avg_us, ht->tid);
    put(g, buf, strlen(buf));
    put_us(g, rel(ht->from_ns));
    PUTS(g, "}");
  }
  PUTS(g, "],\n  \"disk_budget\": {\"bytes\": ");
  put_u64(g, s->in_process ? rt_opt.disk_budget : hd ? hd->budget : 0);
  uint64_t hit = s->in_process ? rt_budget_hit : hd ? hd->budget_hit : 0;
  if (hit) {
    /* where recording stopped: what follows that moment is not in the trace */
    PUTS(g, ", \"reached_ts\": ");
    put_us(g, rel(hit));
  }
  PUTS(g, "}");
  PUTS(g, ",\n  \"dropped\": ");
  put_u64(g, st.dropped);
  PUTS(g, ", \"cupti\": ");
  if (s->in_process) put_jstr(g, rt_cupti_status());
  else put(g, s->cupti, strlen(s->cupti));
  PUTS(g, ", \"cupti_version\": ");
  put_u64(g, s->in_process ? rt_cupti_version() : hd ? hd->cupti_version : 0);
  PUTS(g, ", \"clock\": ");
  put_jstr(g, rt_opt.use_tsc ? "tsc" : "monotonic");
  if (s->in_process) {
    /* the schedule asked for and the steps the program made */
    if (rt_opt.active) {
      snprintf(buf, sizeof buf, ", \"schedule\": {\"wait\": %ld, \"warmup\": %ld, \"active\": %ld, \"repeat\": %ld}",
               rt_opt.wait, rt_opt.warmup, rt_opt.active, rt_opt.repeat);
      put(g, buf, strlen(buf));
    }
    PUTS(g, ", \"step\": ");
    put_jstr(g, rt_opt.step_name[0] ? rt_opt.step_name : "ncrt_step()");
    PUTS(g, ", \"steps\": ");
    put_i64(g, rt_steps_seen());
  } else if (hd) {
    PUTS(g, ", \"step\": ");
    put(g, hd->step, strlen(hd->step));
    PUTS(g, ", \"steps\": ");
    put_i64(g, hd->steps);
    /* the process's exit left this many records to the finalizer (ncrun),
     * so that it ended at once (hand_over) */
    PUTS(g, ", \"handed_over\": ");
    put_u64(g, hd->records);
  }
  if (s->note) {
    PUTS(g, ", \"finalized\": ");
    put_jstr(g, s->note);
  }
  /* who the process is and when it lived: nctrace groups processes under
   * ranks and shows the time no range covers (start-up, exit) */
  char pj[600];
  const char *proc_json = s->proc_json;
  uint64_t pstart = s->pstart, pexit = s->pexit;
  if (s->in_process) {
    proc_json = rt_process_json(pj, sizeof pj) ? pj : NULL;
    pstart = rt_proc.start_ns;
    pexit = rt_proc.exit_ns;
  }
  if (proc_json && *proc_json) {
    PUTS(g, ",\n  \"process\": ");
    put(g, proc_json, strlen(proc_json));
  }
  /* a whole process's trace (not a cycle or a profiled region) says when
   * the process started and when the program ended (the collector's own
   * exit work follows, until "written") */
  if (s->exiting && !rt_opt.active && !rt_opt.dormant) {
    PUTS(g, ",\n  \"lifetime\": {\"written\": ");
    put_us(g, rel(s->in_process ? rt_mono_ns() : hd ? hd->written_ns : s->now));
    if (pstart) {
      PUTS(g, ", \"start\": ");
      put_us(g, rel(pstart));
    }
    if (pexit) {
      PUTS(g, ", \"exit\": ");
      put_us(g, rel(pexit));
    }
    if (!s->in_process && !hd) PUTS(g, ", \"died\": true");
    PUTS(g, "}");
  }
  PUTS(g, "}\n}\n");
}

/* Write the trace to a temporary name, then rename; "" on success, else
 * the reason (errno text). */
/* A complete trace in tmp goes to path (on err: removed). */
static int finish_file(const char *tmp, const char *path, const char *done, int err) {
  if (!err && done) {
    /* A process that dies from here on has its trace complete in tmp: the
     * marker (<prefix>.done: "tmp\npath\n", renamed into place) tells the
     * finalizer to move it to path and remake nothing (no range twice). */
    char mt[1300];
    snprintf(mt, sizeof mt, "%s.tmp", done);
    int m = open(mt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m >= 0) {
      int e = write_all(m, tmp, strlen(tmp));
      if (!e) e = write_all(m, "\n", 1);
      if (!e) e = write_all(m, path, strlen(path));
      if (!e) e = write_all(m, "\n", 1);
      if (close(m) == 0 && !e) rename(mt, done);
      else unlink(mt);
    }
  }
  if (!err && rename(tmp, path) != 0) err = errno ? errno : EIO;
  if (err) unlink(tmp);
  return err;
}

static int write_file(const char *path, const Src *s, int level, const char *done) {
  char tmp[2100];
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno ? errno : EIO;
  Gz *g = calloc(1, sizeof *g);
  int err = g ? gz_open(g, fd, level) : ENOMEM;
  if (!err) {
    write_from(g, s);
    gz_finish(g);
    err = g->err;
  }
  free(g);
  if (close(fd) != 0 && !err) err = errno ? errno : EIO;
  return finish_file(tmp, path, done, err);
}
/* JSON-string lookups for the process itself */
static const char *mem_domain_json(uint16_t d) {
  static char *cache[1024];
  if (d >= 1024) return "\"?\"";
  if (!cache[d]) {
    const char *n = rt_domain_name(d);
    char *e = malloc(strlen(n) * 6 + 3);
    if (!e) return "\"?\"";
    Out o = {-1, 0, 0, {0}};
    (void)o;
    size_t k = 0;
    e[k++] = '"';
    for (const unsigned char *p = (const unsigned char *)n; *p; p++) {
      if (*p == '"' || *p == '\\') e[k++] = '\\';
      if (*p < 0x20) k += (size_t)sprintf(e + k, "\\u%04x", *p);
      else e[k++] = (char)*p;
    }
    e[k++] = '"';
    e[k] = 0;
    cache[d] = e;
  }
  return cache[d];
}
static const char *mem_cat_json(uint32_t c) {
  static char buf[256][300];
  const char *n = rt_category_name(c);
  if (!n || c > 255) return NULL;
  size_t k = 0;
  buf[c][k++] = '"';
  for (const unsigned char *p = (const unsigned char *)n; *p && k < 280; p++) {
    if (*p == '"' || *p == '\\') buf[c][k++] = '\\';
    if (*p < 0x20) k += (size_t)snprintf(buf[c] + k, 8, "\\u%04x", *p);
    else buf[c][k++] = (char)*p;
  }
  buf[c][k++] = '"';
  buf[c][k] = 0;
  return buf[c];
}

/* ---- incremental conversion ----
 *
 * A run without a schedule writes one trace, at exit. So that the exit
 * costs only what is not converted yet, the flusher turns the spill file's
 * complete blocks into the trace's events as the program runs (at most
 * INC_STEP bytes of .raw per tick, when at least INC_MIN are waiting),
 * deflating them into <dir>/.ncrt-<PID>.body, which already starts with
 * the gzip header and the trace's head. At exit the rest of .raw, the tail
 * and the gzip trailer are added and the file is renamed to the trace. If
 * the process dies instead, .body is thrown away and the finalizer makes
 * the trace from .raw (kept whole until exit). GPU attribution needs the
 * ranges of the threads that launched GPU work, known only at exit: the
 * converted part of .raw is read again for those threads (ranges only, no
 * JSON, no deflate). */
#define INC_MIN (1u << 20)
#define INC_STEP (64u << 20)
static struct {
  int on, failed, fd;
  Gz *g;
  uint64_t to; /* .raw converted up to here */
  uint32_t skip; /* and this many records of the block there */
  BodyState st;
  Src s;
  char tmp[1300];
} inc;

static void inc_drop(void) {
  if (inc.on) {
    if (inc.g) deflateEnd(&inc.g->z);
    free(inc.g);
    close(inc.fd);
    unlink(inc.tmp);
    free(inc.st.spans);
  }
  memset(&inc, 0, sizeof inc);
}

/* After fork: the parent's conversion is the parent's (its file stays). */
static void inc_forget(void) {
  if (inc.on) {
    if (inc.g) deflateEnd(&inc.g->z);
    free(inc.g);
    close(inc.fd);
    free(inc.st.spans);
  }
  memset(&inc, 0, sizeof inc);
}

/* Between two blocks the flusher converts: the spill and the snapshot go
 * on every RT_FLUSH_MS (a tick converts up to INC_STEP bytes, which took
 * seconds at nice 10 on a loaded machine, and the spill waited for it: a
 * SIGKILL lost the records of those seconds); 1: stop, the process is
 * exiting (its exit converts the rest or hands it over, and must not wait
 * for this tick). */
static uint64_t inc_spilled_ns;
static int inc_between(void) {
  if (__atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE)) return 1;
  uint64_t now = rt_mono_ns();
  if (now - inc_spilled_ns >= RT_FLUSH_MS * 1000000ull) {
    inc_spilled_ns = now;
    rt_save_now(0);
  }
  return 0;
}

static void inc_tick(void) {
  inc_spilled_ns = rt_mono_ns(); /* rt_flush_tick saved just now */
  if (inc.failed || rt_opt.active || trace_from || raw_fd < 0) return;
  uint64_t end = __atomic_load_n(&raw_end, __ATOMIC_SEQ_CST);
  if (end < inc.to + INC_MIN) return;
  if (end > inc.to + INC_STEP) end = inc.to + INC_STEP;
  if (!inc.on) {
    const char *off = getenv(NCRT_ENV_INCREMENTAL); /* "off": everything at exit, as before (for comparison) */
    if (off && (!strcmp(off, "off") || !strcmp(off, "0"))) {
      inc.failed = 1;
      return;
    }
    path_of(inc.tmp, sizeof inc.tmp, ".body");
    inc.fd = open(inc.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    inc.g = inc.fd >= 0 ? calloc(1, sizeof *inc.g) : NULL;
    inc.on = inc.fd >= 0;
    if (!inc.g || gz_open(inc.g, inc.fd, rt_opt.level)) {
      inc_drop();
      inc.failed = 1; /* the exit writes it all, as without */
      return;
    }
    inc.s.pid = (int)getpid();
    inc.s.rank = rt_opt.rank;
    inc.s.world = rt_opt.world_size;
    inc.s.in_process = 1;
    inc.s.proc_name = rt_opt.name;
    inc.s.domain_json = mem_domain_json;
    inc.s.cat_json = mem_cat_json;
    inc.st.pid = inc.s.pid;
    src = &inc.s;
    trace_head(inc.g, &inc.s);
  }
  rt_clock_calibrate();
  src = &inc.s;
  name_json = esc_name;
  rb_skip = inc.skip;
  read_blocks(raw_fd, inc.to, end, READ_READY, body_block, inc.g, &inc.st, &inc.to);
  inc.skip = rb_partial;
  if (inc.g->err) {
    inc_drop();
    inc.failed = 1;
  }
}

/* GPU attribution: the ranges of the launching threads, nothing written */
static void spans_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg) {
  (void)g, (void)arg;
  TidSpans *keep = spans_for(tid);
  for (uint32_t i = 0; keep && i < n; i++)
    if (recs[i].kind == REC_RANGE || recs[i].kind == REC_RANGE_JUMPED)
      spans_add(keep, rt_ticks_to_ns(recs[i].start), rt_ticks_to_ns(recs[i].end), recs[i].name, recs[i].depth);
}

/* The exit's part: the rest of .raw, the tail, the trailer. */
static int inc_finish(const char *path, const Src *s, const char *done) {
  Gz *g = inc.g;
  src = s;
  size_t ngpu = 0;
  RtGpuRec *gpu = gpu_setup(g, s, &ngpu);
  if (tid_spans_n) read_blocks(s->raw, 0, inc.to, READ_DEAD, spans_block, g, NULL, NULL);
  BodyState st = inc.st;
  st.dropped += s->dropped;
  rb_skip = inc.skip;
  st.dropped += read_blocks(s->raw, inc.to, s->to, READ_ALIVE, body_block, g, &st, NULL);
  inc.st.spans = NULL; /* trace_tail owns them now */
  trace_tail(g, s, &st, gpu, ngpu);
  gz_finish(g);
  int err = g->err;
  free(g);
  inc.g = NULL;
  if (close(inc.fd) != 0 && !err) err = errno ? errno : EIO;
  inc.on = 0;
  return finish_file(inc.tmp, path, done, err);
}

/* ---- the fast exit: the conversion handed over to the finalizer ----
 *
 * The flusher converts while the program runs, but a program that records
 * faster than it converts (10^7 ranges in a second; conversion, JSON and
 * deflate, is about 1 µs a range) leaves most of it to the exit: 15-100 s
 * for 10^7-5*10^7 ranges, on the program's exit path. When a finalizer is
 * known to run after the process is gone (ncrun sets NCRT_FINALIZER; it
 * finalizes every process of the run when its command ends) and more than
 * NCRT_HANDOFF bytes of records are left to convert (default below; "off"
 * never), the exit writes what only its memory holds (.hand: locations,
 * the throttle report, steps, the budget, start/end ranges carried, the
 * state of .body's deflate stream) beside the spill files and the final
 * snapshot, and the process ends at once; the finalizer goes on with .body
 * where the process left it (a sync flush ends the stream on a byte
 * boundary, the finalizer's deflate continues it: one gzip member) and
 * makes the same trace. Small exits convert in the process, as before:
 * the trace is there when the process ends, and a subprocess's parent that
 * reads it then still finds it. Without ncrun nobody would finalize: the
 * exit converts everything in the process. */
#define HANDOFF_DEFAULT (16u << 20) /* ~0.7 M records left: about 0.5 s of conversion here */

static uint64_t handoff_min(void) {
  const char *fin = getenv(NCRT_ENV_FINALIZER);
  if (!fin || !*fin) return 0;
  const char *v = getenv(NCRT_ENV_HANDOFF);
  if (!v || !*v) return HANDOFF_DEFAULT;
  int ok;
  unsigned long long b = ncrt_parse_size(v, &ok); /* "off" or "0": never (0) */
  return ok ? b : HANDOFF_DEFAULT;
}

static void h_json(FILE *f, const char *str) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

/* The exit's hand-over (under write_lock, rt_exiting set, every record
 * spilled up to `to`): 0 when done (the process may end; the finalizer
 * writes its trace), else the exit converts as before. */
static int hand_over(uint64_t to) {
  /* GPU activity still in memory goes to .gpu (rt_write_trace flushed CUPTI) */
  gpu_save();
  int body = inc.on && !inc.failed && inc.g && !inc.g->err;
  uint32_t rb_skip_saved = inc.skip;
  uint64_t records = (to - (body ? inc.to : trace_from)) / sizeof(RtRec) - (body ? inc.skip : 0); /* about */
  if (body) {
    gz_drain(inc.g, Z_SYNC_FLUSH); /* every byte out, no final block: the finalizer goes on */
    if (inc.g->err) body = 0;
  }
  char tmp[1300], fin[1300];
  path_of(tmp, sizeof tmp, ".hand.tmp");
  path_of(fin, sizeof fin, ".hand");
  FILE *f = fopen(tmp, "we");
  if (!f) return -1;
  fprintf(f, "ncrt-hand 1\nrecords %llu\n", (unsigned long long)records);
  if (body)
    fprintf(f, "body %llu %llu %llu %llu %u\n", (unsigned long long)inc.to, (unsigned long long)inc.g->crc,
            (unsigned long long)inc.g->len, (unsigned long long)inc.st.dropped, inc.skip);
  fprintf(f, "exit %llu\nwritten %llu\nthrottle %ld %.17g\n", (unsigned long long)rt_proc.exit_ns,
          (unsigned long long)rt_mono_ns(), rt_opt.throttle_calls, rt_opt.throttle_us);
  uint32_t nn = rt_name_count();
  for (uint32_t i = 0; i < nn; i++) {
    RtName *nm = rt_name(i);
    if (nm->file) {
      fprintf(f, "loc %u %d ", i, nm->line);
      h_json(f, nm->file);
      fputc('\n', f);
    }
    if (__atomic_load_n(&nm->flags, __ATOMIC_ACQUIRE) & NAME_THROTTLED)
      fprintf(f, "thr %u %llu %llu %.17g %u %llu\n", i, (unsigned long long)nm->calls_at_throttle,
              (unsigned long long)rt_name_total_calls(i), nm->avg_us_at_throttle, nm->throttled_tid,
              (unsigned long long)rt_ticks_to_ns(nm->throttled_at));
  }
  fprintf(f, "budget %llu %llu\ncuptiv %llu\nsteps %ld\nstep ", (unsigned long long)rt_opt.disk_budget,
          (unsigned long long)rt_budget_hit, (unsigned long long)rt_cupti_version(), rt_steps_seen());
  h_json(f, rt_opt.step_name[0] ? rt_opt.step_name : "ncrt_step()");
  fputc('\n', f);
  RtStep *v;
  size_t n = rt_steps_take(&v);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "ps %ld %llu %llu %u %u\n", v[i].index, (unsigned long long)rt_ticks_to_ns(v[i].start),
            (unsigned long long)rt_ticks_to_ns(v[i].end), v[i].tid, (unsigned)v[i].captured);
  free(v);
  for (size_t i = 0; body && i < inc.st.nspans; i++) {
    const SpanRec *r = &inc.st.spans[i];
    fprintf(f, "sp %llu %llu %llu %u %u %u\n", (unsigned long long)r->id, (unsigned long long)r->start,
            (unsigned long long)r->end, r->name, r->tid, (unsigned)r->cat);
  }
  fputs("end\n", f);
  int err = ferror(f);
  if (fclose(f) != 0) err = 1;
  /* the names and the last snapshot (open ranges, threads), then the hand:
   * its rename says the rest is in place */
  names_save();
  info_save(1);
  if (body) {
    deflateEnd(&inc.g->z);
    free(inc.g);
    inc.g = NULL;
    if (close(inc.fd) != 0) err = 1;
    inc.on = 0;
  }
  if (err || rename(tmp, fin) != 0) {
    unlink(tmp);
    /* .body is spoilt for the process (its stream was handed away): the
     * finalizer remakes the trace from .raw; say so, the process ends */
    return body ? 1 : -1;
  }
  if (getenv(NCRT_ENV_VERBOSE))
    rt_say("%llu records left to convert: handed to the finalizer (%s; .body %s, %u records into a block)",
           (unsigned long long)records, fin, body ? "goes on" : "none", body ? rb_skip_saved : 0);
  return 0;
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

static char *json_dup(const char *s) {
  size_t n = strlen(s);
  char *e = malloc(n * 6 + 3);
  if (!e) return NULL;
  size_t k = 0;
  e[k++] = '"';
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') e[k++] = '\\';
    if (*p < 0x20) k += (size_t)sprintf(e + k, "\\u%04x", *p);
    else e[k++] = (char)*p;
  }
  e[k++] = '"';
  e[k] = 0;
  return e;
}

int rt_write_force;

int rt_write_trace(const char *dir, const char *name) {
  int keep = 0;
  pthread_mutex_lock(&write_lock);
  rt_cupti_flush();
  for (RtThread *t = rt_threads(); t; t = t->next) rt_spill_thread(t);
  wait_claims();
  int rc = 1;
  uint64_t to = __atomic_load_n(&raw_end, __ATOMIC_SEQ_CST);
  /* open ranges (at exit) */
  size_t nopen = 0, capopen = 0;
  OpenFrame *open = NULL;
  /* out of memory: the frames collected so far are kept, the rest are not
   * (capopen grows only with the block, so it always says what `open` holds) */
  int open_full = 0;
  for (RtThread *t = __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE) ? rt_threads() : NULL; t && !open_full;
       t = t->next) {
    RtFrame f;
    for (uint32_t i = 0; rt_frame_peek(t, i, &f); i++) {
      if (!f.recorded) continue;
      if (nopen == capopen) {
        size_t cap = capopen ? capopen * 2 : 16;
        OpenFrame *o = realloc(open, cap * sizeof *o);
        if (!o) {
          open_full = 1;
          break;
        }
        open = o, capopen = cap;
      }
      open[nopen++] = (OpenFrame){__atomic_load_n(&t->tid, __ATOMIC_ACQUIRE), i, f.name, f.domain, f.start};
    }
  }
  /* nothing recorded: no file, except when a profiled region asked for its
   * trace (rt_write_force): a region that ran nothing still has one, as
   * torch.profiler writes one */
  if (!name || (to <= trace_from && gpu_work <= gpu_work_from && !rt_cupti_count() && !nopen && !span_carry_n &&
                !spill_err && !rt_write_force))
    goto done;
  char path[2048];
  if (!dir) dir = rt_opt.out_dir;
  /* a rank's main process: -rank<R>; any other process has -pid<P> in its
   * name already (options.c) and no rank in the file name */
  if (rt_proc.is_rank) snprintf(path, sizeof path, "%s/%s-rank%d.pt.trace.json.gz", dir, name, rt_opt.rank);
  else snprintf(path, sizeof path, "%s/%s.pt.trace.json.gz", dir, name);
  if (access(path, F_OK) == 0 && !wrote(path))
    snprintf(path, sizeof path, "%s/%s-pid%d-rank%d.pt.trace.json.gz", dir, name, (int)getpid(), rt_opt.rank);
  rc = -1;
  /* open frames that could not all be listed (out of memory at exit): the
   * spill files stay for ncrun's finalizer, which lists them all */
  int err = spill_err ? spill_err : open_full ? ENOMEM : 0;
  /* a whole process's trace at its exit with much left to convert: handed
   * to ncrun's finalizer, the process ends at once (hand_over) */
  uint64_t hmin = !err && __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE) && !rt_opt.active && !rt_opt.dormant &&
                          !trace_from && !rt_write_force
                      ? handoff_min()
                      : 0;
  if (hmin && to - (inc.on && !inc.failed ? inc.to : trace_from) > hmin && hand_over(to) >= 0) {
    keep = 1; /* the spill files stay for the finalizer */
    rc = 0;
    goto done;
  }
  if (!err) {
    rt_clock_calibrate();
    Src s;
    memset(&s, 0, sizeof s);
    s.pid = (int)getpid();
    s.rank = rt_opt.rank;
    s.world = rt_opt.world_size;
    s.in_process = 1;
    s.proc_name = rt_opt.name;
    s.trace_name = name;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t real_now = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    s.now = rt_mono_ns();
    s.base = real_now - (s.now - rt_clock_origin_ns());
    s.exiting = __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE);
    s.raw = raw_fd;
    s.from = trace_from;
    s.to = to;
    s.gpu = gpu_fd;
    s.gfrom = gpu_from;
    s.gto = gpu_end;
    s.open = open;
    s.nopen = nopen;
    s.domain_json = mem_domain_json;
    s.cat_json = mem_cat_json;
    for (RtThread *t = rt_threads(); t; t = t->next) {
      s.dropped += t->dropped;
      s.nthreads++;
    }
    uint32_t nthreads = s.nthreads;
    s.tids = calloc(s.nthreads + 1, sizeof *s.tids);
    s.tnames = calloc(s.nthreads + 1, sizeof *s.tnames);
    uint32_t k = 0;
    for (RtThread *t = rt_threads(); t && s.tids && s.tnames; t = t->next) {
      char comm[64];
      const char *nm = rt_os_thread_name(t->tid);
      if (!nm) {
        thread_comm(t->tid, comm, sizeof comm);
        nm = comm;
      }
      s.tids[k] = t->tid;
      s.tnames[k] = json_dup(nm);
      if (s.tnames[k]) k++;
    }
    s.nthreads = k;
    name_json = esc_name;
    char done[1300];
    path_of(done, sizeof done, ".done");
    /* a thread whose name could not be copied at exit: as open frames above */
    if (k < nthreads && s.exiting) err = ENOMEM;
    else if (inc.on && s.exiting && !s.from && !inc.failed) err = inc_finish(path, &s, done);
    else err = write_file(path, &s, rt_opt.level, s.exiting ? done : NULL);
    for (uint32_t i = 0; i < k; i++) free(s.tnames[i]);
    free(s.tids);
    free(s.tnames);
  }
  /* Out of memory or descriptors at exit (a program that ends with its
   * address space full): the spill files are whole, so they stay, with a
   * final snapshot, for ncrun's finalizer, which has memory to spare. */
  keep = err && __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE) && !spill_err && (err == ENOMEM || err == EMFILE || err == ENFILE);
  if (keep) {
    names_save();
    info_save(1);
    rt_say("cannot write %s at exit: %s; its records stay in %s for ncrun (or `ncrun --finalize %s`)", path,
           strerror(err), rt_opt.out_dir, rt_opt.out_dir);
    goto done;
  }
  trace_from = to;
  gpu_from = gpu_end;
  gpu_work_from = gpu_work;
  if (err) {
    /* a full disk loses the trace, never the program: say why, once */
    rt_say("cannot write %s: %s; the trace of this process is lost", path, strerror(err));
    goto done;
  }
  rc = 0;
  if (nwritten < 32 && !wrote(path)) written[nwritten++] = strdup(path);
  if (getenv(NCRT_ENV_VERBOSE)) rt_say("trace written to %s", path);
done:
  free(open);
  if (__atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE) && !keep) {
    unlink_files();
  } else if (raw_fd >= 0 && trace_from == raw_end) {
    /* a cycle written: what it consumed need not stay on disk */
#ifdef FALLOC_FL_PUNCH_HOLE
    fallocate(raw_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(trace_from & ~(uint64_t)4095));
    if (gpu_fd >= 0)
      fallocate(gpu_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(gpu_from & ~(uint64_t)4095));
#endif
  }
  pthread_mutex_unlock(&write_lock);
  return rc;
}

/* ---- the finalizer: a dead process's files to its trace ---- */

static char **fin_names;
static uint32_t fin_nnames;
static char *fin_domains[1024];
static char *fin_cats[256];

static const char *fin_name_json(uint32_t id) {
  return id < fin_nnames && fin_names[id] ? fin_names[id] : "\"(unnamed)\"";
}
static const char *fin_domain_json(uint16_t d) { return d < 1024 && fin_domains[d] ? fin_domains[d] : "\"?\""; }
static const char *fin_cat_json(uint32_t c) { return c < 256 ? fin_cats[c] : NULL; }

static char *slurp(const char *path, size_t *n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  char *b = NULL;
  if (fstat(fd, &st) == 0 && (b = malloc((size_t)st.st_size + 1))) {
    ssize_t r = pread(fd, b, (size_t)st.st_size, 0);
    if (r < 0) r = 0;
    b[r] = 0;
    *n = (size_t)r;
  }
  close(fd);
  return b;
}

/* "ID JSON\n" or "KEY JSON\n": the JSON string up to the end of the line */
static char *line_json(char *p) {
  char *e = strchr(p, '\n');
  if (e) *e = 0;
  return strdup(p);
}

/* JSON string (as written by o_json) back to text, for names of files */
static void unjson(const char *j, char *out, size_t cap) {
  size_t k = 0;
  if (*j == '"') j++;
  for (; *j && *j != '"' && k + 1 < cap; j++) {
    if (*j == '\\' && j[1]) {
      j++;
      if (*j == 'u') {
        out[k++] = (char)strtol((char[]){j[3], j[4], 0}, NULL, 16);
        j += 4;
        continue;
      }
    }
    out[k++] = *j;
  }
  out[k] = 0;
}

/* ---- what an exit handed over (.hand, hand_over) ---- */

static char **fin_loc_file;
static int *fin_loc_line;
static uint32_t fin_nloc;

static int fin_loc(uint32_t id, const char **file, int *line) {
  if (id >= fin_nloc || !fin_loc_file[id]) return 0;
  *file = fin_loc_file[id], *line = fin_loc_line[id];
  return 1;
}

static void fin_loc_free(void) {
  for (uint32_t i = 0; i < fin_nloc; i++) free(fin_loc_file[i]);
  free(fin_loc_file);
  free(fin_loc_line);
  fin_loc_file = NULL, fin_loc_line = NULL, fin_nloc = 0;
}

static void hand_free(Hand *h) {
  free(h->thr);
  free(h->stepv);
  free(h->spans);
  memset(h, 0, sizeof *h);
  fin_loc_free();
}

/* 1: a complete .hand read into h (its "end" line: written whole); else 0
 * (none, or cut short, or out of memory: the process is finalized as one
 * that died, from its spill files) */
/* Room for one more element of size `size` in *v (n in use, *cap
 * allocated, first allocation `first`): 0 without memory (v unchanged). */
static int hand_grow(void **v, size_t n, size_t *cap, size_t first, size_t size) {
  if (n < *cap) return 1;
  size_t nc = *cap ? *cap * 2 : first;
  void *nv = realloc(*v, nc * size);
  if (!nv) return 0;
  *v = nv;
  *cap = nc;
  return 1;
}

static int hand_read(const char *pre, Hand *h) {
  char p[2100];
  size_t n = 0;
  snprintf(p, sizeof p, "%s.hand", pre);
  char *text = slurp(p, &n);
  memset(h, 0, sizeof *h);
  if (!text || strncmp(text, "ncrt-hand 1\n", 12)) {
    free(text);
    return 0;
  }
  int ok = 1, ended = 0;
  size_t capthr = 0, capstep = 0, capsp = 0;
  char *file = malloc(4200);
  if (!file) ok = 0;
  for (char *l = text, *next; ok && l && *l; l = next) {
    next = strchr(l, '\n');
    if (next) *next++ = 0;
    unsigned long long a, b, c, d, e, f;
    unsigned u, v, w;
    int k, line;
    double x;
    long li;
    if (sscanf(l, "records %llu", &a) == 1) h->records = a;
    else if (sscanf(l, "body %llu %llu %llu %llu %u", &a, &b, &c, &d, &u) == 5)
      h->body = 1, h->body_to = a, h->crc = b, h->len = c, h->body_dropped = d, h->body_skip = u;
    else if (sscanf(l, "exit %llu", &a) == 1) h->exit_ns = a;
    else if (sscanf(l, "written %llu", &a) == 1) h->written_ns = a;
    else if (sscanf(l, "throttle %ld %lg", &li, &x) == 2) h->throttle_calls = li, h->throttle_us = x;
    else if (sscanf(l, "loc %u %d %n", &u, &line, &k) == 2 && u < (1u << 24)) {
      if (u >= fin_nloc) {
        uint32_t cap = fin_nloc ? fin_nloc : 1024;
        while (cap <= u) cap *= 2;
        char **nf = realloc(fin_loc_file, cap * sizeof *nf);
        if (nf) fin_loc_file = nf;
        int *nl = nf ? realloc(fin_loc_line, cap * sizeof *nl) : NULL;
        if (!nl) {
          ok = 0;
          break;
        }
        fin_loc_line = nl;
        memset(fin_loc_file + fin_nloc, 0, (cap - fin_nloc) * sizeof *nf);
        fin_nloc = cap;
      }
      unjson(l + k, file, 4200);
      free(fin_loc_file[u]);
      fin_loc_file[u] = strdup(file);
      fin_loc_line[u] = line;
    } else if (sscanf(l, "thr %u %llu %llu %lg %u %llu", &u, &a, &b, &x, &v, &c) == 6) {
      if (!hand_grow((void **)&h->thr, h->nthr, &capthr, 16, sizeof *h->thr)) {
        ok = 0;
        break;
      }
      h->thr[h->nthr++] = (HandThrottled){u, a, b, x, v, c};
    } else if (sscanf(l, "budget %llu %llu", &a, &b) == 2) h->budget = a, h->budget_hit = b;
    else if (sscanf(l, "cuptiv %llu", &a) == 1) h->cupti_version = a;
    else if (sscanf(l, "steps %ld", &li) == 1) h->steps = li;
    else if (!strncmp(l, "step ", 5)) snprintf(h->step, sizeof h->step, "%s", l + 5);
    else if (sscanf(l, "ps %ld %llu %llu %u %u", &li, &a, &b, &v, &w) == 5) {
      if (!hand_grow((void **)&h->stepv, h->nstep, &capstep, 16, sizeof *h->stepv)) {
        ok = 0;
        break;
      }
      h->stepv[h->nstep++] = (RtStep){li, a, b, v, (uint8_t)w};
    } else if (sscanf(l, "sp %llu %llu %llu %llu %llu %llu", &a, &b, &c, &d, &e, &f) == 6) {
      if (!hand_grow((void **)&h->spans, h->nspans, &capsp, 64, sizeof *h->spans)) {
        ok = 0;
        break;
      }
      h->spans[h->nspans++] = (SpanRec){a, b, c, (uint32_t)d, (uint32_t)e, (uint8_t)f};
    } else if (!strcmp(l, "end")) ended = 1;
  }
  free(file);
  free(text);
  if (!ok || !ended || !h->step[0]) {
    hand_free(h);
    return 0;
  }
  return 1;
}

/* The trace of a process that handed its exit over, going on with the
 * .body it converted while it ran: the rest of .raw, the tail, the gzip
 * trailer (inc_finish's part, here), then renamed to path. */
static int resume_file(const char *body, const char *path, const Src *s, Hand *h, int level) {
  int fd = open(body, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return errno ? errno : EIO;
  Gz *g = calloc(1, sizeof *g);
  int err = g ? 0 : ENOMEM;
  if (g) {
    g->fd = fd;
    g->crc = (uint32_t)h->crc;
    g->len = (uint32_t)h->len;
    /* raw deflate after the process's sync flush: its blocks follow the
     * process's on a byte boundary, one stream, one member */
    if (deflateInit2(&g->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) err = ENOMEM;
  }
  if (!err) {
    src = s;
    size_t ngpu = 0;
    RtGpuRec *gpu = gpu_setup(g, s, &ngpu);
    if (tid_spans_n) read_blocks(s->raw, 0, h->body_to, READ_DEAD, spans_block, g, NULL, NULL);
    BodyState st = {s->pid, h->spans, h->nspans, h->nspans, h->body_dropped + s->dropped};
    h->spans = NULL; /* trace_tail owns them now */
    h->nspans = 0;
    rb_skip = h->body_skip;
    st.dropped += read_blocks(s->raw, h->body_to, s->to, READ_DEAD, body_block, g, &st, NULL);
    trace_tail(g, s, &st, gpu, ngpu);
    gz_finish(g);
    err = g->err;
  }
  free(g);
  if (close(fd) != 0 && !err) err = errno ? errno : EIO;
  if (err) return err; /* .body stays for the cleanup; the caller says so */
  return finish_file(body, path, NULL, 0);
}

static int running(long pid);

static void finalize_cleanup(const char *dir, const char *pre, long pid) {
  char p[2300];
  for (size_t i = 0; i < NSPILL_SFX; i++) {
    snprintf(p, sizeof p, "%s%s", pre, spill_sfx[i]);
    unlink(p);
  }
  /* a handed-over set's pid may be a new process's by now: its trace in
   * the making is its own */
  if (pid != (long)getpid() && running(pid)) return;
  /* a trace it was writing when it died (<name>.trace.json.gz.tmp<PID>) */
  char tail[64];
  snprintf(tail, sizeof tail, ".trace.json.gz.tmp%ld", pid);
  size_t tl = strlen(tail);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l > tl && !strcmp(e->d_name + l - tl, tail)) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  }
  if (d) closedir(d);
}

static int finalize_one(const char *dir, const char *stem, long pid, int quiet) {
  char pre[2048], p[2100];
  snprintf(pre, sizeof pre, "%s/%.39s", dir, stem);
  size_t n = 0;
  /* it died after writing its trace, before or after putting it in place */
  snprintf(p, sizeof p, "%s.done", pre);
  char *done = slurp(p, &n);
  if (done) {
    char *nl = strchr(done, '\n'), *to = nl ? nl + 1 : NULL, *end = to ? strchr(to, '\n') : NULL;
    int moved = 0;
    if (end) {
      *nl = *end = 0;
      moved = rename(done, to) == 0;
    }
    free(done);
    finalize_cleanup(dir, pre, pid);
    return moved;
  }
  snprintf(p, sizeof p, "%s.info", pre);
  char *info = slurp(p, &n);
  int written_one = 0;
  if (!info) {
    snprintf(p, sizeof p, "%s.info.tmpH", pre);
    info = slurp(p, &n);
  }
  if (!info || strncmp(info, "ncrt-info 1\n", 12)) {
    if (!quiet) fprintf(stderr, "ncrt: %s.raw: no snapshot of process %ld (.info) to finalize it from; left as is\n", pre, pid);
    free(info);
    return 0;
  }
  Src s;
  memset(&s, 0, sizeof s);
  s.pid = (int)pid;
  s.world = 1;
  s.exiting = 1;
  s.domain_json = fin_domain_json;
  s.cat_json = fin_cat_json;
  char proc[512] = "ncrt", trace[512] = "ncrt", cupti[300] = "";
  static char proc_json[600];
  proc_json[0] = 0;
  s.is_rank = 1; /* snapshots from before processes were told apart */
  static RtDevice devs[RT_MAX_DEVICES];
  int ndev = 0;
  unsigned long long gwork = 0;
  uint64_t(*win)[2] = NULL;
  size_t nwin = 0, capwin = 0;
  int have_windows = 0;
  int use_tsc = 0, level = 1;
  unsigned long long t0 = 0, n0 = 0, t1 = 0, n1 = 0;
  size_t capopen = 0;
  uint32_t capth = 0;
  for (char *l = info, *next; l && *l; l = next) {
    next = strchr(l, '\n');
    if (next) *next++ = 0;
    unsigned long long a, b, c, d, e;
    int k;
    if (sscanf(l, "rank %d", &s.rank) == 1 || sscanf(l, "world %d", &s.world) == 1 ||
        sscanf(l, "level %d", &level) == 1)
      continue;
    if (sscanf(l, "clock %d %llu %llu %llu %llu", &use_tsc, &t0, &n0, &t1, &n1) == 5) continue;
    if (sscanf(l, "base %llu", &a) == 1) s.base = a;
    else if (sscanf(l, "now %llu", &a) == 1) s.now = a;
    else if (sscanf(l, "from %llu", &a) == 1) s.from = a;
    else if (sscanf(l, "dropped %llu", &a) == 1) s.dropped = a;
    else if (sscanf(l, "gpu %llu %llu %llu", &a, &b, &c) == 3) s.gfrom = a, gwork = c;
    else if (sscanf(l, "windows %llu", &a) == 1) have_windows = 1;
    else if (sscanf(l, "window %llu %llu", &a, &b) == 2) {
      if (nwin == capwin) {
        capwin = capwin ? capwin * 2 : 64;
        uint64_t(*nw)[2] = realloc(win, capwin * sizeof *nw);
        if (!nw) break;
        win = nw;
      }
      win[nwin][0] = a, win[nwin][1] = b;
      nwin++;
    }
    else if (!strncmp(l, "cupti ", 6)) unjson(l + 6, cupti, sizeof cupti);
    else if (!strncmp(l, "device ", 7) && ndev < RT_MAX_DEVICES) {
      RtDevice *v = &devs[ndev];
      unsigned long long tm, sb, ss, so;
      memset(v, 0, sizeof *v);
      if (sscanf(l + 7, "%d %llu %d %d %d %d %d %d %d %d %d %llu %llu %llu %n", &v->id, &tm, &v->cc_major,
                 &v->cc_minor, &v->num_sms, &v->max_threads_per_block, &v->max_threads_per_sm,
                 &v->max_blocks_per_sm, &v->regs_per_block, &v->regs_per_sm, &v->warp_size, &sb, &ss, &so,
                 &k) == 14) {
        v->total_mem = tm, v->shmem_per_block = sb, v->shmem_per_sm = ss, v->shmem_per_block_optin = so;
        unjson(l + 7 + k, v->name, sizeof v->name);
        ndev++;
      }
    }
    else if (!strncmp(l, "name ", 5)) unjson(l + 5, proc, sizeof proc);
    else if (!strncmp(l, "process {", 9)) snprintf(proc_json, sizeof proc_json, "%s", l + 8);
    else if (sscanf(l, "pstart %llu", &a) == 1) s.pstart = a;
    else if (sscanf(l, "isrank %d", &k) == 1) s.is_rank = k;
    else if (!strncmp(l, "trace ", 6)) unjson(l + 6, trace, sizeof trace);
    else if (sscanf(l, "domain %llu %n", &a, &k) == 1 && a < 1024) {
      free(fin_domains[a]);
      fin_domains[a] = strdup(l + k);
    } else if (sscanf(l, "cat %llu %n", &a, &k) == 1 && a < 256) {
      free(fin_cats[a]);
      fin_cats[a] = strdup(l + k);
    } else if (sscanf(l, "thread %llu %n", &a, &k) == 1) {
      /* out of memory: the lines read so far are kept (a block that did
       * grow is kept too; the counts say what both hold) */
      if (s.nthreads == capth) {
        uint32_t cap = capth ? capth * 2 : 16;
        uint32_t *tids = realloc(s.tids, cap * sizeof *s.tids);
        if (tids) s.tids = tids;
        char **tnames = tids ? realloc(s.tnames, cap * sizeof *s.tnames) : NULL;
        if (!tnames) break;
        s.tnames = tnames, capth = cap;
      }
      char *nm = strdup(l + k);
      if (!nm) break;
      s.tids[s.nthreads] = (uint32_t)a;
      s.tnames[s.nthreads++] = nm;
    } else if (sscanf(l, "open %llu %llu %llu %llu %llu", &a, &b, &c, &d, &e) == 5) {
      if (s.nopen == capopen) {
        size_t cap = capopen ? capopen * 2 : 16;
        OpenFrame *o = realloc(s.open, cap * sizeof *s.open);
        if (!o) break;
        s.open = o, capopen = cap;
      }
      s.open[s.nopen++] = (OpenFrame){(uint32_t)a, (uint32_t)b, (uint32_t)d, (uint16_t)e, c};
    }
  }
  free(info);
  rt_clock_set(use_tsc, t0, n0, t1, n1);
  /* names */
  snprintf(p, sizeof p, "%s.names", pre);
  char *names = slurp(p, &n);
  for (char *l = names; l && *l;) {
    char *next = strchr(l, '\n');
    if (!next) break; /* a line cut short at death */
    char *sp;
    unsigned long id = strtoul(l, &sp, 10);
    if (*sp == ' ' && id < (1u << 24)) {
      if (id >= fin_nnames) {
        uint32_t cap = fin_nnames ? fin_nnames : 1024;
        while (cap <= id) cap *= 2;
        char **nn = realloc(fin_names, cap * sizeof *nn);
        if (!nn) break;
        memset(nn + fin_nnames, 0, (cap - fin_nnames) * sizeof *nn);
        fin_names = nn;
        fin_nnames = cap;
      }
      if (!fin_names[id]) fin_names[id] = line_json(sp + 1);
    }
    l = next + 1;
  }
  free(names);
  snprintf(p, sizeof p, "%s.raw", pre);
  s.raw = open(p, O_RDONLY | O_CLOEXEC);
  struct stat st;
  s.to = s.raw >= 0 && fstat(s.raw, &st) == 0 ? (uint64_t)st.st_size : 0;
  s.proc_name = proc;
  s.trace_name = trace;
  snprintf(p, sizeof p, "%s.gpu", pre);
  s.gpu = open(p, O_RDONLY | O_CLOEXEC);
  s.gto = s.gpu >= 0 && fstat(s.gpu, &st) == 0 ? (uint64_t)st.st_size : 0;
  s.gto -= (s.gto - s.gfrom) % sizeof(RtGpuRec) * (s.gto > s.gfrom); /* a record cut short */
  Hand hand;
  int handed = hand_read(pre, &hand); /* its exit handed the conversion over: it did not die */
  char cupti_json[700], cupti_text[400];
  if (handed)
    snprintf(cupti_text, sizeof cupti_text, "%s", cupti);
  else if (s.gto > s.gfrom)
    snprintf(cupti_text, sizeof cupti_text, "%s; GPU activity kept until about 1 s before the process died",
             cupti[0] ? cupti : "recording");
  else if (cupti[0] && strncmp(cupti, "recording", 9))
    snprintf(cupti_text, sizeof cupti_text, "%s", cupti);
  else
    snprintf(cupti_text, sizeof cupti_text, "%s", cupti[0] ? "recording; no GPU activity was saved before the process died"
                                                           : "not recorded (the process died)");
  {
    Out o = {-1, 0, 0, {0}};
    o_json(&o, cupti_text);
    snprintf(cupti_json, sizeof cupti_json, "%.*s", (int)o.n, o.b);
  }
  s.cupti = cupti_json;
  rt_devices_set(devs, ndev);
  /* GPU work counts when launched in a capture window (a snapshot from
   * before windows were saved: all of it) */
  static const uint64_t all[1][2] = {{0, 0}};
  if (have_windows) rt_windows_set((const uint64_t(*)[2])win, nwin, 1);
  else rt_windows_set(all, 1, 1);
  (void)gwork;
  char note[128];
  snprintf(note, sizeof note, "process %ld died; written by the finalizer from what it left", pid);
  s.note = handed ? NULL : note;
  s.proc_json = proc_json;
  if (handed) {
    s.hand = &hand;
    s.pexit = hand.exit_ns;
  }
  if (s.to > s.from || s.nopen || s.gto > s.gfrom || handed) {
    char path[2300];
    if (s.is_rank) snprintf(path, sizeof path, "%s/%s-rank%d.pt.trace.json.gz", dir, trace, s.rank);
    else snprintf(path, sizeof path, "%s/%s.pt.trace.json.gz", dir, trace);
    if (access(path, F_OK) == 0) snprintf(path, sizeof path, "%s/%s-pid%ld-rank%d.pt.trace.json.gz", dir, trace, pid, s.rank);
    name_json = fin_name_json;
    loc_of = handed ? fin_loc : NULL; /* locations only an exit hands over */
    char body[2100];
    snprintf(body, sizeof body, "%s.body", pre);
    int err = handed && hand.body && access(body, F_OK) == 0 ? resume_file(body, path, &s, &hand, level)
                                                             : write_file(path, &s, level, NULL);
    name_json = esc_name;
    loc_of = mem_loc;
    if (err) {
      if (!quiet) fprintf(stderr, "ncrt: cannot write %s: %s; the trace of process %ld is lost\n", path, strerror(err), pid);
    } else {
      written_one = 1;
    }
  }
  if (s.raw >= 0) close(s.raw);
  if (s.gpu >= 0) close(s.gpu);
  rt_devices_forget();
  rt_windows_set(NULL, 0, 0);
  free(win);
  hand_free(&hand);
  for (uint32_t i = 0; i < s.nthreads; i++) free(s.tnames[i]);
  free(s.tids);
  free(s.tnames);
  free(s.open);
  for (uint32_t i = 0; i < fin_nnames; i++) free(fin_names[i]);
  free(fin_names);
  fin_names = NULL;
  fin_nnames = 0;
  for (int i = 0; i < 1024; i++) {
    free(fin_domains[i]);
    fin_domains[i] = NULL;
  }
  for (int i = 0; i < 256; i++) {
    free(fin_cats[i]);
    fin_cats[i] = NULL;
  }
  finalize_cleanup(dir, pre, pid);
  return written_one;
}

/* Is pid running? A zombie is not (an orphan whose new parent does not
 * reap it stays one). */
static int running(long pid) {
  if (kill((pid_t)pid, 0) != 0) return errno == EPERM;
  char p[64], b[512];
  snprintf(p, sizeof p, "/proc/%ld/stat", pid);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return 1;
  b[n] = 0;
  char *e = strrchr(b, ')');
  return !(e && e[1] == ' ' && (e[2] == 'Z' || e[2] == 'X'));
}

/* Every process that left spill files in dir and is gone: its trace, from
 * them (ranges open at its last snapshot marked "open at exit"), and the
 * files removed. Returns the number of traces written. ncrun calls it when
 * its command ends; `ncrun --finalize DIR` by hand. */
int ncrt_finalize_dir(const char *dir, int quiet) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  /* sets by stem: .ncrt-PID, or .ncrt-PID~K when a process found the set
   * of an earlier one with its pid waiting for us (rt_files_reset) */
  static char stems[4096][40];
  long pids[4096];
  int np = 0;
  struct dirent *e;
  while ((e = readdir(d)) && np < 4096) {
    long pid;
    unsigned k = 0;
    int at = 0, at2 = 0;
    if (sscanf(e->d_name, ".ncrt-%ld%n", &pid, &at) != 1 || !at) continue;
    if (e->d_name[at] == '~' && sscanf(e->d_name + at, "~%u%n", &k, &at2) == 1) at += at2;
    if (e->d_name[at] != '.' || at >= 40) continue;
    char stem[40];
    snprintf(stem, sizeof stem, "%.*s", at, e->d_name);
    int seen = 0;
    for (int i = 0; i < np && !seen; i++) seen = !strcmp(stems[i], stem);
    if (!seen) {
      snprintf(stems[np], sizeof stems[np], "%s", stem);
      pids[np++] = pid;
    }
  }
  closedir(d);
  int n = 0, alive = 0;
  for (int i = 0; i < np; i++) {
    /* a set whose exit handed it over is whole: its pid may be another
     * process's by now */
    char h[2100];
    snprintf(h, sizeof h, "%s/%.39s.hand", dir, stems[i]);
    if (access(h, F_OK) != 0 && pids[i] != (long)getpid() && running(pids[i])) {
      alive = 1;
      continue;
    }
    n += finalize_one(dir, stems[i], pids[i], quiet);
  }
  /* the run's disk-budget counter goes with the last process that used it
   * (ncrun removes it too; a killed ncrun leaves it to --finalize) */
  if (!alive) {
    char b[1300];
    snprintf(b, sizeof b, "%s/.ncrt-budget", dir);
    unlink(b);
  }
  return n;
}
