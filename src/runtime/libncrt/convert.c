/* convert.c: this process's own traces. The flusher converts the spill
 * file's complete blocks into the trace as the program runs (the
 * incremental conversion, .body); a cycle's write and the exit's
 * (rt_write_trace) convert the rest and put the file in place; an exit
 * with much left hands it to ncrun's finalizer instead (hand_over, .hand).
 *
 * Contract: everything here runs under spill.lock (the flusher's tick
 * never waits for it); the collector is read only through rt_collector,
 * and each trace is written from a TraceIn filled here (live_in). The
 * spill files are removed at exit unless they were handed over or kept
 * for the finalizer (out of memory). */
#define _GNU_SOURCE
#include "writer.h"
#include "ncrt_protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the process's names, locations, domains and categories as JSON ---- */

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

/* args.file and args.line of a name, when known (ncrt_source_location; the
 * Python module sends the user's own file in a shadow tree) */
static int mem_loc(uint32_t name, const char **file, int *line) {
  RtName *nm = rt_name(name);
  *file = nm->file, *line = nm->line;
  return nm->file != NULL;
}
/* JSON-string lookups for the process itself */
static const char *mem_domain_json(uint16_t d) {
  static char *cache[1024];
  if (d >= 1024) return "\"?\"";
  if (!cache[d]) {
    const char *n = rt_collector.domain_name(d);
    char *e = malloc(strlen(n) * 6 + 3);
    if (!e) return "\"?\"";
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
  const char *n = rt_collector.category_name(c);
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


/* A TraceIn for this process: everything but the trace's own bounds */
static void live_in(TraceIn *s) {
  memset(s, 0, sizeof *s);
  s->pid = (int)getpid();
  s->rank = rt_opt.rank;
  s->world = rt_opt.world_size;
  s->backend = rt_proc.backend;
  s->in_process = 1;
  s->proc_name = rt_opt.name;
  s->name_json = esc_name;
  s->loc_of = mem_loc;
  s->domain_json = mem_domain_json;
  s->cat_json = mem_cat_json;
  s->origin_ns = rt_clock_origin_ns();
  s->format = rt_opt.format;
  s->use_tsc = rt_opt.use_tsc;
  s->devices = rt_devices;
  s->in_window = rt_collector.in_window;
  s->live = &rt_collector;
  s->opt = &rt_opt;
  s->budget_hit = &rt_budget_hit;
  s->gpu_take = rt_cupti_take;
  s->cupti_status = rt_cupti_status;
  s->cupti_version = rt_cupti_version;
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
  TraceIn s;
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
  if (inc.failed || rt_opt.active || spill.trace_from || spill.raw_fd < 0) return;
  uint64_t end = __atomic_load_n(&spill.raw_end, __ATOMIC_SEQ_CST);
  if (end < inc.to + INC_MIN) return;
  if (end > inc.to + INC_STEP) end = inc.to + INC_STEP;
  if (!inc.on) {
    const char *off = getenv(NCRT_ENV_INCREMENTAL); /* "off": everything at exit, as before (for comparison) */
    if (off && (!strcmp(off, "off") || !strcmp(off, "0"))) {
      inc.failed = 1;
      return;
    }
    path_of(inc.tmp, sizeof inc.tmp, ".body");
    inc.fd = rt_open_new(inc.tmp, 0644); /* renamed to the trace at exit */
    inc.g = inc.fd >= 0 ? calloc(1, sizeof *inc.g) : NULL;
    inc.on = inc.fd >= 0;
    if (!inc.g || gz_open_for(inc.g, inc.fd, rt_opt.level, rt_opt.format)) {
      inc_drop();
      inc.failed = 1; /* the exit writes it all, as without */
      return;
    }
    live_in(&inc.s);
    inc.st.pid = inc.s.pid;
    inc.st.in = &inc.s;
    trace_head(inc.g, &inc.s);
  }
  rt_clock_calibrate();
  read_blocks(spill.raw_fd, inc.to, end, READ_READY, body_block, spans_block, inc.g, &inc.st, &inc.to, inc.skip,
              &inc.skip, inc_between);
  if (inc.g->err) {
    inc_drop();
    inc.failed = 1;
  }
}

/* The exit's part: the rest of .raw, the tail, the trailer. */
static int inc_finish(const char *path, const TraceIn *s, const char *done) {
  Gz *g = inc.g;
  size_t ngpu = 0;
  RtGpuRec *gpu = gpu_setup(g, s, &ngpu);
  if (launchers_known()) read_blocks(s->raw, 0, inc.to, READ_DEAD, spans_block, NULL, g, NULL, NULL, 0, NULL, NULL);
  BodyState st = inc.st;
  inc.st.pb = NULL; /* trace_tail frees it */
  st.in = s;
  st.dropped += s->dropped;
  st.dropped +=
      read_blocks(s->raw, inc.to, s->to, READ_ALIVE, body_block, spans_block, g, &st, NULL, inc.skip, NULL, NULL);
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
  const char *at = strchr(fin, ':'); /* "ncrun:<HOSTID>": the finalizer's host; another host's never finalizes us */
  if (at && strcmp(at + 1, rt_host.id)) return 0;
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

/* The exit's hand-over (under spill.lock, rt_exiting set, every record
 * spilled up to `to`): 0 when done (the process may end; the finalizer
 * writes its trace), else the exit converts as before. */
static int hand_over(uint64_t to) {
  /* GPU activity still in memory goes to .gpu (rt_write_trace flushed CUPTI) */
  gpu_save();
  int body = inc.on && !inc.failed && inc.g && !inc.g->err;
  uint32_t rb_skip_saved = inc.skip;
  uint64_t records = (to - (body ? inc.to : spill.trace_from)) / sizeof(RtRec) - (body ? inc.skip : 0); /* about */
  if (body) {
    gz_drain(inc.g, Z_SYNC_FLUSH); /* every byte out, no final block: the finalizer goes on */
    if (inc.g->err) body = 0;
  }
  char tmp[1300], fin[1300];
  path_of(tmp, sizeof tmp, ".hand.tmp");
  path_of(fin, sizeof fin, ".hand");
  int hfd = rt_open_new(tmp, 0600);
  FILE *f = hfd >= 0 ? fdopen(hfd, "w") : NULL;
  if (!f) {
    if (hfd >= 0) close(hfd);
    return -1;
  }
  fprintf(f, "ncrt-hand 1\nrecords %llu\n", (unsigned long long)records);
  if (body)
    fprintf(f, "body %llu %llu %llu %llu %u\n", (unsigned long long)inc.to, (unsigned long long)inc.g->crc,
            (unsigned long long)inc.g->len, (unsigned long long)inc.st.dropped, inc.skip);
  if (body && inc.st.pb) { /* the finalizer's interning ids and sequences follow these */
    uint64_t iid, seq;
    pb_next_ids(inc.st.pb, &iid, &seq);
    fprintf(f, "pb %llu %llu\n", (unsigned long long)iid, (unsigned long long)seq);
  }
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
    /* the unrecorded calls' times: of throttled names, and the time inside
     * recorded ranges (RtName.hidden alone holds it); the others have none,
     * and name_unrec walks every thread */
    int throttled = (__atomic_load_n(&nm->flags, __ATOMIC_ACQUIRE) & NAME_THROTTLED) != 0;
    RtUnrec un = {0};
    if (throttled || __atomic_load_n(&nm->hidden, __ATOMIC_RELAXED)) rt_collector.name_unrec(i, &un);
    if (throttled)
      fprintf(f, "thr %u %llu %llu %.17g %u %llu %llu %llu %llu %llu\n", i, (unsigned long long)nm->calls_at_throttle,
              (unsigned long long)rt_collector.name_total_calls(i), nm->avg_us_at_throttle, nm->throttled_tid,
              (unsigned long long)rt_ticks_to_ns(nm->throttled_at), (unsigned long long)un.incl_ns,
              (unsigned long long)un.excl_ns, (unsigned long long)un.sum_ns, (unsigned long long)un.calls);
    if (un.hidden_ns) fprintf(f, "hid %u %llu\n", i, (unsigned long long)un.hidden_ns);
  }
  fprintf(f, "budget %llu %llu\ncuptiv %llu\nsteps %ld\nstep ", (unsigned long long)rt_opt.disk_budget,
          (unsigned long long)rt_budget_hit, (unsigned long long)rt_cupti_version(), rt_collector.steps_seen());
  h_json(f, rt_opt.step_name[0] ? rt_opt.step_name : "ncrt_step()");
  fputc('\n', f);
  RtStep *v;
  size_t n = rt_collector.steps_take(&v);
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
    if (!inc.g->plain) deflateEnd(&inc.g->z);
    pb_free(inc.st.pb);
    inc.st.pb = NULL;
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

/* The ranges open on every thread (at exit) into *out (malloc'd); out of
 * memory: the frames collected so far are kept, the rest are not, and 1 is
 * returned (capopen grows only with the block, so it always says what
 * `open` holds). */
static int open_frames(OpenFrame **out, size_t *n) {
  size_t nopen = 0, capopen = 0;
  OpenFrame *open = NULL;
  int open_full = 0;
  for (RtThread *t = rt_collector.threads(); t && !open_full; t = t->next) {
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
  *out = open;
  *n = nopen;
  return open_full;
}

/* The trace's file: a rank's main process: -rank<R>; any other process
 * has -pid<P> in its name already (options.c) and no rank in the file
 * name; a name another process took (not one we wrote): -pid<P>-rank<R>
 * (a helper: -rank<R> after its -pid<P>; another host's helper with our
 * pid serves another rank) */
static void trace_path(char *path, size_t cap, const char *dir, const char *name) {
  const char *sfx = rt_trace_suffix(rt_opt.format);
  if (rt_proc.is_rank) snprintf(path, cap, "%s/%s-rank%d%s", dir, name, rt_opt.rank, sfx);
  else snprintf(path, cap, "%s/%s%s", dir, name, sfx);
  if (access(path, F_OK) == 0 && !wrote(path)) {
    if (rt_proc.is_rank) snprintf(path, cap, "%s/%s-pid%d-rank%d%s", dir, name, (int)getpid(), rt_opt.rank, sfx);
    else snprintf(path, cap, "%s/%s-rank%d%s", dir, name, rt_opt.rank, sfx);
  }
}

/* This process's records [trace_from, to) and its GPU work as the trace
 * at path (going on with .body when the flusher converted a part): 0 or an
 * errno. */
static int write_live(const char *path, const char *name, uint64_t to, OpenFrame *open, size_t nopen) {
  int err;
  rt_clock_calibrate();
  TraceIn s;
  live_in(&s);
  s.trace_name = name;
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  uint64_t real_now = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
  s.now = rt_mono_ns();
  s.base = real_now - (s.now - rt_clock_origin_ns());
  s.exiting = __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE);
  s.raw = spill.raw_fd;
  s.from = spill.trace_from;
  s.to = to;
  s.gpu = spill.gpu_fd;
  s.gfrom = spill.gpu_from;
  s.gto = spill.gpu_end;
  s.open = open;
  s.nopen = nopen;
  char pj[1024];
  s.proc_json = rt_process_json(pj, sizeof pj) ? pj : NULL;
  s.pstart = rt_proc.start_ns;
  s.pexit = rt_proc.exit_ns;
  for (RtThread *t = rt_collector.threads(); t; t = t->next) {
    s.dropped += t->dropped;
    s.nthreads++;
  }
  uint32_t nthreads = s.nthreads;
  s.tids = calloc(s.nthreads + 1, sizeof *s.tids);
  s.tnames = calloc(s.nthreads + 1, sizeof *s.tnames);
  uint32_t k = 0;
  for (RtThread *t = rt_collector.threads(); t && s.tids && s.tnames; t = t->next) {
    char comm[64];
    const char *nm = rt_collector.os_thread_name(t->tid);
    if (!nm) {
      thread_comm(t->tid, comm, sizeof comm);
      nm = comm;
    }
    s.tids[k] = t->tid;
    s.tnames[k] = json_dup(nm);
    if (s.tnames[k]) k++;
  }
  s.nthreads = k;
  char done[1300];
  path_of(done, sizeof done, ".done");
  /* a thread whose name could not be copied at exit: as open frames above */
  if (k < nthreads && s.exiting) err = ENOMEM;
  else if (inc.on && s.exiting && !s.from && !inc.failed) err = inc_finish(path, &s, done);
  else err = write_file(path, &s, rt_opt.level, s.exiting ? done : NULL);
  for (uint32_t i = 0; i < k; i++) free(s.tnames[i]);
  free(s.tids);
  free(s.tnames);
  return err;
}

/* A cycle's or the exit's write (rt.h) */
int rt_write_trace(const char *dir, const char *name) {
  int keep = 0;
  pthread_mutex_lock(&spill.lock);
  rt_cupti_flush();
  for (RtThread *t = rt_collector.threads(); t; t = t->next) rt_spill_thread(t);
  wait_claims();
  int rc = 1;
  uint64_t to = __atomic_load_n(&spill.raw_end, __ATOMIC_SEQ_CST);
  /* open ranges (at exit) */
  size_t nopen = 0;
  OpenFrame *open = NULL;
  int open_full = __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE) ? open_frames(&open, &nopen) : 0;
  /* nothing recorded: no file, except when a profiled region asked for its
   * trace (rt_write_force): a region that ran nothing still has one, as
   * torch.profiler writes one */
  if (!name || (to <= spill.trace_from && spill.gpu_work <= spill.gpu_work_from && !rt_cupti_count() && !nopen &&
                !spans_carried() && !spill.err && !rt_write_force))
    goto done;
  char path[2048];
  trace_path(path, sizeof path, dir ? dir : rt_opt.out_dir, name);
  rc = -1;
  /* open frames that could not all be listed (out of memory at exit): the
   * spill files stay for ncrun's finalizer, which lists them all */
  int err = spill.err ? spill.err : open_full ? ENOMEM : 0;
  /* a whole process's trace at its exit with much left to convert: handed
   * to ncrun's finalizer, the process ends at once (hand_over) */
  uint64_t hmin = !err && __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE) && !rt_opt.active && !rt_opt.dormant &&
                          !spill.trace_from && !rt_write_force
                      ? handoff_min()
                      : 0;
  if (hmin && to - (inc.on && !inc.failed ? inc.to : spill.trace_from) > hmin && hand_over(to) >= 0) {
    keep = 1; /* the spill files stay for the finalizer */
    rc = 0;
    goto done;
  }
  if (!err) err = write_live(path, name, to, open, nopen);
  /* Out of memory or descriptors at exit (a program that ends with its
   * address space full): the spill files are whole, so they stay, with a
   * final snapshot, for ncrun's finalizer, which has memory to spare. */
  keep = err && __atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE) && !spill.err &&
         (err == ENOMEM || err == EMFILE || err == ENFILE);
  if (keep) {
    names_save();
    info_save(1);
    rt_say("cannot write %s at exit: %s; its records stay in %s for ncrun (or `ncrun --finalize %s`)", path,
           strerror(err), rt_opt.out_dir, rt_opt.out_dir);
    goto done;
  }
  spill.trace_from = to;
  spill.gpu_from = spill.gpu_end;
  spill.gpu_work_from = spill.gpu_work;
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
  } else if (spill.raw_fd >= 0 && spill.trace_from == spill.raw_end) {
    /* a cycle written: what it consumed need not stay on disk */
#ifdef FALLOC_FL_PUNCH_HOLE
    fallocate(spill.raw_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(spill.trace_from & ~(uint64_t)4095));
    if (spill.gpu_fd >= 0)
      fallocate(spill.gpu_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)(spill.gpu_from & ~(uint64_t)4095));
#endif
  }
  pthread_mutex_unlock(&spill.lock);
  return rc;
}

/* ---- the flusher's tick ---- */

/* The flusher's tick; never at the same time as a write (which may remove
 * the files at exit), and never waiting for one. GPU activity every fourth
 * tick: a flush of CUPTI's buffers is not free. */
void rt_flush_tick(void) {
  static unsigned ticks;
  if (pthread_mutex_trylock(&spill.lock)) return;
  if (!__atomic_load_n(&rt_exiting, __ATOMIC_ACQUIRE)) {
    if (++ticks % 4 == 0) gpu_save();
    spill_windows_update();
    rt_save_now(0);
    inc_tick();
  }
  pthread_mutex_unlock(&spill.lock);
}

void rt_files_reset(void) {
  inc_forget(); /* after fork: the parent's conversion is the parent's */
  spill_reset();
}
