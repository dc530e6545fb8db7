/* edits: sort, check, apply; line map; unified diff from the edit list. */
#include "edits.h"

#include <stdlib.h>
#include <string.h>

void edits_add(Edits *e, size_t start, size_t end, const char *text, int order) {
  if (end < start) BUG("edit end %zu before start %zu", end, start);
  Edit x = {start, end, xstrdup(text), order, e->v.n};
  vec_push(&e->v, x);
}

void edits_addf(Edits *e, size_t start, size_t end, int order, const char *fmt, ...) {
  Buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  Edit x = {start, end, buf_steal(&b), order, e->v.n};
  vec_push(&e->v, x);
}

static int cmp_edit(const void *pa, const void *pb) {
  const Edit *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  int az = a->end == a->start, bz = b->end == b->start;
  if (az != bz) return az ? -1 : 1; /* insertions before a replacement at the same offset */
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int count_nl(const char *s, size_t n) {
  int c = 0;
  for (size_t i = 0; i < n; i++) c += s[i] == '\n';
  return c;
}

int edits_apply(Edits *e, const char *src, size_t len, Buf *out, LineMap *map) {
  if (e->v.n) qsort(e->v.v, e->v.n, sizeof *e->v.v, cmp_edit);
  for (size_t i = 0; i + 1 < e->v.n; i++)
    if (e->v.v[i].end > e->v.v[i + 1].start) return -1;
  size_t pos = 0;
  int line = 1, delta = 0;
  buf_reserve(out, len + len / 8);
  for (size_t i = 0; i < e->v.n; i++) {
    const Edit *x = &e->v.v[i];
    if (x->end > len) BUG("edit past end of file");
    buf_add(out, src + pos, x->start - pos);
    line += count_nl(src + pos, x->start - pos);
    size_t tl = strlen(x->text);
    buf_add(out, x->text, tl);
    int removed = count_nl(src + x->start, x->end - x->start);
    int added = count_nl(x->text, tl);
    line += removed;
    pos = x->end;
    if (map && added != removed) {
      delta += added - removed;
      if (map->v.n && map->v.v[map->v.n - 1].orig == line) map->v.v[map->v.n - 1].delta = delta;
      else vec_push(&map->v, ((LineShift){line, delta}));
    }
  }
  buf_add(out, src + pos, len - pos);
  return 0;
}

void edits_free(Edits *e) {
  for (size_t i = 0; i < e->v.n; i++) free(e->v.v[i].text);
  vec_free(&e->v);
}

int linemap_get(const LineMap *m, int orig) {
  /* entries are in increasing `orig`: binary search for the last one at or
   * before `orig` (a linear scan made full-trace runs quadratic) */
  size_t lo = 0, hi = m->v.n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->v.v[mid].orig <= orig) lo = mid + 1;
    else hi = mid;
  }
  return orig + (lo ? m->v.v[lo - 1].delta : 0);
}

void linemap_free(LineMap *m) { vec_free(&m->v); }

/* ---- unified diff ---------------------------------------------------- */

typedef struct { const char *s; size_t n; } Line;

/* Split [s, s+n) into lines (each without its '\n'); *last_nl tells whether
 * the text ended with a newline. */
static size_t split_lines(const char *s, size_t n, Line **out) {
  size_t cnt = 0, cap = 16;
  Line *v = xmalloc(cap * sizeof *v);
  size_t i = 0;
  while (i < n) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - s) : n;
    if (cnt == cap) v = xrealloc(v, (cap *= 2) * sizeof *v);
    v[cnt++] = (Line){s + i, e - i};
    i = e + 1;
  }
  *out = v;
  return cnt;
}

static size_t line_start_of(const char *s, size_t off) {
  while (off > 0 && s[off - 1] != '\n') off--;
  return off;
}

static size_t line_end_of(const char *s, size_t n, size_t off) {
  while (off < n && s[off] != '\n') off++;
  return off < n ? off + 1 : n;
}

static void emit_line(Buf *d, char tag, Line l, bool no_nl) {
  buf_putc(d, tag);
  buf_add(d, l.s, l.n);
  buf_putc(d, '\n');
  if (no_nl) buf_puts(d, "\\ No newline at end of file\n");
}

static bool line_eq(Line a, Line b) { return a.n == b.n && !memcmp(a.s, b.s, a.n); }

/* The changed middle of a hunk: a longest-common-subsequence alignment so
 * lines that only moved show as context, not as -/+ pairs. Hunks are small
 * (an edit cluster); past a size bound it falls back to all -, then all +. */
static void emit_middle(Buf *d, Line *o, size_t on, Line *n, size_t nn, bool o_nonl, bool n_nonl) {
  if (on == 0 || nn == 0 || on * nn > 4000000) {
    for (size_t k = 0; k < on; k++) emit_line(d, '-', o[k], o_nonl && k == on - 1);
    for (size_t k = 0; k < nn; k++) emit_line(d, '+', n[k], n_nonl && k == nn - 1);
    return;
  }
  unsigned *t = xcalloc((on + 1) * (nn + 1), sizeof *t);
#define T(i, j) t[(i) * (nn + 1) + (j)]
  for (size_t i = on; i-- > 0;)
    for (size_t j = nn; j-- > 0;)
      T(i, j) = line_eq(o[i], n[j]) ? T(i + 1, j + 1) + 1 : T(i + 1, j) > T(i, j + 1) ? T(i + 1, j) : T(i, j + 1);
  size_t i = 0, j = 0;
  while (i < on || j < nn) {
    if (i < on && j < nn && line_eq(o[i], n[j]) && !((o_nonl && i == on - 1) != (n_nonl && j == nn - 1))) {
      emit_line(d, ' ', o[i], o_nonl && i == on - 1);
      i++, j++;
    } else if (i < on && (j == nn || T(i + 1, j) >= T(i, j + 1))) {
      emit_line(d, '-', o[i], o_nonl && i == on - 1);
      i++;
    } else {
      emit_line(d, '+', n[j], n_nonl && j == nn - 1);
      j++;
    }
  }
#undef T
  free(t);
}

void edits_diff(const Edits *e, const char *src, size_t len, const char *out, size_t outlen,
                const LineMap *map, const char *a, const char *b, Buf *diff) {
  (void)map;
  if (!e->v.n) return;
  buf_printf(diff, "--- %s\n+++ %s\n", a, b);
  const int ctx = 3;
  long shift = 0; /* output offset - original offset, before edit i */
  size_t i = 0;
  while (i < e->v.n) {
    /* grow a cluster of edits whose context windows touch */
    size_t j = i;
    long shift_before = shift;
    size_t ostart = line_start_of(src, e->v.v[i].start);
    size_t oend = line_end_of(src, len, e->v.v[i].end > e->v.v[i].start ? e->v.v[i].end - 1 : e->v.v[i].end);
    for (;;) {
      const Edit *x = &e->v.v[j];
      shift += (long)strlen(x->text) - (long)(x->end - x->start);
      size_t xe = line_end_of(src, len, x->end > x->start ? x->end - 1 : x->end);
      if (xe > oend) oend = xe;
      if (j + 1 >= e->v.n) break;
      /* lines between this cluster's end and the next edit's line */
      size_t ns = line_start_of(src, e->v.v[j + 1].start);
      if (ns < oend || count_nl(src + oend, ns - oend) < 2 * ctx) {
        j++;
        continue;
      }
      break;
    }
    /* widen by context lines on both sides */
    size_t cs = ostart;
    for (int k = 0; k < ctx && cs > 0; k++) cs = line_start_of(src, cs - 1);
    size_t ce = oend;
    for (int k = 0; k < ctx && ce < len; k++) ce = line_end_of(src, len, ce);
    size_t ns = (size_t)((long)cs + shift_before), ne = (size_t)((long)ce + shift);
    if (ne > outlen) ne = outlen;
    Line *ol, *nl;
    size_t on = split_lines(src + cs, ce - cs, &ol), nn = split_lines(out + ns, ne - ns, &nl);
    bool o_eof_nonl = ce == len && len && src[len - 1] != '\n';
    bool n_eof_nonl = ne == outlen && outlen && out[outlen - 1] != '\n';
    size_t pre = 0, suf = 0;
    while (pre < on && pre < nn && ol[pre].n == nl[pre].n && !memcmp(ol[pre].s, nl[pre].s, ol[pre].n)) pre++;
    while (suf < on - pre && suf < nn - pre && ol[on - 1 - suf].n == nl[nn - 1 - suf].n &&
           !memcmp(ol[on - 1 - suf].s, nl[nn - 1 - suf].s, ol[on - 1 - suf].n) &&
           !(suf == 0 && o_eof_nonl != n_eof_nonl))
      suf++;
    /* trim context to at most ctx lines on each side */
    size_t dropl = pre > (size_t)ctx ? pre - ctx : 0, dropr = suf > (size_t)ctx ? suf - ctx : 0;
    int oline = 1 + count_nl(src, cs) + (int)dropl, nline = 1 + count_nl(out, ns) + (int)dropl;
    size_t ocount = on - dropl - dropr, ncount = nn - dropl - dropr;
    buf_printf(diff, "@@ -%d,%zu +%d,%zu @@\n", ocount ? oline : oline - 1, ocount,
               ncount ? nline : nline - 1, ncount);
    for (size_t k = dropl; k < pre; k++) emit_line(diff, ' ', ol[k], false);
    emit_middle(diff, ol + pre, on - suf - pre, nl + pre, nn - suf - pre, o_eof_nonl && suf == 0,
                n_eof_nonl && suf == 0);
    for (size_t k = on - suf; k < on - dropr; k++) emit_line(diff, ' ', ol[k], o_eof_nonl && k == on - 1);
    free(ol);
    free(nl);
    i = j + 1;
  }
}
