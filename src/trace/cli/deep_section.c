/* deep_section: Nsight Compute / Nsight Systems figures joined to the
 * summary's kernel table (see deep_section.h; the thresholds of the hints
 * are in core/deep.h and docs/nctrace.md). */
#include "deep_section.h"
#include "json.h"
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- finding and loading ---- */

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  if (slash == path) return xstrdup("/");
  return xstrndup(path, (size_t)(slash - path));
}

static char *join_path(const char *dir, const char *name) {
  return !strcmp(dir, ".") ? xstrdup(name) : xasprintf("%s/%s", dir, name);
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* kernels.tsv beside a CSV (ncrun writes it): its "# pattern\t<glob>"
 * (NULL if none) and its kernel rows (names unescaped). */
static char *read_beside(const char *csv, Chosen *chosen) {
  char *dir = dir_of(csv), *tsv = join_path(dir, NC_RUN_KERNELS);
  free(dir);
  FILE *f = fopen(tsv, "r");
  free(tsv);
  if (!f) return NULL;
  char line[65536];
  char *pat = NULL;
  bool rows = false;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!strncmp(line, "# pattern\t", 10)) {
      if (!pat) pat = xstrdup(line + 10);
    } else if (line[0] == '#') {
      continue;
    } else if (!rows) {
      rows = !strncmp(line, "kernel\t", 7);
    } else {
      Buf name = {0};
      for (const char *q = line; *q && *q != '\t'; q++) {
        if (*q == '\\' && q[1]) {
          q++;
          buf_putc(&name, *q == 't' ? '\t' : *q == 'n' ? '\n' : *q == 'r' ? '\r' : *q);
        } else {
          buf_putc(&name, *q);
        }
      }
      buf_add(&name, "", 0);
      vec_push(chosen, buf_steal(&name));
    }
  }
  fclose(f);
  return pat;
}

static void chosen_free(Chosen *c) {
  for (size_t i = 0; i < c->n; i++) free(c->v[i]);
  vec_free(c);
}

static int add_ncu(Deep *out, const char *path) {
  DeepNcu x = {0};
  if (ncu_load(path, &x.data) < 0) {
    ncu_free(&x.data);
    return -1;
  }
  x.pattern = read_beside(path, &x.chosen);
  vec_push(&out->ncu, x);
  return 0;
}

static int add_nsys(Deep *out, const char *path) {
  DeepNsys x = {0};
  if (nsys_load(path, &x.data) < 0) {
    nsys_free(&x.data);
    return -1;
  }
  x.pattern = read_beside(path, &x.chosen);
  vec_push(&out->nsys, x);
  return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* RUNDIR/nsys/ *cuda_gpu_kern_sum*.csv, by name. */
static int add_nsys_dir(Deep *out, const char *rundir) {
  char *dir = join_path(rundir, NC_RUN_NSYS_DIR);
  DIR *dp = opendir(dir);
  if (!dp) {
    free(dir);
    return 0;
  }
  VEC(char *) names = {0};
  struct dirent *e;
  while ((e = readdir(dp)))
    if (!fnmatch("*cuda_gpu_kern_sum*.csv", e->d_name, 0)) vec_push(&names, xstrdup(e->d_name));
  closedir(dp);
  if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);
  int rc = 0;
  for (size_t i = 0; i < names.n; i++) {
    char *p = join_path(dir, names.v[i]);
    if (!rc && is_file(p) && add_nsys(out, p) < 0) rc = -1;
    free(p);
    free(names.v[i]);
  }
  vec_free(&names);
  free(dir);
  return rc;
}

int deep_load(const Model *m, const char *const *ncu, size_t nncu, const char *const *nsys, size_t nnsys,
              Deep *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < nncu; i++)
    if (add_ncu(out, ncu[i]) < 0) return -1;
  for (size_t i = 0; i < nnsys; i++)
    if (add_nsys(out, nsys[i]) < 0) return -1;
  VEC(char *) dirs = {0};
  int rc = 0;
  for (size_t t = 0; t < m->traces.n && !rc; t++) {
    char *dir = dir_of(m->traces.v[t]->path);
    bool seen = false;
    for (size_t k = 0; k < dirs.n && !seen; k++) seen = !strcmp(dirs.v[k], dir);
    if (seen) {
      free(dir);
      continue;
    }
    vec_push(&dirs, dir);
    if (!nncu) {
      char *sub = join_path(dir, NC_RUN_NCU_DIR), *p = join_path(sub, NC_RUN_NCU_CSV);
      if (is_file(p) && add_ncu(out, p) < 0) rc = -1;
      free(sub);
      free(p);
    }
    if (!rc && !nnsys && add_nsys_dir(out, dir) < 0) rc = -1;
  }
  for (size_t k = 0; k < dirs.n; k++) free(dirs.v[k]);
  vec_free(&dirs);
  return rc;
}

bool deep_any(const Deep *deep) { return deep && (deep->ncu.n || deep->nsys.n); }

void deep_free(Deep *deep) {
  for (size_t i = 0; i < deep->ncu.n; i++) {
    free(deep->ncu.v[i].pattern);
    chosen_free(&deep->ncu.v[i].chosen);
    ncu_free(&deep->ncu.v[i].data);
  }
  for (size_t i = 0; i < deep->nsys.n; i++) {
    free(deep->nsys.v[i].pattern);
    chosen_free(&deep->nsys.v[i].chosen);
    nsys_free(&deep->nsys.v[i].data);
  }
  vec_free(&deep->ncu);
  vec_free(&deep->nsys);
}

/* ---- the join ---- */

enum { JOIN_NONE, JOIN_NAME, JOIN_FUNCTION };

/* The trace's kernels (K_KERNEL rows of the kernel table) with their keys. */
typedef struct {
  VEC(const KernelRow *) rows;
  VEC(char *) key;
  VEC(char *) base;
} Ours;

static void ours_init(Ours *o, const Model *m, const Summary *s) {
  memset(o, 0, sizeof *o);
  for (size_t i = 0; i < s->kernels.n; i++) {
    const KernelRow *k = &s->kernels.v[i];
    if (k->kind != K_KERNEL) continue;
    Buf key = {0}, base = {0};
    deep_kernel_key(intern_str(&m->names, k->name), &key);
    deep_kernel_base(intern_str(&m->names, k->name), &base);
    vec_push(&o->rows, k);
    vec_push(&o->key, buf_steal(&key));
    vec_push(&o->base, buf_steal(&base));
  }
}

static void ours_free(Ours *o) {
  for (size_t i = 0; i < o->rows.n; i++) free(o->key.v[i]), free(o->base.v[i]);
  vec_free(&o->rows);
  vec_free(&o->key);
  vec_free(&o->base);
}

/* One row of a section: a kernel of the CSV (index), the trace's kernel it
 * joined (index into Ours, -1) and how. */
typedef struct {
  size_t csv;
  long ours;
  int join;
} Joined;
typedef VEC(Joined) Join;

/* keys/bases of the CSV's kernels -> rows, ordered by the trace's total
 * (joined ones, as the kernel table orders them), then the CSV's order. */
/* Which of our rows kernels.tsv chose (all when it lists none). */
static bool *chosen_rows(const Model *m, const Ours *o, const Chosen *c) {
  bool *in = xcalloc(o->rows.n ? o->rows.n : 1, sizeof *in);
  for (size_t i = 0; i < o->rows.n; i++) {
    const char *name = intern_str(&m->names, o->rows.v[i]->name);
    in[i] = !c->n;
    for (size_t k = 0; k < c->n && !in[i]; k++) in[i] = !strcmp(c->v[k], name);
  }
  return in;
}

static void join(const Model *m, const Ours *o, const Chosen *chosen, char *const *keys, const char *const *names,
                 size_t n, Join *out) {
  long *to = xmalloc((n ? n : 1) * sizeof *to);
  int *how = xcalloc(n ? n : 1, sizeof *how);
  bool *taken = xcalloc(o->rows.n ? o->rows.n : 1, sizeof *taken), *in = chosen_rows(m, o, chosen);
  for (size_t j = 0; j < n; j++) {
    to[j] = -1;
    for (size_t i = 0; i < o->rows.n && to[j] < 0; i++)
      if (!taken[i] && !strcmp(o->key.v[i], keys[j])) to[j] = (long)i, taken[i] = true, how[j] = JOIN_NAME;
  }
  /* spelled differently: the function's name, when it is unique on both sides */
  char **base = xcalloc(n ? n : 1, sizeof *base);
  for (size_t j = 0; j < n; j++) {
    Buf b = {0};
    deep_kernel_base(names[j], &b);
    base[j] = buf_steal(&b);
  }
  for (size_t j = 0; j < n; j++) {
    if (to[j] >= 0 || !*base[j]) continue;
    size_t theirs = 0, mine = 0;
    long at = -1;
    for (size_t k = 0; k < n; k++) theirs += to[k] < 0 && !strcmp(base[k], base[j]);
    for (size_t i = 0; i < o->rows.n; i++)
      if (!taken[i] && in[i] && !strcmp(o->base.v[i], base[j])) mine++, at = (long)i;
    if (theirs == 1 && mine == 1) to[j] = at, taken[at] = true, how[j] = JOIN_FUNCTION;
  }
  for (size_t i = 0; i < o->rows.n; i++)
    for (size_t j = 0; j < n; j++)
      if (to[j] == (long)i) {
        Joined x = {j, (long)i, how[j]};
        vec_push(out, x);
      }
  for (size_t j = 0; j < n; j++)
    if (to[j] < 0) {
      Joined x = {j, -1, JOIN_NONE};
      vec_push(out, x);
    }
  for (size_t j = 0; j < n; j++) free(base[j]);
  free(base);
  free(to);
  free(how);
  free(taken);
  free(in);
}

/* A CSV's kernels (NcuKernel or NsysKernel rows, each with a key and a
 * name at the given offsets) joined to ours. */
static void join_rows(const Model *m, const Ours *o, const Chosen *chosen, const void *rows, size_t n, size_t size,
                      size_t key_at, size_t name_at, Join *out) {
  char **keys = xmalloc((n ? n : 1) * sizeof *keys);
  const char **names = xmalloc((n ? n : 1) * sizeof *names);
  for (size_t j = 0; j < n; j++) {
    const char *row = (const char *)rows + j * size;
    memcpy(&keys[j], row + key_at, sizeof *keys);
    memcpy(&names[j], row + name_at, sizeof *names);
  }
  join(m, o, chosen, keys, names, n, out);
  free(keys);
  free(names);
}

static void ncu_join(const Model *m, const Ours *o, const DeepNcu *x, Join *out) {
  join_rows(m, o, &x->chosen, x->data.kernels.v, x->data.kernels.n, sizeof(NcuKernel), offsetof(NcuKernel, key),
            offsetof(NcuKernel, name), out);
}

static void nsys_join(const Model *m, const Ours *o, const DeepNsys *x, Join *out) {
  join_rows(m, o, &x->chosen, x->data.kernels.v, x->data.kernels.n, sizeof(NsysKernel), offsetof(NsysKernel, key),
            offsetof(NsysKernel, name), out);
}

static const char *shown_name(const Model *m, const Ours *o, const Joined *x, const char *theirs) {
  return x->ours >= 0 ? intern_str(&m->names, o->rows.v[x->ours]->name) : theirs;
}

static size_t shown(size_t n, size_t top) { return n < top ? n : top; }

/* ---- the document ---- */

static void cell_f(Doc *d, const char *fmt, double v) {
  if (isnan(v)) buf_puts(doc_cell(d), "-");
  else buf_printf(doc_cell(d), fmt, v);
}

static void limiter_text(Buf *b, unsigned mask) {
  if (!mask) {
    buf_putc(b, '-');
    return;
  }
  bool first = true;
  for (int l = 0; l < LIMIT_KINDS; l++)
    if (mask & (1u << l)) {
      if (!first) buf_putc(b, '/');
      buf_puts(b, deep_limit_name(l));
      first = false;
    }
}

static void heading(Doc *d, const char *tool, const char *pattern, const char *none) {
  Buf h = {0};
  if (pattern) buf_printf(&h, "%s: the kernels of `%s`", tool, pattern);
  else buf_printf(&h, "%s: %s", tool, none);
  doc_heading(d, 2, h.s);
  buf_free(&h);
}

/* The kernels of the CSV that are not in the trace, or joined by their
 * function's name only. */
static void join_notes(Doc *d, const Join *j, const char *const *names) {
  size_t fn = 0, none = 0;
  for (size_t i = 0; i < j->n; i++) fn += j->v[i].join == JOIN_FUNCTION, none += j->v[i].join == JOIN_NONE;
  if (fn) {
    buf_puts(doc_para(d), "Joined by the function's name only (the spellings differ): ");
    size_t k = 0;
    for (size_t i = 0; i < j->n; i++) {
      if (j->v[i].join != JOIN_FUNCTION) continue;
      if (k++) buf_puts(doc_span(d, SPAN_PLAIN), ", ");
      buf_puts(doc_span(d, SPAN_CODE), names[j->v[i].csv]);
    }
    buf_puts(doc_span(d, SPAN_PLAIN), ".");
  }
  if (none)
    buf_printf(doc_para(d), "%zu kernel(s) of the CSV are not in the trace's kernel table (count and GPU ms: -).",
               none);
}

static void ncu_section(Doc *d, const Model *m, const Summary *s, const Ours *o, const DeepNcu *x) {
  const NcuData *nd = &x->data;
  heading(d, "Nsight Compute", x->pattern, "the kernels profiled");
  doc_para(d);
  buf_puts(doc_span(d, SPAN_CODE), nd->path);
  Buf *p = doc_span(d, SPAN_PLAIN);
  if (!nd->kernels.n) {
    buf_puts(p, ": no kernel launch profiled.");
    return;
  }
  buf_printf(p, ": %llu profiled launch(es) of %zu kernel(s)", (unsigned long long)nd->rows, nd->kernels.n);
  if (nd->kernels.n > s->opt.top_kernels) buf_printf(p, ", the top %zu shown", s->opt.top_kernels);
  buf_puts(p, ". Count and GPU ms are this trace's; the rest are ncu's means over its profiled launches "
           "(-: not measured). The hint's rules are in docs/nctrace.md.");
  Join j = {0};
  ncu_join(m, o, x, &j);
  size_t n = shown(j.n, s->opt.top_kernels);
  doc_table(d, "lrrrrrrrl", "kernel", "count", "GPU ms", "profiled", "ncu mean us", "SM %", "memory %", "DRAM %",
            "hint");
  for (size_t i = 0; i < n; i++) {
    const NcuKernel *k = &nd->kernels.v[j.v[i].csv];
    const KernelRow *r = j.v[i].ours >= 0 ? o->rows.v[j.v[i].ours] : NULL;
    doc_row(d);
    buf_puts(doc_cell(d), shown_name(m, o, &j.v[i], k->name));
    if (r) {
      buf_printf(doc_cell(d), "%llu", (unsigned long long)r->count);
      buf_ms(doc_cell(d), r->total);
    } else {
      buf_puts(doc_cell(d), "-");
      buf_puts(doc_cell(d), "-");
    }
    buf_printf(doc_cell(d), "%llu", (unsigned long long)k->launches);
    if (isnan(k->duration_ns)) buf_puts(doc_cell(d), "-");
    else buf_us(doc_cell(d), llround(k->duration_ns));
    cell_f(d, "%.1f", k->sm_pct);
    cell_f(d, "%.1f", k->mem_pct);
    cell_f(d, "%.1f", k->dram_pct);
    ncu_hint(k, doc_cell(d));
  }
  buf_puts(doc_para(d), "Occupancy and launch configuration:");
  doc_table(d, "lllrrrrl", "kernel", "block", "grid", "registers", "shared bytes/block", "theoretical occupancy %",
            "achieved occupancy %", "limiter");
  for (size_t i = 0; i < n; i++) {
    const NcuKernel *k = &nd->kernels.v[j.v[i].csv];
    doc_row(d);
    buf_puts(doc_cell(d), shown_name(m, o, &j.v[i], k->name));
    Buf *c = doc_cell(d);
    buf_puts(c, k->block ? k->block : "-");
    if (k->block_varies) buf_puts(c, " (varies)");
    c = doc_cell(d);
    buf_puts(c, k->grid ? k->grid : "-");
    if (k->grid_varies) buf_puts(c, " (varies)");
    cell_f(d, "%.0f", k->registers);
    cell_f(d, "%.0f", k->smem_block);
    cell_f(d, "%.1f", k->occ_theoretical);
    cell_f(d, "%.1f", k->occ_achieved);
    limiter_text(doc_cell(d), k->limiter);
  }
  bool roof = false;
  for (size_t i = 0; i < n; i++) {
    const NcuKernel *k = &nd->kernels.v[j.v[i].csv];
    roof |= !isnan(k->flops) || !isnan(k->dram_bw) || !isnan(k->peak_flops);
  }
  if (roof) {
    buf_puts(doc_para(d), "FP32 roofline (DRAM): arithmetic intensity = FLOP/s / DRAM bytes/s; below the ridge "
             "point (peak FLOP/s / peak bytes/s) a kernel is on the memory side of the roofline.");
    doc_table(d, "lrrrrlrr", "kernel", "GFLOP/s", "DRAM GB/s", "FLOP/byte", "ridge FLOP/byte", "side",
              "peak GFLOP/s", "peak GB/s");
    for (size_t i = 0; i < n; i++) {
      const NcuKernel *k = &nd->kernels.v[j.v[i].csv];
      const char *side = ncu_roofline_side(k);
      doc_row(d);
      buf_puts(doc_cell(d), shown_name(m, o, &j.v[i], k->name));
      cell_f(d, "%.1f", k->flops / 1e9);
      cell_f(d, "%.1f", k->dram_bw / 1e9);
      cell_f(d, "%.3f", ncu_intensity(k));
      cell_f(d, "%.2f", ncu_ridge(k));
      buf_puts(doc_cell(d), side ? side : "-");
      cell_f(d, "%.1f", k->peak_flops / 1e9);
      cell_f(d, "%.1f", k->peak_bw / 1e9);
    }
  }
  const char **names = xmalloc(nd->kernels.n * sizeof *names);
  for (size_t i = 0; i < nd->kernels.n; i++) names[i] = nd->kernels.v[i].name;
  join_notes(d, &j, names);
  free(names);
  vec_free(&j);
}

static void cell_us(Doc *d, int64_t ns) {
  if (ns < 0) buf_puts(doc_cell(d), "-");
  else buf_us(doc_cell(d), ns);
}

static void nsys_section(Doc *d, const Model *m, const Summary *s, const Ours *o, const DeepNsys *x) {
  const NsysData *nd = &x->data;
  heading(d, "Nsight Systems", x->pattern, "the GPU kernels");
  doc_para(d);
  buf_puts(doc_span(d, SPAN_CODE), nd->path);
  Buf *p = doc_span(d, SPAN_PLAIN);
  if (!nd->kernels.n) {
    buf_puts(p, ": no kernel.");
    return;
  }
  uint64_t inst = 0;
  int64_t total = 0;
  for (size_t i = 0; i < nd->kernels.n; i++) inst += nd->kernels.v[i].instances, total += nd->kernels.v[i].total;
  buf_printf(p, ": %zu kernel name(s), %llu instance(s), ", nd->kernels.n, (unsigned long long)inst);
  buf_ms(p, total);
  buf_puts(p, " ms");
  if (nd->kernels.n > s->opt.top_kernels) buf_printf(p, ", the top %zu shown", s->opt.top_kernels);
  buf_puts(p, ". Count and GPU ms are this trace's, the rest Nsight Systems'.");
  Join j = {0};
  nsys_join(m, o, x, &j);
  /* in Nsight Systems' order (its total time) */
  doc_table(d, "lrrrrrrrr", "kernel", "count", "GPU ms", "nsys instances", "nsys total ms", "nsys avg us",
            "nsys med us", "nsys min us", "nsys max us");
  size_t n = shown(nd->kernels.n, s->opt.top_kernels);
  for (size_t c = 0; c < n; c++) {
    const Joined *x2 = NULL;
    for (size_t i = 0; i < j.n && !x2; i++)
      if (j.v[i].csv == c) x2 = &j.v[i];
    const NsysKernel *k = &nd->kernels.v[c];
    const KernelRow *r = x2->ours >= 0 ? o->rows.v[x2->ours] : NULL;
    doc_row(d);
    buf_puts(doc_cell(d), shown_name(m, o, x2, k->name));
    if (r) {
      buf_printf(doc_cell(d), "%llu", (unsigned long long)r->count);
      buf_ms(doc_cell(d), r->total);
    } else {
      buf_puts(doc_cell(d), "-");
      buf_puts(doc_cell(d), "-");
    }
    buf_printf(doc_cell(d), "%llu", (unsigned long long)k->instances);
    buf_ms(doc_cell(d), k->total);
    cell_us(d, k->avg);
    cell_us(d, k->med);
    cell_us(d, k->min);
    cell_us(d, k->max);
  }
  const char **names = xmalloc(nd->kernels.n * sizeof *names);
  for (size_t i = 0; i < nd->kernels.n; i++) names[i] = nd->kernels.v[i].name;
  join_notes(d, &j, names);
  free(names);
  vec_free(&j);
}

void deep_doc(Doc *d, const Model *m, const Summary *s, const Deep *deep) {
  if (!deep_any(deep)) return;
  Ours o;
  ours_init(&o, m, s);
  for (size_t i = 0; i < deep->ncu.n; i++) ncu_section(d, m, s, &o, &deep->ncu.v[i]);
  for (size_t i = 0; i < deep->nsys.n; i++) nsys_section(d, m, s, &o, &deep->nsys.v[i]);
  ours_free(&o);
}

/* ---- JSON ---- */






static const char *join_name(int how) { return how == JOIN_NAME ? "name" : how == JOIN_FUNCTION ? "function" : NULL; }

static void jours(Buf *b, const Ours *o, const Joined *x) {
  const KernelRow *r = x->ours >= 0 ? o->rows.v[x->ours] : NULL;
  json_str(b, "join", join_name(x->join));
  json_key(b, "count");
  if (r) buf_printf(b, "%llu,", (unsigned long long)r->count);
  else buf_puts(b, "null,");
  json_us_opt(b, "total_us", r ? r->total : -1);
}

void deep_json(Buf *b, const Model *m, const Summary *s, const Deep *deep) {
  if (!deep_any(deep)) return;
  Ours o;
  ours_init(&o, m, s);
  if (deep->ncu.n) {
    json_key(b, "ncu");
    buf_putc(b, '[');
    for (size_t f = 0; f < deep->ncu.n; f++) {
      const DeepNcu *x = &deep->ncu.v[f];
      Join j = {0};
      ncu_join(m, &o, x, &j);
      for (size_t i = 0; i < shown(j.n, s->opt.top_kernels); i++) {
        const NcuKernel *k = &x->data.kernels.v[j.v[i].csv];
        buf_putc(b, '{');
        json_str(b, "file", x->data.path);
        json_str(b, "pattern", x->pattern);
        json_str(b, "name", shown_name(m, &o, &j.v[i], k->name));
        json_str(b, "ncu_name", k->name);
        jours(b, &o, &j.v[i]);
        json_key(b, "launches");
        buf_printf(b, "%llu,", (unsigned long long)k->launches);
        json_us_opt(b, "duration_us", isnan(k->duration_ns) ? -1 : llround(k->duration_ns));
        json_num(b, "sm_pct", "%.2f", k->sm_pct);
        json_num(b, "memory_pct", "%.2f", k->mem_pct);
        json_num(b, "dram_pct", "%.2f", k->dram_pct);
        json_num(b, "achieved_occupancy_pct", "%.2f", k->occ_achieved);
        json_num(b, "theoretical_occupancy_pct", "%.2f", k->occ_theoretical);
        json_num(b, "registers_per_thread", "%.0f", k->registers);
        json_num(b, "shared_mem_per_block", "%.0f", k->smem_block);
        Buf t = {0};
        limiter_text(&t, k->limiter);
        json_str(b, "occupancy_limiter", k->limiter ? t.s : NULL);
        buf_free(&t);
        json_str(b, "block", k->block);
        json_str(b, "grid", k->grid);
        json_num(b, "fp32_flops", "%.0f", k->flops);
        json_num(b, "dram_bytes_per_s", "%.0f", k->dram_bw);
        json_num(b, "arithmetic_intensity", "%.4f", ncu_intensity(k));
        json_num(b, "peak_fp32_flops", "%.0f", k->peak_flops);
        json_num(b, "peak_dram_bytes_per_s", "%.0f", k->peak_bw);
        json_num(b, "ridge", "%.4f", ncu_ridge(k));
        json_str(b, "roofline_side", ncu_roofline_side(k));
        ncu_hint(k, &t);
        json_str(b, "hint", t.s);
        buf_free(&t);
        json_end(b, '}');
        buf_putc(b, ',');
      }
      vec_free(&j);
    }
    json_end(b, ']');
    buf_putc(b, ',');
  }
  if (deep->nsys.n) {
    json_key(b, "nsys");
    buf_putc(b, '[');
    for (size_t f = 0; f < deep->nsys.n; f++) {
      const DeepNsys *x = &deep->nsys.v[f];
      Join j = {0};
      nsys_join(m, &o, x, &j);
      for (size_t c = 0; c < shown(x->data.kernels.n, s->opt.top_kernels); c++) {
        const Joined *jx = NULL;
        for (size_t i = 0; i < j.n && !jx; i++)
          if (j.v[i].csv == c) jx = &j.v[i];
        const NsysKernel *k = &x->data.kernels.v[c];
        buf_putc(b, '{');
        json_str(b, "file", x->data.path);
        json_str(b, "pattern", x->pattern);
        json_str(b, "name", shown_name(m, &o, jx, k->name));
        json_str(b, "nsys_name", k->name);
        jours(b, &o, jx);
        json_key(b, "instances");
        buf_printf(b, "%llu,", (unsigned long long)k->instances);
        json_us_opt(b, "nsys_total_us", k->total);
        json_us_opt(b, "avg_us", k->avg);
        json_us_opt(b, "med_us", k->med);
        json_us_opt(b, "min_us", k->min);
        json_us_opt(b, "max_us", k->max);
        json_us_opt(b, "std_us", k->std);
        json_end(b, '}');
        buf_putc(b, ',');
      }
      vec_free(&j);
    }
    json_end(b, ']');
    buf_putc(b, ',');
  }
  ours_free(&o);
}
