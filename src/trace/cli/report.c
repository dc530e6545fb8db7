/* report: `nctrace report` -- one self-contained HTML page. The pictures
 * (a timeline of every rank and thread on one clock, a flame chart of range
 * nesting, per-step and per-rank charts, the run header) are drawn in the
 * browser by a hand-written script on <canvas> (report_assets/report.js,
 * compiled into this program as a string by the build: report_assets.h);
 * this file computes the data they draw and embeds it in the page as JSON.
 * Under the pictures, the summary document (render.c) written as HTML by
 * doc_write_html, the same document `nctrace summary` writes as Markdown.
 * No external resource: the page works offline, in a browser or a headless
 * one; without scripts the tables still show. For runs of an instrumented
 * shadow tree, a source view: the user's files with each range's time
 * (report_source.c reads the manifest and embeds them).
 *
 * The timeline's data is aggregated per zoom level rather than cut: level
 * L has a resolution r (ns per bin: the run's span over 2048 at level 0,
 * four times finer each level); in each lane an event of at least r is
 * kept as it is, and runs of shorter ones closer than r to each other
 * (starting within 8r of the run's first) become one box carrying their count and the name with the most time
 * among them. Levels are added until a level needs no aggregation (full
 * detail) or the page's box budget is spent, so every stretch of the run is
 * drawn at every zoom and the page stays a bounded size on any trace.
 *
 * With --serve the page is not written but served (serve.h): its data
 * then says so ("serve"), and the timeline's lanes are kept and indexed
 * (window.h) so that the page can ask for every event of a window its
 * levels group.
 *
 * The page is built in one Buf the command owns and frees. */
#include "clocks.h"
#include "render.h"
#include "commands.h"
#include "deep_section.h"
#include "diff_render.h"
#include "json.h"
#include "output.h"
#include "report_assets.h"
#include "report_source.h"
#include "rundir.h"
#include "serve.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
  LEVEL0_BINS = 2048,  /* bins across the whole run at level 0 */
  MAX_LEVELS = 14,
  BOX_BUDGET = 600000, /* boxes over all levels; about 12 bytes of page each */
  MAX_LANES_PER_THREAD = 64,
  MAX_FLAME_NODES = 40000,
  MAX_FLAME_BUILD = 400000,
  MAX_STEPS = 20000,
  AGG_MAX_BINS = 8,    /* a run of short events starts within 8 bins of its first */
};

/* ---- names as the page numbers them ---- */

typedef struct {
  int64_t *page_of;         /* model name id -> page index, -1 */
  VEC(const char *) strs;   /* page index -> text (model's or extra[]) */
  VEC(char *) extra;        /* texts the page adds (the collapsed step row) */
  VEC(int64_t) total;       /* time drawn in the timeline per page name */
} PageNames;

static uint32_t pn_model(PageNames *p, const Model *m, uint32_t id) {
  if (p->page_of[id] < 0) {
    p->page_of[id] = (int64_t)p->strs.n;
    vec_push(&p->strs, intern_str(&m->names, id));
    vec_push(&p->total, 0);
  }
  return (uint32_t)p->page_of[id];
}

static uint32_t pn_extra(PageNames *p, const char *text) {
  char *s = xstrdup(text);
  vec_push(&p->extra, s);
  vec_push(&p->strs, s);
  vec_push(&p->total, 0);
  return (uint32_t)p->strs.n - 1;
}

/* ---- timeline ---- */

typedef struct {
  size_t trace;
  int64_t off; /* this trace's events + off = the page's clock */
  VEC(uint32_t) ev;
} Lane;

typedef struct {
  size_t trace;
  uint32_t thread;
  bool gpu;
  size_t lane0, nlanes, nasync;
  int64_t launcher; /* GPU stream: the CPU thread that launched most of its work, -1 */
} Track;

typedef struct {
  VEC(Lane) lanes;
  VEC(Track) tracks;
  int64_t t0, t1; /* the page's clock: first start, last end (ns, after off) */
  uint64_t events, dropped;
} Tl;

static void tl_free(Tl *tl) {
  for (size_t i = 0; i < tl->lanes.n; i++) vec_free(&tl->lanes.v[i].ev);
  vec_free(&tl->lanes);
  vec_free(&tl->tracks);
}

static bool tl_event(const Ev *e) {
  return kind_is_cpu_range(e->kind) || kind_is_gpu_op(e->kind);
}

static size_t new_lane(Tl *tl, size_t trace, int64_t off) {
  Lane l = {trace, off, {0}};
  vec_push(&tl->lanes, l);
  return tl->lanes.n - 1;
}

/* The lanes of one thread: nested events one lane lower each (a stack
 * walk, as the summary nests them), start/end ranges packed first-fit into
 * lanes of their own below. */
static void thread_lanes(Tl *tl, const Trace *t, size_t ti, int64_t off, const uint32_t *idx, size_t n,
                         Track *tr) {
  int64_t ends[MAX_LANES_PER_THREAD];
  size_t lane_of[MAX_LANES_PER_THREAD];
  int nl = 0, depth = 0;
  VEC(int64_t) aends = {0};
  VEC(size_t) alane = {0};
  tr->lane0 = tl->lanes.n;
  /* nested lanes first, so they sit on top; async lanes after */
  for (int pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < n; k++) {
      const Ev *e = &t->ev.v[idx[k]];
      bool async = (e->flags & EV_ASYNC) != 0;
      if (async != (pass == 1)) continue;
      if (!async) {
        while (depth && ends[depth - 1] <= e->ts) depth--;
        if (depth == MAX_LANES_PER_THREAD) {
          tl->dropped++;
          continue;
        }
        if (depth == nl) lane_of[nl++] = new_lane(tl, ti, off);
        ends[depth] = e->ts + e->dur;
        vec_push(&tl->lanes.v[lane_of[depth]].ev, idx[k]);
        depth++;
      } else {
        size_t a = 0;
        while (a < aends.n && aends.v[a] > e->ts) a++;
        if (a == aends.n) {
          if (aends.n == MAX_LANES_PER_THREAD) {
            tl->dropped++;
            continue;
          }
          vec_push(&aends, 0);
          vec_push(&alane, new_lane(tl, ti, off));
        }
        aends.v[a] = e->ts + e->dur;
        vec_push(&tl->lanes.v[alane.v[a]].ev, idx[k]);
      }
    }
  tr->nlanes = tl->lanes.n - tr->lane0;
  tr->nasync = aends.n;
  vec_free(&aends);
  vec_free(&alane);
}

static void tl_build(const Model *m, Tl *tl) {
  int64_t base = INT64_MAX;
  for (size_t ti = 0; ti < m->traces.n; ti++)
    if (m->traces.v[ti]->has_base && m->traces.v[ti]->base_ns < base) base = m->traces.v[ti]->base_ns;
  tl->t0 = INT64_MAX, tl->t1 = INT64_MIN;
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    int64_t off = t->has_base ? t->base_ns - base : 0;
    VEC(uint32_t) idx = {0};
    I64Map launcher_of = {0}, launches = {0};
    for (size_t i = 0; i < t->ev.n; i++) {
      const Ev *e = &t->ev.v[i];
      if (!tl_event(e)) continue;
      vec_push(&idx, (uint32_t)i);
      if (e->ts + off < tl->t0) tl->t0 = e->ts + off;
      if (e->ts + e->dur + off > tl->t1) tl->t1 = e->ts + e->dur + off;
      if ((e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER) && e->corr >= 0)
        i64map_put(&launcher_of, e->corr, e->thread);
    }
    tl->events += idx.n;
    for (size_t k = 0; k < idx.n; k++) {
      const Ev *e = &t->ev.v[idx.v[k]];
      int64_t th;
      if (kind_is_gpu_op(e->kind) && e->corr >= 0 && i64map_get(&launcher_of, e->corr, &th))
        i64map_add(&launches, (int64_t)((uint64_t)e->thread << 32 | (uint64_t)th), 1);
    }
    trace_sort_by_thread(t, idx.v, idx.n);
    /* one track per thread that has events, in thread order */
    size_t nt = t->threads.n;
    Track *tr = xcalloc(nt ? nt : 1, sizeof *tr);
    size_t *from = xcalloc(nt + 1, sizeof *from), *to = xcalloc(nt + 1, sizeof *to);
    for (size_t a = 0; a < idx.n;) {
      uint32_t th = t->ev.v[idx.v[a]].thread;
      size_t z = a;
      while (z < idx.n && t->ev.v[idx.v[z]].thread == th) z++;
      from[th] = a, to[th] = z;
      a = z;
    }
    for (size_t th = 0; th < nt; th++) {
      tr[th].trace = ti, tr[th].thread = (uint32_t)th, tr[th].gpu = t->threads.v[th].gpu, tr[th].launcher = -1;
      if (!tr[th].gpu) continue;
      int64_t best = 0;
      for (size_t c = 0; c < nt; c++) {
        int64_t v;
        if (!t->threads.v[c].gpu && i64map_get(&launches, (int64_t)((uint64_t)th << 32 | c), &v) && v > best)
          best = v, tr[th].launcher = (int64_t)c;
      }
    }
    /* CPU threads in order, each followed by the streams it launched on;
     * streams with no known launcher last */
    for (int pass = 0; pass < 2; pass++)
      for (size_t th = 0; th < nt; th++) {
        if (pass == 0 && tr[th].gpu) continue;
        if (pass == 1 && !(tr[th].gpu && tr[th].launcher < 0)) continue;
        for (int sub = 0; sub < (pass == 0 ? 2 : 1); sub++)
          for (size_t g = 0; g < (sub == 0 ? 1 : nt); g++) {
            size_t which = sub == 0 ? th : g;
            if (sub == 1 && !(tr[g].gpu && tr[g].launcher == (int64_t)th)) continue;
            if (from[which] == to[which]) continue;
            thread_lanes(tl, t, ti, off, idx.v + from[which], to[which] - from[which], &tr[which]);
            vec_push(&tl->tracks, tr[which]);
          }
      }
    free(tr);
    free(from);
    free(to);
    i64map_free(&launcher_of);
    i64map_free(&launches);
    vec_free(&idx);
  }
  if (tl->t0 == INT64_MAX) tl->t0 = tl->t1 = 0;
}

typedef struct {
  int64_t s, e;
  uint64_t count;
  uint32_t names[8];
  int64_t time[8];
  int nn;
} Agg;

/* Box list of one lane at resolution r, appended to out as JSON numbers:
 * a single event is "dt,dur,name", a run of count > 1 short events
 * "dt,dur,-1-name,count,k,name1..namek" (name: the one with the most time
 * in it, then k <= 3 others by time, of the first 8 names in the run); dt is
 * the start minus the previous box's start, in units of q ns; dur in ns. */
typedef struct {
  Buf *out;
  int64_t q, prev, t0;
  bool first;
  size_t boxes;
} Emit;

static void emit_box(Emit *em, int64_t s, int64_t dur, uint32_t name, uint64_t count, const uint32_t *more,
                     int nmore) {
  int64_t sq = (s - em->t0 + em->q / 2) / em->q;
  if (!em->first) buf_putc(em->out, ',');
  em->first = false;
  if (count > 1) {
    buf_printf(em->out, "%lld,%lld,%lld,%llu,%d", (long long)(sq - em->prev), (long long)dur, -1 - (long long)name,
               (unsigned long long)count, nmore);
    for (int i = 0; i < nmore; i++) buf_printf(em->out, ",%u", more[i]);
  } else buf_printf(em->out, "%lld,%lld,%u", (long long)(sq - em->prev), (long long)dur, name);
  em->prev = sq;
  em->boxes++;
}

/* A run: its name with the most time first, then up to 3 more (searching
 * finds a name inside a run by these). */
static void agg_flush(Emit *em, Agg *a, uint32_t single_name) {
  if (!a->count) return;
  if (a->count == 1) emit_box(em, a->s, a->e - a->s, single_name, 1, NULL, 0);
  else {
    for (int i = 1; i < a->nn; i++) /* by time, descending (8 at most) */
      for (int j = i; j > 0 && a->time[j] > a->time[j - 1]; j--) {
        int64_t t = a->time[j];
        uint32_t n = a->names[j];
        a->time[j] = a->time[j - 1], a->names[j] = a->names[j - 1];
        a->time[j - 1] = t, a->names[j - 1] = n;
      }
    emit_box(em, a->s, a->e - a->s, a->names[0], a->count, a->names + 1, a->nn - 1 < 3 ? a->nn - 1 : 3);
  }
  a->count = 0, a->nn = 0;
}

/* Boxes a lane would have at resolution r (counting only). */
static size_t lane_boxes(const Model *m, const Lane *l, int64_t r) {
  const Trace *t = m->traces.v[l->trace];
  size_t n = 0;
  int64_t start = 0, end = INT64_MIN;
  bool open = false;
  for (size_t k = 0; k < l->ev.n; k++) {
    const Ev *e = &t->ev.v[l->ev.v[k]];
    if (e->dur >= r) n++, open = false;
    else if (open && e->ts <= end + r && e->ts <= start + AGG_MAX_BINS * r) {
      if (e->ts + e->dur > end) end = e->ts + e->dur;
    } else n++, open = true, start = e->ts, end = e->ts + e->dur;
  }
  return n;
}

static void lane_emit(const Model *m, const Lane *l, int64_t r, Emit *em, PageNames *pn) {
  const Trace *t = m->traces.v[l->trace];
  Agg a = {0};
  uint32_t single = 0;
  for (size_t k = 0; k < l->ev.n; k++) {
    const Ev *e = &t->ev.v[l->ev.v[k]];
    uint32_t name = pn_model(pn, m, e->name);
    int64_t s = e->ts + l->off;
    if (e->dur >= r) {
      agg_flush(em, &a, single);
      emit_box(em, s, e->dur, name, 1, NULL, 0);
      continue;
    }
    if (!(a.count && s <= a.e + r && s <= a.s + AGG_MAX_BINS * r)) {
      agg_flush(em, &a, single);
      a.s = s, a.e = s + e->dur, single = name;
    }
    if (s + e->dur > a.e) a.e = s + e->dur;
    a.count++;
    int i = 0;
    while (i < a.nn && a.names[i] != name) i++;
    if (i == a.nn && a.nn < 8) a.names[a.nn++] = name;
    if (i < a.nn) a.time[i] += e->dur + 1;
  }
  agg_flush(em, &a, single);
}

/* keep: NULL, or where the lanes go (the served mode's index) instead of
 * being freed. */
static void timeline_json(const Model *m, const Summary *s, PageNames *pn, Buf *b, Tl *keep) {
  Tl tl = {0};
  tl_build(m, &tl);
  int64_t span = tl.t1 - tl.t0 > 0 ? tl.t1 - tl.t0 : 1;
  /* per-name time for the legend's order (every event, once) */
  for (size_t li = 0; li < tl.lanes.n; li++) {
    const Lane *l = &tl.lanes.v[li];
    const Trace *t = m->traces.v[l->trace];
    for (size_t k = 0; k < l->ev.n; k++) {
      const Ev *e = &t->ev.v[l->ev.v[k]];
      uint32_t n = pn_model(pn, m, e->name); /* may grow pn->total */
      pn->total.v[n] += e->dur;
    }
  }
  buf_printf(b, "\"timeline\":{\"span\":%lld,\"events\":%llu,\"dropped\":%llu,\"ranks\":[", (long long)span,
             (unsigned long long)tl.events, (unsigned long long)tl.dropped);
  Buf tmp = {0};
  size_t prev_trace = SIZE_MAX;
  for (size_t i = 0; i < tl.tracks.n; i++) {
    const Track *tr = &tl.tracks.v[i];
    const Trace *t = m->traces.v[tr->trace];
    if (tr->trace != prev_trace) {
      if (prev_trace != SIZE_MAX) buf_puts(b, "]},");
      prev_trace = tr->trace;
      buf_printf(b, "{\"rank\":%lld,\"file\":", (long long)s->ranks.v[tr->trace].rank);
      json_script_str(b, t->path);
      buf_puts(b, ",\"tracks\":[");
    } else buf_putc(b, ',');
    tmp.len = 0;
    model_thread_label(m, t, tr->thread, &tmp);
    buf_puts(b, "{\"label\":");
    json_script_str(b, tmp.s);
    buf_printf(b, ",\"gpu\":%s,\"under\":%s,\"lane0\":%zu,\"lanes\":%zu,\"async\":%zu}", tr->gpu ? "true" : "false",
               tr->gpu && tr->launcher >= 0 ? "true" : "false", tr->lane0, tr->nlanes, tr->nasync);
  }
  if (prev_trace != SIZE_MAX) buf_puts(b, "]}");
  buf_puts(b, "],\"levels\":[");
  size_t used = 0;
  int64_t r = span / LEVEL0_BINS > 0 ? span / LEVEL0_BINS : 1;
  for (int L = 0; L < MAX_LEVELS; L++, r = r / 4 > 0 ? r / 4 : 1) {
    size_t need = 0;
    bool full = true;
    for (size_t li = 0; li < tl.lanes.n; li++) {
      size_t n = lane_boxes(m, &tl.lanes.v[li], r);
      need += n;
      if (n != tl.lanes.v[li].ev.n) full = false;
    }
    if (L > 0 && used + need > BOX_BUDGET) break;
    int64_t q = r / 8 > 0 ? r / 8 : 1;
    buf_printf(b, "%s{\"res\":%lld,\"q\":%lld,\"full\":%s,\"lanes\":[", L ? "," : "", (long long)r, (long long)q,
               full ? "true" : "false");
    for (size_t li = 0; li < tl.lanes.n; li++) {
      buf_puts(b, li ? ",[" : "[");
      Emit em = {b, q, 0, tl.t0, true, 0};
      lane_emit(m, &tl.lanes.v[li], r, &em, pn);
      buf_putc(b, ']');
    }
    buf_puts(b, "]}");
    used += need;
    if (full || r == 1) break;
  }
  buf_printf(b, "],\"boxes\":%zu}", used);
  buf_free(&tmp);
  if (keep) {
    *keep = tl;
    return;
  }
  tl_free(&tl);
}

/* ---- flame chart (call paths aggregated over all threads and ranks) ---- */

typedef struct {
  uint32_t parent, name; /* name: page index */
  int64_t total;
  VEC(uint32_t) kids;
} Node;

typedef VEC(Node) Nodes;

static uint32_t child_of(Nodes *ns, I64Map *idx, uint32_t parent, uint32_t name) {
  int64_t key = (int64_t)((uint64_t)parent << 32 | name), v;
  if (i64map_get(idx, key, &v)) return (uint32_t)v;
  Node nd = {parent, name, 0, {0}};
  vec_push(ns, nd);
  uint32_t id = (uint32_t)ns->n - 1;
  vec_push(&ns->v[parent].kids, id);
  i64map_put(idx, key, id);
  return id;
}

static Nodes *g_nodes;
static const PageNames *g_pn;

static int cmp_kid(const void *a, const void *b) {
  const Node *x = &g_nodes->v[*(const uint32_t *)a], *y = &g_nodes->v[*(const uint32_t *)b];
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return strcmp(g_pn->strs.v[x->name], g_pn->strs.v[y->name]);
}

/* Nodes in depth-first order, widest child first, those of at least `cut`
 * only: "parent,name,total" with parent the emitted index. */
static void flame_emit(Nodes *ns, uint32_t id, int64_t parent_out, int64_t cut, size_t *out_n, Buf *b) {
  Node *nd = &ns->v[id];
  int64_t me = (int64_t)*out_n;
  buf_printf(b, "%s%lld,%u,%lld", *out_n ? "," : "", (long long)parent_out, nd->name, (long long)nd->total);
  (*out_n)++;
  if (nd->kids.n > 1) qsort(nd->kids.v, nd->kids.n, sizeof *nd->kids.v, cmp_kid);
  for (size_t i = 0; i < ns->v[id].kids.n; i++) {
    uint32_t k = ns->v[id].kids.v[i];
    if (ns->v[k].total >= cut && ns->v[k].total > 0) flame_emit(ns, k, me, cut, out_n, b);
  }
}

static int cmp_i64_desc(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x > y ? -1 : x < y;
}

static void flame_json(const Model *m, const Summary *s, PageNames *pn, Buf *b) {
  Nodes ns = {0};
  I64Map idx = {0};
  uint32_t root_name = pn_extra(pn, "all ranges");
  Node root = {0, root_name, 0, {0}};
  vec_push(&ns, root);
  /* every range whose name matches the step glob is one row: the steps'
   * call paths merge instead of one column per step */
  const char *glob = s->opt.step_glob;
  size_t nn = intern_count(&m->names);
  uint8_t *is_step = xcalloc(nn ? nn : 1, 1);
  size_t step_names = 0;
  for (size_t i = 0; i < nn; i++)
    if (glob && fnmatch(glob, intern_str(&m->names, (uint32_t)i), 0) == 0) is_step[i] = 1, step_names++;
  int64_t step_name = -1;
  if (step_names > 1) {
    Buf t = {0};
    buf_printf(&t, "%s (%zu steps)", glob, step_names);
    step_name = pn_extra(pn, t.s);
    buf_free(&t);
  }
  for (size_t ti = 0; ti < m->traces.n; ti++) {
    const Trace *t = m->traces.v[ti];
    VEC(uint32_t) r = {0};
    for (size_t i = 0; i < t->ev.n; i++)
      if (kind_is_cpu_range(t->ev.v[i].kind)) vec_push(&r, (uint32_t)i);
    trace_sort_by_thread(t, r.v, r.n);
    typedef struct {
      int64_t end;
      uint32_t node;
    } Fr;
    VEC(Fr) st = {0};
    for (size_t k = 0; k < r.n; k++) {
      const Ev *e = &t->ev.v[r.v[k]];
      bool nt = k > 0 && t->ev.v[r.v[k - 1]].thread != e->thread;
      while (st.n && (nt || st.v[st.n - 1].end <= e->ts)) st.n--;
      int64_t end = e->ts + e->dur;
      if (st.n && end > st.v[st.n - 1].end) end = st.v[st.n - 1].end;
      uint32_t parent = st.n ? st.v[st.n - 1].node : 0;
      uint32_t name = step_name >= 0 && is_step[e->name] ? (uint32_t)step_name : pn_model(pn, m, e->name);
      uint32_t node = ns.n < MAX_FLAME_BUILD ? child_of(&ns, &idx, parent, name) : parent;
      ns.v[node].total += end - e->ts;
      if (!st.n) ns.v[0].total += end - e->ts;
      Fr f = {end, node};
      vec_push(&st, f);
    }
    vec_free(&st);
    vec_free(&r);
  }
  /* the widest MAX_FLAME_NODES paths (a child is never wider than its parent) */
  int64_t cut = 0;
  if (ns.n > MAX_FLAME_NODES) {
    int64_t *tot = xmalloc(ns.n * sizeof *tot);
    for (size_t i = 0; i < ns.n; i++) tot[i] = ns.v[i].total;
    qsort(tot, ns.n, sizeof *tot, cmp_i64_desc);
    cut = tot[MAX_FLAME_NODES - 1] + 1;
    free(tot);
  }
  g_nodes = &ns;
  g_pn = pn;
  size_t out_n = 0;
  buf_printf(b, "\"flame\":{\"built\":%zu,\"nodes\":[", ns.n);
  if (ns.v[0].total > 0) flame_emit(&ns, 0, -1, cut, &out_n, b);
  buf_printf(b, "],\"shown\":%zu}", out_n);
  for (size_t i = 0; i < ns.n; i++) vec_free(&ns.v[i].kids);
  vec_free(&ns);
  i64map_free(&idx);
  free(is_step);
}

/* ---- steps, ranks ---- */

static void charts_json(const Model *m, const Summary *s, PageNames *pn, Buf *b) {
  buf_puts(b, "\"steps\":[");
  size_t n = s->steps.n < MAX_STEPS ? s->steps.n : MAX_STEPS;
  for (size_t i = 0; i < n; i++) {
    const StepRow *st = &s->steps.v[i];
    buf_printf(b, "%s%lld,%u,%lld,%lld", i ? "," : "", (long long)s->ranks.v[st->trace].rank,
               pn_model(pn, m, st->name), (long long)st->dur, (long long)(st->gpu < st->dur ? st->gpu : st->dur));
  }
  buf_printf(b, "],\"steps_total\":%zu,\"ranks\":[", s->steps.n);
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    buf_printf(b, "%s[%lld,%lld,%lld,%lld,%lld,%lld]", i ? "," : "", (long long)r->rank,
               (long long)(r->cpu_last > r->cpu_first ? r->cpu_last - r->cpu_first : 0), (long long)r->busy,
               (long long)r->compute, (long long)r->comm, (long long)r->idle);
  }
  buf_puts(b, "]");
}

/* ---- comparison with a second run (--compare): core/diff.h's rows ---- */

enum { MAX_COMPARE_ROWS = 300 };

static void diff_side_json(Buf *b, const DiffRunInfo *r) {
  buf_printf(b, "{\"files\":%zu,\"ranks\":%zu,\"steps\":%llu,\"step_mean\":%lld,\"range_self\":%lld,"
             "\"gpu_total\":%lld}", r->files, r->ranks, (unsigned long long)r->steps, (long long)r->step_mean,
             (long long)r->range_self, (long long)r->gpu_total);
}

/* A row's verdict as the page reads it: [significance 0 unknown, 1 within
 * noise, 2 significant; p (-1: unknown); 95 % half-width, ns (-1)], in
 * diff_compute's order, which the page keeps. */
static void noise_json(Buf *b, const NoiseVerdict *v) {
  if (v->sig == SIG_UNKNOWN) buf_puts(b, "0,-1,-1");
  else buf_printf(b, "%d,%.4g,%lld", v->sig == SIG_SIGNIFICANT ? 2 : 1, v->p, (long long)llround((v->hi - v->lo) / 2));
}

static void compare_json(const DiffResult *d, const char *la, const char *lb, Buf *b) {
  buf_puts(b, "\"compare\":{\"a\":");
  json_script_str(b, la);
  buf_puts(b, ",\"b\":");
  json_script_str(b, lb);
  buf_printf(b, ",\"per_step\":%s,\"a_info\":", d->per_step ? "true" : "false");
  diff_side_json(b, &d->a);
  buf_puts(b, ",\"b_info\":");
  diff_side_json(b, &d->b);
  buf_puts(b, ",\"step_noise\":[");
  noise_json(b, &d->step_noise);
  buf_puts(b, "]");
  for (int k = 0; k < 2; k++) {
    const DiffRows *rows = k ? &d->kernels : &d->ranges;
    buf_printf(b, ",\"%s\":[", k ? "kernels" : "ranges");
    for (size_t i = 0; i < rows->n && i < MAX_COMPARE_ROWS; i++) {
      const DiffRow *r = &rows->v[i];
      buf_puts(b, i ? ",[" : "[");
      json_script_str(b, r->name);
      buf_printf(b, ",%u,%.6g,%.6g,%lld,%lld,%lld,%lld,%lld,%lld,", r->in, r->a.count, r->b.count,
                 (long long)r->a.incl, (long long)r->b.incl, (long long)r->a.excl, (long long)r->b.excl,
                 (long long)r->a.gpu, (long long)r->b.gpu);
      noise_json(b, &r->noise);
      buf_putc(b, ']');
    }
    buf_printf(b, "],\"%s_total\":%zu", k ? "kernels" : "ranges", rows->n);
  }
  buf_putc(b, '}');
}

/* "a.json" or "a.json and 3 more" */
static char *run_label(const char *const *files, size_t n) {
  Buf b = {0};
  buf_puts(&b, files[0]);
  if (n > 1) buf_printf(&b, " and %zu more", n - 1);
  return buf_steal(&b);
}

/* ---- run header: env.json of the first file's run directory ---- */

/* The page's env.json (for the header) and, in *raw, the file as read (for
 * the source view); both NULL when there is none. */
static char *env_json_text(const char *first, char **raw) {
  Buf path = {0};
  char *t = source_env_read(first, &path), *text = NULL;
  if (t) {
    /* '<' only occurs inside strings in JSON: \u003c there keeps "</script>" out */
    Buf o = {0};
    buf_puts(&o, "{\"path\":");
    json_script_str(&o, path.s);
    buf_puts(&o, ",\"env\":");
    for (const char *p = t; *p; p++)
      if (*p == '<') buf_puts(&o, "\\u003c");
      else buf_putc(&o, *p);
    buf_puts(&o, "}");
    text = buf_steal(&o);
    *raw = t;
  }
  buf_free(&path);
  return text;
}

static const char STYLE[] =
  "body{font:14px/1.4 sans-serif;margin:24px;color:#222;max-width:1400px}"
  "table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:2px 6px}"
  "th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}"
  ".cap{color:#555;font-size:12px}code{background:#f0f0f0}";

/* What each page name's events say in their args (the hover): per page
 * index, [key, raw JSON text, varies, cut] for every key the model kept
 * (model.h NameArgs), then [null,"",0,0] when keys were left out. Capped
 * at NAME_ARGS_PAGE_MAX bytes over all names: past it, names have none. */
enum { NAME_ARGS_PAGE_MAX = 4 << 20 };
static void name_args_json(const Model *m, const PageNames *pn, Buf *b) {
  size_t start = b->len, n = 0;
  for (uint32_t id = 0; id < intern_count(&m->names); id++) {
    const NameArgs *a = model_name_args(m, id);
    if (!a || pn->page_of[id] < 0) continue;
    if (b->len - start > NAME_ARGS_PAGE_MAX) break;
    buf_printf(b, "%s\"%lld\":[", n++ ? "," : "", (long long)pn->page_of[id]);
    for (uint32_t k = 0; k < a->n; k++) {
      buf_puts(b, k ? ",[" : "[");
      json_script_str(b, a->keys[k].key);
      buf_putc(b, ',');
      json_script_str(b, a->keys[k].val);
      buf_printf(b, ",%d,%d]", a->keys[k].varies, a->keys[k].cut);
    }
    if (a->more) buf_puts(b, a->n ? ",[null,\"\",0,0]" : "[null,\"\",0,0]");
    buf_putc(b, ']');
  }
}

static void put_text_asset(Buf *b, const unsigned char *p, size_t n) { buf_add(b, p, n); }

/* What one page shows: the runs, their summaries, the comparison and the
 * source view's data, made by cmd_report and written by page_write. */
typedef struct {
  const char *const *files;
  size_t nfiles;
  const Model *m;
  const Summary *s;
  const SummaryOptions *opt;
  const DiffResult *dr; /* NULL: no comparison */
  char *label_a, *label_b;
  const Buf *src; /* the source view's JSON member, or NULL */
  const char *env; /* env.json's text, or NULL */
  Tl *serve;       /* served mode: the timeline's lanes are kept here, and
                    * page_of (model name -> page name) in *serve_names */
  int64_t **serve_names;
} PageIn;

/* The head, the run's files, and the headings of the views the script fills. */
static void page_head(const PageIn *p, Buf *b) {
  buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"viewport\" content=\"width=device-width\">"
             "<title>nctrace report</title><style>%s", STYLE);
  put_text_asset(b, report_css, report_css_len);
  buf_puts(b, "</style></head><body>\n<h1>nctrace report</h1>\n<div id=\"runhdr\"></div>\n<p class=\"cap\">");
  for (size_t i = 0; i < p->nfiles; i++) {
    if (i) buf_puts(b, ", ");
    buf_puts(b, "<code>");
    buf_html(b, p->files[i]);
    buf_puts(b, "</code>");
  }
  buf_puts(b, "</p>\n<noscript><p>The pictures are drawn by the page's script; the tables below need "
              "none.</p></noscript>\n"
              "<h2>Timeline</h2>\n<div id=\"timeline\" class=\"view\"></div>\n"
              "<h2>Flame chart of range nesting</h2>\n<div id=\"flame\" class=\"view\"></div>\n");
  if (p->src) buf_puts(b, "<h2 id=\"source-h\">Source</h2>\n<div id=\"source\" class=\"view\"></div>\n");
  buf_puts(b, "<h2>Steps and ranks</h2>\n<div id=\"steps\" class=\"view\"></div>\n"
              "<div id=\"ranks\" class=\"view\"></div>\n");
}

/* The tables: the comparison's (diff_doc) and the summary's, with the
 * Nsight Compute / Systems sections of a run directory as summary shows them. */
static void page_tables(const PageIn *p, Buf *b) {
  if (p->dr) {
    buf_puts(b, "<h2>Comparison with <code>");
    buf_html(b, p->label_b);
    buf_puts(b, "</code></h2>\n<div id=\"compare\" class=\"view\"></div>\n<div id=\"compare-tables\">\n");
    Doc cd = {0};
    diff_doc(p->dr, &(DiffLabels){(const char *const *)&p->label_a, 1, (const char *const *)&p->label_b, 1},
             p->opt->top_ranges, &cd);
    doc_write_html(&cd, b);
    doc_free(&cd);
    buf_puts(b, "</div>\n");
  }
  buf_puts(b, "<div id=\"summary\">\n");
  Deep deep = {0};
  if (deep_load(p->m, NULL, 0, NULL, 0, &deep) < 0) { /* reported; the page goes on without them */
    deep_free(&deep);
    deep = (Deep){0};
  }
  Doc doc = {0};
  summary_doc_deep(p->m, p->s, &deep, &doc);
  doc_write_html(&doc, b);
  doc_free(&doc);
  deep_free(&deep);
  buf_puts(b, "</div>\n");
}

/* The pictures' data (the nc-data script the page draws from). */
static void page_data(const PageIn *p, Buf *data) {
  const Model *m = p->m;
  PageNames pn = {0};
  pn.page_of = xmalloc((intern_count(&m->names) + 1) * sizeof *pn.page_of);
  memset(pn.page_of, 0xff, (intern_count(&m->names) + 1) * sizeof *pn.page_of);
  buf_printf(data, "{\"step_glob\":");
  json_script_str(data, p->opt->step_glob);
  buf_putc(data, ',');
  timeline_json(m, p->s, &pn, data, p->serve);
  buf_putc(data, ',');
  flame_json(m, p->s, &pn, data);
  buf_putc(data, ',');
  charts_json(m, p->s, &pn, data);
  if (p->dr) {
    buf_putc(data, ',');
    compare_json(p->dr, p->label_a, p->label_b, data);
  }
  if (p->src) {
    buf_putc(data, ',');
    buf_add(data, p->src->s, p->src->len);
  }
  buf_puts(data, ",\"names\":[");
  for (size_t i = 0; i < pn.strs.n; i++) {
    if (i) buf_putc(data, ',');
    json_script_str(data, pn.strs.v[i]);
  }
  buf_puts(data, "],\"name_args\":{");
  name_args_json(m, &pn, data);
  buf_puts(data, "},\"name_total\":[");
  for (size_t i = 0; i < pn.total.n; i++) buf_printf(data, "%s%lld", i ? "," : "", (long long)pn.total.v[i]);
  buf_puts(data, "]");
  if (p->serve) {
    /* the page asks the server for the windows its levels group (serve.h) */
    buf_printf(data, ",\"serve\":{\"api\":\"events\",\"lanes\":%zu}", p->serve->lanes.n);
    *p->serve_names = pn.page_of;
  } else free(pn.page_of);
  buf_putc(data, '}');
  vec_free(&pn.strs);
  for (size_t i = 0; i < pn.extra.n; i++) free(pn.extra.v[i]);
  vec_free(&pn.extra);
  vec_free(&pn.total);
}

/* The whole page into b. */
static void page_write(const PageIn *p, Buf *b) {
  page_head(p, b);
  page_tables(p, b);
  Buf data = {0};
  page_data(p, &data);
  buf_puts(b, "<script type=\"application/json\" id=\"nc-data\">");
  buf_add(b, data.s, data.len);
  buf_puts(b, "</script>\n");
  buf_free(&data);
  if (p->env) {
    buf_puts(b, "<script type=\"application/json\" id=\"nc-env\">");
    buf_puts(b, p->env);
    buf_puts(b, "</script>\n");
  }
  buf_puts(b, "<script>");
  put_text_asset(b, report_js, report_js_len);
  buf_puts(b, "</script>\n</body></html>\n");
}

/* The served mode: a window index per lane of the page's timeline
 * (window.h), then serve.h's loop until SIGINT/SIGTERM; frees tl's lanes. */
static int serve_page(const Model *m, Tl *tl, const int64_t *page_names, const Buf *page, int port) {
  size_t n = tl->lanes.n;
  WinLane *w = xcalloc(n ? n : 1, sizeof *w);
  int64_t *shift = xcalloc(n ? n : 1, sizeof *shift);
  for (size_t i = 0; i < n; i++) {
    const Lane *l = &tl->lanes.v[i];
    win_build(&w[i], m->traces.v[l->trace], l->ev.v, l->ev.n);
    shift[i] = l->off - tl->t0;
  }
  ServeSite site = {page->s, page->len, w, n, shift, page_names};
  int rc = serve_run(&site, port) < 0 ? 1 : 0;
  for (size_t i = 0; i < n; i++) win_free(&w[i]);
  tl_free(tl);
  free(w);
  free(shift);
  return rc;
}

int cmd_report(int argc, char **argv) {
  Model m = {0}, mb = {0};
  SummaryOptions opt = {"ProfilerStep#*", 20, 20};
  const char *out = NULL, *shadow = NULL;
  VEC(const char *) files = {0};
  VEC(const char *) cmp = {0};
  bool serve = false;
  size_t port = 0;
  int rc = 1;
  for (int i = 1; i < argc; i++) {
    const char *v;
    switch (opt_next("report", argc, argv, &i, &v)) {
    case REP_OUT: out = v; break;
    case REP_TOP:
      if (!opt_count("report", "--top", v, &opt.top_ranges)) {
        rc = 2;
        goto done;
      }
      opt.top_kernels = opt.top_ranges;
      break;
    case REP_STEP: opt.step_glob = v; break;
    case REP_COMPARE: vec_push(&cmp, v); break;
    case REP_SHADOW: shadow = v; break;
    case REP_SERVE: serve = true; break;
    case REP_PORT:
      if (!parse_count(v, &port) || port > 65535) {
        nct_error("report: --port takes a port number (0..65535; 0: any free one), not '%s'", v);
        rc = 2;
        goto done;
      }
      break;
    case OPT_ARG: vec_push(&files, argv[i]); break;
    default: rc = 2; goto done;
    }
  }
  if (!files.n || (!out && !serve)) {
    rc = usage_error("report", NULL);
    goto done;
  }
  if (out && serve) {
    rc = usage_error("report", "report: -o writes the one-file page, --serve serves it: choose one");
    goto done;
  }
  m.keep_args = true; /* the hover shows what a name's args say */
  for (size_t i = 0; i < files.n; i++)
    if (model_load(&m, files.v[i]) < 0) goto done;
  model_check_ranks(&m);
  {
    /* traces from several hosts: one clock (clocks.h) for the timeline */
    ClockAlign ca = {0};
    for (size_t i = 0; i < m.traces.n; i++) clock_collect(&ca, &m, i);
    clock_align(&ca, &m);
    Buf note = {0};
    clock_align_text(&ca, &note);
    for (char *l = note.s, *e; l && *l; l = e + 1) {
      e = strchr(l, '\n');
      *e = 0;
      nct_note("report: %s", l);
    }
    buf_free(&note);
    clock_align_free(&ca);
  }
  for (size_t i = 0; i < cmp.n; i++)
    if (model_load(&mb, cmp.v[i]) < 0) goto done;
  if (cmp.n) model_check_ranks(&mb);
  Summary s, sb;
  summary_compute(&m, &opt, &s);
  DiffResult dr = {0};
  PageIn page = {files.v, files.n, &m, &s, &opt, cmp.n ? &dr : NULL, run_label(files.v, files.n),
                 cmp.n ? run_label(cmp.v, cmp.n) : NULL, NULL, NULL, NULL, NULL};
  if (cmp.n) {
    summary_compute(&mb, &opt, &sb);
    diff_compute(&(DiffRun){&m, &s}, 1, &(DiffRun){&mb, &sb}, 1, &dr);
  }
  /* the source view: the shadow tree's manifest, the user's files */
  char *env_raw = NULL, *env = env_json_text(files.v[0], &env_raw);
  Buf src = {0};
  if (source_json(&m, &s, shadow, env_raw, SOURCE_MAX_BYTES, &src)) page.src = &src;
  source_unranged(&m, &s, shadow, env_raw); /* the summary's "What the trace cannot see" */
  free(env_raw);
  page.env = env;
  Buf b = {0};
  Tl tl = {0};
  int64_t *page_names = NULL;
  if (serve) page.serve = &tl, page.serve_names = &page_names;
  page_write(&page, &b);
  if (serve) rc = serve_page(&m, &tl, page_names, &b, (int)port);
  else rc = out_write_file(out, &b) < 0 ? 1 : 0;
  free(page_names);
  buf_free(&b);
  buf_free(&src);
  free(env);
  summary_free(&s);
  if (cmp.n) {
    diff_free(&dr);
    summary_free(&sb);
  }
  free(page.label_a);
  free(page.label_b);
done:
  vec_free(&files);
  vec_free(&cmp);
  model_free(&m);
  model_free(&mb);
  return rc;
}
