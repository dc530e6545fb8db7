/* diff_render: the comparison of two sides as a document and as JSON
 * (diff_render.h). Every delta is B - A; a percentage is of A, and a name
 * A lacks has no percentage ("new"). Each change carries its noise
 * verdict: "significant", "within noise" or "unknown", its p-value and
 * the half-width of its 95 % interval. */
#include "diff_render.h"
#include "json.h"

#include <math.h>
#include <stdio.h>

static size_t shown(size_t n, size_t top) { return top && top < n ? top : n; }

/* A signed time: "+1.234", "-0.500", "0.000". */
static void signed_ms(Buf *b, int64_t ns) {
  if (ns > 0) buf_putc(b, '+');
  buf_ms(b, ns);
}

/* "+1.234 (+12.5%)", "+1.234 (new)", "0.000" when nothing changed from 0. */
static void delta_cell(Buf *b, int64_t a, int64_t v) {
  double pct;
  signed_ms(b, v - a);
  if (diff_pct(a, v, &pct)) buf_printf(b, " (%+.1f%%)", pct);
  else if (v) buf_puts(b, " (new)");
}

/* a ns figure of the statistics (doubles) as a time */
static int64_t ns_of(double v) { return (int64_t)llround(v); }

/* "<0.001", "0.412"; "-" when unknown */
static void p_text(Buf *b, const NoiseVerdict *v) {
  if (v->sig == SIG_UNKNOWN) buf_puts(b, "-");
  else if (v->p < 0.001) buf_puts(b, "<0.001");
  else buf_printf(b, "%.3f", v->p);
}

/* the 95 % interval's half-width, ms: "±1.234"; "-" when unknown */
static void ci_text(Buf *b, const NoiseVerdict *v) {
  if (v->sig == SIG_UNKNOWN) buf_puts(b, "-");
  else {
    buf_puts(b, "±");
    buf_ms(b, ns_of((v->hi - v->lo) / 2));
  }
}

/* mean counts over several runs are fractional as per-step ones are */
static void count_text(Buf *b, const DiffResult *d, double c) {
  if (d->per_step || d->a.runs > 1 || d->b.runs > 1) buf_printf(b, "%.2f", c);
  else buf_printf(b, "%.0f", c);
}

static const char *in_text(uint8_t in) { return in == DIFF_IN_A ? "A" : in == DIFF_IN_B ? "B" : "both"; }

static void run_line(Doc *d, const char *which, const char *const *labels, size_t n, const DiffRunInfo *r) {
  doc_item(d);
  buf_puts(doc_span(d, SPAN_BOLD), which);
  buf_puts(doc_span(d, SPAN_PLAIN), ": ");
  if (n > 1) buf_printf(doc_span(d, SPAN_PLAIN), "%zu runs (", n);
  for (size_t i = 0; i < n; i++) {
    if (i) buf_puts(doc_span(d, SPAN_PLAIN), ", ");
    buf_puts(doc_span(d, SPAN_CODE), labels[i]);
  }
  buf_printf(doc_span(d, SPAN_PLAIN), "%s, %zu trace file(s), %zu rank(s), %llu step(s)", n > 1 ? ")" : "", r->files,
             r->ranks, (unsigned long long)r->steps);
}

/* What the rows are: totals, or per step and why. */
static void unit_para(Doc *doc, const DiffResult *d) {
  Buf *p = doc_para(doc);
  if (d->per_step) {
    buf_printf(p, "The step counts differ (A %llu, B %llu, ranges named ", (unsigned long long)d->a.steps,
               (unsigned long long)d->b.steps);
    buf_puts(doc_span(doc, SPAN_CODE), d->step_glob);
    buf_puts(doc_span(doc, SPAN_PLAIN), "): every count and time below is per step, each run's total divided by "
             "its step count.");
  } else if (d->a.steps && d->b.steps) {
    if (d->a.runs == 1 && d->b.runs == 1)
      buf_printf(p, "Both runs have %llu step(s): counts and times below are totals.", (unsigned long long)d->a.steps);
    else
      buf_printf(p, "Every run has %llu step(s): counts and times below are totals.",
                 (unsigned long long)(d->a.steps / d->a.runs));
  } else {
    buf_printf(p, "%s steps (ranges named ", d->a.steps || d->b.steps ? "Only one run has" : "Neither run has");
    buf_puts(doc_span(doc, SPAN_CODE), d->step_glob);
    buf_puts(doc_span(doc, SPAN_PLAIN), "; see --step): counts and times below are totals, not per step.");
  }
  if (d->a.ranks != d->b.ranks)
    buf_printf(doc_span(doc, SPAN_PLAIN), " The runs have different rank counts (%zu and %zu): the totals sum "
               "over each run's ranks.", d->a.ranks, d->b.ranks);
  if (d->a.runs > 1 || d->b.runs > 1)
    buf_printf(doc_span(doc, SPAN_PLAIN), " Each side's figures are the mean over its runs (A %zu, B %zu).",
               d->a.runs, d->b.runs);
}

/* How the verdicts were reached, and what would make them trustworthy. */
static void noise_para(Doc *doc, const DiffResult *d) {
  Buf *p = doc_para(doc);
  if (d->a.runs > 1 && d->b.runs > 1) {
    buf_puts(p, "Noise: each change is tested against the run-to-run spread of each side's runs (Welch's t-test, "
             "two-sided, 95 %): \"significant\" when p < 0.05, else \"within noise\".");
    return;
  }
  buf_puts(p, "Noise: with one run per side, each change is tested against the spread of the name's per-call "
           "durations (Welch's t-test on inclusive time, GPU time for kernels; two-sided, 95 %): \"significant\" "
           "when p < 0.05, else \"within noise\"; a name called once in a run has no spread (\"unknown\"). It "
           "assumes independent calls and cannot see what slows a whole run (a loaded machine): for a trustworthy "
           "answer give several runs per side, ");
  buf_puts(doc_span(doc, SPAN_CODE), "nctrace diff A1 A2 A3 -- B1 B2 B3");
  buf_puts(doc_span(doc, SPAN_PLAIN), ".");
}

/* "p < 0.001", "p = 0.412" */
static void p_phrase(Buf *b, const NoiseVerdict *v) {
  if (v->p < 0.001) buf_puts(b, "p < 0.001");
  else buf_printf(b, "p = %.3f", v->p);
}

/* The overview's verdict: "significant (p < 0.001)", "within noise (p = 0.412)", "unknown". */
static void verdict_cell(Buf *b, const NoiseVerdict *v) {
  buf_puts(b, significance_name(v->sig));
  if (v->sig == SIG_UNKNOWN) return;
  buf_puts(b, " (");
  p_phrase(b, v);
  buf_puts(b, ")");
}

static void overview_row(Doc *d, const char *figure, int64_t a, int64_t b, const NoiseVerdict *v) {
  doc_row(d);
  buf_puts(doc_cell(d), figure);
  buf_ms(doc_cell(d), a);
  buf_ms(doc_cell(d), b);
  delta_cell(doc_cell(d), a, b);
  verdict_cell(doc_cell(d), v);
}

/* A run without steps has no mean step: "-", not a step of 0 ms. */
static void mean_step_one_sided(Doc *doc, const DiffResult *d) {
  doc_row(doc);
  buf_puts(doc_cell(doc), "mean step");
  if (d->a.steps) buf_ms(doc_cell(doc), d->a.step_mean);
  else buf_puts(doc_cell(doc), "-");
  if (d->b.steps) buf_ms(doc_cell(doc), d->b.step_mean);
  else buf_puts(doc_cell(doc), "-");
  buf_puts(doc_cell(doc), "-");
  buf_puts(doc_cell(doc), "-");
}

/* A total that moved within its noise is no evidence either way: say so
 * in words, not only in a cell. */
static void overview_verdicts(Doc *doc, const DiffResult *d) {
  const NoiseVerdict *v[3] = {&d->step_noise, &d->self_noise, &d->gpu_noise};
  const char *what[3] = {"mean step", "self time of all ranges", "GPU op time"};
  /* only figures both sides have and that moved */
  bool has[3] = {d->a.steps && d->b.steps && d->a.step_mean != d->b.step_mean, d->a.range_self != d->b.range_self,
                 d->a.gpu_total != d->b.gpu_total};
  size_t n = 0;
  for (int i = 0; i < 3; i++) n += has[i] && v[i]->sig == SIG_NOISE;
  if (!n) return;
  Buf *p = doc_para(doc);
  buf_puts(p, "Within noise: ");
  size_t k = 0;
  for (int i = 0; i < 3; i++) {
    if (!has[i] || v[i]->sig != SIG_NOISE) continue;
    buf_printf(p, "%s%s (", k++ ? ", " : "", what[i]);
    p_phrase(p, v[i]);
    buf_puts(p, ")");
  }
  buf_printf(p, ": %s no evidence that B is faster or slower.", n > 1 ? "these changes are" : "this change is");
}

static void overview(Doc *doc, const DiffResult *d, const DiffLabels *lb) {
  doc_heading(doc, 1, "Run comparison");
  doc_list(doc, false);
  run_line(doc, "A", lb->a, lb->na, &d->a);
  run_line(doc, "B", lb->b, lb->nb, &d->b);
  unit_para(doc, d);
  noise_para(doc, d);
  doc_table(doc, "lrrrl", "figure", "A ms", "B ms", "change ms (B - A)", "noise");
  if (d->a.steps && d->b.steps) overview_row(doc, "mean step", d->a.step_mean, d->b.step_mean, &d->step_noise);
  else if (d->a.steps || d->b.steps) mean_step_one_sided(doc, d);
  overview_row(doc, "self time of all ranges", d->a.range_self, d->b.range_self, &d->self_noise);
  overview_row(doc, "GPU op time", d->a.gpu_total, d->b.gpu_total, &d->gpu_noise);
  overview_verdicts(doc, d);
}

static void rows_para(Doc *doc, const DiffRows *rows, size_t only_a, size_t only_b, size_t top, const char *what,
                      const char *by, const char *tested) {
  buf_printf(doc_para(doc), "Top %zu of %zu %s names: significant changes first, then unknown, then within noise, "
             "each group by the size of the change (the largest |B - A| of %s). %zu only in A, %zu only in B "
             "(column \"in\"). Change: B - A in ms, in %% of A (\"new\": A has none). Noise: the verdict on the "
             "change of %s, its p-value and the half-width of its 95 %% interval in ms.",
             shown(rows->n, top), rows->n, what, by, only_a, only_b, tested);
}

static void ranges_section(Doc *doc, const DiffResult *d, size_t top) {
  doc_heading(doc, 2, d->per_step ? "Ranges, per step" : "Ranges");
  rows_para(doc, &d->ranges, d->only_a[0], d->only_b[0], top, "range", "inclusive, exclusive and GPU time",
            "inclusive time");
  doc_table(doc, "lllrrrrrrrrrrrrr", "range", "in", "noise", "p", "±95% ms", "count A", "count B", "incl A ms",
            "incl B ms", "incl change", "excl A ms", "excl B ms", "excl change", "GPU A ms", "GPU B ms",
            "GPU change");
  for (size_t i = 0; i < shown(d->ranges.n, top); i++) {
    const DiffRow *r = &d->ranges.v[i];
    doc_row(doc);
    buf_puts(doc_cell(doc), r->name);
    buf_puts(doc_cell(doc), in_text(r->in));
    buf_puts(doc_cell(doc), significance_name(r->noise.sig));
    p_text(doc_cell(doc), &r->noise);
    ci_text(doc_cell(doc), &r->noise);
    count_text(doc_cell(doc), d, r->a.count);
    count_text(doc_cell(doc), d, r->b.count);
    buf_ms(doc_cell(doc), r->a.incl);
    buf_ms(doc_cell(doc), r->b.incl);
    delta_cell(doc_cell(doc), r->a.incl, r->b.incl);
    buf_ms(doc_cell(doc), r->a.excl);
    buf_ms(doc_cell(doc), r->b.excl);
    delta_cell(doc_cell(doc), r->a.excl, r->b.excl);
    buf_ms(doc_cell(doc), r->a.gpu);
    buf_ms(doc_cell(doc), r->b.gpu);
    delta_cell(doc_cell(doc), r->a.gpu, r->b.gpu);
  }
}

static void kernels_section(Doc *doc, const DiffResult *d, size_t top) {
  doc_heading(doc, 2, d->per_step ? "Kernels, per step" : "Kernels");
  if (!d->kernels.n) {
    buf_puts(doc_para(doc), "No GPU ops (kernels, copies, memsets) in either run.");
    return;
  }
  rows_para(doc, &d->kernels, d->only_a[1], d->only_b[1], top, "GPU op", "GPU time", "GPU time");
  doc_table(doc, "lllrrrrrrr", "kernel", "in", "noise", "p", "±95% ms", "count A", "count B", "GPU A ms",
            "GPU B ms", "GPU change");
  for (size_t i = 0; i < shown(d->kernels.n, top); i++) {
    const DiffRow *r = &d->kernels.v[i];
    doc_row(doc);
    buf_puts(doc_cell(doc), r->name);
    buf_puts(doc_cell(doc), in_text(r->in));
    buf_puts(doc_cell(doc), significance_name(r->noise.sig));
    p_text(doc_cell(doc), &r->noise);
    ci_text(doc_cell(doc), &r->noise);
    count_text(doc_cell(doc), d, r->a.count);
    count_text(doc_cell(doc), d, r->b.count);
    buf_ms(doc_cell(doc), r->a.gpu);
    buf_ms(doc_cell(doc), r->b.gpu);
    delta_cell(doc_cell(doc), r->a.gpu, r->b.gpu);
  }
}

void diff_doc(const DiffResult *d, const DiffLabels *lb, size_t top, Doc *doc) {
  overview(doc, d, lb);
  ranges_section(doc, d, top);
  kernels_section(doc, d, top);
}

/* ---- JSON ---- */

/* a double of the statistics, or null */
static void jnum(Buf *b, const char *k, const char *fmt, double v) {
  json_key(b, k);
  if (isfinite(v)) buf_printf(b, fmt, v);
  else buf_puts(b, "null");
  buf_putc(b, ',');
}

static void jus_d(Buf *b, const char *k, double ns) {
  if (isfinite(ns)) json_us(b, k, ns_of(ns));
  else {
    json_key(b, k);
    buf_puts(b, "null,");
  }
}

void diff_json_noise(Buf *b, const NoiseVerdict *v) {
  buf_printf(b, "\"significance\":\"%s\",\"noise_method\":\"%s\",", significance_key(v->sig),
             noise_method_name(v->method));
  jnum(b, "p_value", "%.6g", v->p);
  jnum(b, "confidence_pct", "%.3f", isfinite(v->p) ? 100 * (1 - v->p) : NAN);
  jus_d(b, "ci95_low_us", v->lo);
  jus_d(b, "ci95_high_us", v->hi);
  jnum(b, "effect_size", "%.3f", v->effect);
}

static void jverdict(Buf *b, const char *k, const NoiseVerdict *v) {
  json_key(b, k);
  buf_putc(b, '{');
  diff_json_noise(b, v);
  json_end(b, '}');
  buf_putc(b, ',');
}
/* "<k>_a_us", "<k>_b_us", "<k>_delta_us", "<k>_delta_pct" (null: A is 0). */
static void jtime(Buf *b, const char *k, int64_t a, int64_t v) {
  double pct;
  buf_printf(b, "\"%s_a_us\":", k);
  buf_us(b, a);
  buf_printf(b, ",\"%s_b_us\":", k);
  buf_us(b, v);
  buf_printf(b, ",\"%s_delta_us\":", k);
  buf_us(b, v - a);
  buf_printf(b, ",\"%s_delta_pct\":", k);
  if (diff_pct(a, v, &pct)) buf_printf(b, "%.3f,", pct);
  else buf_puts(b, "null,");
}

static void jrun(Buf *b, const char *k, const char *const *labels, size_t n, const DiffRunInfo *r) {
  json_key(b, k);
  buf_putc(b, '{');
  json_key(b, "path");
  buf_json_string(b, labels[0]);
  buf_puts(b, ",\"paths\":[");
  for (size_t i = 0; i < n; i++) {
    if (i) buf_putc(b, ',');
    buf_json_string(b, labels[i]);
  }
  buf_printf(b, "],\"runs\":%zu,\"files\":%zu,\"ranks\":%zu,\"steps\":%llu,", r->runs, r->files, r->ranks,
             (unsigned long long)r->steps);
  json_us(b, "step_mean_us", r->step_mean);
  json_us(b, "range_self_us", r->range_self);
  json_us(b, "gpu_total_us", r->gpu_total);
  json_end(b, '}');
  buf_putc(b, ',');
}

static void jrows(Buf *b, const char *k, const DiffRows *rows, size_t only_a, size_t only_b, size_t top,
                  bool ranges) {
  json_key(b, k);
  buf_printf(b, "{\"names\":%zu,\"only_a\":%zu,\"only_b\":%zu,\"rows\":[", rows->n, only_a, only_b);
  for (size_t i = 0; i < shown(rows->n, top); i++) {
    const DiffRow *r = &rows->v[i];
    buf_putc(b, '{');
    json_key(b, "name");
    buf_json_string(b, r->name);
    buf_printf(b, ",\"in\":\"%s\",\"instances_a\":%llu,\"instances_b\":%llu,\"count_a\":%.3f,\"count_b\":%.3f,",
               r->in == DIFF_IN_A ? "a" : r->in == DIFF_IN_B ? "b" : "both",
               (unsigned long long)r->count_a, (unsigned long long)r->count_b, r->a.count, r->b.count);
    if (ranges) {
      jtime(b, "inclusive", r->a.incl, r->b.incl);
      jtime(b, "exclusive", r->a.excl, r->b.excl);
    }
    jtime(b, "gpu", r->a.gpu, r->b.gpu);
    buf_printf(b, "\"tested\":\"%s\",", ranges ? "inclusive" : "gpu");
    diff_json_noise(b, &r->noise);
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_puts(b, "},");
}

void diff_json(const DiffResult *d, const DiffLabels *lb, size_t top, Buf *b) {
  buf_putc(b, '{');
  jrun(b, "a", lb->a, lb->na, &d->a);
  jrun(b, "b", lb->b, lb->nb, &d->b);
  buf_printf(b, "\"per_step\":%s,", d->per_step ? "true" : "false");
  json_key(b, "noise");
  buf_putc(b, '{');
  jverdict(b, "mean_step", &d->step_noise);
  jverdict(b, "range_self", &d->self_noise);
  jverdict(b, "gpu_total", &d->gpu_noise);
  json_end(b, '}');
  buf_putc(b, ',');
  json_key(b, "step_glob");
  buf_json_string(b, d->step_glob);
  buf_putc(b, ',');
  jrows(b, "ranges", &d->ranges, d->only_a[0], d->only_b[0], top, true);
  jrows(b, "kernels", &d->kernels, d->only_a[1], d->only_b[1], top, false);
  json_end(b, '}');
  buf_putc(b, '\n');
}
