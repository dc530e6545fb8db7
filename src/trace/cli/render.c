/* render: the Summary as Markdown and as nCompass-shaped JSON
 * ({"markdown", "structured": {"operations", "bottlenecks",
 * "recommendations", ...}}). Times: milliseconds with three decimals in
 * Markdown, microseconds with three decimals in JSON (exact: both come
 * from integer nanoseconds). */
#include "render.h"

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

static void md_cell(Buf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '|') buf_puts(b, "\\|");
    else if (*s == '\n') buf_putc(b, ' ');
    else buf_putc(b, *s);
  }
}

static void collect_notes(const Model *m, const Summary *s, Notes *out) {
  Buf b = {0};
#define NOTE() do { vec_push(out, b.s); memset(&b, 0, sizeof b); } while (0)
  for (size_t i = 0; i < m->traces.n; i++) {
    const Trace *t = m->traces.v[i];
    const LoadNotes *n = &t->notes;
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

static void pct_cell(Buf *b, int64_t a, int64_t tot) {
  buf_ms(b, a);
  buf_printf(b, " (%.1f%%)", tot > 0 ? 100.0 * (double)a / (double)tot : 0.0);
}

static void md_stats(Buf *b, const Stats *st) {
  buf_printf(b, "%llu | ", (unsigned long long)st->count);
  buf_ms(b, st->mean);
  buf_puts(b, " | ");
  buf_ms(b, st->median);
  buf_puts(b, " | ");
  buf_ms(b, st->min);
  buf_puts(b, " | ");
  buf_ms(b, st->max);
  buf_puts(b, " | ");
  buf_ms(b, st->std);
}

void summary_markdown(const Model *m, const Summary *s, Buf *b) {
  Buf tmp = {0};
  uint64_t events = 0;
  for (size_t i = 0; i < s->ranks.n; i++) events += s->ranks.v[i].events;
  buf_puts(b, "# Trace summary\n\n");
  buf_printf(b, "%zu trace file(s), %llu events.\n\n", m->traces.n, (unsigned long long)events);
  buf_puts(b, "| file | rank | layout | events | CPU ranges | GPU ops |\n|---|---:|---|---:|---:|---:|\n");
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    const Trace *t = m->traces.v[r->trace];
    buf_puts(b, "| ");
    md_cell(b, t->path);
    buf_printf(b, " | %lld | %s | %llu | %llu | %llu |\n", (long long)r->rank, t->legacy ? "legacy" : "Kineto",
               (unsigned long long)r->events, (unsigned long long)r->ranges, (unsigned long long)r->gpu_ops);
  }

  buf_printf(b, "\n## Operations\n\nTop %zu of %zu range names by inclusive CPU time. Inclusive time counts "
             "the outermost instance of a name only (recursion is not double-counted); exclusive time is "
             "the range minus its direct children; GPU is the time of GPU ops launched inside.\n\n",
             s->ranges.n < s->opt.top_ranges ? s->ranges.n : s->opt.top_ranges, s->ranges.n);
  buf_puts(b, "| range | kind | count | inclusive ms | exclusive ms | GPU ms | mean ms | max ms |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < s->ranges.n && i < s->opt.top_ranges; i++) {
    const RangeRow *r = &s->ranges.v[i];
    buf_puts(b, "| ");
    md_cell(b, range_row_name(m, s, r));
    buf_puts(b, " | ");
    kinds_text(r->kinds, b);
    buf_printf(b, " | %llu | ", (unsigned long long)r->count);
    buf_ms(b, r->incl);
    buf_puts(b, " | ");
    buf_ms(b, r->excl);
    buf_puts(b, " | ");
    buf_ms(b, r->gpu);
    buf_puts(b, " | ");
    buf_ms(b, r->count ? r->sum / (int64_t)r->count : 0);
    buf_puts(b, " | ");
    buf_ms(b, r->max);
    buf_puts(b, " |\n");
  }

  if (!has_gpu(s)) {
    buf_puts(b, "\n## GPU\n\nNo GPU ops (kernels, copies, memsets) in these traces: the GPU sections are "
                "left out.\n");
  } else {
    buf_printf(b, "\n## Top kernels\n\nTop %zu of %zu GPU op names by total time.\n\n",
               s->kernels.n < s->opt.top_kernels ? s->kernels.n : s->opt.top_kernels, s->kernels.n);
    buf_puts(b, "| kernel | class | count | total ms | mean us | min us | max us | std us |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < s->kernels.n && i < s->opt.top_kernels; i++) {
      const KernelRow *k = &s->kernels.v[i];
      buf_puts(b, "| ");
      md_cell(b, intern_str(&m->names, k->name));
      buf_printf(b, " | %s | %llu | ", class_name(k->cls), (unsigned long long)k->count);
      buf_ms(b, k->total);
      buf_puts(b, " | ");
      buf_us(b, llround(k->mean));
      buf_puts(b, " | ");
      buf_us(b, k->min);
      buf_puts(b, " | ");
      buf_us(b, k->max);
      buf_puts(b, " | ");
      buf_us(b, llround(sqrt(k->m2 / (double)k->count)));
      buf_puts(b, " |\n");
    }

    buf_puts(b, "\n## Temporal breakdown\n\nPer rank, over the GPU span (first GPU op start to last GPU op "
                "end): busy is the union of all GPU ops, compute the union of computation kernels, "
                "non-compute the rest of busy (communication, copies), idle the span minus busy.\n\n");
    buf_puts(b, "| rank | GPU span ms | busy ms | compute ms | non-compute ms | idle ms |\n"
                "|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < s->ranks.n; i++) {
      const RankRow *r = &s->ranks.v[i];
      if (!r->gpu_ops) continue;
      buf_printf(b, "| %lld | ", (long long)r->rank);
      buf_ms(b, r->gpu_span);
      buf_puts(b, " | ");
      pct_cell(b, r->busy, r->gpu_span);
      buf_puts(b, " | ");
      pct_cell(b, r->compute, r->gpu_span);
      buf_puts(b, " | ");
      pct_cell(b, r->noncompute, r->gpu_span);
      buf_puts(b, " | ");
      pct_cell(b, r->idle, r->gpu_span);
      buf_puts(b, " |\n");
    }

    buf_puts(b, "\n## Idle time per stream\n\nGaps between consecutive ops on a stream. Host wait: the next op "
                "was launched after the previous one ended (the GPU waited for the CPU). Kernel wait: a gap "
                "of at most 30 us otherwise (launch overhead). Other: longer gaps (dependencies on other "
                "streams, synchronisation).\n\n");
    buf_puts(b, "| rank | stream | ops | span ms | idle ms | host wait ms | kernel wait ms | other ms |\n"
                "|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < s->streams.n; i++) {
      const StreamRow *r = &s->streams.v[i];
      tmp.len = 0;
      model_thread_label(m, m->traces.v[r->trace], r->thread, &tmp);
      buf_printf(b, "| %lld | ", (long long)s->ranks.v[r->trace].rank);
      md_cell(b, tmp.s);
      buf_printf(b, " | %llu | ", (unsigned long long)r->ops);
      buf_ms(b, r->span);
      buf_puts(b, " | ");
      buf_ms(b, r->idle);
      buf_puts(b, " | ");
      buf_ms(b, r->host_wait);
      buf_puts(b, " | ");
      buf_ms(b, r->kernel_wait);
      buf_puts(b, " | ");
      buf_ms(b, r->other);
      buf_puts(b, " |\n");
    }

    const LaunchStats *l = &s->launch;
    buf_puts(b, "\n## Kernel launches\n\n");
    if (!l->count) {
      buf_puts(b, "No launch calls (cudaLaunchKernel, cudaMemcpyAsync, ...) matched to GPU ops.\n");
    } else {
      buf_printf(b, "%llu launch calls matched to their GPU op by correlation id", (unsigned long long)l->count);
      if (l->unmatched) buf_printf(b, " (%llu without a GPU op)", (unsigned long long)l->unmatched);
      buf_puts(b, ". Launch delay = GPU start - (call start + call duration), floored at 0.\n\n");
      buf_puts(b, "| figure | mean us | max us | outliers |\n|---|---:|---:|---:|\n");
      buf_puts(b, "| CPU launch call | ");
      buf_us(b, l->cpu_total / (int64_t)l->count);
      buf_puts(b, " | ");
      buf_us(b, l->cpu_max);
      buf_printf(b, " | %llu over 50 us |\n", (unsigned long long)l->cpu_outliers);
      buf_puts(b, "| launch delay | ");
      buf_us(b, l->delay_total / (int64_t)l->count);
      buf_puts(b, " | ");
      buf_us(b, l->delay_max);
      buf_printf(b, " | %llu over 100 us |\n", (unsigned long long)l->delay_outliers);
      if (l->nworst && l->worst[0].delay > 0) {
        buf_puts(b, "\nLongest delays:\n\n| rank | call | at ms | call us | delay us |\n|---:|---|---:|---:|---:|\n");
        for (size_t i = 0; i < l->nworst; i++) {
          if (!l->worst[i].delay) break;
          buf_printf(b, "| %lld | ", (long long)s->ranks.v[l->worst[i].trace].rank);
          md_cell(b, intern_str(&m->names, l->worst[i].name));
          buf_puts(b, " | ");
          buf_ms(b, l->worst[i].ts);
          buf_puts(b, " | ");
          buf_us(b, l->worst[i].cpu);
          buf_puts(b, " | ");
          buf_us(b, l->worst[i].delay);
          buf_puts(b, " |\n");
        }
      }
    }

    buf_puts(b, "\n## Communication vs computation\n\n");
    bool any_comm = false;
    for (size_t i = 0; i < s->ranks.n; i++) any_comm |= s->ranks.v[i].comm > 0;
    if (!any_comm) {
      buf_puts(b, "No communication kernels (nccl*).\n");
    } else {
      buf_puts(b, "Overlap = time when communication and computation kernels run at once / communication "
                  "time.\n\n| rank | communication ms | computation ms | overlapped ms | overlap |\n"
                  "|---:|---:|---:|---:|---:|\n");
      for (size_t i = 0; i < s->ranks.n; i++) {
        const RankRow *r = &s->ranks.v[i];
        if (!r->gpu_ops) continue;
        buf_printf(b, "| %lld | ", (long long)r->rank);
        buf_ms(b, r->comm);
        buf_puts(b, " | ");
        buf_ms(b, r->compute);
        buf_puts(b, " | ");
        buf_ms(b, r->overlap);
        buf_printf(b, " | %.1f%% |\n", r->comm > 0 ? 100.0 * (double)r->overlap / (double)r->comm : 0.0);
      }
    }

    uint64_t ncopies = 0;
    for (int k = 0; k < COPY_KINDS; k++) ncopies += s->copies[k].count;
    buf_puts(b, "\n## Memory copies\n\n");
    if (!ncopies) buf_puts(b, "No memory copies or memsets on the GPU.\n");
    else buf_puts(b, "Bandwidth = bytes / summed duration of the copies.\n\n"
                     "| kind | count | bytes | time ms | GB/s |\n|---|---:|---:|---:|---:|\n");
    for (int k = 0; k < COPY_KINDS; k++) {
      const CopyRow *c = &s->copies[k];
      if (!c->count) continue;
      buf_printf(b, "| %s | %llu | %lld | ", copy_kind_name(k), (unsigned long long)c->count, (long long)c->bytes);
      buf_ms(b, c->time);
      if (c->time > 0) buf_printf(b, " | %.3f |\n", (double)c->bytes / (double)c->time);
      else buf_puts(b, " | - |\n");
    }
    if (s->sync_copies || s->sync_calls) {
      buf_printf(b, "\nSynchronous host calls: %llu memcpy (", (unsigned long long)s->sync_copies);
      buf_ms(b, s->sync_copy_time);
      buf_printf(b, " ms), %llu synchronize (", (unsigned long long)s->sync_calls);
      buf_ms(b, s->sync_time);
      buf_puts(b, " ms).\n");
    }
    if (s->gpu_annotations.n) {
      buf_puts(b, "\n## GPU user annotations\n\nSpans from the first to the last GPU op of an annotation, per "
                  "stream.\n\n| annotation | count | total ms | max ms |\n|---|---:|---:|---:|\n");
      for (size_t i = 0; i < s->gpu_annotations.n && i < s->opt.top_ranges; i++) {
        const RangeRow *r = &s->gpu_annotations.v[i];
        buf_puts(b, "| ");
        md_cell(b, intern_str(&m->names, r->name));
        buf_printf(b, " | %llu | ", (unsigned long long)r->count);
        buf_ms(b, r->incl);
        buf_puts(b, " | ");
        buf_ms(b, r->max);
        buf_puts(b, " |\n");
      }
    }
  }

  if (s->steps.n) {
    buf_printf(b, "\n## Steps\n\nRanges named `%s`, per rank (durations in ms).\n\n", s->opt.step_glob);
    buf_puts(b, "| rank | steps | mean | median | min | max | std |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < s->ranks.n; i++) {
      const RankRow *r = &s->ranks.v[i];
      if (!r->steps.count) continue;
      buf_printf(b, "| %lld | ", (long long)r->rank);
      md_stats(b, &r->steps);
      buf_puts(b, " |\n");
    }
    buf_puts(b, "\n| rank | # | step | start ms | duration ms | GPU ms |\n|---:|---:|---|---:|---:|---:|\n");
    size_t idx = 0;
    for (size_t i = 0; i < s->steps.n && i < 64; i++) {
      const StepRow *st = &s->steps.v[i];
      idx = i && s->steps.v[i - 1].trace == st->trace ? idx + 1 : 0; /* the step's index on its rank */
      buf_printf(b, "| %lld | %zu | ", (long long)s->ranks.v[st->trace].rank, idx);
      md_cell(b, step_label(m, st));
      buf_puts(b, " | ");
      buf_ms(b, st->ts);
      buf_puts(b, " | ");
      buf_ms(b, st->dur);
      buf_puts(b, " | ");
      buf_ms(b, st->gpu);
      buf_puts(b, " |\n");
    }
    if (s->steps.n > 64) buf_printf(b, "\n(%zu more steps not listed.)\n", s->steps.n - 64);
  }

  if (s->ranks.n >= 2) {
    buf_puts(b, "\n## Ranks\n\n| rank | CPU span ms | GPU busy ms | compute ms | communication ms | idle ms | "
                "mean step ms |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    int64_t mx = INT64_MIN, mn = INT64_MAX, sum = 0;
    for (size_t i = 0; i < s->ranks.n; i++) {
      const RankRow *r = &s->ranks.v[i];
      buf_printf(b, "| %lld | ", (long long)r->rank);
      buf_ms(b, r->cpu_last - r->cpu_first);
      buf_puts(b, " | ");
      buf_ms(b, r->busy);
      buf_puts(b, " | ");
      buf_ms(b, r->compute);
      buf_puts(b, " | ");
      buf_ms(b, r->comm);
      buf_puts(b, " | ");
      buf_ms(b, r->idle);
      buf_puts(b, " | ");
      if (r->steps.count) buf_ms(b, r->steps.mean);
      else buf_puts(b, "-");
      buf_puts(b, " |\n");
      int64_t v = r->gpu_ops ? r->busy : r->cpu_last - r->cpu_first;
      if (v > mx) mx = v;
      if (v < mn) mn = v;
      sum += v;
    }
    int64_t mean = sum / (int64_t)s->ranks.n;
    buf_printf(b, "\nImbalance (%s): max/mean %.3f, max/min %.3f.\n",
               has_gpu(s) ? "GPU busy time" : "CPU span", mean > 0 ? (double)mx / (double)mean : 0.0,
               mn > 0 ? (double)mx / (double)mn : 0.0);
  }

  buf_puts(b, "\n## Bottlenecks\n\n");
  if (!s->bottlenecks.n) buf_puts(b, "None found by the rules in docs/nctrace.md.\n");
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    const Bottleneck *x = &s->bottlenecks.v[i];
    buf_printf(b, "%zu. **", i + 1);
    md_cell(b, x->title);
    buf_puts(b, "** (time at stake ");
    buf_ms(b, x->score);
    buf_puts(b, " ms): ");
    md_cell(b, x->evidence);
    buf_puts(b, ".\n");
  }
  buf_puts(b, "\n## Recommendations\n\n");
  if (!s->bottlenecks.n) buf_puts(b, "Nothing stands out.\n");
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    buf_printf(b, "%zu. ", i + 1);
    md_cell(b, s->bottlenecks.v[i].recommendation);
    buf_putc(b, '\n');
  }
  Notes notes = {0};
  collect_notes(m, s, &notes);
  if (notes.n) {
    buf_puts(b, "\n## Notes and assumptions\n\n");
    for (size_t i = 0; i < notes.n; i++) {
      buf_puts(b, "- ");
      md_cell(b, notes.v[i]);
      buf_putc(b, '\n');
    }
  }
  free_notes(&notes);
  buf_free(&tmp);
}

/* ---- JSON ---- */

static void jkey(Buf *b, const char *k) {
  buf_json_string(b, k);
  buf_putc(b, ':');
}

static void jus(Buf *b, const char *k, int64_t ns) {
  jkey(b, k);
  buf_us(b, ns);
  buf_putc(b, ',');
}

static void jint(Buf *b, const char *k, long long v) { buf_printf(b, "\"%s\":%lld,", k, v); }

static void jstr(Buf *b, const char *k, const char *v) {
  jkey(b, k);
  buf_json_string(b, v);
  buf_putc(b, ',');
}

static void jend(Buf *b, char close) {
  if (b->len && b->s[b->len - 1] == ',') b->len--;
  buf_putc(b, close);
}

static void jstats(Buf *b, const char *k, const Stats *st) {
  jkey(b, k);
  buf_putc(b, '{');
  jint(b, "count", (long long)st->count);
  jus(b, "mean_us", st->mean);
  jus(b, "median_us", st->median);
  jus(b, "min_us", st->min);
  jus(b, "max_us", st->max);
  jus(b, "std_us", st->std);
  jend(b, '}');
  buf_putc(b, ',');
}

void summary_json(const Model *m, const Summary *s, Buf *b) {
  Buf md = {0}, tmp = {0};
  summary_markdown(m, s, &md);
  buf_putc(b, '{');
  jstr(b, "markdown", md.s);
  jkey(b, "structured");
  buf_putc(b, '{');

  jkey(b, "operations");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->ranges.n && i < s->opt.top_ranges; i++) {
    const RangeRow *r = &s->ranges.v[i];
    buf_putc(b, '{');
    jstr(b, "name", range_row_name(m, s, r));
    tmp.len = 0;
    kinds_text(r->kinds, &tmp);
    jstr(b, "kind", tmp.s);
    jint(b, "count", (long long)r->count);
    jus(b, "inclusive_us", r->incl);
    jus(b, "exclusive_us", r->excl);
    jus(b, "gpu_us", r->gpu);
    jus(b, "max_us", r->max);
    jend(b, '}');
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');
  jint(b, "operation_names", (long long)s->ranges.n);

  jkey(b, "bottlenecks");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    const Bottleneck *x = &s->bottlenecks.v[i];
    buf_putc(b, '{');
    jint(b, "rank", (long long)i + 1);
    jstr(b, "title", x->title);
    jus(b, "time_at_stake_us", x->score);
    jstr(b, "evidence", x->evidence);
    jend(b, '}');
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');
  jkey(b, "recommendations");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->bottlenecks.n; i++) {
    buf_json_string(b, s->bottlenecks.v[i].recommendation);
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');

  jkey(b, "kernels");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->kernels.n && i < s->opt.top_kernels; i++) {
    const KernelRow *k = &s->kernels.v[i];
    buf_putc(b, '{');
    jstr(b, "name", intern_str(&m->names, k->name));
    jstr(b, "class", class_name(k->cls));
    jint(b, "count", (long long)k->count);
    jus(b, "total_us", k->total);
    jus(b, "mean_us", llround(k->mean));
    jus(b, "min_us", k->min);
    jus(b, "max_us", k->max);
    jus(b, "std_us", llround(sqrt(k->m2 / (double)k->count)));
    jend(b, '}');
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');

  jkey(b, "ranks");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->ranks.n; i++) {
    const RankRow *r = &s->ranks.v[i];
    buf_putc(b, '{');
    jint(b, "rank", (long long)r->rank);
    jstr(b, "file", m->traces.v[r->trace]->path);
    jint(b, "events", (long long)r->events);
    jint(b, "cpu_ranges", (long long)r->ranges);
    jint(b, "gpu_ops", (long long)r->gpu_ops);
    jus(b, "cpu_span_us", r->cpu_last - r->cpu_first);
    jus(b, "gpu_span_us", r->gpu_span);
    jus(b, "busy_us", r->busy);
    jus(b, "compute_us", r->compute);
    jus(b, "noncompute_us", r->noncompute);
    jus(b, "idle_us", r->idle);
    jus(b, "communication_us", r->comm);
    jus(b, "overlap_us", r->overlap);
    jstats(b, "steps", &r->steps);
    jend(b, '}');
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');

  jkey(b, "streams");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->streams.n; i++) {
    const StreamRow *r = &s->streams.v[i];
    tmp.len = 0;
    model_thread_label(m, m->traces.v[r->trace], r->thread, &tmp);
    buf_putc(b, '{');
    jint(b, "rank", (long long)s->ranks.v[r->trace].rank);
    jstr(b, "stream", tmp.s);
    jint(b, "ops", (long long)r->ops);
    jus(b, "span_us", r->span);
    jus(b, "idle_us", r->idle);
    jus(b, "host_wait_us", r->host_wait);
    jus(b, "kernel_wait_us", r->kernel_wait);
    jus(b, "other_us", r->other);
    jend(b, '}');
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');

  const LaunchStats *l = &s->launch;
  jkey(b, "launches");
  buf_putc(b, '{');
  jint(b, "count", (long long)l->count);
  jint(b, "unmatched", (long long)l->unmatched);
  jus(b, "cpu_mean_us", l->count ? l->cpu_total / (int64_t)l->count : 0);
  jus(b, "cpu_max_us", l->cpu_max);
  jus(b, "delay_mean_us", l->count ? l->delay_total / (int64_t)l->count : 0);
  jus(b, "delay_max_us", l->delay_max);
  jint(b, "cpu_outliers", (long long)l->cpu_outliers);
  jint(b, "delay_outliers", (long long)l->delay_outliers);
  jend(b, '}');
  buf_putc(b, ',');

  jkey(b, "memcpy");
  buf_putc(b, '[');
  for (int k = 0; k < COPY_KINDS; k++) {
    const CopyRow *c = &s->copies[k];
    if (!c->count) continue;
    buf_putc(b, '{');
    jstr(b, "kind", copy_kind_name(k));
    jint(b, "count", (long long)c->count);
    jint(b, "bytes", (long long)c->bytes);
    jus(b, "time_us", c->time);
    buf_printf(b, "\"bandwidth_gb_s\":%.3f", c->time > 0 ? (double)c->bytes / (double)c->time : 0.0);
    buf_putc(b, '}');
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');

  jkey(b, "steps");
  buf_putc(b, '[');
  for (size_t i = 0; i < s->steps.n; i++) {
    const StepRow *st = &s->steps.v[i];
    buf_putc(b, '{');
    jint(b, "rank", (long long)s->ranks.v[st->trace].rank);
    jstr(b, "name", step_label(m, st));
    jus(b, "start_us", st->ts);
    jus(b, "duration_us", st->dur);
    jus(b, "gpu_us", st->gpu);
    jend(b, '}');
    buf_putc(b, ',');
  }
  jend(b, ']');
  buf_putc(b, ',');

  Notes notes = {0};
  collect_notes(m, s, &notes);
  jkey(b, "notes");
  buf_putc(b, '[');
  for (size_t i = 0; i < notes.n; i++) {
    buf_json_string(b, notes.v[i]);
    buf_putc(b, ',');
  }
  jend(b, ']');
  free_notes(&notes);
  buf_puts(b, "}}\n");
  buf_free(&md);
  buf_free(&tmp);
}
