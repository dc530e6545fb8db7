/* chrome.c: one trace, in the layout torch.profiler/Kineto writes, from a
 * TraceIn (writer.h), gzip'ed as ONE stream (Perfetto reads only the first
 * gzip member), written to a temporary name and renamed so that a reader
 * never sees half a trace.
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
 * Contract: everything written comes from the TraceIn in hand (src, set by
 * trace_head, gpu_setup and trace_tail) and the records read back; one
 * trace at a time (spill.lock, or the finalizer's process). Start/end
 * ranges still open at a cycle's write are carried to the next one. */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the trace being written */
static const TraceIn *src;

static inline void put_name(Gz *g, uint32_t id) {
  const char *e = src->name_json(id);
  put(g, e, strlen(e));
}

/* ticks to CLOCK_MONOTONIC ns: this process's clock, or a dead one's */
static uint64_t to_ns(uint64_t t) { return src->clock ? rt_clock_pair_ns(src->clock, t) : rt_ticks_to_ns(t); }

/* Was capture on at ns? The process's windows (its control lock held, as
 * the writer's caller holds it), or the ones a dead process saved. */
static int in_window(uint64_t ns) {
  if (src->in_window) return src->in_window(ns);
  for (size_t i = 0; i < src->nwin; i++)
    if (src->win[i][0] <= ns && (ns <= src->win[i][1] || !src->win[i][1])) return 1;
  return 0;
}

/* device id among the trace's GPUs (NULL: unknown) */
static const RtDevice *device_of(int id) {
  const RtDevice *d;
  int n = src->devices ? src->devices(&d) : 0;
  for (int i = 0; i < n; i++)
    if (d[i].id == id) return &d[i];
  return NULL;
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

int launchers_known(void) { return tid_spans_n != 0; }

/* ---- the trace ---- */

static int64_t rel(uint64_t ns) { return (int64_t)(ns - src->origin_ns); }

/* The start of a user_annotation event: complete (X, dur follows) or
 * instant (a mark), up to and including its ts. */
/* ',"pid":P,"tid":T,"ts":TS': where and when an event is (ts relative to
 * the trace's base, in µs) */
static void put_place(Gz *g, int64_t pid, uint64_t tid, uint64_t ts_ns) {
  PUTS(g, ",\"pid\":");
  put_i64(g, pid);
  PUTS(g, ",\"tid\":");
  put_u64(g, tid);
  PUTS(g, ",\"ts\":");
  put_us(g, rel(ts_ns));
}

/* a thread's (or lane's) thread_sort_index metadata record */
static void put_sort_index(Gz *g, int64_t pid, uint64_t tid, uint64_t index) {
  PUTS(g, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":");
  put_i64(g, pid);
  PUTS(g, ",\"tid\":");
  put_u64(g, tid);
  PUTS(g, ",\"args\":{\"sort_index\":");
  put_u64(g, index);
  PUTS(g, "}}");
}

static void put_annotation(Gz *g, int instant, uint32_t name, int pid, uint64_t tid, uint64_t ts_ns) {
  if (instant) PUTS(g, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
  else PUTS(g, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
  put_name(g, name);
  put_place(g, pid, tid, ts_ns);
}

/* deviceProperties, with Kineto's field names */
static void put_devices(Gz *g) {
  const RtDevice *d;
  int n = src->devices ? src->devices(&d) : 0;
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
size_t spans_carried(void) { return span_carry_n; }

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
  if (src->loc_of && src->loc_of(name, &file, &line)) {
    PUTS(g, ",");
    put_file_line(g, file, line);
  }
}

/* One start/end range as an X event on its lane (its location when known:
 * src->loc_of). */
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
    put_sort_index(g, pid, LANE_TID(k, tid), tid);
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
    uint64_t a = ns ? v[i].start : to_ns(v[i].start), b = ns ? v[i].end : to_ns(v[i].end);
    /* begun under capture (the schedule opened it just before), or with
     * its middle in a capture window: windows are CLOCK_MONOTONIC, steps
     * ticks, and a step of a few hundred ns that closes a cycle could see
     * its middle land after the window's end by the clocks' mapping
     * (runtime/schedule-range lost ProfilerStep#7 in a loaded run) */
    if (b < a || !(v[i].captured || in_window(a + (b - a) / 2))) continue;
    PUTS(g, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#");
    put_i64(g, v[i].index);
    PUTS(g, "\"");
    put_place(g, pid, v[i].tid, a);
    PUTS(g, ",\"dur\":");
    put_us(g, (int64_t)(b - a));
    PUTS(g, ",\"args\":{\"ncrt step\":true}}");
  }
}
static void put_steps(Gz *g, int pid) {
  RtStep *v;
  size_t n = src->live->steps_take(&v);
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

/* correlation id -> API record (index + 1; open addressing in cap slots) */
typedef struct {
  uint32_t *slot;
  size_t cap;
} CorrMap;

static int corr_map(CorrMap *m, const RtGpuRec *v, size_t n) {
  m->cap = 1;
  while (m->cap < n * 2 + 2) m->cap *= 2;
  m->slot = calloc(m->cap, sizeof *m->slot);
  if (!m->slot) return -1;
  for (size_t i = 0; i < n; i++)
    if ((v[i].kind == GPU_RUNTIME || v[i].kind == GPU_DRIVER) && v[i].correlation) {
      size_t j = (v[i].correlation * 2654435761u) & (m->cap - 1);
      while (m->slot[j]) j = (j + 1) & (m->cap - 1);
      m->slot[j] = (uint32_t)i + 1;
    }
  return 0;
}

/* the API call that launched GPU work r (NULL: none recorded) */
static RtGpuRec *launch_of(const CorrMap *m, RtGpuRec *v, const RtGpuRec *r) {
  size_t j = (r->correlation * 2654435761u) & (m->cap - 1);
  while (m->slot[j]) {
    if (v[m->slot[j] - 1].correlation == r->correlation) return &v[m->slot[j] - 1];
    j = (j + 1) & (m->cap - 1);
  }
  return NULL;
}

static int gpu_on_device(const RtGpuRec *r) {
  return r->kind == GPU_KERNEL || r->kind == GPU_MEMCPY || r->kind == GPU_MEMSET;
}

/* The event's cat, name, pid, tid, ts and dur */
static void put_gpu_head(Gz *g, int pid, const RtGpuRec *r) {
  int dev = gpu_on_device(r);
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
  put_place(g, dev ? (int64_t)r->device : r->kind == GPU_MEMORY ? pid : (int64_t)r->pid, dev ? r->stream : r->tid,
            r->start);
  PUTS(g, ",\"dur\":");
  put_us(g, (int64_t)(r->end > r->start ? r->end - r->start : 0));
}

/* Its args: correlation, where it ran, the kernel's figures, the bytes
 * moved, the API call's id, the range that launched it (sp) */
static void put_gpu_args(Gz *g, const RtGpuRec *r, const Span *sp) {
  PUTS(g, ",\"args\":{\"correlation\":");
  put_u64(g, r->correlation);
  if (gpu_on_device(r)) {
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
    if (rt_kernel_occupancy(device_of((int)r->device), r->grid, r->block, r->regs, r->shmem, &bps, &wps, &occ)) {
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
}

/* flow: launch -> GPU work */
static void put_gpu_flow(Gz *g, const RtGpuRec *r, const RtGpuRec *api) {
  PUTS(g, ",\n{\"ph\":\"s\",\"id\":");
  put_u64(g, r->correlation);
  put_place(g, (int64_t)api->pid, api->tid, api->start);
  PUTS(g, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
  PUTS(g, ",\n{\"ph\":\"f\",\"id\":");
  put_u64(g, r->correlation);
  put_place(g, (int64_t)r->device, r->stream, r->start);
  PUTS(g, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
}

/* gpu_user_annotation: one span per (range instance, device, stream) */
typedef struct {
  const Span *s;
  uint32_t device, stream;
  uint64_t a, b;
} Ann;
typedef struct {
  Ann *v;
  size_t n, cap;
} Anns;

/* GPU work r, launched inside range sp, widens that range's span on its
 * (device, stream); without memory the span is left out */
static void ann_add(Anns *an, const Span *sp, const RtGpuRec *r) {
  size_t k;
  for (k = 0; k < an->n; k++)
    if (an->v[k].s == sp && an->v[k].device == r->device && an->v[k].stream == r->stream) break;
  if (k == an->n) {
    if (an->n == an->cap) {
      size_t cap = an->cap ? an->cap * 2 : 64;
      Ann *na = realloc(an->v, cap * sizeof *na);
      if (!na) return;
      an->v = na;
      an->cap = cap;
    }
    an->v[an->n++] = (Ann){sp, r->device, r->stream, r->start, r->end};
  } else {
    if (r->start < an->v[k].a) an->v[k].a = r->start;
    if (r->end > an->v[k].b) an->v[k].b = r->end;
  }
}

static void put_annotations(Gz *g, const Anns *an) {
  for (size_t k = 0; k < an->n; k++) {
    PUTS(g, ",\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":");
    put_name(g, an->v[k].s->name);
    put_place(g, (int64_t)an->v[k].device, an->v[k].stream, an->v[k].a);
    PUTS(g, ",\"dur\":");
    put_us(g, (int64_t)(an->v[k].b - an->v[k].a));
    PUTS(g, ",\"args\":{}}");
  }
}

/* The GPU records v[0..n): each launched inside a capture window becomes
 * an event (with its flow from the launch), then the ranges that launched
 * GPU work become gpu_user_annotation spans. -1: out of memory. */
static int write_gpu(Gz *g, int pid, RtGpuRec *v, size_t n) {
  CorrMap m;
  if (corr_map(&m, v, n)) return -1;
  Anns an = {NULL, 0, 0};
  for (size_t i = 0; i < n; i++) {
    RtGpuRec *r = &v[i];
    int dev = gpu_on_device(r);
    const Span *sp = NULL;
    RtGpuRec *api = dev && r->correlation ? launch_of(&m, v, r) : NULL;
    if (api) sp = innermost(api->tid, api->start);
    /* GPU work counts where it was launched: inside a capture window */
    if (!in_window(api ? api->start : r->start)) continue;
    put_gpu_head(g, pid, r);
    put_gpu_args(g, r, sp);
    if (dev && api) put_gpu_flow(g, r, api);
    if (sp) ann_add(&an, sp, r);
  }
  put_annotations(g, &an);
  free(an.v);
  free(m.slot);
  return 0;
}

/* This trace's GPU records: [gfrom, gto) of .gpu (a record cut short at
 * death left out), then, in the process, what CUPTI still holds. */
static RtGpuRec *gpu_records(Gz *g, const TraceIn *s, size_t *n) {
  size_t nf = s->gpu >= 0 && s->gto > s->gfrom ? (size_t)((s->gto - s->gfrom) / sizeof(RtGpuRec)) : 0, nm = 0;
  RtGpuRec *mem = s->gpu_take ? s->gpu_take(&nm) : NULL;
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
  int located = src->loc_of && src->loc_of(name, &file, &line);
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

/* A Perfetto trace's range or mark (perfetto.c): its kind's interning id,
 * declared with its JSON the first time it appears. One trace is written
 * at a time (spill.lock, or the finalizer's process), so one capture. */
static uint64_t pb_kind_of(Gz *g, PbState *pb, const RtRec *r) {
  int fresh;
  int jumped = r->kind == REC_RANGE_JUMPED;
  uint64_t iid = pb_kind(pb, r->name, rec_depth(r), r->cat, r->domain, jumped, &fresh);
  if (!fresh) return iid;
  static Gz *cap;
  if (!cap && (cap = calloc(1, sizeof *cap))) gz_capture(cap);
  if (!cap) {
    if (!g->err) g->err = ENOMEM;
    return 0;
  }
  cap->n = cap->memn = 0;
  cap->err = 0;
  put_name(cap, r->name);
  put_range_args(cap, r->name, rec_depth(r), r->cat, r->domain, jumped);
  gz_drain(cap, Z_NO_FLUSH);
  if (cap->err) {
    if (!g->err) g->err = cap->err;
    return 0;
  }
  pb_declare(pb, iid, cap->mem, cap->memn);
  return iid;
}

void body_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg) {
  BodyState *st = arg;
  src = st->in;
  TidSpans *keep = spans_for(tid);
  if (src->format == TRACE_PERFETTO && !st->pb && !(st->pb = pb_new(st->pid, 0, 0))) {
    if (!g->err) g->err = ENOMEM;
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    const RtRec *r = &recs[i];
    uint64_t a = to_ns(r->start);
    if (r->kind == REC_RANGE || r->kind == REC_RANGE_JUMPED) {
      uint64_t b = to_ns(r->end);
      if (st->pb) {
        pb_range(g, st->pb, tid, (uint64_t)rel(a), (uint64_t)rel(b), pb_kind_of(g, st->pb, r));
      } else {
        put_annotation(g, 0, r->name, st->pid, tid, a);
        PUTS(g, ",\"dur\":");
        put_us(g, (int64_t)(b - a));
        put_range_args(g, r->name, rec_depth(r), r->cat, r->domain, r->kind == REC_RANGE_JUMPED);
      }
      if (keep) spans_add(keep, a, b, r->name, rec_depth(r));
    } else if (r->kind == REC_MARK) {
      if (st->pb) {
        pb_mark(g, st->pb, tid, (uint64_t)rel(a), pb_kind_of(g, st->pb, r));
      } else {
        put_annotation(g, 1, r->name, st->pid, tid, a);
        put_range_args(g, r->name, rec_depth(r), r->cat, r->domain, 0);
      }
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
void trace_head(Gz *out, const TraceIn *s) {
  src = s;
  Gz *g = out; /* a Perfetto trace: the process's track, then this JSON in a packet */
  if (s->format == TRACE_PERFETTO) {
    pb_process(out, s->pid, s->proc_name);
    if (!(g = pb_json_begin())) {
      if (!out->err) out->err = ENOMEM;
      return;
    }
  }
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
  if (g != out) pb_json_end(out, g);
}

/* GPU records of this trace; the threads that launched GPU work keep
 * their ranges (tid_spans) for attribution. */
RtGpuRec *gpu_setup(Gz *g, const TraceIn *s, size_t *ngpu) {
  src = s;
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

/* The start/end ranges done[0..n) on their lanes, then the lanes' names. */
static void put_spans(Gz *g, const TraceIn *s, int pid, DoneSpan *done, size_t n) {
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

static void write_from(Gz *g, const TraceIn *s) {
  src = s;
  int pid = s->pid;
  size_t ngpu = 0;
  RtGpuRec *gpu = gpu_setup(g, s, &ngpu);
  trace_head(g, s);
  BodyState st = {pid, span_carry, span_carry_n, span_carry_n, s->dropped, s, NULL};
  span_carry = NULL;
  span_carry_n = 0;
  int mode = s->in_process ? READ_ALIVE : READ_DEAD;
  st.dropped += read_blocks(s->raw, s->from, s->to, mode, body_block, spans_block, g, &st, NULL, 0, NULL, NULL);
  trace_tail(g, s, &st, gpu, ngpu);
}

/* Ranges still open when the process ended (or at its last snapshot);
 * the launching threads keep them for GPU attribution. */
static void put_open_ranges(Gz *g, const TraceIn *s) {
  uint64_t now = s->now;
  for (size_t i = 0; s->exiting && i < s->nopen; i++) {
    const OpenFrame *f = &s->open[i];
    uint64_t a = to_ns(f->start);
    put_annotation(g, 0, f->name, s->pid, f->tid, a);
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
}

/* Start/end ranges become X events on lanes of the thread that started
 * them (put_spans): each end joined to its start by id; a start not ended
 * is written open at exit, else carried to the next trace (a cycle's
 * write). Takes spans[0..nspans). */
static void put_start_end(Gz *g, const TraceIn *s, SpanRec *spans, size_t nspans) {
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
    if (s->exiting) push_done(g, &done, &ndone, &capdone, (DoneSpan){spans[i], s->now, 0, 0, 0});
    else spans[nkeep++] = spans[i];
  }
  if (ndone) put_spans(g, s, s->pid, done, ndone);
  free(done);
  free(ended);
  free(h);
  span_carry = nkeep ? spans : NULL;
  span_carry_n = nkeep;
  if (!nkeep) free(spans);
}

/* GPU work, attributed to the launching threads' ranges; frees gpu and
 * those ranges. */
static void put_gpu(Gz *g, const TraceIn *s, RtGpuRec *gpu, size_t ngpu) {
  if (ngpu) {
    for (size_t i = 0; i < tid_spans_n; i++) qsort(tid_spans[i].v, tid_spans[i].n, sizeof(Span), span_cmp);
    write_gpu(g, s->pid, gpu, ngpu);
  }
  for (size_t i = 0; i < tid_spans_n; i++) free(tid_spans[i].v);
  free(tid_spans);
  tid_spans = NULL;
  tid_spans_n = 0;
  free(gpu);
}

static void put_thread_names(Gz *g, const TraceIn *s) {
  for (uint32_t i = 0; i < s->nthreads; i++) {
    PUTS(g, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    put_i64(g, s->pid);
    PUTS(g, ",\"tid\":");
    put_u64(g, s->tids[i]);
    PUTS(g, ",\"args\":{\"name\":");
    put(g, s->tnames[i], strlen(s->tnames[i]));
    PUTS(g, "}}");
    put_sort_index(g, s->pid, s->tids[i], s->tids[i]);
  }
}

/* The events array closes; the top-level members up to the ncrt object. */
static void put_top(Gz *g, const TraceIn *s) {
  PUTS(g, "\n],\n\"schemaVersion\": 1,\n\"deviceProperties\": [");
  put_devices(g);
  PUTS(g, "],\n\"distributedInfo\": {\"backend\": ");
  put_jstr(g, s->backend ? s->backend : "");
  PUTS(g, ", \"rank\": ");
  put_i64(g, s->rank);
  PUTS(g, ", \"world_size\": ");
  put_i64(g, s->world);
  PUTS(g, "},\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": ");
  put_u64(g, s->base);
  PUTS(g, ",\n\"traceName\": ");
  put_jstr(g, s->trace_name);
}

/* A throttled name's unrecorded calls, timed since it was throttled:
 * inclusive (outermost calls of the name only), exclusive, and summed. */
static void put_unrec(Gz *g, uint64_t calls, uint64_t incl, uint64_t excl, uint64_t sum) {
  PUTS(g, ", \"unrecorded_calls\": ");
  put_u64(g, calls);
  PUTS(g, ", \"unrecorded_incl_us\": ");
  put_us(g, (int64_t)incl);
  PUTS(g, ", \"unrecorded_excl_us\": ");
  put_us(g, (int64_t)excl);
  PUTS(g, ", \"unrecorded_sum_us\": ");
  put_us(g, (int64_t)sum);
}

/* ncrt.throttle: the rule, and the names it stopped recording (from which
 * call and where: the calls recorded, then all of them (counted, not
 * timed, since), the exclusive mean then, and the moment and thread at
 * which recording stopped), from the process's names or a hand-over. */
static void put_throttle(Gz *g, const TraceIn *s) {
  const Hand *hd = s->hand;
  PUTS(g, ",\n\"ncrt\": {\"throttle\": {\"calls\": ");
  put_i64(g, s->opt ? s->opt->throttle_calls : hd ? hd->throttle_calls : 0);
  char buf[160];
  double th_us = s->opt ? s->opt->throttle_us : hd ? hd->throttle_us : 0.0;
  snprintf(buf, sizeof buf, ", \"avg_us\": %g, \"rule\": \"%s\"}, \"throttled\": [", th_us,
           th_us > 0 ? "calls, then an exclusive mean under avg_us (judged once)" : "calls");
  put(g, buf, strlen(buf));
  uint32_t nn = s->live ? rt_name_count() : 0;
  int first = 1;
  for (uint32_t i = 0; i < nn; i++) {
    RtName *nm = rt_name(i);
    if (!(__atomic_load_n(&nm->flags, __ATOMIC_ACQUIRE) & NAME_THROTTLED)) continue;
    if (first) PUTS(g, "\n  {\"name\": ");
    else PUTS(g, ",\n  {\"name\": ");
    first = 0;
    put_name(g, i);
    snprintf(buf, sizeof buf, ", \"calls\": %llu, \"total_calls\": %llu, \"avg_us\": %.3f, \"tid\": %u, \"from_ts\": ",
             (unsigned long long)nm->calls_at_throttle, (unsigned long long)s->live->name_total_calls(i),
             nm->avg_us_at_throttle, nm->throttled_tid);
    put(g, buf, strlen(buf));
    put_us(g, rel(to_ns(nm->throttled_at)));
    RtUnrec un;
    s->live->name_unrec(i, &un);
    put_unrec(g, un.calls, un.incl_ns, un.excl_ns, un.sum_ns);
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
    put_unrec(g, ht->u_calls, ht->u_incl_ns, ht->u_excl_ns, ht->u_sum_ns);
    PUTS(g, "}");
  }
  PUTS(g, "]");
  /* "throttled_inside": the names whose recorded ranges held throttled
   * calls, and their time: the trace counts it as those ranges' own */
  PUTS(g, ", \"throttled_inside\": [");
  first = 1;
  for (uint32_t i = 0; i < nn; i++) {
    RtUnrec un;
    /* only the name's own total holds it (no thread's slot): the
     * walk over the threads is for the names that have some */
    if (!__atomic_load_n(&rt_name(i)->hidden, __ATOMIC_RELAXED)) continue;
    s->live->name_unrec(i, &un);
    if (!un.hidden_ns) continue;
    if (first) PUTS(g, "\n  {\"name\": ");
    else PUTS(g, ",\n  {\"name\": ");
    first = 0;
    put_name(g, i);
    PUTS(g, ", \"us\": ");
    put_us(g, (int64_t)un.hidden_ns);
    PUTS(g, "}");
  }
  for (size_t i = 0; hd && i < hd->nhid; i++) {
    if (first) PUTS(g, "\n  {\"name\": ");
    else PUTS(g, ",\n  {\"name\": ");
    first = 0;
    put_name(g, hd->hid[i].name);
    PUTS(g, ", \"us\": ");
    put_us(g, (int64_t)hd->hid[i].ns);
    PUTS(g, "}");
  }
  PUTS(g, "]");
}

/* The rest of the ncrt object: the disk budget, records lost, CUPTI, the
 * clock, the schedule and steps, and who the process was and when it
 * lived. */
static void put_ncrt(Gz *g, const TraceIn *s, uint64_t dropped) {
  const Hand *hd = s->hand;
  char buf[160];
  PUTS(g, ",\n  \"disk_budget\": {\"bytes\": ");
  put_u64(g, s->opt ? s->opt->disk_budget : hd ? hd->budget : 0);
  uint64_t hit = s->budget_hit ? *s->budget_hit : hd ? hd->budget_hit : 0;
  if (hit) {
    /* where recording stopped: what follows that moment is not in the trace */
    PUTS(g, ", \"reached_ts\": ");
    put_us(g, rel(hit));
  }
  PUTS(g, "}");
  PUTS(g, ",\n  \"dropped\": ");
  put_u64(g, dropped);
  PUTS(g, ", \"cupti\": ");
  if (s->cupti_status) put_jstr(g, s->cupti_status());
  else put(g, s->cupti, strlen(s->cupti));
  PUTS(g, ", \"cupti_version\": ");
  put_u64(g, s->cupti_version ? s->cupti_version() : hd ? hd->cupti_version : 0);
  PUTS(g, ", \"clock\": ");
  put_jstr(g, s->use_tsc ? "tsc" : "monotonic");
  if (s->opt) {
    /* the schedule asked for and the steps the program made */
    if (s->opt->active) {
      snprintf(buf, sizeof buf, ", \"schedule\": {\"wait\": %ld, \"warmup\": %ld, \"active\": %ld, \"repeat\": %ld}",
               s->opt->wait, s->opt->warmup, s->opt->active, s->opt->repeat);
      put(g, buf, strlen(buf));
    }
    PUTS(g, ", \"step\": ");
    put_jstr(g, s->opt->step_name[0] ? s->opt->step_name : "ncrt_step()");
    PUTS(g, ", \"steps\": ");
    put_i64(g, s->live->steps_seen());
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
  if (s->proc_json && *s->proc_json) {
    PUTS(g, ",\n  \"process\": ");
    put(g, s->proc_json, strlen(s->proc_json));
  }
  /* a whole process's trace (not a cycle or a profiled region) says when
   * the process started and when the program ended (the collector's own
   * exit work follows, until "written") */
  if (s->exiting && !(s->opt && (s->opt->active || s->opt->dormant))) {
    PUTS(g, ",\n  \"lifetime\": {\"written\": ");
    put_us(g, rel(s->in_process ? rt_mono_ns() : hd ? hd->written_ns : s->now));
    if (s->pstart) {
      PUTS(g, ", \"start\": ");
      put_us(g, rel(s->pstart));
    }
    if (s->pexit) {
      PUTS(g, ", \"exit\": ");
      put_us(g, rel(s->pexit));
    }
    if (!s->in_process && !hd) PUTS(g, ", \"died\": true");
    PUTS(g, "}");
  }
  PUTS(g, "}\n}\n");
}

/* Everything after the body: ranges open at the end, start/end ranges,
 * steps, GPU work, thread names, then the top-level members. */
void trace_tail(Gz *out, const TraceIn *s, BodyState *st, RtGpuRec *gpu, size_t ngpu) {
  src = s;
  Gz *g = out; /* a Perfetto trace: this JSON in packets, then the threads' names */
  if (s->format == TRACE_PERFETTO && !(g = pb_json_begin())) {
    if (!out->err) out->err = ENOMEM;
    g = out;
  }
  put_open_ranges(g, s);
  put_start_end(g, s, st->spans, st->nspans);
  if (s->live) put_steps(g, s->pid);
  else if (s->hand) put_step_list(g, s->pid, s->hand->stepv, s->hand->nstep, 1);
  put_gpu(g, s, gpu, ngpu);
  if (s->live) s->live->windows_consumed();
  put_thread_names(g, s);
  put_top(g, s);
  put_throttle(g, s);
  put_ncrt(g, s, st->dropped);
  if (g != out) {
    pb_json_end(out, g);
    for (uint32_t i = 0; i < s->nthreads; i++) pb_thread_name(out, s->pid, s->tids[i], s->tnames[i]);
  }
  pb_free(st->pb);
  st->pb = NULL;
}

/* GPU attribution: the ranges of the launching threads, nothing written */
void spans_block(Gz *g, uint32_t tid, const RtRec *recs, uint32_t n, void *arg) {
  (void)g, (void)arg;
  TidSpans *keep = spans_for(tid);
  for (uint32_t i = 0; keep && i < n; i++)
    if (recs[i].kind == REC_RANGE || recs[i].kind == REC_RANGE_JUMPED)
      spans_add(keep, to_ns(recs[i].start), to_ns(recs[i].end), recs[i].name, rec_depth(&recs[i]));
}

/* Write the trace to a temporary name, then rename; "" on success, else
 * the reason (errno text). */
/* A complete trace in tmp goes to path (on err: removed). */
int finish_file(const char *tmp, const char *path, const char *done, int err) {
  if (!err && done) {
    /* A process that dies from here on has its trace complete in tmp: the
     * marker (<prefix>.done: "tmp\npath\n", renamed into place) tells the
     * finalizer to move it to path and remake nothing (no range twice). */
    char mt[1300];
    snprintf(mt, sizeof mt, "%s.tmp", done);
    int m = rt_open_new(mt, 0600);
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

int write_file(const char *path, const TraceIn *s, int level, const char *done) {
  char tmp[2100];
  snprintf(tmp, sizeof tmp, "%s.tmp%s-%d", path, rt_host.id, (int)getpid()); /* host: hostid.h */
  int fd = rt_open_new(tmp, 0644);
  if (fd < 0) return errno ? errno : EIO;
  Gz *g = calloc(1, sizeof *g);
  int err = g ? gz_open_for(g, fd, level, s->format) : ENOMEM;
  if (!err) {
    write_from(g, s);
    gz_finish(g);
    err = g->err;
  }
  free(g);
  if (close(fd) != 0 && !err) err = errno ? errno : EIO;
  return finish_file(tmp, path, done, err);
}
