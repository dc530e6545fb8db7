/* render: the Summary as a document (doc.h: headings, paragraphs, tables,
 * lists, which `summary` writes as Markdown and `report` as HTML) and as
 * nCompass-shaped JSON ({"markdown", "structured": {"operations",
 * "bottlenecks", "recommendations", ...}}). Times: milliseconds with three
 * decimals in the document, microseconds with three decimals in JSON
 * (exact: both come from integer nanoseconds). Names go into the document
 * as plain text, never as markup: a kernel named "k<float**>" is a cell
 * with those characters, which each writer escapes as its format needs. */
#include "json.h"
#include "render.h"
#include "deep_section.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef VEC(char *) Notes;

static void kinds_text(uint32_t mask, Buf *b) {
  bool first = true;
  for (int k = 0; k < K_COUNT; k++) {
    if (!(mask & (1u << k))) continue;
    if (!first) buf_putc(b, '/');
    buf_puts(b, k == K_NONE ? "range" : kind_name(k));
    first = false;
  }
}

/* A range row of a name ncrt throttled in some trace: its count and times
 * are of the recorded calls only. */
static bool row_throttled(const Model *m, const RangeRow *r) {
  for (size_t i = 0; r->merged <= 1 && i < m->traces.n; i++) {
    const Throttled *th = trace_throttled(m->traces.v[i], r->name);
    /* measured: ncrt timed its later calls, and the row holds them */
    if (th && !th->measured) return true;
  }
  return false;
}

/* A row of a name ncrt throttled whose unrecorded calls it timed (in
 * every trace that throttled it): its figures are of all calls. */
static bool row_measured(const Model *m, const RangeRow *r) {
  bool any = false;
  for (size_t i = 0; r->merged <= 1 && i < m->traces.n; i++) {
    const Throttled *th = trace_throttled(m->traces.v[i], r->name);
    if (th && !th->measured) return false;
    any |= th != NULL;
  }
  return any;
}

static bool any_unmeasured(const Model *m) {
  for (size_t i = 0; i < m->traces.n; i++)
    for (size_t k = 0; k < m->traces.v[i]->throttled.n; k++)
      if (!m->traces.v[i]->throttled.v[k].measured) return true;
  return false;
}

/* A throttled row's calls in all, from the traces' totals: exact for one
 * trace; over several, the recorded count plus each trace's calls after
 * its decision. -1 when no trace says. */
static int64_t row_total_calls(const Model *m, const RangeRow *r) {
  int64_t extra = 0;
  bool known = false;
  for (size_t i = 0; r->merged <= 1 && i < m->traces.n; i++) {
    const Throttled *th = trace_throttled(m->traces.v[i], r->name);
    if (!th || th->total_calls < 0) continue;
    if (m->traces.n == 1) return th->total_calls > (int64_t)r->count ? th->total_calls : (int64_t)r->count;
    extra += th->total_calls - th->calls;
    known = true;
  }
  return known ? (int64_t)r->count + (extra > 0 ? extra : 0) : -1;
}

/* Recorded figures scaled to all calls: an estimate (the unrecorded calls
 * are assumed to cost what the recorded ones did on average). */
static int64_t scaled(int64_t v, uint64_t recorded, int64_t total) {
  return recorded && total > 0 ? (int64_t)llround((double)v * (double)total / (double)recorded) : v;
}

static bool any_throttled(const Model *m) {
  for (size_t i = 0; i < m->traces.n; i++)
    if (m->traces.v[i]->throttled.n) return true;
  return false;
}

/* One note per throttled name: the trace holds its first calls only, so
 * the count shown is not how often it ran. */
static void throttled_note(const Model *m, const Trace *t, const Throttled *th, Buf *b) {
  if (th->measured) {
    buf_printf(b, "%s: ncrt throttled %s after %lld calls (mean %.3f us then): its later calls were counted and "
               "timed but not recorded as ranges, so its figures here are of all its %lld calls (measured, not "
               "estimated) while the timeline shows the first %lld only.", t->path, intern_str(&m->names, th->name),
               (long long)th->calls, th->avg_us, (long long)th->total_calls, (long long)th->calls);
    return;
  }
  buf_printf(b, "%s: ncrt throttled %s after %lld calls (mean %.3f us then): its later calls were not recorded, "
             "so its count and times here are of the recorded calls only; ", t->path,
             intern_str(&m->names, th->name), (long long)th->calls, th->avg_us);
  if (th->total_calls >= 0) buf_printf(b, "it was called %lld times in all.", (long long)th->total_calls);
  else buf_puts(b, "the trace does not say how often it was called in all.");
}

static void collect_notes(const Model *m, const Summary *s, Notes *out) {
  Buf b = {0};
#define NOTE() do { vec_push(out, b.s); memset(&b, 0, sizeof b); } while (0)
  for (size_t i = 0; i < m->traces.n; i++) {
    const Trace *t = m->traces.v[i];
    const LoadNotes *n = &t->notes;
    for (size_t k = 0; k < t->throttled.n; k++) {
      throttled_note(m, t, &t->throttled.v[k], &b);
      NOTE();
    }
    if (t->budget_hit_ts >= 0) {
      buf_printf(&b, "%s: recording stopped at %.3f ms (trace time): the run's disk budget (%.1f MiB of records, "
                 "ncrun --disk-budget) was reached; what the program did after that is not in the trace.", t->path,
                 (double)t->budget_hit_ts / 1e6, (double)t->budget_bytes / (1 << 20));
      NOTE();
    }
    if (t->legacy) {
      buf_printf(&b, "%s: legacy layout (a bare array of events, no categories): every complete event "
                 "is taken as a CPU range; there is no GPU data.", t->path);
      NOTE();
    }
    if (n->malformed) {
      buf_printf(&b, "%s: %llu malformed event(s) skipped (first: %s).", t->path,
                 (unsigned long long)n->malformed, n->first_malformed);
      NOTE();
    }
    if (n->negative) {
      buf_printf(&b, "%s: %llu event(s) with a negative duration skipped (first: %s).", t->path,
                 (unsigned long long)n->negative, n->first_negative);
      NOTE();
    }
    if (n->unknown_cat) {
      buf_printf(&b, "%s: %llu event(s) of unknown categories (", t->path, (unsigned long long)n->unknown_cat);
      for (size_t k = 0; k < n->unknown_cats.n; k++)
        buf_printf(&b, "%s%s", k ? ", " : "", intern_str(&m->names, n->unknown_cats.v[k]));
      buf_puts(&b, ") taken as CPU ranges.");
      NOTE();
    }
    if (n->unmatched_end || n->unclosed_begin) {
      buf_printf(&b, "%s: %llu \"E\" event(s) without a \"B\" and %llu \"B\" without an \"E\" ignored.", t->path,
                 (unsigned long long)n->unmatched_end, (unsigned long long)n->unclosed_begin);
      NOTE();
    }
    if (n->cuda_sync) {
      buf_printf(&b, "%s: %llu cuda_sync event(s) are not counted as GPU work.", t->path,
                 (unsigned long long)n->cuda_sync);
      NOTE();
    }
  }
  if (s->clipped) {
    buf_printf(&b, "%llu range(s) started inside another range on the same thread but ended after it; "
               "each is counted in its parent only up to the parent's end.", (unsigned long long)s->clipped);
    NOTE();
  }
  if (s->async_ranges) {
    buf_printf(&b, "%llu start/end range(s) (args \"start/end\") may overlap other ranges: they are kept out of "
               "the nesting, so each one's exclusive time is its whole duration and it is nobody's child; "
               "they are not in the self-time total.", (unsigned long long)s->async_ranges);
    NOTE();
  }
  if (s->unattributed_gpu) {
    buf_printf(&b, "%llu GPU op(s) have no launching runtime call in the trace; their time is in the "
               "GPU figures but attributed to no range.", (unsigned long long)s->unattributed_gpu);
    NOTE();
  }
  if (s->stream_overlaps) {
    buf_printf(&b, "%llu GPU op(s) start before the previous op on the same stream ended (ops on one "
               "stream run in order; the trace's clocks disagree): overlapping time is counted once.",
               (unsigned long long)s->stream_overlaps);
    NOTE();
  }
  if (s->zero_ranges) {
    buf_printf(&b, "%llu range(s) have zero duration; they are counted but add no time.",
               (unsigned long long)s->zero_ranges);
    NOTE();
  }
#undef NOTE
}

static void free_notes(Notes *n) {
  for (size_t i = 0; i < n->n; i++) free(n->v[i]);
  vec_free(n);
}

static bool has_gpu(const Summary *s) {
  for (size_t i = 0; i < s->ranks.n; i++)
    if (s->ranks.v[i].gpu_ops) return true;
  return false;
}

static const char *step_label(const Model *m, const StepRow *st) { return intern_str(&m->names, st->name); }

/* ---- the document: one function per section, in the order they appear ---- */

static void pct_cell(Buf *b, int64_t a, int64_t tot) {
  buf_ms(b, a);
  buf_printf(b, " (%.1f%%)", tot > 0 ? 100.0 * (double)a / (double)tot : 0.0);
}

static void stats_cells(Doc *d, const Stats *st) {
  buf_printf(doc_cell(d), "%llu", (unsigned long long)st->count);
  buf_ms(doc_cell(d), st->mean);
  buf_ms(doc_cell(d), st->median);
  buf_ms(doc_cell(d), st->min);
  buf_ms(doc_cell(d), st->max);
  buf_ms(doc_cell(d), st->std);
}

static size_t shown(size_t n, size_t top) { return n < top ? n : top; }

static void files_section(Doc *d, const Model *m, const Summary *s) {
  uint64_t events = 0;
  for (size_t i = 0; i < s->ranks.n; i++) events += s->ranks.v[i].events;
  doc_heading(d, 1, "Trace summary");
  buf_printf(doc_para(d), "%zu trace file(s), %llu events.", m->traces.n, (unsigned long long)events);
  doc_table(d, "lrlrrr", "file", "rank", "layout", "events", "CPU ranges", "GPU ops");
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    const Trace *t = m->traces.v[r->trace];
    doc_row(d);
    buf_puts(doc_cell(d), t->path);
    buf_printf(doc_cell(d), "%lld%s", (long long)r->rank, r->is_rank ? "" : " (helper process)");
    buf_puts(doc_cell(d), t->legacy ? "legacy" : "Kineto");
    buf_printf(doc_cell(d), "%llu", (unsigned long long)r->events);
    buf_printf(doc_cell(d), "%llu", (unsigned long long)r->ranges);
    buf_printf(doc_cell(d), "%llu", (unsigned long long)r->gpu_ops);
  }
}

static void operations_section(Doc *d, const Model *m, const Summary *s) {
  doc_heading(d, 2, "Operations");
  buf_printf(doc_para(d), "Top %zu of %zu range names by inclusive CPU time. Inclusive time counts "
             "the outermost instance of a name only (recursion is not double-counted); exclusive time is "
             "the range minus its direct children; GPU is the time of GPU ops launched inside.",
             shown(s->ranges.n, s->opt.top_ranges), s->ranges.n);
  if (any_throttled(m) && !any_unmeasured(m))
    buf_puts(doc_span(d, SPAN_PLAIN), " Names ncrt throttled (it stopped recording their ranges after many "
             "calls) have the figures of all their calls: ncrt still counted and timed the calls it did not "
             "record, and took their time out of the ranges around them (see the notes).");
  else if (any_throttled(m))
    buf_puts(doc_span(d, SPAN_PLAIN), " A count ending in + is of a name ncrt throttled (stopped recording): "
             "it ran more often than recorded (see the notes); where the trace says how often, the count is "
             "all its calls and the times marked ~ are estimates (the recorded calls' mean times all calls).");
  doc_table(d, "llrrrrrr", "range", "kind", "count", "inclusive ms", "exclusive ms", "GPU ms", "mean ms", "max ms");
  for (size_t i = 0; i < s->ranges.n && i < s->opt.top_ranges; i++) {
    const RangeRow *r = &s->ranges.v[i];
    doc_row(d);
    buf_puts(doc_cell(d), range_row_name(m, s, r));
    kinds_text(r->kinds, doc_cell(d));
    int64_t total = row_throttled(m, r) ? row_total_calls(m, r) : -1;
    if (total >= 0) {
      buf_printf(doc_cell(d), "%lld (%llu recorded)", (long long)total, (unsigned long long)r->count);
      Buf *c = doc_cell(d);
      buf_putc(c, '~');
      buf_ms(c, scaled(r->incl, r->count, total));
      c = doc_cell(d);
      buf_putc(c, '~');
      buf_ms(c, scaled(r->excl, r->count, total));
    } else {
      buf_printf(doc_cell(d), "%llu%s", (unsigned long long)r->count, row_throttled(m, r) ? "+" : "");
      buf_ms(doc_cell(d), r->incl);
      buf_ms(doc_cell(d), r->excl);
    }
    buf_ms(doc_cell(d), r->gpu);
    buf_ms(doc_cell(d), r->count ? r->sum / (int64_t)r->count : 0);
    buf_ms(doc_cell(d), r->max);
  }
}

static void kernels_section(Doc *d, const Model *m, const Summary *s) {
  doc_heading(d, 2, "Top kernels");
  buf_printf(doc_para(d), "Top %zu of %zu GPU op names by total time.", shown(s->kernels.n, s->opt.top_kernels),
             s->kernels.n);
  doc_table(d, "llrrrrrr", "kernel", "class", "count", "total ms", "mean us", "min us", "max us", "std us");
  for (size_t i = 0; i < s->kernels.n && i < s->opt.top_kernels; i++) {
    const KernelRow *k = &s->kernels.v[i];
    doc_row(d);
    buf_puts(doc_cell(d), intern_str(&m->names, k->name));
    buf_puts(doc_cell(d), class_name(k->cls));
    buf_printf(doc_cell(d), "%llu", (unsigned long long)k->count);
    buf_ms(doc_cell(d), k->total);
    buf_us(doc_cell(d), llround(k->mean));
    buf_us(doc_cell(d), k->min);
    buf_us(doc_cell(d), k->max);
    buf_us(doc_cell(d), llround(sqrt(k->m2 / (double)k->count)));
  }
}

static void temporal_section(Doc *d, const Summary *s) {
  doc_heading(d, 2, "Temporal breakdown");
  buf_puts(doc_para(d), "Per rank, over the GPU span (first GPU op start to last GPU op end): busy is the union "
           "of all GPU ops, compute the union of computation kernels, non-compute the rest of busy "
           "(communication, copies), idle the span minus busy.");
  doc_table(d, "rrrrrr", "rank", "GPU span ms", "busy ms", "compute ms", "non-compute ms", "idle ms");
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    if (!r->gpu_ops) continue;
    doc_row(d);
    buf_printf(doc_cell(d), "%lld", (long long)r->rank);
    buf_ms(doc_cell(d), r->gpu_span);
    pct_cell(doc_cell(d), r->busy, r->gpu_span);
    pct_cell(doc_cell(d), r->compute, r->gpu_span);
    pct_cell(doc_cell(d), r->noncompute, r->gpu_span);
    pct_cell(doc_cell(d), r->idle, r->gpu_span);
  }
}

static void streams_section(Doc *d, const Model *m, const Summary *s) {
  doc_heading(d, 2, "Idle time per stream");
  buf_puts(doc_para(d), "Gaps between consecutive ops on a stream. Host wait: the next op was launched after "
           "the previous one ended (the GPU waited for the CPU). Kernel wait: a gap of at most 30 us "
           "otherwise (launch overhead). Other: longer gaps (dependencies on other streams, "
           "synchronisation).");
  doc_table(d, "rlrrrrrr", "rank", "stream", "ops", "span ms", "idle ms", "host wait ms", "kernel wait ms",
            "other ms");
  for (size_t i = 0; i < s->streams.n; i++) {
    const StreamRow *r = &s->streams.v[i];
    doc_row(d);
    buf_printf(doc_cell(d), "%lld", (long long)s->ranks.v[r->trace].rank);
    model_thread_label(m, m->traces.v[r->trace], r->thread, doc_cell(d));
    buf_printf(doc_cell(d), "%llu", (unsigned long long)r->ops);
    buf_ms(doc_cell(d), r->span);
    buf_ms(doc_cell(d), r->idle);
    buf_ms(doc_cell(d), r->host_wait);
    buf_ms(doc_cell(d), r->kernel_wait);
    buf_ms(doc_cell(d), r->other);
  }
}

/* The five launches that waited longest for the GPU (their list ends at
 * the first without a delay). */
static void worst_launches(Doc *d, const Model *m, const Summary *s) {
  const LaunchStats *l = &s->launch;
  if (!l->nworst || l->worst[0].delay <= 0) return;
  buf_puts(doc_para(d), "Longest delays:");
  doc_table(d, "rlrrr", "rank", "call", "at ms", "call us", "delay us");
  for (size_t i = 0; i < l->nworst && l->worst[i].delay; i++) {
    doc_row(d);
    buf_printf(doc_cell(d), "%lld", (long long)s->ranks.v[l->worst[i].trace].rank);
    buf_puts(doc_cell(d), intern_str(&m->names, l->worst[i].name));
    buf_ms(doc_cell(d), l->worst[i].ts);
    buf_us(doc_cell(d), l->worst[i].cpu);
    buf_us(doc_cell(d), l->worst[i].delay);
  }
}

static void launches_section(Doc *d, const Model *m, const Summary *s) {
  const LaunchStats *l = &s->launch;
  doc_heading(d, 2, "Kernel launches");
  if (!l->count) {
    buf_puts(doc_para(d), "No launch calls (cudaLaunchKernel, cudaMemcpyAsync, ...) matched to GPU ops.");
    return;
  }
  Buf *p = doc_para(d);
  buf_printf(p, "%llu launch calls matched to their GPU op by correlation id", (unsigned long long)l->count);
  if (l->unmatched) buf_printf(p, " (%llu without a GPU op)", (unsigned long long)l->unmatched);
  buf_puts(p, ". Launch delay = GPU start - (call start + call duration), floored at 0.");
  doc_table(d, "lrrr", "figure", "mean us", "max us", "outliers");
  doc_row(d);
  buf_puts(doc_cell(d), "CPU launch call");
  buf_us(doc_cell(d), l->cpu_total / (int64_t)l->count);
  buf_us(doc_cell(d), l->cpu_max);
  buf_printf(doc_cell(d), "%llu over 50 us", (unsigned long long)l->cpu_outliers);
  doc_row(d);
  buf_puts(doc_cell(d), "launch delay");
  buf_us(doc_cell(d), l->delay_total / (int64_t)l->count);
  buf_us(doc_cell(d), l->delay_max);
  buf_printf(doc_cell(d), "%llu over 100 us", (unsigned long long)l->delay_outliers);
  worst_launches(d, m, s);
}

static void comm_section(Doc *d, const Summary *s) {
  doc_heading(d, 2, "Communication vs computation");
  bool any_comm = false;
  for (size_t i = 0; i < s->ranks.n; i++) any_comm |= s->ranks.v[i].comm > 0;
  if (!any_comm) {
    buf_puts(doc_para(d), "No communication kernels (nccl*).");
    return;
  }
  buf_puts(doc_para(d), "Overlap = time when communication and computation kernels run at once / "
           "communication time.");
  doc_table(d, "rrrrr", "rank", "communication ms", "computation ms", "overlapped ms", "overlap");
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    if (!r->gpu_ops) continue;
    doc_row(d);
    buf_printf(doc_cell(d), "%lld", (long long)r->rank);
    buf_ms(doc_cell(d), r->comm);
    buf_ms(doc_cell(d), r->compute);
    buf_ms(doc_cell(d), r->overlap);
    buf_printf(doc_cell(d), "%.1f%%", r->comm > 0 ? 100.0 * (double)r->overlap / (double)r->comm : 0.0);
  }
}

static void copies_section(Doc *d, const Summary *s) {
  uint64_t ncopies = 0;
  for (int k = 0; k < COPY_KINDS; k++) ncopies += s->copies[k].count;
  doc_heading(d, 2, "Memory copies");
  if (!ncopies) {
    buf_puts(doc_para(d), "No memory copies or memsets on the GPU.");
  } else {
    buf_puts(doc_para(d), "Bandwidth = bytes / summed duration of the copies.");
    doc_table(d, "lrrrr", "kind", "count", "bytes", "time ms", "GB/s");
    for (int k = 0; k < COPY_KINDS; k++) {
      const CopyRow *c = &s->copies[k];
      if (!c->count) continue;
      doc_row(d);
      buf_puts(doc_cell(d), copy_kind_name(k));
      buf_printf(doc_cell(d), "%llu", (unsigned long long)c->count);
      buf_printf(doc_cell(d), "%lld", (long long)c->bytes);
      buf_ms(doc_cell(d), c->time);
      if (c->time > 0) buf_printf(doc_cell(d), "%.3f", (double)c->bytes / (double)c->time);
      else buf_puts(doc_cell(d), "-");
    }
  }
  if (s->sync_copies || s->sync_calls) {
    Buf *p = doc_para(d);
    buf_printf(p, "Synchronous host calls: %llu memcpy (", (unsigned long long)s->sync_copies);
    buf_ms(p, s->sync_copy_time);
    buf_printf(p, " ms), %llu synchronize (", (unsigned long long)s->sync_calls);
    buf_ms(p, s->sync_time);
    buf_puts(p, " ms).");
  }
}

static void annotations_section(Doc *d, const Model *m, const Summary *s) {
  if (!s->gpu_annotations.n) return;
  doc_heading(d, 2, "GPU user annotations");
  buf_puts(doc_para(d), "Spans from the first to the last GPU op of an annotation, per stream.");
  doc_table(d, "lrrr", "annotation", "count", "total ms", "max ms");
  for (size_t i = 0; i < s->gpu_annotations.n && i < s->opt.top_ranges; i++) {
    const RangeRow *r = &s->gpu_annotations.v[i];
    doc_row(d);
    buf_puts(doc_cell(d), intern_str(&m->names, r->name));
    buf_printf(doc_cell(d), "%llu", (unsigned long long)r->count);
    buf_ms(doc_cell(d), r->incl);
    buf_ms(doc_cell(d), r->max);
  }
}

/* Every GPU section, or one line saying there are none. */
static void gpu_sections(Doc *d, const Model *m, const Summary *s) {
  if (!has_gpu(s)) {
    doc_heading(d, 2, "GPU");
    buf_puts(doc_para(d), "No GPU ops (kernels, copies, memsets) in these traces: the GPU sections are left out.");
    return;
  }
  kernels_section(d, m, s);
  temporal_section(d, s);
  streams_section(d, m, s);
  launches_section(d, m, s);
  comm_section(d, s);
  copies_section(d, s);
  annotations_section(d, m, s);
}

enum { STEPS_LISTED = 64 }; /* steps listed one by one; the rest are counted */

static void steps_section(Doc *d, const Model *m, const Summary *s) {
  if (!s->steps.n) return;
  doc_heading(d, 2, "Steps");
  Buf *p = doc_para(d);
  buf_puts(p, "Ranges named ");
  buf_puts(doc_span(d, SPAN_CODE), s->opt.step_glob);
  buf_puts(doc_span(d, SPAN_PLAIN), ", per rank (durations in ms).");
  doc_table(d, "rrrrrrr", "rank", "steps", "mean", "median", "min", "max", "std");
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    if (!r->steps.count) continue;
    doc_row(d);
    buf_printf(doc_cell(d), "%lld", (long long)r->rank);
    stats_cells(d, &r->steps);
  }
  doc_table(d, "rrlrrr", "rank", "#", "step", "start ms", "duration ms", "GPU ms");
  size_t idx = 0;
  for (size_t i = 0; i < s->steps.n && i < STEPS_LISTED; i++) {
    const StepRow *st = &s->steps.v[i];
    idx = i && s->steps.v[i - 1].trace == st->trace ? idx + 1 : 0; /* the step's index on its rank */
    doc_row(d);
    buf_printf(doc_cell(d), "%lld", (long long)s->ranks.v[st->trace].rank);
    buf_printf(doc_cell(d), "%zu", idx);
    buf_puts(doc_cell(d), step_label(m, st));
    buf_ms(doc_cell(d), st->ts);
    buf_ms(doc_cell(d), st->dur);
    buf_ms(doc_cell(d), st->gpu);
  }
  if (s->steps.n > STEPS_LISTED) buf_printf(doc_para(d), "(%zu more steps not listed.)", s->steps.n - STEPS_LISTED);
}

/* "rank 0", or "rank 0 dataloader worker (worker 1 of 2), pid 123" for a
 * helper process of that rank */
static void process_text(const Model *m, const RankRow *r, Buf *b) {
  const ProcInfo *p = &m->traces.v[r->trace]->proc;
  buf_printf(b, "rank %lld", (long long)r->rank);
  if (!p->known) return;
  if (!r->is_rank || (p->role && strcmp(p->role, "main") && strcmp(p->role, "rank")))
    buf_printf(b, " %s", p->role ? p->role : "process");
  if (p->detail && *p->detail) buf_printf(b, " (%s)", p->detail);
  buf_printf(b, ", pid %lld", (long long)p->pid);
}

/* Processes grouped under their rank (its main process first), each with
 * its life and how much of it the ranges cover (analyze.h, Coverage). */
static int cmp_proc_row(const void *pa, const void *pb, void *ctx) {
  const Summary *s = ctx;
  const RankRow *a = &s->ranks.v[*(const size_t *)pa], *b = &s->ranks.v[*(const size_t *)pb];
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  if (a->is_rank != b->is_rank) return a->is_rank ? -1 : 1;
  return (a->trace > b->trace) - (a->trace < b->trace);
}

static void coverage_section(Doc *d, const Model *m, const Summary *s) {
  doc_heading(d, 2, "Processes and coverage");
  buf_printf(doc_para(d), "%zu process(es) in %zu rank(s). Per process: its wall time (from its start to the "
             "program's end), the share inside ranges (the union of top-level ranges of all threads), and the "
             "time in no range: before the first range (start-up, imports), in gaps between top-level ranges, "
             "and after the last one (shutdown). Profiler exit is the collector writing the trace after the "
             "program ended: it is ours, not the program's. A time marked * is from the first or last event "
             "(the trace does not say when the process started or ended).",
             s->ranks.n, s->nranks);
  doc_table(d, "lllrrrrrr", "process", "file", "started by", "wall ms", "in ranges ms", "before first ms",
            "gaps ms", "after last ms", "profiler exit ms");
  size_t *order = xmalloc((s->ranks.n ? s->ranks.n : 1) * sizeof *order);
  for (size_t i = 0; i < s->ranks.n; i++) order[i] = i;
  qsort_r(order, s->ranks.n, sizeof *order, cmp_proc_row, (void *)s);
  for (size_t k = 0; k < s->ranks.n; k++) {
    const RankRow *r = &s->ranks.v[order[k]];
    const Trace *t = m->traces.v[r->trace];
    const Coverage *c = &r->cov;
    doc_row(d);
    process_text(m, r, doc_cell(d));
    buf_puts(doc_cell(d), t->path);
    buf_puts(doc_cell(d), t->proc.known && t->proc.start ? t->proc.start : "-");
    Buf *w = doc_cell(d);
    buf_ms(w, c->wall);
    if (!c->start_known || !c->end_known) buf_putc(w, '*');
    if (c->died) buf_puts(w, " (died)");
    pct_cell(doc_cell(d), c->covered, c->wall);
    pct_cell(doc_cell(d), c->before, c->wall);
    pct_cell(doc_cell(d), c->gaps, c->wall);
    pct_cell(doc_cell(d), c->after, c->wall);
    if (c->profiler_exit) buf_ms(doc_cell(d), c->profiler_exit);
    else buf_puts(doc_cell(d), "-");
  }
  free(order);
}

static void ranks_section(Doc *d, const Summary *s) {
  if (s->nranks < 2) return;
  doc_heading(d, 2, "Ranks");
  buf_puts(doc_para(d), "The main process of each rank (helper processes such as DataLoader workers are listed "
           "under Processes and coverage).");
  doc_table(d, "rrrrrrr", "rank", "CPU span ms", "GPU busy ms", "compute ms", "communication ms", "idle ms",
            "mean step ms");
  int64_t mx = INT64_MIN, mn = INT64_MAX, sum = 0;
  size_t nr = 0;
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    if (!r->is_rank) continue;
    nr++;
    doc_row(d);
    buf_printf(doc_cell(d), "%lld", (long long)r->rank);
    buf_ms(doc_cell(d), r->cpu_last - r->cpu_first);
    buf_ms(doc_cell(d), r->busy);
    buf_ms(doc_cell(d), r->compute);
    buf_ms(doc_cell(d), r->comm);
    buf_ms(doc_cell(d), r->idle);
    if (r->steps.count) buf_ms(doc_cell(d), r->steps.mean);
    else buf_puts(doc_cell(d), "-");
    /* imbalance of what the ranks have in common: GPU busy time, else CPU span */
    int64_t v = r->gpu_ops ? r->busy : r->cpu_last - r->cpu_first;
    if (v > mx) mx = v;
    if (v < mn) mn = v;
    sum += v;
  }
  int64_t mean = sum / (int64_t)nr;
  buf_printf(doc_para(d), "Imbalance (%s): max/mean %.3f, max/min %.3f.",
             has_gpu(s) ? "GPU busy time" : "CPU span", mean > 0 ? (double)mx / (double)mean : 0.0,
             mn > 0 ? (double)mx / (double)mn : 0.0);
}

/* The per-rank view (rankview.c): each rank's own time in the names whose
 * time differs most across ranks; up to 8 ranks one column each, more as
 * the smallest, the median and the largest. */
static void rank_view_section(Doc *d, const Model *m, const Summary *s) {
  size_t nc = s->rank_cols.n;
  if (nc < 2 || !s->spread.n) return;
  uint64_t steps = UINT64_MAX;
  for (size_t c = 0; c < nc; c++)
    if (s->ranks.v[s->rank_cols.v[c]].steps.count < steps) steps = s->ranks.v[s->rank_cols.v[c]].steps.count;
  int64_t per = steps && steps != UINT64_MAX ? (int64_t)steps : 1;
  doc_heading(d, 2, "Ranks side by side");
  buf_printf(doc_para(d), "The range names whose exclusive time differs most across ranks (main processes only), "
             "each rank's own figure%s, in ms. In synchronous training the ranks wait for the slowest at each "
             "collective: the wait is in the fast ranks' figures, the cause in the slow rank's.",
             per > 1 ? " per step" : "");
  bool wide = nc > 8;
  size_t ncol = (wide ? 3 : nc) + 2, k = 0;
  char fmt[16], heads[10][32];
  const char *hp[10];
  snprintf(heads[k++], sizeof heads[0], "range");
  if (wide) {
    snprintf(heads[k++], sizeof heads[0], "smallest (rank)");
    snprintf(heads[k++], sizeof heads[0], "median");
    snprintf(heads[k++], sizeof heads[0], "largest (rank)");
  } else {
    for (size_t c = 0; c < nc; c++)
      snprintf(heads[k++], sizeof heads[0], "rank %lld", (long long)s->ranks.v[s->rank_cols.v[c]].rank);
  }
  snprintf(heads[k++], sizeof heads[0], "spread");
  for (size_t i = 0; i < ncol; i++) {
    fmt[i] = i ? 'r' : 'l';
    hp[i] = heads[i];
  }
  fmt[ncol] = 0;
  doc_table_v(d, fmt, hp);
  for (size_t i = 0; i < s->spread.n; i++) {
    const RankSpread *x = &s->spread.v[i];
    doc_row(d);
    buf_puts(doc_cell(d), intern_str(&m->names, x->name));
    if (wide) {
      int64_t *t = xmalloc(nc * sizeof *t);
      memcpy(t, x->per, nc * sizeof *t);
      for (size_t a = 1; a < nc; a++)
        for (size_t b = a; b > 0 && t[b] < t[b - 1]; b--) {
          int64_t y = t[b];
          t[b] = t[b - 1], t[b - 1] = y;
        }
      Buf *c = doc_cell(d);
      buf_ms(c, x->lo / per);
      buf_printf(c, " (%lld)", (long long)s->ranks.v[s->rank_cols.v[x->lo_at]].rank);
      buf_ms(doc_cell(d), t[nc / 2] / per);
      c = doc_cell(d);
      buf_ms(c, x->hi / per);
      buf_printf(c, " (%lld)", (long long)s->ranks.v[s->rank_cols.v[x->hi_at]].rank);
      free(t);
    } else {
      for (size_t c = 0; c < nc; c++) buf_ms(doc_cell(d), x->per[c] / per);
    }
    buf_ms(doc_cell(d), (x->hi - x->lo) / per);
  }
}

static void bottlenecks_section(Doc *d, const Summary *s) {
  doc_heading(d, 2, "Bottlenecks");
  if (!s->bottlenecks.n) buf_puts(doc_para(d), "None found by the rules in docs/nctrace.md.");
  else doc_list(d, true);
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    const Bottleneck *x = &s->bottlenecks.v[i];
    doc_item(d);
    buf_puts(doc_span(d, SPAN_BOLD), x->title);
    Buf *t = doc_span(d, SPAN_PLAIN);
    buf_puts(t, " (time at stake ");
    buf_ms(t, x->score);
    buf_puts(t, " ms): ");
    buf_puts(t, x->evidence);
    buf_putc(t, '.');
  }
  doc_heading(d, 2, "Recommendations");
  if (!s->bottlenecks.n) buf_puts(doc_para(d), "Nothing stands out.");
  else doc_list(d, true);
  for (size_t i = 0; i < s->bottlenecks.n; i++) buf_puts(doc_item(d), s->bottlenecks.v[i].recommendation);
}

static void notes_section(Doc *d, const Model *m, const Summary *s) {
  Notes notes = {0};
  collect_notes(m, s, &notes);
  if (notes.n) {
    doc_heading(d, 2, "Notes and assumptions");
    doc_list(d, false);
    for (size_t i = 0; i < notes.n; i++) buf_puts(doc_item(d), notes.v[i]);
  }
  free_notes(&notes);
}

/* What the ranges with the most exclusive time call without a range
 * (issue 40): their exclusive time holds those calls' time, unseen. */
static void unranged_section(Doc *d, const Model *m, const Summary *s) {
  if (!s->unranged.n) return;
  doc_heading(d, 3, "What the trace cannot see");
  buf_puts(doc_para(d), "The exclusive time of these ranges includes the time of the functions they call that "
           "have no range of their own: left out by full trace as straight-line code, not instrumented (see "
           "`ncrewrite --explain`), or in a library. The shadow tree's manifest lists each range's calls; those "
           "with a range of their own in these traces are not shown. A function rule (or `full_trace_inline: "
           "true`) gives one its own range; calls through a pointer cannot be named here.");
  doc_table(d, "lrl", "range", "exclusive ms", "calls without a range");
  for (size_t i = 0; i < s->unranged.n; i++) {
    const UnrangedRow *u = &s->unranged.v[i];
    doc_row(d);
    buf_puts(doc_cell(d), intern_str(&m->names, u->name));
    buf_ms(doc_cell(d), u->excl);
    buf_puts(doc_cell(d), u->calls);
  }
}

void summary_doc_deep(const Model *m, const Summary *s, const Deep *deep, Doc *d) {
  files_section(d, m, s);
  coverage_section(d, m, s);
  operations_section(d, m, s);
  unranged_section(d, m, s);
  gpu_sections(d, m, s);
  deep_doc(d, m, s, deep);
  steps_section(d, m, s);
  ranks_section(d, s);
  rank_view_section(d, m, s);
  bottlenecks_section(d, s);
  notes_section(d, m, s);
}

void summary_doc(const Model *m, const Summary *s, Doc *d) { summary_doc_deep(m, s, NULL, d); }

/* ---- JSON ---- */






static void jstats(Buf *b, const char *k, const Stats *st) {
  json_key(b, k);
  buf_putc(b, '{');
  json_int(b, "count", (long long)st->count);
  json_us(b, "mean_us", st->mean);
  json_us(b, "median_us", st->median);
  json_us(b, "min_us", st->min);
  json_us(b, "max_us", st->max);
  json_us(b, "std_us", st->std);
  json_end(b, '}');
  buf_putc(b, ',');
}

/* "throttled": [{"file", "rank", "name", "calls_at_throttle",
 * "avg_us_at_throttle", "total_calls" (null: not in the trace)}, ...] */
static void throttled_json(Buf *b, const Model *m) {
  if (!any_throttled(m)) return;
  json_key(b, "throttled");
  buf_putc(b, '[');
  for (size_t i = 0; i < m->traces.n; i++) {
    const Trace *t = m->traces.v[i];
    for (size_t k = 0; k < t->throttled.n; k++) {
      const Throttled *th = &t->throttled.v[k];
      buf_putc(b, '{');
      json_str(b, "file", t->path);
      json_int(b, "rank", (long long)(t->rank >= 0 ? t->rank : (int64_t)i));
      json_str(b, "name", intern_str(&m->names, th->name));
      json_int(b, "calls_at_throttle", (long long)th->calls);
      buf_printf(b, "\"avg_us_at_throttle\":%.3f,", th->avg_us);
      if (th->total_calls >= 0) json_int(b, "total_calls", (long long)th->total_calls);
      else buf_puts(b, "\"total_calls\":null,");
      buf_printf(b, "\"measured\":%s,", th->measured ? "true" : "false");
      if (th->measured) {
        json_us(b, "unrecorded_inclusive_us", th->u_incl);
        json_us(b, "unrecorded_exclusive_us", th->u_excl);
      }
      json_end(b, '}');
      buf_putc(b, ',');
    }
  }
  json_end(b, ']');
  buf_putc(b, ',');
}

/* The sections of summary_json's "structured" object, in its order; each
 * writes its member and the comma after it. */
static void json_operations(const Model *m, const Summary *s, Buf *b, Buf *tmp) {
  json_key(b, "operations");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->ranges.n && i < s->opt.top_ranges; i++) {
    const RangeRow *r = &s->ranges.v[i];
    buf_putc(b, '{');
    json_str(b, "name", range_row_name(m, s, r));
    tmp->len = 0;
    kinds_text(r->kinds, tmp);
    json_str(b, "kind", tmp->s);
    json_int(b, "count", (long long)r->count);
    json_us(b, "inclusive_us", r->incl);
    json_us(b, "exclusive_us", r->excl);
    json_us(b, "gpu_us", r->gpu);
    json_us(b, "mean_us", r->count ? r->sum / (int64_t)r->count : 0); /* as the Markdown's mean */
    json_us(b, "max_us", r->max);
    if (row_measured(m, r)) {
      /* throttled, and ncrt timed the calls it did not record: the count
       * and times are of all calls */
      json_bool(b, "throttled", true);
      json_bool(b, "measured", true);
    } else if (row_throttled(m, r)) {
      /* count and times are of the recorded calls; with the trace's total,
       * the estimates for all calls */
      json_bool(b, "throttled", true);
      int64_t total = row_total_calls(m, r);
      if (total >= 0) {
        json_bool(b, "estimated", true);
        json_int(b, "total_calls", (long long)total);
        json_us(b, "inclusive_us_est", scaled(r->incl, r->count, total));
        json_us(b, "exclusive_us_est", scaled(r->excl, r->count, total));
      }
    }
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
  json_int(b, "operation_names", (long long)s->ranges.n);
}

static void json_bottlenecks(const Model *m, const Summary *s, Buf *b) {
  (void)m;
  json_key(b, "bottlenecks");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    const Bottleneck *x = &s->bottlenecks.v[i];
    buf_putc(b, '{');
    json_int(b, "rank", (long long)i + 1);
    json_str(b, "title", x->title);
    json_us(b, "time_at_stake_us", x->score);
    json_str(b, "evidence", x->evidence);
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
  json_key(b, "recommendations");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    buf_json_string(b, s->bottlenecks.v[i].recommendation);
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
}

static void json_kernels(const Model *m, const Summary *s, Buf *b) {
  json_key(b, "kernels");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->kernels.n && i < s->opt.top_kernels; i++) {
    const KernelRow *k = &s->kernels.v[i];
    buf_putc(b, '{');
    json_str(b, "name", intern_str(&m->names, k->name));
    json_str(b, "class", class_name(k->cls));
    json_int(b, "count", (long long)k->count);
    json_us(b, "total_us", k->total);
    json_us(b, "mean_us", llround(k->mean));
    json_us(b, "min_us", k->min);
    json_us(b, "max_us", k->max);
    json_us(b, "std_us", llround(sqrt(k->m2 / (double)k->count)));
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
}

static void json_ranks(const Model *m, const Summary *s, Buf *b) {
  json_key(b, "ranks");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    buf_putc(b, '{');
    const Trace *t = m->traces.v[r->trace];
    const Coverage *c = &r->cov;
    json_int(b, "rank", (long long)r->rank);
    json_str(b, "file", t->path);
    /* the process: a rank's main one, or a helper of that rank */
    json_bool(b, "is_rank", r->is_rank);
    if (t->proc.known) {
      json_int(b, "pid", (long long)t->proc.pid);
      json_int(b, "ppid", (long long)t->proc.ppid);
      json_str(b, "started_by", t->proc.start);
      json_str(b, "role", t->proc.role);
      json_str(b, "role_detail", t->proc.detail);
    }
    /* coverage (docs/nctrace.md, "Processes and coverage") */
    json_key(b, "coverage");
    buf_putc(b, '{');
    json_bool(b, "start_known", c->start_known);
    json_bool(b, "end_known", c->end_known);
    if (c->died) json_bool(b, "died", true);
    json_us(b, "wall_us", c->wall);
    json_us(b, "covered_us", c->covered);
    json_us(b, "before_first_us", c->before);
    json_us(b, "gaps_us", c->gaps);
    json_us(b, "after_last_us", c->after);
    json_us(b, "profiler_exit_us", c->profiler_exit);
    buf_printf(b, "\"covered_share\":%.4f,", c->wall > 0 ? (double)c->covered / (double)c->wall : 0.0);
    json_end(b, '}');
    buf_putc(b, ',');
    json_int(b, "events", (long long)r->events);
    json_int(b, "cpu_ranges", (long long)r->ranges);
    json_int(b, "gpu_ops", (long long)r->gpu_ops);
    json_us(b, "cpu_span_us", r->cpu_last - r->cpu_first);
    json_us(b, "gpu_span_us", r->gpu_span);
    json_us(b, "busy_us", r->busy);
    json_us(b, "compute_us", r->compute);
    json_us(b, "noncompute_us", r->noncompute);
    json_us(b, "idle_us", r->idle);
    json_us(b, "communication_us", r->comm);
    json_us(b, "overlap_us", r->overlap);
    jstats(b, "steps", &r->steps);
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
}

/* "rank_view": the columns' ranks and, per name, each one's exclusive
 * time (whole run, µs) */
static void json_rank_view(const Model *m, const Summary *s, Buf *b) {
  json_key(b, "rank_view");
  buf_putc(b, '{');
  json_key(b, "ranks");
  buf_putc(b, '[');
  for (size_t c = 0; c < s->rank_cols.n; c++)
    buf_printf(b, "%s%lld", c ? "," : "", (long long)s->ranks.v[s->rank_cols.v[c]].rank);
  buf_puts(b, "],");
  json_key(b, "names");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->spread.n; i++) {
    const RankSpread *x = &s->spread.v[i];
    buf_putc(b, '{');
    json_str(b, "name", intern_str(&m->names, x->name));
    json_key(b, "exclusive_us");
    buf_putc(b, '[');
    for (size_t c = 0; c < s->rank_cols.n; c++) buf_printf(b, "%s%.3f", c ? "," : "", (double)x->per[c] / 1e3);
    buf_puts(b, "],");
    json_us(b, "spread_us", x->hi - x->lo);
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
  json_end(b, '}');
  buf_putc(b, ',');
}

static void json_streams(const Model *m, const Summary *s, Buf *b, Buf *tmp) {
  json_key(b, "streams");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->streams.n; i++) {
    const StreamRow *r = &s->streams.v[i];
    tmp->len = 0;
    model_thread_label(m, m->traces.v[r->trace], r->thread, tmp);
    buf_putc(b, '{');
    json_int(b, "rank", (long long)s->ranks.v[r->trace].rank);
    json_str(b, "stream", tmp->s);
    json_int(b, "ops", (long long)r->ops);
    json_us(b, "span_us", r->span);
    json_us(b, "idle_us", r->idle);
    json_us(b, "host_wait_us", r->host_wait);
    json_us(b, "kernel_wait_us", r->kernel_wait);
    json_us(b, "other_us", r->other);
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
}

static void json_launches(const Model *m, const Summary *s, Buf *b) {
  (void)m;
  const LaunchStats *l = &s->launch;
  json_key(b, "launches");
  buf_putc(b, '{');
  json_int(b, "count", (long long)l->count);
  json_int(b, "unmatched", (long long)l->unmatched);
  json_us(b, "cpu_mean_us", l->count ? l->cpu_total / (int64_t)l->count : 0);
  json_us(b, "cpu_max_us", l->cpu_max);
  json_us(b, "delay_mean_us", l->count ? l->delay_total / (int64_t)l->count : 0);
  json_us(b, "delay_max_us", l->delay_max);
  json_int(b, "cpu_outliers", (long long)l->cpu_outliers);
  json_int(b, "delay_outliers", (long long)l->delay_outliers);
  json_end(b, '}');
  buf_putc(b, ',');
}

static void json_memcpy(const Model *m, const Summary *s, Buf *b) {
  (void)m;
  json_key(b, "memcpy");
  buf_putc(b, '[');
  for (int k = 0; k < COPY_KINDS; k++) {
    const CopyRow *c = &s->copies[k];
    if (!c->count) continue;
    buf_putc(b, '{');
    json_str(b, "kind", copy_kind_name(k));
    json_int(b, "count", (long long)c->count);
    json_int(b, "bytes", (long long)c->bytes);
    json_us(b, "time_us", c->time);
    buf_printf(b, "\"bandwidth_gb_s\":%.3f", c->time > 0 ? (double)c->bytes / (double)c->time : 0.0);
    buf_putc(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
}

static void json_steps(const Model *m, const Summary *s, Buf *b) {
  json_key(b, "steps");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->steps.n; i++) {
    const StepRow *st = &s->steps.v[i];
    buf_putc(b, '{');
    json_int(b, "rank", (long long)s->ranks.v[st->trace].rank);
    json_str(b, "name", step_label(m, st));
    json_us(b, "start_us", st->ts);
    json_us(b, "duration_us", st->dur);
    json_us(b, "gpu_us", st->gpu);
    json_end(b, '}');
    buf_putc(b, ',');
  }
  json_end(b, ']');
  buf_putc(b, ',');
}

void summary_json(const Model *m, const Summary *s, const Deep *deep, Buf *b) {
  Buf md = {0}, tmp = {0};
  Doc doc = {0};
  summary_doc_deep(m, s, deep, &doc);
  doc_write_md(&doc, &md);
  doc_free(&doc);
  buf_putc(b, '{');
  json_str(b, "markdown", md.s);
  json_key(b, "structured");
  buf_putc(b, '{');
  json_operations(m, s, b, &tmp);
  json_bottlenecks(m, s, b);
  json_kernels(m, s, b);
  json_ranks(m, s, b);
  json_rank_view(m, s, b);
  json_streams(m, s, b, &tmp);
  json_launches(m, s, b);
  json_memcpy(m, s, b);
  json_steps(m, s, b);

  if (s->unranged.n) {
    /* "unranged_calls": [{"name", "exclusive_us", "calls": [...]}] */
    json_key(b, "unranged_calls");
    buf_putc(b, '[');
    for (size_t i = 0; i < s->unranged.n; i++) {
      const UnrangedRow *u = &s->unranged.v[i];
      buf_putc(b, '{');
      json_str(b, "name", intern_str(&m->names, u->name));
      json_us(b, "exclusive_us", u->excl);
      json_key(b, "calls");
      buf_putc(b, '[');
      for (const char *p = u->calls; *p;) {
        const char *e = strstr(p, ", ");
        size_t l = e ? (size_t)(e - p) : strlen(p);
        tmp.len = 0;
        buf_add(&tmp, p, l);
        buf_json_string(b, tmp.s);
        buf_putc(b, ',');
        p += l + (e ? 2 : 0);
      }
      json_end(b, ']');
      json_end(b, '}');
      buf_putc(b, ',');
    }
    json_end(b, ']');
    buf_putc(b, ',');
  }
  deep_json(b, m, s, deep); /* "ncu", "nsys" when there are */
  throttled_json(b, m);     /* "throttled" when there are */
  Notes notes = {0};
  collect_notes(m, s, &notes);
  json_key(b, "notes");
  buf_putc(b, '[');
  for (size_t i = 0; i < notes.n; i++) {
    buf_json_string(b, notes.v[i]);
    buf_putc(b, ',');
  }
  json_end(b, ']');
  free_notes(&notes);
  buf_puts(b, "}}\n");
  buf_free(&md);
  buf_free(&tmp);
}
