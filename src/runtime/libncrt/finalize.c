/* finalize.c: the finalizer. A process that died (a signal, _exit
 * without a save, SIGKILL) or whose exit handed its conversion over
 * (.hand, convert.c) left its spill files in the run directory; ncrun
 * (ncrt_finalize_dir, or `ncrun --finalize DIR`) makes its trace from them
 * when it is gone: ranges open at its last snapshot are marked "open at
 * exit", a handed-over .body is gone on with, and the files are removed.
 *
 * Contract: runs in ncrun's process, never in the traced one; a dead
 * process's clock, names, devices and capture windows come from its files
 * into the TraceIn that chrome.c writes from, and nothing of this
 * process's own collector state is read or changed. */
#define _GNU_SOURCE
#include "writer.h"
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- a dead process's names, domains and categories (.names, .info) ---- */

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
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* a planted symlink is not ours to read */
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

/* Is [p, e) one JSON string, as o_json writes them? What a .names or
 * .info line gives goes into the trace as it is: anything else there
 * (`"a"},{"ph":...`) would be JSON of someone else's making (issue 42). */
static int json_string_ok(const char *p, const char *e) {
  if (e - p < 2 || *p != '"' || e[-1] != '"') return 0;
  for (p++, e--; p < e; p++) {
    unsigned char c = (unsigned char)*p;
    if (c < 0x20 || c == '"') return 0;
    if (c != '\\') continue;
    if (++p >= e) return 0;
    if (*p == 'u') {
      for (int i = 1; i <= 4; i++)
        if (p + i >= e || !strchr("0123456789abcdefABCDEF", p[i])) return 0;
      p += 4;
    } else if (!strchr("\"\\/bfnrt", *p)) {
      return 0;
    }
  }
  return 1;
}

/* One JSON value at p (spaces around it allowed), no deeper than depth:
 * the end of it, or NULL. The .info's process line is the JSON object
 * rt_process_json wrote, unless the file was cut short or written by
 * someone else (issue 42): only a whole, well-formed object goes into the
 * trace. */
static const char *json_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  return p;
}
static const char *json_skip(const char *p, const char *e, int depth) {
  p = json_ws(p, e);
  if (p >= e || depth <= 0) return NULL;
  if (*p == '"') {
    const char *q = p + 1;
    while (q < e && *q != '"') q += *q == '\\' ? 2 : 1;
    return q < e && json_string_ok(p, q + 1) ? q + 1 : NULL;
  }
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    int first = 1;
    for (p++;; first = 0) {
      p = json_ws(p, e);
      if (p < e && *p == close && first) return p + 1;
      if (close == '}') { /* a member: a string, ':' */
        if (p >= e || *p != '"' || !(p = json_skip(p, e, depth - 1))) return NULL;
        p = json_ws(p, e);
        if (p >= e || *p++ != ':') return NULL;
      }
      if (!(p = json_skip(p, e, depth - 1))) return NULL;
      p = json_ws(p, e);
      if (p < e && *p == close) return p + 1;
      if (p >= e || *p++ != ',') return NULL;
    }
  }
  static const char *const words[] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if ((size_t)(e - p) >= n && !memcmp(p, words[i], n)) return p + n;
  }
  /* a number, as JSON has them: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  const char *q = p;
  if (q < e && *q == '-') q++;
  if (q >= e || *q < '0' || *q > '9') return NULL;
  if (*q == '0') q++;
  else
    while (q < e && *q >= '0' && *q <= '9') q++;
  if (q < e && *q == '.') {
    if (++q >= e || *q < '0' || *q > '9') return NULL;
    while (q < e && *q >= '0' && *q <= '9') q++;
  }
  if (q < e && (*q == 'e' || *q == 'E')) {
    if (++q < e && (*q == '+' || *q == '-')) q++;
    if (q >= e || *q < '0' || *q > '9') return NULL;
    while (q < e && *q >= '0' && *q <= '9') q++;
  }
  return q;
}

/* Is the text one JSON object and nothing else? */
static int json_object_ok(const char *p) {
  const char *e = p + strlen(p), *q;
  p = json_ws(p, e);
  if (p >= e || *p != '{' || !(q = json_skip(p, e, 16))) return 0;
  return json_ws(q, e) == e;
}

/* "ID JSON\n" or "KEY JSON\n": the JSON string up to the end of the line
 * (NULL when it is not one) */
static char *line_json(char *p) {
  char *e = strchr(p, '\n');
  if (e) *e = 0;
  return json_string_ok(p, p + strlen(p)) ? strdup(p) : NULL;
}

static int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* JSON string (as written by o_json) back to text, for names of files. The
 * file may be cut short or written by someone else: nothing past its NUL is
 * read (a "\u" needs four hex digits, else it ends the text), and a \u0000
 * ends it too. */
static void unjson(const char *j, char *out, size_t cap) {
  size_t k = 0;
  if (*j == '"') j++;
  for (; *j && *j != '"' && k + 1 < cap; j++) {
    if (*j == '\\' && j[1]) {
      j++;
      if (*j == 'u') {
        int h[4];
        for (int i = 0; i < 4; i++)
          if ((h[i] = hex_digit(j[1 + i])) < 0) goto end; /* stops at the NUL too */
        char c = (char)(h[2] << 4 | h[3]); /* o_json's \u00XX: the low byte */
        if (!c) goto end;
        out[k++] = c;
        j += 4;
        continue;
      }
    }
    out[k++] = *j;
  }
end:
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
  free(h->hid);
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
  size_t capthr = 0, capstep = 0, capsp = 0, caphid = 0;
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
    else if (sscanf(l, "pb %llu %llu", &a, &b) == 2) h->pb_iid = a, h->pb_seq = b;
    else if (sscanf(l, "exit %llu", &a) == 1) h->exit_ns = a;
    else if (sscanf(l, "written %llu", &a) == 1) h->written_ns = a;
    else if (sscanf(l, "throttle %ld %lg", &li, &x) == 2) h->throttle_calls = li, h->throttle_us = x;
    else if (sscanf(l, "loc %u %d %n", &u, &line, &k) == 2 && u < fin_nnames) { /* a name's (names_read first): no table for ids nothing names */
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
      unsigned long long ui = 0, ue = 0, us = 0, un = 0; /* the unrecorded calls: absent before issue 40 */
      sscanf(l, "thr %*u %*u %*u %*g %*u %*u %llu %llu %llu %llu", &ui, &ue, &us, &un);
      h->thr[h->nthr++] = (HandThrottled){u, a, b, x, v, c, ui, ue, us, un};
    } else if (sscanf(l, "hid %u %llu", &u, &a) == 2) {
      if (!hand_grow((void **)&h->hid, h->nhid, &caphid, 16, sizeof *h->hid)) {
        ok = 0;
        break;
      }
      h->hid[h->nhid++] = (HandHidden){u, a};
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
static int resume_file(const char *body, const char *path, const TraceIn *s, Hand *h, int level) {
  int fd = open(body, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno ? errno : EIO;
  struct stat bst;
  if (fstat(fd, &bst) != 0 || !S_ISREG(bst.st_mode) || bst.st_uid != geteuid() || bst.st_nlink != 1) {
    close(fd);
    return EPERM; /* not the .body a process of ours left */
  }
  Gz *g = calloc(1, sizeof *g);
  int err = g ? 0 : ENOMEM;
  if (g) {
    g->fd = fd;
    g->crc = (uint32_t)h->crc;
    g->len = (uint32_t)h->len;
    g->plain = s->format == TRACE_PERFETTO; /* packets go on after the process's */
    /* raw deflate after the process's sync flush: its blocks follow the
     * process's on a byte boundary, one stream, one member */
    if (!g->plain && deflateInit2(&g->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) err = ENOMEM;
  }
  if (!err) {
    size_t ngpu = 0;
    RtGpuRec *gpu = gpu_setup(g, s, &ngpu);
    if (launchers_known())
      read_blocks(s->raw, 0, h->body_to, READ_DEAD, spans_block, NULL, g, NULL, NULL, 0, NULL, NULL);
    BodyState st = {s->pid, h->spans, h->nspans, h->nspans, h->body_dropped + s->dropped, s, NULL};
    /* a Perfetto body: new interning ids and sequences after the process's */
    if (s->format == TRACE_PERFETTO && !(st.pb = pb_new(s->pid, h->pb_iid, h->pb_seq))) g->err = ENOMEM;
    h->spans = NULL; /* trace_tail owns them now */
    h->nspans = 0;
    st.dropped += read_blocks(s->raw, h->body_to, s->to, READ_DEAD, body_block, spans_block, g, &st, NULL, h->body_skip,
                              NULL, NULL);
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
  for (size_t i = 0; i < nspill_sfx; i++) {
    snprintf(p, sizeof p, "%s%s", pre, spill_sfx[i]);
    unlink(p);
  }
  /* a handed-over set's pid may be a new process's by now: its trace in
   * the making is its own */
  if (pid != (long)getpid() && running(pid)) return;
  /* a trace it was writing when it died (<name><suffix>.tmp<HOSTID>-<PID>,
   * either format: chrome.c's write_file; only this host's) */
  char tail[2][64];
  snprintf(tail[0], sizeof tail[0], "%s.tmp%s-%ld", rt_trace_suffix(TRACE_JSON), rt_host.id, pid);
  snprintf(tail[1], sizeof tail[1], "%s.tmp%s-%ld", rt_trace_suffix(TRACE_PERFETTO), rt_host.id, pid);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    for (int k = 0; k < 2; k++) {
      size_t tl = strlen(tail[k]);
      if (l > tl && !strcmp(e->d_name + l - tl, tail[k])) {
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
      }
    }
  }
  if (d) closedir(d);
}

/* What a snapshot (.info) says, beside the TraceIn it fills */
typedef struct {
  TraceIn s;
  char proc[512], trace[512], cupti[300];
  char proc_json[1024];
  char backend[16];
  RtClock clock;
  int level;
  uint64_t(*win)[2];                 /* capture windows (windows lines) */
  size_t nwin, capwin;
  int have_windows;
  size_t capopen;
  uint32_t capth;
  char cupti_json[700];
  char note[128];
} Fin;

/* the devices the dead process saw (its "device" lines) */
static RtDevice fin_devs[RT_MAX_DEVICES];
static int fin_ndev;
static int fin_devices(const RtDevice **out) {
  *out = fin_devs;
  return fin_ndev;
}

/* path's last name, if the rest names dir itself (the same directory,
 * resolved); else NULL */
static const char *name_in_dir(const char *path, const struct stat *dst) {
  const char *slash = strrchr(path, '/');
  if (!slash || !slash[1]) return NULL;
  char parent[2100];
  snprintf(parent, sizeof parent, "%.*s", (int)(slash - path) + (slash == path), path);
  struct stat st;
  if (stat(parent, &st) != 0 || st.st_dev != dst->st_dev || st.st_ino != dst->st_ino) return NULL;
  return slash + 1;
}

/* The .done marker's two lines name a trace process pid finished in dir:
 * TO, a trace's name (either format's suffix, not a hidden file), and
 * TO.tmpPID, a plain file of this user (or none: moved already). Their
 * paths in dir into tmp_in and to_in; 0 when the marker names anything else. */
static int done_names_ok(const char *dir, long pid, const char *tmp, const char *to, char *tmp_in, char *to_in, size_t cap) {
  struct stat dst, st;
  if (stat(dir, &dst) != 0) return 0;
  const char *t = name_in_dir(tmp, &dst), *o = name_in_dir(to, &dst);
  if (!t || !o || o[0] == '.') return 0;
  size_t ol = strlen(o), k = 0;
  for (int f = 0; f < 2; f++) {
    const char *sfx = rt_trace_suffix(f ? TRACE_PERFETTO : TRACE_JSON);
    size_t sl = strlen(sfx);
    k |= ol > sl && !strcmp(o + ol - sl, sfx);
  }
  char want[600];
  snprintf(want, sizeof want, "%s.tmp%ld", o, pid);
  if (!k || strcmp(t, want)) return 0;
  snprintf(tmp_in, cap, "%s/%s", dir, t);
  snprintf(to_in, cap, "%s/%s", dir, o);
  if (lstat(tmp_in, &st) != 0) return errno == ENOENT;
  return S_ISREG(st.st_mode) && st.st_uid == geteuid();
}

/* It died after writing its trace (the .done marker: "tmp\npath\n"), before
 * or after putting it in place: moved there, nothing remade. -1: no marker.
 * A marker that names anything else is said and left, never followed. */
static int finalize_done(const char *dir, const char *pre, long pid, int quiet) {
  char p[2100], tmp_in[2400], to_in[2400];
  size_t n = 0;
  snprintf(p, sizeof p, "%s.done", pre);
  char *done = slurp(p, &n);
  if (!done) return -1;
  char *nl = strchr(done, '\n'), *to = nl ? nl + 1 : NULL, *end = to ? strchr(to, '\n') : NULL;
  if (end) *nl = *end = 0;
  if (!end || !done_names_ok(dir, pid, done, to, tmp_in, to_in, sizeof tmp_in)) {
    if (!quiet) fprintf(stderr, "ncrt: %s: not a marker of a trace in this run directory; left as is\n", p);
    free(done);
    return 0;
  }
  free(done);
  int moved = rename(tmp_in, to_in) == 0;
  finalize_cleanup(dir, pre, pid);
  return moved;
}

/* One "device" line of the snapshot into fin_devs */
static void info_device(const char *l) {
  RtDevice *v = &fin_devs[fin_ndev];
  unsigned long long tm, sb, ss, so;
  int k;
  memset(v, 0, sizeof *v);
  if (sscanf(l, "%d %llu %d %d %d %d %d %d %d %d %d %llu %llu %llu %n", &v->id, &tm, &v->cc_major, &v->cc_minor,
             &v->num_sms, &v->max_threads_per_block, &v->max_threads_per_sm, &v->max_blocks_per_sm,
             &v->regs_per_block, &v->regs_per_sm, &v->warp_size, &sb, &ss, &so, &k) == 14) {
    v->total_mem = tm, v->shmem_per_block = sb, v->shmem_per_sm = ss, v->shmem_per_block_optin = so;
    unjson(l + k, v->name, sizeof v->name);
    fin_ndev++;
  }
}

/* The snapshot's lines into f (out of memory: the lines read so far are
 * kept; a block that did grow is kept too, the counts say what both hold).
 * 0: stop reading. */
static int info_line(Fin *f, char *l) {
  TraceIn *s = &f->s;
  unsigned long long a, b, c, d, e;
  int k;
  if (sscanf(l, "rank %d", &s->rank) == 1 || sscanf(l, "world %d", &s->world) == 1 ||
      sscanf(l, "level %d", &f->level) == 1 || sscanf(l, "format %d", &s->format) == 1)
    return 1;
  if (sscanf(l, "clock %d %llu %llu %llu %llu", &f->clock.use_tsc, &a, &b, &c, &d) == 5) {
    f->clock.tsc0 = a, f->clock.ns0 = b, f->clock.tsc1 = c, f->clock.ns1 = d;
    return 1;
  }
  if (sscanf(l, "piece %llu %llu %llu %llu", &a, &b, &c, &d) == 4) {
    if (f->clock.npiece < RT_CLOCK_PIECES) f->clock.piece[f->clock.npiece++] = (RtClockPiece){a, b, c, d};
    return 1;
  }
  if (sscanf(l, "base %llu", &a) == 1) s->base = a;
  else if (sscanf(l, "now %llu", &a) == 1) s->now = a;
  else if (sscanf(l, "from %llu", &a) == 1) s->from = a;
  else if (sscanf(l, "dropped %llu", &a) == 1) s->dropped = a;
  else if (sscanf(l, "gpu %llu %llu %llu", &a, &b, &c) == 3) s->gfrom = a;
  else if (sscanf(l, "windows %llu", &a) == 1) f->have_windows = 1;
  else if (sscanf(l, "window %llu %llu", &a, &b) == 2) {
    if (f->nwin == f->capwin) {
      size_t cap = f->capwin ? f->capwin * 2 : 64;
      uint64_t(*nw)[2] = realloc(f->win, cap * sizeof *nw);
      if (!nw) return 0;
      f->win = nw, f->capwin = cap;
    }
    f->win[f->nwin][0] = a, f->win[f->nwin][1] = b;
    f->nwin++;
  }
  else if (!strncmp(l, "cupti ", 6)) unjson(l + 6, f->cupti, sizeof f->cupti);
  else if (!strncmp(l, "device ", 7) && fin_ndev < RT_MAX_DEVICES) info_device(l + 7);
  else if (!strncmp(l, "name ", 5)) unjson(l + 5, f->proc, sizeof f->proc);
  else if (!strncmp(l, "process {", 9)) {
    /* cut at the buffer's size, or not an object: left out, not copied */
    int n = snprintf(f->proc_json, sizeof f->proc_json, "%s", l + 8);
    if (n < 0 || (size_t)n >= sizeof f->proc_json || !json_object_ok(f->proc_json)) f->proc_json[0] = 0;
  }
  else if (sscanf(l, "backend %15[A-Za-z0-9_:-]", f->backend) == 1) s->backend = f->backend;
  else if (sscanf(l, "pstart %llu", &a) == 1) s->pstart = a;
  else if (sscanf(l, "isrank %d", &k) == 1) s->is_rank = k;
  else if (!strncmp(l, "trace ", 6)) unjson(l + 6, f->trace, sizeof f->trace);
  else if (sscanf(l, "domain %llu %n", &a, &k) == 1 && a < 1024) {
    free(fin_domains[a]);
    fin_domains[a] = line_json(l + k);
  } else if (sscanf(l, "cat %llu %n", &a, &k) == 1 && a < 256) {
    free(fin_cats[a]);
    fin_cats[a] = line_json(l + k);
  } else if (sscanf(l, "thread %llu %n", &a, &k) == 1) {
    if (s->nthreads == f->capth) {
      uint32_t cap = f->capth ? f->capth * 2 : 16;
      uint32_t *tids = realloc(s->tids, cap * sizeof *s->tids);
      if (tids) s->tids = tids;
      char **tnames = tids ? realloc(s->tnames, cap * sizeof *s->tnames) : NULL;
      if (!tnames) return 0;
      s->tnames = tnames, f->capth = cap;
    }
    char *nm = line_json(l + k);
    if (!nm) return 1; /* not a JSON string: the thread keeps its number */
    s->tids[s->nthreads] = (uint32_t)a;
    s->tnames[s->nthreads++] = nm;
  } else if (sscanf(l, "open %llu %llu %llu %llu %llu", &a, &b, &c, &d, &e) == 5) {
    if (s->nopen == f->capopen) {
      size_t cap = f->capopen ? f->capopen * 2 : 16;
      OpenFrame *o = realloc(s->open, cap * sizeof *s->open);
      if (!o) return 0;
      s->open = o, f->capopen = cap;
    }
    s->open[s->nopen++] = (OpenFrame){(uint32_t)a, (uint32_t)b, (uint32_t)d, (uint16_t)e, c};
  }
  return 1;
}

/* The snapshot (.info, or the one a dying process was renaming) into f:
 * 0, or -1 when there is none (said unless quiet). */
static int info_read(Fin *f, const char *pre, long pid, int quiet) {
  char p[2100];
  size_t n = 0;
  snprintf(p, sizeof p, "%s.info", pre);
  char *info = slurp(p, &n);
  if (!info) {
    snprintf(p, sizeof p, "%s.info.tmpH", pre);
    info = slurp(p, &n);
  }
  if (!info || strncmp(info, "ncrt-info 1\n", 12)) {
    if (!quiet) fprintf(stderr, "ncrt: %s.raw: no snapshot of process %ld (.info) to finalize it from; left as is\n", pre, pid);
    free(info);
    return -1;
  }
  for (char *l = info, *next; l && *l; l = next) {
    next = strchr(l, '\n');
    if (next) *next++ = 0;
    if (!info_line(f, l)) break;
  }
  free(info);
  return 0;
}

/* The names (.names: "ID JSON\n"; a line cut short at death ends it) */
static void names_read(const char *pre) {
  char p[2100];
  size_t n = 0;
  snprintf(p, sizeof p, "%s.names", pre);
  char *names = slurp(p, &n);
  for (char *l = names; l && *l;) {
    char *next = strchr(l, '\n');
    if (!next) break;
    char *sp;
    unsigned long id = strtoul(l, &sp, 10);
    /* ids are dense from 0: a file of n bytes names fewer than n (a
     * larger one would cost memory for nothing, up to 128 MB) */
    if (*sp == ' ' && id < (1u << 24) && id < n) {
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
}

/* .raw and .gpu, and how much of each this trace takes */
static void files_open(Fin *f, const char *pre) {
  TraceIn *s = &f->s;
  char p[2100];
  struct stat st;
  snprintf(p, sizeof p, "%s.raw", pre);
  s->raw = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  s->to = s->raw >= 0 && fstat(s->raw, &st) == 0 ? (uint64_t)st.st_size : 0;
  snprintf(p, sizeof p, "%s.gpu", pre);
  s->gpu = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  s->gto = s->gpu >= 0 && fstat(s->gpu, &st) == 0 ? (uint64_t)st.st_size : 0;
  s->gto -= (s->gto - s->gfrom) % sizeof(RtGpuRec) * (s->gto > s->gfrom); /* a record cut short */
}

/* ncrt.cupti: the status the process saved, and what its death kept */
static void cupti_note(Fin *f, int handed) {
  char text[400];
  const char *cupti = f->cupti;
  if (handed)
    snprintf(text, sizeof text, "%s", cupti);
  else if (f->s.gto > f->s.gfrom)
    snprintf(text, sizeof text, "%s; GPU activity kept until about 1 s before the process died",
             cupti[0] ? cupti : "recording");
  else if (cupti[0] && strncmp(cupti, "recording", 9))
    snprintf(text, sizeof text, "%s", cupti);
  else
    snprintf(text, sizeof text, "%s", cupti[0] ? "recording; no GPU activity was saved before the process died"
                                               : "not recorded (the process died)");
  Out o = {-1, 0, 0, {0}};
  o_json(&o, text);
  snprintf(f->cupti_json, sizeof f->cupti_json, "%.*s", (int)o.n, o.b);
  f->s.cupti = f->cupti_json;
}

/* The TraceIn's sources: the dead process's names, clock, devices and
 * windows (GPU work counts when launched in a capture window; a snapshot
 * from before windows were saved: all of it) */
static void fin_sources(Fin *f, int handed, long pid) {
  static const uint64_t all[1][2] = {{0, 0}};
  TraceIn *s = &f->s;
  s->name_json = fin_name_json;
  s->loc_of = handed ? fin_loc : NULL; /* locations only an exit hands over */
  s->domain_json = fin_domain_json;
  s->cat_json = fin_cat_json;
  s->clock = &f->clock;
  s->origin_ns = f->clock.ns0;
  s->use_tsc = f->clock.use_tsc;
  s->devices = fin_devices;
  s->win = f->have_windows ? (const uint64_t(*)[2])f->win : all;
  s->nwin = f->have_windows ? f->nwin : 1;
  s->proc_name = f->proc;
  s->trace_name = f->trace;
  s->proc_json = f->proc_json;
  snprintf(f->note, sizeof f->note, "process %ld died; written by the finalizer from what it left", pid);
  s->note = handed ? NULL : f->note;
}

/* The trace file: as the process would have named it, unless taken */
static int fin_write(Fin *f, const char *dir, const char *pre, long pid, Hand *hand, int handed, int quiet) {
  TraceIn *s = &f->s;
  char path[2300];
  const char *sfx = rt_trace_suffix(s->format);
  if (strchr(f->trace, '/') || !f->trace[0]) { /* a name, never a path out of dir (.info may be anyone's) */
    if (!quiet) fprintf(stderr, "ncrt: %s.info: the trace name is not a file name; named ncrt\n", pre);
    snprintf(f->trace, sizeof f->trace, "ncrt");
  }
  if (s->is_rank) snprintf(path, sizeof path, "%s/%s-rank%d%s", dir, f->trace, s->rank, sfx);
  else snprintf(path, sizeof path, "%s/%s%s", dir, f->trace, sfx);
  if (access(path, F_OK) == 0 && s->is_rank)
    snprintf(path, sizeof path, "%s/%s-pid%ld-rank%d%s", dir, f->trace, pid, s->rank, sfx);
  else if (access(path, F_OK) == 0) /* a helper's name has its -pid<P>: another host's with our pid */
    snprintf(path, sizeof path, "%s/%s-rank%d%s", dir, f->trace, s->rank, sfx);
  char body[2100];
  snprintf(body, sizeof body, "%s.body", pre);
  int err = handed && hand->body && access(body, F_OK) == 0 ? resume_file(body, path, s, hand, f->level)
                                                            : write_file(path, s, f->level, NULL);
  if (err) {
    if (!quiet) fprintf(stderr, "ncrt: cannot write %s: %s; the trace of process %ld is lost\n", path, strerror(err), pid);
    return 0;
  }
  return 1;
}

static void fin_free(Fin *f) {
  TraceIn *s = &f->s;
  if (s->raw >= 0) close(s->raw);
  if (s->gpu >= 0) close(s->gpu);
  free(f->win);
  for (uint32_t i = 0; i < s->nthreads; i++) free(s->tnames[i]);
  free(s->tids);
  free(s->tnames);
  free(s->open);
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
  fin_ndev = 0;
}

/* One process's set (stem .ncrt-PID[~K] in dir): its trace written (1) or
 * not (0), its files removed either way (but a snapshot-less set). */
static int finalize_one(const char *dir, const char *stem, long pid, int quiet) {
  char pre[2048];
  snprintf(pre, sizeof pre, "%s/%.39s", dir, stem);
  int moved = finalize_done(dir, pre, pid, quiet);
  if (moved >= 0) return moved;
  static Fin f; /* large: not on ncrun's stack */
  memset(&f, 0, sizeof f);
  snprintf(f.proc, sizeof f.proc, "ncrt");
  snprintf(f.trace, sizeof f.trace, "ncrt");
  f.level = 1;
  f.s.pid = (int)pid;
  f.s.world = 1;
  f.s.exiting = 1;
  f.s.is_rank = 1; /* snapshots from before processes were told apart */
  fin_ndev = 0;
  if (info_read(&f, pre, pid, quiet)) return 0;
  names_read(pre);
  files_open(&f, pre);
  Hand hand;
  int handed = hand_read(pre, &hand); /* its exit handed the conversion over: it did not die */
  cupti_note(&f, handed);
  fin_sources(&f, handed, pid);
  if (handed) {
    f.s.hand = &hand;
    f.s.pexit = hand.exit_ns;
  }
  TraceIn *s = &f.s;
  int written_one = 0;
  if (s->to > s->from || s->nopen || s->gto > s->gfrom || handed)
    written_one = fin_write(&f, dir, pre, pid, &hand, handed, quiet);
  hand_free(&hand);
  fin_free(&f);
  finalize_cleanup(dir, pre, pid);
  return written_one;
}

/* Is pid running? A zombie is not (an orphan whose new parent does not
 * reap it stays one). */
static int running(long pid) {
  if (syscall(SYS_kill, (pid_t)pid, 0) != 0) return errno == EPERM; /* not our kill() (exitpaths.c) */
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

/* Where a spill set's pid begins in name: after ".ncrt-h<HOSTID>-" when
 * HOSTID is this host's (or after ".ncrt-" for a set named before hosts
 * were); -1 when the set is another host's (its pids are not ours to ask
 * about: it may be alive), -2 when name is no spill set. */
static int own_host_set(const char *name, const NcHost *me) {
  size_t p = sizeof NC_RUN_PRIVATE - 1, h = sizeof NC_RUN_SPILL - 1;
  if (strncmp(name, NC_RUN_PRIVATE, p)) return -2;
  if (name[p] >= '0' && name[p] <= '9') return (int)p; /* .ncrt-<PID>: no host in the name */
  if (strncmp(name, NC_RUN_SPILL, h)) return -2; /* the budget, the torch export's files */
  const char *id = name + h;
  if (strlen(id) <= NC_HOSTID_LEN || id[NC_HOSTID_LEN] != '-') return -2;
  if (memcmp(id, me->id, NC_HOSTID_LEN)) return -1;
  return (int)(h + NC_HOSTID_LEN + 1);
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
  nc_host_read(&rt_host); /* ncrun's: the host of the sets it may finalize */
  int others = 0; /* sets of other hosts: never ours to finalize */
  while ((e = readdir(d)) && np < 4096) {
    long pid;
    unsigned k = 0;
    int at = 0, at2 = 0;
    int host = own_host_set(e->d_name, &rt_host);
    if (host == -1) others = 1;
    if (host < 0) continue;
    if (sscanf(e->d_name + host, "%ld%n", &pid, &at) != 1 || !at) continue;
    at += host;
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
  if (!alive && !others) {
    char b[1300];
    snprintf(b, sizeof b, "%s/" NC_RUN_BUDGET, dir);
    unlink(b);
  }
  return n;
}

