/* report: `nctrace report` -- one self-contained HTML page: pictures drawn
 * here as inline SVG (a timeline of the top ranges and kernels, a flame
 * chart of range nesting, per-step and per-rank bar charts) followed by the
 * summary document (render.c) written as HTML by doc_write_html, the same
 * document `nctrace summary` writes as Markdown. No script, no external
 * resource: the page renders the same offline, in a browser or a headless
 * one. The page is built in one Buf the command owns and frees. */
#include "render.h"
#include "commands.h"
#include "deep_section.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LABEL_W = 220, TRACK_W = 1000, ROW_H = 16, MAX_RECTS = 20000, MAX_NODES = 200000, MAX_DEPTH = 48 };

static void color_of(Buf *b, const char *name) {
  uint64_t h = hash_bytes(name, strlen(name));
  buf_printf(b, "hsl(%u,60%%,%u%%)", (unsigned)(h % 360), 45 + (unsigned)((h >> 16) % 20));
}

/* ---- timeline ---- */

static void rect(Buf *b, double x, double y, double w, double h, const char *name, int64_t dur) {
  if (w < 0.5) w = 0.5;
  buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"", x, y, w, h);
  color_of(b, name);
  buf_puts(b, "\"><title>");
  buf_html(b, name);
  buf_puts(b, " (");
  buf_us(b, dur);
  buf_puts(b, " us)</title></rect>");
}

static int cmp_i64_desc(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x > y ? -1 : x < y;
}

/* Mark in top[] the 8 range names with the most time in trace t (summed
 * durations, launch calls left out) and the 8 GPU op names likewise. */
static void top_names(const Model *m, const Trace *t, bool *top, int64_t *sum) {
  size_t nn = intern_count(&m->names);
  for (int gpu = 0; gpu < 2; gpu++) {
    memset(sum, 0, nn * sizeof *sum);
    for (size_t i = 0; i < t->ev.n; i++) {
      const Ev *e = &t->ev.v[i];
      bool want = gpu ? kind_is_gpu_op(e->kind)
                      : kind_is_cpu_range(e->kind) && e->kind != K_CUDA_RUNTIME && e->kind != K_CUDA_DRIVER;
      if (want) sum[e->name] += e->dur + 1; /* +1: zero-length ranges still count */
    }
    VEC(int64_t) v = {0};
    for (size_t i = 0; i < nn; i++)
      if (sum[i]) vec_push(&v, sum[i]);
    if (!v.n) continue;
    qsort(v.v, v.n, sizeof *v.v, cmp_i64_desc);
    int64_t cut = v.v[v.n < 8 ? v.n - 1 : 7];
    size_t taken = 0;
    for (size_t i = 0; i < nn && taken < 8; i++)
      if (sum[i] >= cut && sum[i]) top[i] = true, taken++;
    vec_free(&v);
  }
}

static void timeline(const Model *m, const Summary *s, Buf *b) {
  size_t nn = intern_count(&m->names);
  bool *top = xcalloc(nn, sizeof *top);
  int64_t *sum = xcalloc(nn, sizeof *sum);
  Buf body = {0}, tmp = {0};
  double y = 4;
  size_t drawn = 0, skipped = 0;
  for (size_t ti = 0; ti < m->traces.n && ti < 8; ti++) {
    const Trace *t = m->traces.v[ti];
    memset(top, 0, nn * sizeof *top);
    top_names(m, t, top, sum);
    VEC(uint32_t) idx = {0};
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (size_t i = 0; i < t->ev.n; i++) {
      const Ev *e = &t->ev.v[i];
      if (!top[e->name] || !(kind_is_cpu_range(e->kind) || kind_is_gpu_op(e->kind))) continue;
      if (e->kind == K_CUDA_RUNTIME || e->kind == K_CUDA_DRIVER) continue;
      vec_push(&idx, (uint32_t)i);
      if (e->ts < t0) t0 = e->ts;
      if (e->ts + e->dur > t1) t1 = e->ts + e->dur;
    }
    if (!idx.n) continue;
    trace_sort_by_thread(t, idx.v, idx.n);
    double scale = t1 > t0 ? TRACK_W / (double)(t1 - t0) : 1.0;
    buf_printf(&body, "<text x=\"4\" y=\"%.1f\" class=\"rank\">rank %lld: ", y + 12,
               (long long)s->ranks.v[ti].rank);
    buf_ms(&body, t1 - t0);
    buf_puts(&body, " ms shown</text>\n");
    y += 18;
    /* one band per thread, nested ranges one level lower each */
    int64_t ends[8];
    for (size_t a = 0; a < idx.n;) {
      uint32_t th = t->ev.v[idx.v[a]].thread;
      size_t z = a;
      while (z < idx.n && t->ev.v[idx.v[z]].thread == th) z++;
      tmp.len = 0;
      model_thread_label(m, t, th, &tmp);
      buf_printf(&body, "<text x=\"4\" y=\"%.1f\" class=\"lbl\">", y + 12);
      buf_html(&body, tmp.s);
      buf_puts(&body, "</text>");
      int depth = 0, maxd = 0;
      for (size_t k = a; k < z; k++) {
        const Ev *e = &t->ev.v[idx.v[k]];
        while (depth && ends[depth - 1] <= e->ts) depth--;
        if (depth == 8) {
          skipped++;
          continue;
        }
        ends[depth] = e->ts + e->dur;
        if (depth + 1 > maxd) maxd = depth + 1;
        if (drawn >= MAX_RECTS) {
          skipped++;
          depth++;
          continue;
        }
        rect(&body, LABEL_W + (double)(e->ts - t0) * scale, y + 1 + depth * ROW_H, (double)e->dur * scale,
             ROW_H - 2, intern_str(&m->names, e->name), e->dur);
        drawn++;
        depth++;
      }
      buf_putc(&body, '\n');
      y += maxd * ROW_H + 4;
      a = z;
    }
    y += 6;
    vec_free(&idx);
  }
  buf_printf(b, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\">\n",
             LABEL_W + TRACK_W + 10, y + 4);
  buf_add(b, body.s ? body.s : "", body.len);
  buf_puts(b, "</svg>\n");
  buf_printf(b, "<p class=\"cap\">Per rank, the 8 range names and 8 GPU op names with the most time; "
             "nested ranges drawn one level lower; %zu boxes drawn", drawn);
  if (skipped) buf_printf(b, ", %zu more left out", skipped);
  buf_puts(b, ". Hover a box for its name and duration.</p>\n");
  buf_free(&body);
  buf_free(&tmp);
  free(top);
  free(sum);
}

/* ---- flame chart (call paths aggregated over all threads and ranks) ---- */

typedef struct {
  uint32_t parent, name;
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
static const Model *g_model;

static int cmp_kid(const void *a, const void *b) {
  const Node *x = &g_nodes->v[*(const uint32_t *)a], *y = &g_nodes->v[*(const uint32_t *)b];
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return strcmp(intern_str(&g_model->names, x->name), intern_str(&g_model->names, y->name));
}

static void draw_node(const Model *m, Nodes *ns, uint32_t id, double x, double scale, int depth, Buf *b,
                      size_t *drawn) {
  Node *nd = &ns->v[id];
  double w = (double)nd->total * scale;
  if (id != 0) {
    if (w < 0.3 || depth > MAX_DEPTH) return;
    const char *name = intern_str(&m->names, nd->name);
    double y = (depth - 1) * (ROW_H + 1);
    buf_printf(b, "<g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"", x, y, w, ROW_H);
    color_of(b, name);
    buf_puts(b, "\"><title>");
    buf_html(b, name);
    buf_puts(b, " (");
    buf_ms(b, nd->total);
    buf_puts(b, " ms)</title></rect>");
    if (w > 40) {
      size_t fit = (size_t)(w / 7);
      char label[256];
      snprintf(label, sizeof label, "%.*s", (int)(fit < 255 ? fit : 255), name);
      buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"fl\">", x + 3, y + 12);
      buf_html(b, label);
      buf_puts(b, "</text>");
    }
    buf_puts(b, "</g>\n");
    (*drawn)++;
  }
  g_nodes = ns;
  g_model = m;
  if (nd->kids.n > 1) qsort(nd->kids.v, nd->kids.n, sizeof *nd->kids.v, cmp_kid);
  double cx = x;
  for (size_t i = 0; i < ns->v[id].kids.n; i++) {
    uint32_t k = ns->v[id].kids.v[i];
    draw_node(m, ns, k, cx, scale, depth + 1, b, drawn);
    cx += (double)ns->v[k].total * scale;
  }
}

static void flame(const Model *m, Buf *b) {
  Nodes ns = {0};
  I64Map idx = {0};
  Node root = {0, 0, 0, {0}};
  vec_push(&ns, root);
  int maxdepth = 0;
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
      uint32_t node = ns.n < MAX_NODES ? child_of(&ns, &idx, parent, e->name) : parent;
      ns.v[node].total += end - e->ts;
      if (!st.n) ns.v[0].total += end - e->ts;
      Fr f = {end, node};
      vec_push(&st, f);
      if ((int)st.n > maxdepth) maxdepth = (int)st.n;
    }
    vec_free(&st);
    vec_free(&r);
  }
  if (maxdepth > MAX_DEPTH) maxdepth = MAX_DEPTH;
  Buf body = {0};
  size_t drawn = 0;
  if (ns.v[0].total > 0) draw_node(m, &ns, 0, 0, TRACK_W / (double)ns.v[0].total, 0, &body, &drawn);
  buf_printf(b, "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n",
             TRACK_W + 10, maxdepth * (ROW_H + 1) + 4);
  buf_add(b, body.s ? body.s : "", body.len);
  buf_puts(b, "</svg>\n<p class=\"cap\">Range nesting, all threads and ranks together: each box is a call "
              "path, its width the path's total time (");
  buf_ms(b, ns.v[0].total);
  buf_printf(b, " ms of top-level ranges), children under their parent, widest first; %zu boxes.</p>\n", drawn);
  buf_free(&body);
  for (size_t i = 0; i < ns.n; i++) vec_free(&ns.v[i].kids);
  vec_free(&ns);
  i64map_free(&idx);
}

/* ---- bar charts ---- */

static void bars(const Model *m, const Summary *s, Buf *b) {
  (void)m;
  if (s->steps.n) {
    size_t n = s->steps.n < 200 ? s->steps.n : 200;
    int64_t mx = 1;
    for (size_t i = 0; i < n; i++) mx = s->steps.v[i].dur > mx ? s->steps.v[i].dur : mx;
    double bw = (double)TRACK_W / (double)n;
    int H = 160;
    buf_printf(b, "<svg id=\"steps\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n",
               TRACK_W + 60, H + 30);
    for (size_t i = 0; i < n; i++) {
      const StepRow *st = &s->steps.v[i];
      double h = (double)st->dur / (double)mx * H, g = (double)(st->gpu < st->dur ? st->gpu : st->dur) / (double)mx * H;
      buf_printf(b, "<rect class=\"step\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#7a9cc6\">"
                 "<title>rank %lld %s: ", 50 + i * bw, H - h + 5, bw * 0.8, h,
                 (long long)s->ranks.v[st->trace].rank, intern_str(&m->names, st->name));
      buf_ms(b, st->dur);
      buf_puts(b, " ms, GPU ");
      buf_ms(b, st->gpu);
      buf_printf(b, " ms</title></rect><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                 "fill=\"#2f5d8a\"/>\n", 50 + i * bw, H - g + 5, bw * 0.8, g);
    }
    buf_puts(b, "<text x=\"0\" y=\"15\" class=\"lbl\">");
    buf_ms(b, mx);
    buf_printf(b, " ms</text><text x=\"50\" y=\"%d\" class=\"lbl\">steps in order (ranks one after "
               "another); dark: GPU time attributed to the step</text></svg>\n", H + 25);
  } else {
    buf_puts(b, "<p>No steps (ranges named ProfilerStep#N, or --step GLOB) in these traces.</p>\n");
  }
  /* per rank: CPU span, GPU busy, compute, idle */
  int64_t mx = 1;
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    int64_t v[4] = {r->cpu_last - r->cpu_first, r->busy, r->compute, r->idle};
    for (int k = 0; k < 4; k++) mx = v[k] > mx ? v[k] : mx;
  }
  static const char *const LBL[4] = {"CPU span", "GPU busy", "compute", "GPU idle"};
  static const char *const COL[4] = {"#999", "#2f5d8a", "#3c9a5f", "#d08c2f"};
  size_t nr = s->ranks.n < 64 ? s->ranks.n : 64;
  int rowh = 4 * 12 + 10;
  buf_printf(b, "<svg id=\"ranks\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\">\n",
             LABEL_W + TRACK_W + 10, nr * (size_t)rowh + 30);
  for (size_t i = 0; i < nr; i++) {
    const RankRow *r = &s->ranks.v[i];
    int64_t v[4] = {r->cpu_last - r->cpu_first, r->busy, r->compute, r->idle};
    double y = (double)i * rowh + 4;
    buf_printf(b, "<text x=\"4\" y=\"%.1f\" class=\"rank\">rank %lld</text>", y + 26, (long long)r->rank);
    for (int k = 0; k < 4; k++) {
      double w = (double)v[k] / (double)mx * TRACK_W;
      buf_printf(b, "<rect class=\"rankbar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"10\" fill=\"%s\">"
                 "<title>rank %lld %s: ", LABEL_W, y + k * 12, w, COL[k], (long long)r->rank, LBL[k]);
      buf_ms(b, v[k]);
      buf_puts(b, " ms</title></rect>");
    }
    buf_putc(b, '\n');
  }
  buf_printf(b, "<text x=\"%d\" y=\"%zu\" class=\"lbl\">", LABEL_W, nr * (size_t)rowh + 20);
  for (int k = 0; k < 4; k++) buf_printf(b, "<tspan fill=\"%s\">&#9632; %s </tspan>", COL[k], LBL[k]);
  buf_puts(b, "</text></svg>\n");
}

static const char STYLE[] =
  "body{font:14px/1.4 sans-serif;margin:24px;color:#222;max-width:1300px}"
  "table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:2px 6px}"
  "th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}"
  "svg{display:block;margin:8px 0;background:#fafafa;border:1px solid #ddd}"
  ".lbl{font:11px sans-serif;fill:#333}.rank{font:bold 12px sans-serif}.fl{font:11px monospace;fill:#000;"
  "pointer-events:none}.cap{color:#555;font-size:12px}code{background:#f0f0f0}";

int cmd_report(int argc, char **argv) {
  Model m = {0};
  SummaryOptions opt = {"ProfilerStep#*", 20, 20};
  const char *out = NULL;
  VEC(const char *) files = {0};
  int rc = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(a, "--top") && i + 1 < argc) opt.top_ranges = opt.top_kernels = (size_t)atol(argv[++i]);
    else if (!strcmp(a, "--step") && i + 1 < argc) opt.step_glob = argv[++i];
    else if (a[0] == '-' && a[1]) {
      nct_error("report: unknown or incomplete option '%s'", a);
      rc = 2;
      goto done;
    } else vec_push(&files, a);
  }
  if (!files.n || !out) {
    nct_error("usage: nctrace report TRACE... -o report.html [--top N] [--step GLOB]");
    rc = 2;
    goto done;
  }
  for (size_t i = 0; i < files.n; i++)
    if (model_load(&m, files.v[i]) < 0) goto done;
  model_check_ranks(&m);
  Summary s;
  summary_compute(&m, &opt, &s);
  Buf b = {0};
  buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<title>nctrace report</title><style>%s</style></head><body>\n", STYLE);
  buf_puts(&b, "<h1>nctrace report</h1>\n<p>");
  for (size_t i = 0; i < files.n; i++) {
    if (i) buf_puts(&b, ", ");
    buf_puts(&b, "<code>");
    buf_html(&b, files.v[i]);
    buf_puts(&b, "</code>");
  }
  buf_puts(&b, "</p>\n<h2>Timeline of the top ranges and kernels</h2>\n");
  timeline(&m, &s, &b);
  buf_puts(&b, "<h2>Flame chart of range nesting</h2>\n");
  flame(&m, &b);
  buf_puts(&b, "<h2>Steps and ranks</h2>\n");
  bars(&m, &s, &b);
  buf_puts(&b, "<div id=\"summary\">\n");
  /* the Nsight Compute / Systems sections of a run directory, as summary shows them */
  Deep deep = {0};
  if (deep_load(&m, NULL, 0, NULL, 0, &deep) < 0) { /* reported; the page goes on without them */
    deep_free(&deep);
    deep = (Deep){0};
  }
  Doc doc = {0};
  summary_doc_deep(&m, &s, &deep, &doc);
  doc_write_html(&doc, &b);
  doc_free(&doc);
  deep_free(&deep);
  buf_puts(&b, "</div>\n</body></html>\n");
  rc = out_write_file(out, &b) < 0 ? 1 : 0;
  buf_free(&b);
  summary_free(&s);
done:
  vec_free(&files);
  model_free(&m);
  return rc;
}
