/* util: interning, hash maps, figures, diagnostics. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread bool nct_silent;

void (*nct_say)(const char *level, const char *where, const char *msg);

__thread Buf *nct_capture;

/* a captured message: level ("" a note), 0x1f, where (""), 0x1f, text, 0x1e */
void nct_vsay(const char *level, const char *where, const char *fmt, va_list ap) {
  if (!nct_say) return;
  Buf b = {0};
  buf_vprintf(&b, fmt, ap);
  if (nct_capture) {
    buf_printf(nct_capture, "%s\x1f%s\x1f%s\x1e", level ? level : "", where ? where : "", b.s ? b.s : "");
  } else {
    nct_say(level, where, b.s ? b.s : "");
  }
  buf_free(&b);
}

void nct_replay(const Buf *b) {
  for (const char *p = b->s, *e = b->s + b->len; p && p < e;) {
    const char *r = memchr(p, 0x1e, (size_t)(e - p)), *u1 = memchr(p, 0x1f, (size_t)(e - p));
    const char *u2 = u1 ? memchr(u1 + 1, 0x1f, (size_t)(e - u1 - 1)) : NULL;
    if (!r || !u2 || u2 > r) break; /* not one of ours: nct_vsay writes them whole */
    char *lv = xstrndup(p, (size_t)(u1 - p)), *wh = xstrndup(u1 + 1, (size_t)(u2 - u1 - 1)),
         *msg = xstrndup(u2 + 1, (size_t)(r - u2 - 1));
    if (nct_say) nct_say(*lv ? lv : NULL, *wh ? wh : NULL, msg);
    free(lv), free(wh), free(msg);
    p = r + 1;
  }
}

int nct_error(const char *fmt, ...) {
  if (nct_silent) return -1;
  va_list ap;
  va_start(ap, fmt);
  nct_vsay("error", NULL, fmt, ap);
  va_end(ap);
  return -1;
}

void nct_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  nct_vsay(NULL, NULL, fmt, ap);
  va_end(ap);
}

void nct_warning(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  nct_vsay("warning", NULL, fmt, ap);
  va_end(ap);
}

void buf_html(Buf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': buf_puts(b, "&amp;"); break;
    case '<': buf_puts(b, "&lt;"); break;
    case '>': buf_puts(b, "&gt;"); break;
    case '"': buf_puts(b, "&quot;"); break;
    default: buf_putc(b, *s);
    }
  }
}

/* value / 10^scale_digits with three decimals, rounded half away from zero. */
static void put_fixed(Buf *b, int64_t ns, int64_t div) {
  bool neg = ns < 0;
  uint64_t v = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  uint64_t unit = (uint64_t)div / 1000; /* one thousandth of the output unit */
  uint64_t q = unit > 1 ? (v + unit / 2) / unit : v;
  if (neg && q) buf_putc(b, '-');
  buf_printf(b, "%llu.%03llu", (unsigned long long)(q / 1000), (unsigned long long)(q % 1000));
}

void buf_ms(Buf *b, int64_t ns) { put_fixed(b, ns, 1000000); }
void buf_us(Buf *b, int64_t ns) { put_fixed(b, ns, 1000); }

/* Word-at-a-time multiply-mix hash: names are long (C++ kernel names run
 * to hundreds of bytes), so a byte loop would show in profiles. */
uint64_t hash_bytes(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ (w * 0x87C37B91114253D5ULL)) * 0x4CF5AD432745937FULL;
    h ^= h >> 31;
    s += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, s, n);
  h = (h ^ (w * 0x87C37B91114253D5ULL)) * 0x4CF5AD432745937FULL;
  h ^= h >> 29;
  return h;
}

static void intern_rehash(Intern *t) {
  size_t ns = t->nslots ? t->nslots * 2 : 1024;
  uint32_t *slots = xcalloc(ns, sizeof *slots);
  for (size_t id = 0; id < t->off.n; id++) {
    size_t i = t->hash.v[id] & (ns - 1);
    while (slots[i]) i = (i + 1) & (ns - 1);
    slots[i] = (uint32_t)id + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->nslots = ns;
}

int64_t intern_find(const Intern *t, const char *s, size_t n) {
  if (!t->nslots) return -1;
  uint32_t h = (uint32_t)hash_bytes(s, n);
  size_t i = h & (t->nslots - 1);
  for (uint32_t id; (id = t->slots[i]); i = (i + 1) & (t->nslots - 1)) {
    id--;
    if (t->hash.v[id] == h && t->len.v[id] == n && memcmp(t->bytes.s + t->off.v[id], s, n) == 0)
      return id;
  }
  return -1;
}

uint32_t intern(Intern *t, const char *s, size_t n) {
  if ((t->off.n + 1) * 2 > t->nslots) intern_rehash(t);
  uint32_t h = (uint32_t)hash_bytes(s, n);
  size_t i = h & (t->nslots - 1);
  for (uint32_t id; (id = t->slots[i]); i = (i + 1) & (t->nslots - 1)) {
    id--;
    if (t->hash.v[id] == h && t->len.v[id] == n && memcmp(t->bytes.s + t->off.v[id], s, n) == 0)
      return id;
  }
  if (t->bytes.len + n + 1 > UINT32_MAX) BUG("more than 4 GiB of distinct names");
  uint32_t id = (uint32_t)t->off.n;
  vec_push(&t->off, (uint32_t)t->bytes.len);
  vec_push(&t->len, (uint32_t)n);
  vec_push(&t->hash, h);
  buf_add(&t->bytes, s, n);
  buf_putc(&t->bytes, 0);
  t->slots[i] = id + 1;
  return id;
}

void intern_free(Intern *t) {
  free(t->slots);
  vec_free(&t->off);
  vec_free(&t->len);
  vec_free(&t->hash);
  buf_free(&t->bytes);
  t->slots = NULL;
  t->nslots = 0;
}

#define EMPTY INT64_MIN

static size_t slot_of(int64_t key, size_t cap) {
  uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
  return (size_t)(h >> 17) & (cap - 1);
}

static void i64map_grow(I64Map *m) {
  size_t cap = m->cap ? m->cap * 2 : 1024;
  int64_t *keys = xmalloc(cap * sizeof *keys), *vals = xmalloc(cap * sizeof *vals);
  for (size_t i = 0; i < cap; i++) keys[i] = EMPTY;
  for (size_t i = 0; i < m->cap; i++) {
    if (m->keys[i] == EMPTY) continue;
    size_t j = slot_of(m->keys[i], cap);
    while (keys[j] != EMPTY) j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
}

static int64_t *i64map_slot(I64Map *m, int64_t key) {
  if ((m->n + 1) * 2 > m->cap) i64map_grow(m);
  size_t j = slot_of(key, m->cap);
  while (m->keys[j] != EMPTY && m->keys[j] != key) j = (j + 1) & (m->cap - 1);
  if (m->keys[j] == EMPTY) {
    m->keys[j] = key;
    m->vals[j] = 0;
    m->n++;
  }
  return &m->vals[j];
}

void i64map_put(I64Map *m, int64_t key, int64_t val) { *i64map_slot(m, key) = val; }
void i64map_add(I64Map *m, int64_t key, int64_t val) { *i64map_slot(m, key) += val; }

bool i64map_get(const I64Map *m, int64_t key, int64_t *val) {
  if (!m->cap) return false;
  size_t j = slot_of(key, m->cap);
  while (m->keys[j] != EMPTY) {
    if (m->keys[j] == key) {
      *val = m->vals[j];
      return true;
    }
    j = (j + 1) & (m->cap - 1);
  }
  return false;
}

void i64map_free(I64Map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

void corrmap_init(CorrMap *c, int64_t lo, int64_t hi, size_t count) {
  memset(c, 0, sizeof *c);
  if (hi >= lo && (uint64_t)(hi - lo) < 4 * (uint64_t)count + 4096) {
    c->dense = true;
    c->lo = lo;
    c->n = (size_t)(hi - lo) + 1;
    c->v = xmalloc(c->n * sizeof *c->v);
    for (size_t i = 0; i < c->n; i++) c->v[i] = EMPTY;
  }
}

static int64_t *corr_slot(CorrMap *c, int64_t key) {
  if (!c->dense) return NULL;
  if (key < c->lo || (uint64_t)(key - c->lo) >= c->n) BUG("correlation id %lld outside the map", (long long)key);
  return &c->v[key - c->lo];
}

void corrmap_put(CorrMap *c, int64_t key, int64_t val) {
  int64_t *s = corr_slot(c, key);
  if (s) *s = val;
  else i64map_put(&c->map, key, val);
}

void corrmap_add(CorrMap *c, int64_t key, int64_t val) {
  int64_t *s = corr_slot(c, key);
  if (s) *s = *s == EMPTY ? val : *s + val;
  else i64map_add(&c->map, key, val);
}

bool corrmap_get(const CorrMap *c, int64_t key, int64_t *val) {
  if (!c->dense) return i64map_get(&c->map, key, val);
  if (key < c->lo || (uint64_t)(key - c->lo) >= c->n || c->v[key - c->lo] == EMPTY) return false;
  *val = c->v[key - c->lo];
  return true;
}

void corrmap_free(CorrMap *c) {
  free(c->v);
  i64map_free(&c->map);
  memset(c, 0, sizeof *c);
}

bool name_has_any(const char *name, const char *const *words) {
  char low[256];
  size_t k = 0;
  for (; name[k] && k + 1 < sizeof low; k++) low[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
  low[k] = 0;
  for (const char *const *w = words; *w; w++)
    if (strstr(low, *w)) return true;
  return false;
}

bool parse_count(const char *s, size_t *out) {
  if (!*s) return false;
  size_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > (SIZE_MAX - 9) / 10) return false;
    v = v * 10 + (size_t)(*s - '0');
  }
  *out = v;
  return true;
}
