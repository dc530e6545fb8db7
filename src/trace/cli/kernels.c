/* kernels: `nctrace kernels` -- the GPU kernels launched inside ranges
 * whose name matches a glob (core/kernels.h), as Markdown, JSON, or the
 * tab-separated text ncrun --ncu reads to choose what to profile.
 *
 * The tsv is an interface (src/runtime/ncrun/deep.c parses it): comment
 * lines first, "# ranges\t<instances>\t<start/end instances>", then
 * "# range\t<name>" per matching name, or, when no range matched,
 * "# seen\t<name>" for the 20 range names with the most inclusive time;
 * then the header "kernel\tcount\ttotal_ns" and one row per kernel (top N).
 * In names, backslash, tab, newline and carriage return are written
 * "\\", "\t", "\n", "\r". Change it only together with ncrun. */
#include "commands.h"
#include "doc.h"
#include "kernels.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SEEN_LISTED = 20 };

static void tsv_name(Buf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '\\': buf_puts(b, "\\\\"); break;
    case '\t': buf_puts(b, "\\t"); break;
    case '\n': buf_puts(b, "\\n"); break;
    case '\r': buf_puts(b, "\\r"); break;
    default: buf_putc(b, *s);
    }
  }
}

static size_t shown(size_t n, size_t top) { return top && top < n ? top : n; }

static void write_tsv(const Model *m, const RangeKernels *k, size_t top, Buf *b) {
  buf_printf(b, "# ranges\t%llu\t%llu\n", (unsigned long long)k->instances, (unsigned long long)k->async_instances);
  for (size_t i = 0; i < k->ranges.n; i++) {
    buf_puts(b, "# range\t");
    tsv_name(b, intern_str(&m->names, k->ranges.v[i]));
    buf_putc(b, '\n');
  }
  for (size_t i = 0; i < k->seen.n && i < SEEN_LISTED; i++) {
    buf_puts(b, "# seen\t");
    tsv_name(b, intern_str(&m->names, k->seen.v[i]));
    buf_putc(b, '\n');
  }
  buf_puts(b, "kernel\tcount\ttotal_ns\n");
  for (size_t i = 0; i < shown(k->kernels.n, top); i++) {
    const RangeKernelRow *r = &k->kernels.v[i];
    tsv_name(b, intern_str(&m->names, r->name));
    buf_printf(b, "\t%llu\t%lld\n", (unsigned long long)r->count, (long long)r->total);
  }
}

static void jus(Buf *b, const char *key, int64_t ns) {
  buf_printf(b, "\"%s\":", key);
  buf_us(b, ns);
}

static void write_json(const Model *m, const RangeKernels *k, const char *glob, size_t top, Buf *b) {
  buf_puts(b, "{\"range\":");
  buf_json_string(b, glob);
  buf_printf(b, ",\"instances\":%llu,\"async_instances\":%llu,\"ranges\":[", (unsigned long long)k->instances,
             (unsigned long long)k->async_instances);
  for (size_t i = 0; i < k->ranges.n; i++) {
    if (i) buf_putc(b, ',');
    buf_json_string(b, intern_str(&m->names, k->ranges.v[i]));
  }
  buf_puts(b, "],\"seen\":[");
  for (size_t i = 0; i < k->seen.n && i < SEEN_LISTED; i++) {
    if (i) buf_putc(b, ',');
    buf_json_string(b, intern_str(&m->names, k->seen.v[i]));
  }
  buf_printf(b, "],\"kernel_names\":%zu,\"inside_count\":%llu,", k->kernels.n, (unsigned long long)k->inside_count);
  jus(b, "inside_total_us", k->inside_total);
  buf_printf(b, ",\"all_count\":%llu,", (unsigned long long)k->all_count);
  jus(b, "all_total_us", k->all_total);
  buf_printf(b, ",\"unlaunched\":%llu,\"kernels\":[", (unsigned long long)k->unlaunched);
  for (size_t i = 0; i < shown(k->kernels.n, top); i++) {
    const RangeKernelRow *r = &k->kernels.v[i];
    buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
    buf_json_string(b, intern_str(&m->names, r->name));
    buf_printf(b, ",\"count\":%llu,", (unsigned long long)r->count);
    jus(b, "total_us", r->total);
    buf_putc(b, ',');
    jus(b, "mean_us", r->total / (int64_t)r->count);
    buf_putc(b, '}');
  }
  buf_puts(b, "]}\n");
}

/* A list of names as code spans: "`a`, `b`". */
static void code_list(Doc *d, const Model *m, const uint32_t *names, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) buf_puts(doc_span(d, SPAN_PLAIN), ", ");
    buf_puts(doc_span(d, SPAN_CODE), intern_str(&m->names, names[i]));
  }
}

static void write_md(const Model *m, const RangeKernels *k, const char *glob, size_t top, Buf *b) {
  Doc d = {0};
  doc_heading(&d, 1, "Kernels launched inside ranges");
  buf_puts(doc_para(&d), "Ranges matching ");
  buf_puts(doc_span(&d, SPAN_CODE), glob);
  Buf *p = doc_span(&d, SPAN_PLAIN);
  if (!k->instances) {
    buf_puts(p, ": none, so no kernel is inside one.");
    if (k->seen.n) {
      buf_printf(doc_para(&d), "Ranges seen (%zu of %zu names, by inclusive time): ", shown(k->seen.n, SEEN_LISTED),
                 k->seen.n);
      code_list(&d, m, k->seen.v, shown(k->seen.n, SEEN_LISTED));
      buf_puts(doc_span(&d, SPAN_PLAIN), ".");
    } else {
      buf_puts(doc_para(&d), "The traces have no CPU ranges.");
    }
  } else {
    buf_printf(p, ": %llu instance(s)", (unsigned long long)k->instances);
    if (k->async_instances) buf_printf(p, " (%llu start/end)", (unsigned long long)k->async_instances);
    buf_printf(p, " of %zu name(s): ", k->ranges.n);
    code_list(&d, m, k->ranges.v, k->ranges.n);
    buf_puts(doc_span(&d, SPAN_PLAIN), ".");
    if (!k->kernels.n) {
      buf_puts(doc_para(&d), "No kernel was launched inside them.");
    } else {
      p = doc_para(&d);
      buf_printf(p, "Top %zu of %zu kernel names by GPU time: %llu launch(es), ", shown(k->kernels.n, top),
                 k->kernels.n, (unsigned long long)k->inside_count);
      buf_ms(p, k->inside_total);
      buf_puts(p, " ms of the traces' ");
      buf_ms(p, k->all_total);
      buf_printf(p, " ms of kernel time (%.1f%%).",
                 k->all_total > 0 ? 100.0 * (double)k->inside_total / (double)k->all_total : 0.0);
      doc_table(&d, "lrrrr", "kernel", "count", "total ms", "mean us", "share");
      for (size_t i = 0; i < shown(k->kernels.n, top); i++) {
        const RangeKernelRow *r = &k->kernels.v[i];
        doc_row(&d);
        buf_puts(doc_cell(&d), intern_str(&m->names, r->name));
        buf_printf(doc_cell(&d), "%llu", (unsigned long long)r->count);
        buf_ms(doc_cell(&d), r->total);
        buf_us(doc_cell(&d), r->total / (int64_t)r->count);
        buf_printf(doc_cell(&d), "%.1f%%",
                   k->inside_total > 0 ? 100.0 * (double)r->total / (double)k->inside_total : 0.0);
      }
    }
  }
  if (k->unlaunched)
    buf_printf(doc_para(&d), "%llu kernel(s) have no launch call in the traces: they are inside no range.",
               (unsigned long long)k->unlaunched);
  doc_write_md(&d, b);
  doc_free(&d);
}

int cmd_kernels(int argc, char **argv) {
  Model m = {0};
  const char *glob = "*", *format = "md", *out = "-";
  size_t top = 20;
  VEC(const char *) files = {0};
  int rc = 1;
  for (int i = 1; i < argc; i++) {
    const char *v;
    switch (opt_next("kernels", argc, argv, &i, &v)) {
    case KER_RANGE: glob = v; break;
    case KER_FORMAT: format = v; break;
    case KER_OUT: out = v; break;
    case KER_TOP:
      if (!opt_count("kernels", "--top", v, &top)) {
        rc = 2;
        goto done;
      }
      break;
    case OPT_ARG: vec_push(&files, argv[i]); break;
    default: rc = 2; goto done;
    }
  }
  if (!files.n || (strcmp(format, "md") && strcmp(format, "tsv") && strcmp(format, "json"))) {
    rc = usage_error("kernels", NULL);
    goto done;
  }
  for (size_t i = 0; i < files.n; i++)
    if (model_load(&m, files.v[i]) < 0) goto done;
  RangeKernels k;
  range_kernels(&m, glob, &k);
  Buf b = {0};
  if (!strcmp(format, "tsv")) write_tsv(&m, &k, top, &b);
  else if (!strcmp(format, "json")) write_json(&m, &k, glob, top, &b);
  else write_md(&m, &k, glob, top, &b);
  rc = out_write_file(out, &b) < 0 ? 1 : 0;
  buf_free(&b);
  range_kernels_free(&k);
done:
  vec_free(&files);
  model_free(&m);
  return rc;
}
