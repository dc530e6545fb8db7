/* deep: Nsight Compute's raw CSV and Nsight Systems' kernel summary CSV
 * read into per-kernel figures (see deep.h). One CSV reader (RFC 4180:
 * quoted fields with "" for a quote, newlines allowed inside quotes)
 * serves both; the file is read whole (an export of thousands of launches
 * is a few MB). */
#include "deep.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- kernel names ---- */

static const char ANON[] = "(anonymous namespace)";

static bool ident_char(char c) { return c == '_' || c == ':' || isalnum((unsigned char)c); }

/* At p, "const T" followed by '*', '&', ',', ')' or '>' (T one or more
 * words, "float", "unsigned int", "at::Tensor"; no template arguments):
 * append "T const" and return the end of T; else NULL. NVIDIA's demangler
 * writes "const float *", the C++ runtime's "float const*". */
static const char *east_const(const char *name, const char *p, Buf *out) {
  if (strncmp(p, "const", 5) || !isspace((unsigned char)p[5]) || (p > name && ident_char(p[-1]))) return NULL;
  const char *q = p + 5, *end = NULL;
  for (;;) {
    while (isspace((unsigned char)*q)) q++;
    if (!ident_char(*q) || *q == ':' ) break;
    while (ident_char(*q)) q++;
    end = q;
  }
  if (!end || !strchr("*&,)>", *q) || !*q) return NULL;
  buf_add(out, p + 5, (size_t)(end - (p + 5)));
  buf_puts(out, " const");
  return end;
}

void deep_kernel_key(const char *name, Buf *out) {
  buf_reserve(out, strlen(name) + 8);
  Buf moved = {0}; /* const moved after its type */
  for (const char *p = name; *p;) {
    const char *e = east_const(name, p, &moved);
    if (e) p = e;
    else buf_putc(&moved, *p++);
  }
  buf_add(&moved, "", 0);
  for (const char *p = moved.s; *p;) {
    if (!strncmp(p, ANON, sizeof ANON - 1)) {
      buf_puts(out, "<unnamed>");
      p += sizeof ANON - 1;
    } else if (isspace((unsigned char)*p)) {
      p++;
    } else {
      buf_putc(out, *p++);
    }
  }
  buf_add(out, "", 0); /* NUL-terminated, also when empty */
  buf_free(&moved);
}

void deep_kernel_base(const char *name, Buf *out) {
  Buf key = {0};
  size_t start = out->len;
  const char *p = name;
  while (isspace((unsigned char)*p)) p++;
  if (!strncmp(p, "void ", 5)) p += 5; /* a template's return type */
  deep_kernel_key(p, &key);
  int angle = 0;
  for (const char *q = key.s; *q; q++) {
    if (!strncmp(q, "<unnamed>", 9)) {
      if (!angle) buf_puts(out, "<unnamed>");
      q += 8;
    } else if (*q == '<') {
      angle++;
    } else if (*q == '>') {
      if (angle) angle--;
    } else if (*q == '(' && !angle) {
      break; /* the parameters */
    } else if (!angle) {
      buf_putc(out, *q);
    }
  }
  buf_add(out, "", 0); /* NUL-terminated, also when empty */
  /* the unqualified name: ncu shortens namespaces in its names (on an H100,
   * "cudnn::engines_precompiled::nchwToNhwcKernel" became
   * "engines_precompiled::nchwToNhwcKernel", "at::native::" became "at::") */
  const char *last = NULL;
  for (const char *q = out->s + start; (q = strstr(q, "::")); q += 2) last = q + 2;
  if (last) {
    size_t keep = strlen(last);
    memmove(out->s + start, last, keep + 1);
    out->len = start + keep;
  }
  buf_free(&key);
}

const char *deep_limit_name(int l) {
  static const char *const N[LIMIT_KINDS] = {"registers", "shared memory", "warps", "blocks", "barriers"};
  return l >= 0 && l < LIMIT_KINDS ? N[l] : "?";
}

/* ---- reading the file ---- */

typedef struct {
  const char *path;
  char *s;
  size_t n, pos;
  int line;          /* of pos, from 1 */
  size_t line_start; /* offset of that line */
  bool quiet;        /* trying a line: its errors are not reported */
} Csv;

/* One record: its fields NUL-separated in text, their offsets in off. */
typedef struct {
  Buf text;
  VEC(size_t) off;
  int line;
} Rec;

static const char *fld(const Rec *r, size_t i) { return r->text.s + r->off.v[i]; }

static int csv_error(const Csv *c, int line, size_t col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int csv_error(const Csv *c, int line, size_t col, const char *fmt, ...) {
  if (c->quiet) return -1;
  char where[4096];
  snprintf(where, sizeof where, "%s:%d:%zu", c->path, line, col);
  va_list ap;
  va_start(ap, fmt);
  nct_vsay("error", where, fmt, ap);
  va_end(ap);
  return -1;
}

static int csv_open(Csv *c, const char *path) {
  memset(c, 0, sizeof *c);
  c->path = path;
  c->line = 1;
  FILE *f = fopen(path, "rb");
  if (!f) return nct_error("%s: cannot open: %s", path, strerror(errno));
  Buf b = {0};
  char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, k);
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    buf_free(&b);
    return nct_error("%s: cannot read: %s", path, strerror(errno));
  }
  c->n = b.len;
  c->s = buf_steal(&b);
  return 0;
}

static void skip_line(Csv *c) {
  while (c->pos < c->n && c->s[c->pos] != '\n') c->pos++;
  if (c->pos < c->n) {
    c->pos++;
    c->line++;
    c->line_start = c->pos;
  }
}

static bool at_eof(const Csv *c) { return c->pos >= c->n; }

/* The record at pos. 1, or -1 (reported). */
static int csv_record(Csv *c, Rec *r) {
  r->text.len = 0;
  if (r->text.s) r->text.s[0] = 0;
  r->off.n = 0;
  r->line = c->line;
  vec_push(&r->off, (size_t)0);
  for (;;) {
    if (c->pos >= c->n) break;
    char ch = c->s[c->pos];
    bool field_start = r->text.len == r->off.v[r->off.n - 1];
    if (ch == '"' && field_start) {
      int qline = c->line;
      size_t qcol = c->pos - c->line_start + 1;
      c->pos++;
      for (;;) {
        if (c->pos >= c->n)
          return csv_error(c, qline, qcol, "unterminated quoted field (is the file truncated?)");
        char q = c->s[c->pos];
        if (q == '"') {
          if (c->pos + 1 < c->n && c->s[c->pos + 1] == '"') {
            buf_putc(&r->text, '"');
            c->pos += 2;
            continue;
          }
          c->pos++;
          break;
        }
        if (q == '\n') {
          c->line++;
          c->line_start = c->pos + 1;
        }
        buf_putc(&r->text, q);
        c->pos++;
      }
      char nx = c->pos < c->n ? c->s[c->pos] : '\n';
      if (nx == '\r' && c->pos + 1 < c->n && c->s[c->pos + 1] == '\n') nx = '\n', c->pos++;
      if (nx != ',' && nx != '\n')
        return csv_error(c, c->line, c->pos - c->line_start + 1, "expected ',' or the end of the line after a quoted field");
      continue;
    }
    if (ch == ',') {
      buf_putc(&r->text, 0);
      vec_push(&r->off, r->text.len);
      c->pos++;
      continue;
    }
    if (ch == '\n') {
      c->pos++;
      c->line++;
      c->line_start = c->pos;
      break;
    }
    if (ch == '\r' && c->pos + 1 < c->n && c->s[c->pos + 1] == '\n') {
      c->pos++;
      continue;
    }
    if (ch == 0) return csv_error(c, c->line, c->pos - c->line_start + 1, "a NUL byte: not a CSV text file");
    buf_putc(&r->text, ch);
    c->pos++;
  }
  buf_putc(&r->text, 0);
  return 1;
}

static void rec_free(Rec *r) {
  buf_free(&r->text);
  vec_free(&r->off);
}

/* A number as the exports write them: "1,234.5" (',' separates thousands),
 * blanks around allowed. false for "", "n/a", text. */
static bool num(const char *f, double *v) {
  char tmp[128];
  size_t k = 0;
  while (isspace((unsigned char)*f)) f++;
  for (; *f && k + 1 < sizeof tmp; f++)
    if (*f != ',') tmp[k++] = *f;
  if (*f) return false; /* too long for a number */
  while (k && isspace((unsigned char)tmp[k - 1])) k--;
  tmp[k] = 0;
  if (!k) return false;
  char *end;
  errno = 0;
  double d = strtod(tmp, &end);
  if (*end || !isfinite(d)) return false;
  *v = d;
  return true;
}

/* ---- units ----
 * ncu writes base units in its 2025 exports ("ns", "byte/block", "hz",
 * "byte/s"); other versions and --print-units scale them ("usecond",
 * "Kbyte/block", "Ghz", "Gbyte/second", "cycle/nsecond"). The factor to
 * seconds, bytes, hertz and per-second figures; 1 for what it does not
 * know ("%", "inst/cycle", "register/thread", "block"). */

static double si_prefix(const char *u, size_t *len) {
  static const struct {
    const char *p;
    double f;
  } P[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"n", 1e-9}, {"u", 1e-6}, {"m", 1e-3},
           {"K", 1e3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
  static const char *const BASES[] = {"second", "byte", "hz", "Hz", "cycle", "inst", "s"};
  for (size_t i = 0; i < sizeof P / sizeof *P; i++) {
    size_t pl = strlen(P[i].p);
    if (strncmp(u, P[i].p, pl)) continue;
    for (size_t b = 0; b < sizeof BASES / sizeof *BASES; b++) {
      size_t bl = strlen(BASES[b]);
      if (!strncmp(u + pl, BASES[b], bl) && (u[pl + bl] == 0 || u[pl + bl] == '/')) {
        *len = pl + bl;
        return P[i].f;
      }
    }
  }
  *len = 0;
  return 1.0;
}

/* A duration's unit: the factor to ns ("ns", "usecond", "msecond", ...). */
static double time_to_ns(const char *u) {
  static const struct {
    const char *u;
    double f;
  } T[] = {{"ns", 1}, {"nsecond", 1}, {"us", 1e3}, {"usecond", 1e3}, {"ms", 1e6}, {"msecond", 1e6},
           {"s", 1e9}, {"second", 1e9}};
  for (size_t i = 0; i < sizeof T / sizeof *T; i++)
    if (!strcmp(u, T[i].u)) return T[i].f;
  return 1; /* none written: ns */
}

static double unit_scale(const char *u) {
  while (isspace((unsigned char)*u)) u++;
  size_t len;
  double f = si_prefix(u, &len);
  const char *slash = strchr(u, '/');
  if (slash) {
    double d = si_prefix(slash + 1, &len);
    if (len) f /= d; /* per nanosecond = 1e9 per second */
  }
  return f;
}

/* ---- Nsight Compute ---- */

enum {
  M_DUR, M_SM, M_MEM, M_DRAM, M_OCC_ACH, M_OCC_THEO, M_REGS, M_SMEM_STATIC, M_SMEM_DYN, M_SMEM,
  M_LIM_REG, M_LIM_SMEM, M_LIM_WARPS, M_LIM_BLOCKS, M_LIM_BARRIERS, M_BLOCK_SIZE, M_GRID_SIZE, M_WAVES,
  M_SM_COUNT, M_MP_COUNT, M_FADD, M_FMUL, M_FFMA, M_SMSP_CPS, M_SM_CPS, M_DRAM_BPS, M_FFMA_PEAK, M_DRAM_PEAK,
  M_DRAM_CPS, M_COUNT
};

static const char *const METRIC[M_COUNT] = {
  [M_DUR] = "gpu__time_duration.sum",
  [M_SM] = "sm__throughput.avg.pct_of_peak_sustained_elapsed",
  [M_MEM] = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
  [M_DRAM] = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
  [M_OCC_ACH] = "sm__warps_active.avg.pct_of_peak_sustained_active",
  [M_OCC_THEO] = "sm__maximum_warps_per_active_cycle_pct",
  [M_REGS] = "launch__registers_per_thread",
  [M_SMEM_STATIC] = "launch__shared_mem_per_block_static",
  [M_SMEM_DYN] = "launch__shared_mem_per_block_dynamic",
  [M_SMEM] = "launch__shared_mem_per_block",
  [M_LIM_REG] = "launch__occupancy_limit_registers",
  [M_LIM_SMEM] = "launch__occupancy_limit_shared_mem",
  [M_LIM_WARPS] = "launch__occupancy_limit_warps",
  [M_LIM_BLOCKS] = "launch__occupancy_limit_blocks",
  [M_LIM_BARRIERS] = "launch__occupancy_limit_barriers",
  [M_BLOCK_SIZE] = "launch__block_size",
  [M_GRID_SIZE] = "launch__grid_size",
  [M_WAVES] = "launch__waves_per_multiprocessor",
  [M_SM_COUNT] = "launch__sm_count",
  [M_MP_COUNT] = "device__attribute_multiprocessor_count",
  [M_FADD] = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
  [M_FMUL] = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
  [M_FFMA] = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
  [M_SMSP_CPS] = "smsp__cycles_elapsed.avg.per_second",
  [M_SM_CPS] = "sm__cycles_elapsed.avg.per_second",
  [M_DRAM_BPS] = "dram__bytes.sum.per_second",
  [M_FFMA_PEAK] = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
  [M_DRAM_PEAK] = "dram__bytes.sum.peak_sustained",
  [M_DRAM_CPS] = "dram__cycles_elapsed.avg.per_second",
};

/* The aggregated figures, summed while the launches are read. */
enum {
  F_DUR, F_SM, F_MEM, F_DRAM, F_OCC_ACH, F_OCC_THEO, F_REGS, F_SMEM, F_LIM0, F_BLOCK = F_LIM0 + LIMIT_KINDS,
  F_GRID, F_WAVES, F_SMS, F_FLOPS, F_DRAM_BW, F_PEAK_FLOPS, F_PEAK_BW, F_COUNT
};

typedef struct {
  double sum[F_COUNT];
  uint64_t n[F_COUNT];
} Acc;

static void acc_add(Acc *a, int f, double v) {
  if (isnan(v)) return;
  a->sum[f] += v;
  a->n[f]++;
}

static double acc_mean(const Acc *a, int f) { return a->n[f] ? a->sum[f] / (double)a->n[f] : NAN; }

typedef struct {
  long col[M_COUNT];   /* column of each metric, -1 missing */
  double scale[M_COUNT];
  long name_col, block_col, grid_col;
  size_t ncols;
} NcuCols;

/* Metric m of the launch in r, in base units; NAN: not measured. */
static double metric(const NcuCols *h, const Rec *r, int m) {
  double v;
  if (h->col[m] < 0 || !num(fld(r, (size_t)h->col[m]), &v)) return NAN;
  return v * h->scale[m];
}

static void add_launch(const NcuCols *h, const Rec *r, Acc *a) {
  acc_add(a, F_DUR, metric(h, r, M_DUR)); /* ns */
  acc_add(a, F_SM, metric(h, r, M_SM));
  acc_add(a, F_MEM, metric(h, r, M_MEM));
  acc_add(a, F_DRAM, metric(h, r, M_DRAM));
  acc_add(a, F_OCC_ACH, metric(h, r, M_OCC_ACH));
  acc_add(a, F_OCC_THEO, metric(h, r, M_OCC_THEO));
  acc_add(a, F_REGS, metric(h, r, M_REGS));
  double st = metric(h, r, M_SMEM_STATIC), dy = metric(h, r, M_SMEM_DYN);
  acc_add(a, F_SMEM, !isnan(st) && !isnan(dy) ? st + dy : metric(h, r, M_SMEM));
  for (int l = 0; l < LIMIT_KINDS; l++) acc_add(a, F_LIM0 + l, metric(h, r, M_LIM_REG + l));
  acc_add(a, F_BLOCK, metric(h, r, M_BLOCK_SIZE));
  acc_add(a, F_GRID, metric(h, r, M_GRID_SIZE));
  acc_add(a, F_WAVES, metric(h, r, M_WAVES));
  double sms = metric(h, r, M_SM_COUNT);
  acc_add(a, F_SMS, isnan(sms) ? metric(h, r, M_MP_COUNT) : sms);
  double smsp_cps = metric(h, r, M_SMSP_CPS), sm_cps = metric(h, r, M_SM_CPS);
  if (isnan(smsp_cps)) smsp_cps = sm_cps;
  if (isnan(sm_cps)) sm_cps = smsp_cps;
  acc_add(a, F_FLOPS, (metric(h, r, M_FADD) + metric(h, r, M_FMUL) + 2 * metric(h, r, M_FFMA)) * smsp_cps);
  acc_add(a, F_DRAM_BW, metric(h, r, M_DRAM_BPS));
  acc_add(a, F_PEAK_FLOPS, 2 * metric(h, r, M_FFMA_PEAK) * sm_cps);
  acc_add(a, F_PEAK_BW, metric(h, r, M_DRAM_PEAK) * metric(h, r, M_DRAM_CPS));
}

static void finish_kernel(NcuKernel *k, const Acc *a) {
  k->duration_ns = acc_mean(a, F_DUR);
  k->sm_pct = acc_mean(a, F_SM);
  k->mem_pct = acc_mean(a, F_MEM);
  k->dram_pct = acc_mean(a, F_DRAM);
  k->occ_achieved = acc_mean(a, F_OCC_ACH);
  k->occ_theoretical = acc_mean(a, F_OCC_THEO);
  k->registers = acc_mean(a, F_REGS);
  k->smem_block = acc_mean(a, F_SMEM);
  double lo = INFINITY;
  for (int l = 0; l < LIMIT_KINDS; l++) {
    k->limit[l] = acc_mean(a, F_LIM0 + l);
    if (!isnan(k->limit[l]) && k->limit[l] < lo) lo = k->limit[l];
  }
  k->limiter = 0;
  for (int l = 0; l < LIMIT_KINDS; l++)
    if (!isnan(k->limit[l]) && k->limit[l] == lo) k->limiter |= 1u << l;
  k->block_threads = acc_mean(a, F_BLOCK);
  k->grid_blocks = acc_mean(a, F_GRID);
  k->waves = acc_mean(a, F_WAVES);
  k->sm_count = acc_mean(a, F_SMS);
  k->flops = acc_mean(a, F_FLOPS);
  k->dram_bw = acc_mean(a, F_DRAM_BW);
  k->peak_flops = acc_mean(a, F_PEAK_FLOPS);
  k->peak_bw = acc_mean(a, F_PEAK_BW);
}

static long find_col(const Rec *h, const char *name) {
  for (size_t i = 0; i < h->off.n; i++)
    if (!strcmp(fld(h, i), name)) return (long)i;
  return -1;
}

static int cmp_ncu(const void *a, const void *b) {
  const NcuKernel *x = a, *y = b;
  double tx = (double)x->launches * (isnan(x->duration_ns) ? 0 : x->duration_ns);
  double ty = (double)y->launches * (isnan(y->duration_ns) ? 0 : y->duration_ns);
  if (tx != ty) return tx > ty ? -1 : 1;
  return strcmp(x->name, y->name);
}

int ncu_load(const char *path, NcuData *out) {
  memset(out, 0, sizeof *out);
  out->path = xstrdup(path);
  Csv c;
  if (csv_open(&c, path) < 0) return -1;
  Rec r = {0};
  NcuCols h = {0};
  VEC(Acc) accs = {0};
  int rc = -1;
  bool have_header = false, first_row = true;
  while (!at_eof(&c)) {
    if (c.s[c.pos] != '"') { /* ==PROF== lines, the program's output */
      skip_line(&c);
      continue;
    }
    if (csv_record(&c, &r) < 0) goto done;
    /* the header; again when exports of several reports are concatenated */
    if (!have_header || (r.off.n > (size_t)h.name_col && !strcmp(fld(&r, (size_t)h.name_col), "Kernel Name"))) {
      h.name_col = find_col(&r, "Kernel Name");
      if (h.name_col < 0) continue; /* a quoted line of the program's */
      have_header = true;
      first_row = true;
      h.ncols = r.off.n;
      h.block_col = find_col(&r, "Block Size");
      h.grid_col = find_col(&r, "Grid Size");
      for (int m = 0; m < M_COUNT; m++) {
        h.col[m] = find_col(&r, METRIC[m]);
        h.scale[m] = 1.0;
      }
      continue;
    }
    if (r.off.n != h.ncols) {
      csv_error(&c, r.line, 1, "a row of %zu fields after a header of %zu (is the file truncated?)", r.off.n, h.ncols);
      goto done;
    }
    const char *kname = fld(&r, (size_t)h.name_col);
    if (first_row && !*kname) { /* the units row */
      for (int m = 0; m < M_COUNT; m++) {
        if (h.col[m] < 0) continue;
        const char *u = fld(&r, (size_t)h.col[m]);
        h.scale[m] = m == M_DUR ? time_to_ns(u) : unit_scale(u);
      }
      first_row = false;
      continue;
    }
    first_row = false;
    if (!*kname) {
      csv_error(&c, r.line, 1, "a launch without a kernel name");
      goto done;
    }
    out->rows++;
    Buf key = {0};
    deep_kernel_key(kname, &key);
    size_t k = 0;
    while (k < out->kernels.n && strcmp(out->kernels.v[k].key, key.s)) k++;
    if (k == out->kernels.n) {
      NcuKernel nk = {0};
      nk.name = xstrdup(kname);
      nk.key = buf_steal(&key);
      if (h.block_col >= 0) nk.block = xstrdup(fld(&r, (size_t)h.block_col));
      if (h.grid_col >= 0) nk.grid = xstrdup(fld(&r, (size_t)h.grid_col));
      vec_push(&out->kernels, nk);
      Acc a = {0};
      vec_push(&accs, a);
    } else {
      NcuKernel *nk = &out->kernels.v[k];
      if (nk->block && strcmp(nk->block, fld(&r, (size_t)h.block_col))) nk->block_varies = true;
      if (nk->grid && strcmp(nk->grid, fld(&r, (size_t)h.grid_col))) nk->grid_varies = true;
    }
    buf_free(&key);
    out->kernels.v[k].launches++;
    add_launch(&h, &r, &accs.v[k]);
  }
  if (!have_header) {
    csv_error(&c, 1, 1, "no header row with a \"Kernel Name\" column: not the output of "
              "`ncu --import REPORT --csv --page raw`");
    goto done;
  }
  for (size_t k = 0; k < out->kernels.n; k++) finish_kernel(&out->kernels.v[k], &accs.v[k]);
  if (out->kernels.n) qsort(out->kernels.v, out->kernels.n, sizeof *out->kernels.v, cmp_ncu);
  rc = 0;
done:
  vec_free(&accs);
  rec_free(&r);
  free(c.s);
  return rc;
}

void ncu_free(NcuData *d) {
  for (size_t i = 0; i < d->kernels.n; i++) {
    NcuKernel *k = &d->kernels.v[i];
    free(k->name);
    free(k->key);
    free(k->block);
    free(k->grid);
  }
  vec_free(&d->kernels);
  free(d->path);
  d->path = NULL;
}

double ncu_intensity(const NcuKernel *k) {
  if (isnan(k->flops) || isnan(k->dram_bw) || k->dram_bw <= 0) return NAN;
  return k->flops / k->dram_bw;
}

double ncu_ridge(const NcuKernel *k) {
  if (isnan(k->peak_flops) || isnan(k->peak_bw) || k->peak_bw <= 0) return NAN;
  return k->peak_flops / k->peak_bw;
}

const char *ncu_roofline_side(const NcuKernel *k) {
  double ai = ncu_intensity(k), ridge = ncu_ridge(k);
  if (isnan(ai) || isnan(ridge)) return NULL;
  return ai < ridge ? "memory" : "compute";
}

static void sep(Buf *b, size_t start) {
  if (b->len > start) buf_puts(b, "; ");
}

void ncu_hint(const NcuKernel *k, Buf *out) {
  size_t start = out->len;
  if (!isnan(k->sm_pct) && !isnan(k->mem_pct)) {
    if (k->mem_pct >= DEEP_BUSY_PCT && k->mem_pct >= k->sm_pct) buf_puts(out, "memory-bound");
    else if (k->sm_pct >= DEEP_BUSY_PCT) buf_puts(out, "compute-bound");
    else buf_puts(out, "latency-bound");
  }
  if (!isnan(k->occ_theoretical) && k->occ_theoretical < DEEP_FULL_OCC_PCT && k->limiter) {
    for (int l = 0; l < LIMIT_KINDS; l++) {
      if (!(k->limiter & (1u << l))) continue;
      sep(out, start);
      switch (l) {
      case LIMIT_REGISTERS:
        buf_puts(out, "occupancy limited by registers");
        if (!isnan(k->registers)) buf_printf(out, " (%.0f per thread)", k->registers);
        break;
      case LIMIT_SHARED_MEM:
        buf_puts(out, "occupancy limited by shared memory");
        if (!isnan(k->smem_block)) buf_printf(out, " (%.0f bytes per block)", k->smem_block);
        break;
      case LIMIT_WARPS:
      case LIMIT_BLOCKS:
        buf_puts(out, "occupancy limited by block size");
        if (!isnan(k->block_threads)) buf_printf(out, " (%.0f threads)", k->block_threads);
        break;
      default:
        buf_puts(out, "occupancy limited by barriers");
      }
    }
  }
  if (!isnan(k->occ_achieved) && !isnan(k->occ_theoretical) &&
      k->occ_achieved < DEEP_ACHIEVED_RATIO * k->occ_theoretical) {
    sep(out, start);
    buf_printf(out, "achieved occupancy well below theoretical (%.1f%% of %.1f%%)", k->occ_achieved,
               k->occ_theoretical);
  }
  if (!isnan(k->grid_blocks) && !isnan(k->sm_count) && k->grid_blocks < k->sm_count) {
    sep(out, start);
    buf_printf(out, "grid of %.0f blocks for %.0f SMs: some SMs get no block", k->grid_blocks, k->sm_count);
  } else if (!isnan(k->waves) && k->waves < 1.0) {
    sep(out, start);
    buf_printf(out, "grid of %.2f waves: fewer blocks than the SMs hold at once", k->waves);
  }
  if (out->len == start) buf_puts(out, "not measured");
}

/* ---- Nsight Systems ---- */

/* A header like "Total Time (ns)": the name before " (", and the unit's
 * factor to ns; 0 when it is not a time unit. */
static bool header_is(const char *f, const char *name, double *to_ns) {
  size_t n = strlen(name);
  while (isspace((unsigned char)*f)) f++;
  if (strncmp(f, name, n)) return false;
  const char *u = f + n;
  while (*u == ' ') u++;
  if (!*u) {
    *to_ns = 1; /* the older headers ("Average"): nanoseconds */
    return true;
  }
  static const struct {
    const char *u;
    double f;
  } U[] = {{"(ns)", 1}, {"(us)", 1e3}, {"(ms)", 1e6}, {"(s)", 1e9}};
  for (size_t i = 0; i < sizeof U / sizeof *U; i++)
    if (!strcmp(u, U[i].u)) {
      *to_ns = U[i].f;
      return true;
    }
  return false;
}

enum { N_TOTAL, N_INSTANCES, N_AVG, N_MED, N_MIN, N_MAX, N_STD, N_NAME, N_COUNT };

static int cmp_nsys(const void *a, const void *b) {
  const NsysKernel *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return strcmp(x->name, y->name);
}

int nsys_load(const char *path, NsysData *out) {
  static const char *const NAMES[N_COUNT][3] = {
    [N_TOTAL] = {"Total Time", NULL, NULL},     [N_INSTANCES] = {"Instances", NULL, NULL},
    [N_AVG] = {"Avg", "Average", NULL},         [N_MED] = {"Med", "Median", NULL},
    [N_MIN] = {"Min", "Minimum", NULL},         [N_MAX] = {"Max", "Maximum", NULL},
    [N_STD] = {"StdDev", NULL, NULL},           [N_NAME] = {"Name", NULL, NULL},
  };
  memset(out, 0, sizeof *out);
  out->path = xstrdup(path);
  Csv c;
  if (csv_open(&c, path) < 0) return -1;
  Rec r = {0};
  long col[N_COUNT];
  double to_ns[N_COUNT];
  size_t ncols = 0;
  bool have_header = false;
  int rc = -1;
  while (!at_eof(&c)) {
    if (!have_header) {
      /* "Processing [...] with [...]", "Generating SQLite file": skipped */
      char ch = c.s[c.pos];
      if (ch == '\n' || ch == '\r' || (ch != '"' && !isalpha((unsigned char)ch))) {
        skip_line(&c);
        continue;
      }
      Csv probe = c; /* tried quietly: a line of text may not be CSV */
      probe.quiet = true;
      if (csv_record(&probe, &r) < 0) {
        skip_line(&c);
        continue;
      }
      c = probe;
      c.quiet = false;
      for (int k = 0; k < N_COUNT; k++) {
        col[k] = -1;
        for (size_t i = 0; i < r.off.n && col[k] < 0; i++)
          for (int a = 0; a < 3 && NAMES[k][a] && col[k] < 0; a++)
            if (header_is(fld(&r, i), NAMES[k][a], &to_ns[k])) col[k] = (long)i;
      }
      if (col[N_NAME] >= 0 && col[N_TOTAL] >= 0 && col[N_INSTANCES] >= 0) {
        have_header = true;
        ncols = r.off.n;
      }
      continue;
    }
    int line = c.line;
    if (c.s[c.pos] == '\n' || (c.s[c.pos] == '\r' && c.pos + 1 < c.n && c.s[c.pos + 1] == '\n')) break; /* the table's end */
    if (csv_record(&c, &r) < 0) goto done;
    if (r.off.n != ncols) {
      csv_error(&c, line, 1, "a row of %zu fields after a header of %zu (is the file truncated?)", r.off.n, ncols);
      goto done;
    }
    NsysKernel k = {0};
    double v;
    if (!num(fld(&r, (size_t)col[N_INSTANCES]), &v) || v < 0) {
      csv_error(&c, line, 1, "\"Instances\" is not a number: '%s'", fld(&r, (size_t)col[N_INSTANCES]));
      goto done;
    }
    k.instances = (uint64_t)llround(v);
    if (!num(fld(&r, (size_t)col[N_TOTAL]), &v)) {
      csv_error(&c, line, 1, "\"Total Time\" is not a number: '%s'", fld(&r, (size_t)col[N_TOTAL]));
      goto done;
    }
    k.total = llround(v * to_ns[N_TOTAL]);
    int64_t *opt[] = {[N_AVG] = &k.avg, [N_MED] = &k.med, [N_MIN] = &k.min, [N_MAX] = &k.max, [N_STD] = &k.std};
    for (int f = N_AVG; f <= N_STD; f++)
      *opt[f] = col[f] >= 0 && num(fld(&r, (size_t)col[f]), &v) ? llround(v * to_ns[f]) : -1;
    k.name = xstrdup(fld(&r, (size_t)col[N_NAME]));
    Buf key = {0};
    deep_kernel_key(k.name, &key);
    k.key = buf_steal(&key);
    vec_push(&out->kernels, k);
  }
  if (!have_header) {
    csv_error(&c, 1, 1, "no header row with \"Total Time (ns)\", \"Instances\" and \"Name\": not the output of "
              "`nsys stats --report cuda_gpu_kern_sum --format csv`");
    goto done;
  }
  if (out->kernels.n) qsort(out->kernels.v, out->kernels.n, sizeof *out->kernels.v, cmp_nsys);
  rc = 0;
done:
  rec_free(&r);
  free(c.s);
  return rc;
}

void nsys_free(NsysData *d) {
  for (size_t i = 0; i < d->kernels.n; i++) {
    free(d->kernels.v[i].name);
    free(d->kernels.v[i].key);
  }
  vec_free(&d->kernels);
  free(d->path);
  d->path = NULL;
}
