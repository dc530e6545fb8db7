/* manifest: manifest.json (deterministic record) and cache.json (stat and
 * hash data for incremental runs, with each file's manifest entry kept as a
 * string), printed directly and read with cJSON. */
#include "manifest.h"

#include <cjson/cJSON.h>
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

void result_free(FileResult *r) {
  free(r->rel);
  for (size_t i = 0; i < r->ranges.n; i++)
    free(r->ranges.v[i].name), free(r->ranges.v[i].rule_at), free(r->ranges.v[i].unranged);
  vec_free(&r->ranges);
  linemap_free(&r->map);
  rule_results_free(&r->rules);
  free(r->entry);
  diags_free(&r->diags);
}

static void hex(char out[17], uint64_t v) { snprintf(out, 17, "%016" PRIx64, v); }

/* The build of this ncrewrite, so that a rebuilt binary (whose rewriting may
 * differ) never reuses output cached by another build. The linker's GNU
 * build-id note is a digest of the linked code: reading it costs nothing.
 * Without one, the executable's own bytes are hashed. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the main program comes first, unnamed */
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      const char *desc = p + sizeof *nh + ((nh->n_namesz + 3) & ~3u);
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(p + sizeof *nh, "GNU", 4)) {
        *(uint64_t *)data = hash64(desc, nh->n_descsz, 0x6275696c64ULL);
        return 1;
      }
      p = desc + ((nh->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

static const char *build_id(void) {
  static char id[17];
  if (id[0]) return id;
  uint64_t h = 0;
  dl_iterate_phdr(find_build_id, &h);
  if (!h) {
    char *text;
    size_t len;
    if (read_file("/proc/self/exe", &text, &len) == 0) h = hash64(text, len, 0x657865ULL), free(text);
  }
  hex(id, h);
  return id;
}

/* JSON is printed straight into a buffer (buf_json_string for strings):
 * building a cJSON tree for every range of a big tree cost more than the
 * rewriting it records. cJSON is kept for reading. */
static void jkey(Buf *b, const char *indent, const char *k, bool first) {
  buf_printf(b, "%s%s%s\"%s\": ", first ? "" : ",", *indent ? "\n" : "", indent, k);
}

/* One file's manifest entry (the cache keeps it as a string). */
static void file_entry(Buf *b, const FileResult *r, const char *ind) {
  if (r->entry) {
    buf_puts(b, r->entry);
    return;
  }
  char in2[32];
  snprintf(in2, sizeof in2, "%s  ", ind);
  buf_putc(b, '{');
  jkey(b, in2, "path", true), buf_json_string(b, r->rel);
  jkey(b, in2, "action", false), buf_json_string(b, r->action);
  if (r->ranges.n) {
    jkey(b, in2, "ranges", false);
    buf_putc(b, '[');
    for (size_t k = 0; k < r->ranges.n; k++) {
      const RangeOut *x = &r->ranges.v[k];
      buf_printf(b, "%s%s%s  {\"name\": ", k ? "," : "", *ind ? "\n" : "", in2);
      buf_json_string(b, x->name);
      buf_puts(b, ", \"kind\": ");
      buf_json_string(b, x->kind);
      buf_printf(b, ", \"lines\": [%d, %d], \"out_lines\": [%d, %d]", x->line0, x->line1, x->out0, x->out1);
      if (x->rule_at) buf_puts(b, ", \"rule\": "), buf_json_string(b, x->rule_at);
      if (x->unranged) {
        /* "unranged_calls": what its exclusive time may hold unseen */
        buf_puts(b, ", \"unranged_calls\": [");
        const char *p = x->unranged;
        for (bool first = true; *p; first = false) {
          const char *e = strstr(p, ", ");
          size_t l = e ? (size_t)(e - p) : strlen(p);
          char *one = xstrndup(p, l);
          if (!first) buf_puts(b, ", ");
          buf_json_string(b, one);
          free(one);
          p += l + (e ? 2 : 0);
        }
        buf_putc(b, ']');
      }
      buf_putc(b, '}');
    }
    buf_printf(b, "%s%s]", *ind ? "\n" : "", in2);
  }
  if (r->map.v.n) {
    jkey(b, in2, "line_map", false);
    buf_putc(b, '[');
    for (size_t k = 0; k < r->map.v.n; k++)
      buf_printf(b, "%s[%d, %d]", k ? ", " : "", r->map.v.v[k].orig, r->map.v.v[k].orig + r->map.v.v[k].delta);
    buf_putc(b, ']');
  }
  buf_printf(b, "%s%s}", *ind ? "\n" : "", ind);
}

/* A file's rule results as cache.json keeps them, by the rules' places
 * (rules.h's rule_place): "hits", the ids "t.k" of the rules hit, separated
 * by spaces; "misses", a line "t.k<TAB>reason" per rule missed. */
static void results_text(const Rules *rules, const RuleResults *v, Buf *hits, Buf *misses) {
  for (size_t i = 0; i < v->n; i++) {
    size_t t, k;
    if (!rule_place(rules, v->v[i].rule, &t, &k)) continue;
    if (v->v[i].hit) buf_printf(hits, "%s%zu.%zu", hits->len ? " " : "", t, k);
    else if (v->v[i].why) buf_printf(misses, "%zu.%zu\t%s\n", t, k, v->v[i].why);
  }
}

static void results_parse(const Rules *rules, const char *hits, const char *misses, RuleResults *out) {
  for (const char *h = hits; h && *h;) {
    size_t t, k;
    int used = 0;
    const Rule *ru;
    if (sscanf(h, "%zu.%zu%n", &t, &k, &used) == 2 && (ru = rule_at_place(rules, t, k)))
      vec_push(out, ((RuleResult){ru, true, NULL}));
    h += used ? used : 1;
    while (*h == ' ') h++;
  }
  for (const char *m = misses; m && *m;) {
    size_t t, k;
    const char *tab = strchr(m, '\t'), *nl = tab ? strchr(tab, '\n') : NULL;
    const Rule *ru;
    if (!tab || !nl) break;
    if (sscanf(m, "%zu.%zu", &t, &k) == 2 && (ru = rule_at_place(rules, t, k)))
      vec_push(out, ((RuleResult){ru, false, xstrndup(tab + 1, (size_t)(nl - tab - 1))}));
    m = nl + 1;
  }
}

int manifest_write(const char *out_root, const char *source, const char *rules_path, const Rules *rules,
                   const char *options, FileResult *res, size_t n, Diags *d) {
  char h[17];
  hex(h, rules->digest);
  Buf m = {0}, c = {0};
  buf_puts(&m, "{\n  \"tool\": \"ncrewrite\",\n  \"version\": \"" NC_VERSION "\",\n  \"source\": ");
  buf_json_string(&m, source ? source : "");
  buf_puts(&m, ",\n  \"rules\": ");
  buf_json_string(&m, rules_path ? rules_path : "");
  buf_printf(&m, ",\n  \"rules_digest\": \"%s\",\n  \"options\": ", h);
  buf_json_string(&m, options);
  buf_puts(&m, ",\n  \"files\": [");
  buf_printf(&c, "{\"version\": \"" NC_VERSION "\", \"build\": \"%s\", \"rules_digest\": \"%s\", \"options\": ",
             build_id(), h);
  buf_json_string(&c, options);
  buf_puts(&c, ", \"files\": [");
  Buf e = {0}, hits = {0}, misses = {0};
  for (size_t i = 0; i < n; i++) {
    const FileResult *r = &res[i];
    buf_printf(&m, "%s\n    ", i ? "," : "");
    e.len = 0;
    file_entry(&e, r, "    ");
    buf_add(&m, e.s, e.len);
    char hs[17], ho[17];
    hex(hs, r->src_hash);
    hex(ho, r->out_hash);
    /* stat as text: nanosecond times do not fit a double */
    buf_printf(&c, "%s\n{\"path\": ", i ? "," : "");
    buf_json_string(&c, r->rel);
    buf_puts(&c, ", \"action\": ");
    buf_json_string(&c, r->action);
    buf_printf(&c,
               ", \"src_hash\": \"%s\", \"out_hash\": \"%s\", \"stat\": \"%" PRId64 " %" PRId64 " %" PRIu64
               " %" PRId64 " %" PRId64 "\", \"errors\": %d, \"warnings\": %d, \"nranges\": %zu, \"entry_hash\": ",
               hs, ho, r->src_size, r->src_mtime, r->src_ino, r->out_size, r->out_mtime, r->diags.errors,
               r->diags.warnings, r->nranges);
    hex(hs, hash64(e.s, e.len, 0));
    buf_printf(&c, "\"%s\", \"entry\": ", hs); /* its hash, then the entry */
    buf_putc(&e, 0);
    buf_json_string(&c, e.s);
    hits.len = misses.len = 0;
    results_text(rules, &r->rules, &hits, &misses);
    if (hits.len) buf_puts(&c, ", \"hits\": "), buf_json_string(&c, hits.s);
    if (misses.len) buf_puts(&c, ", \"misses\": "), buf_json_string(&c, misses.s);
    if (r->diags.text.len) buf_puts(&c, ", \"diags\": "), buf_json_string(&c, r->diags.text.s);
    buf_putc(&c, '}');
  }
  buf_free(&e), buf_free(&hits), buf_free(&misses);
  buf_puts(&m, n ? "\n  ]\n}\n" : "]\n}\n");
  buf_puts(&c, "]}\n");
  int rc = emit_file(out_root, ".ncrewrite/manifest.json", m.s, m.len, 0644, d);
  if (rc == 0) rc = emit_file(out_root, ".ncrewrite/cache.json", c.s, c.len, 0644, d);
  buf_free(&m);
  buf_free(&c);
  return rc;
}

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static uint64_t unhex(const char *s) { return s ? strtoull(s, NULL, 16) : 0; }

size_t cache_load(const char *out_root, const Rules *rules, const char *options, FileResult **out) {
  bool any = !rules;
  *out = NULL;
  char *path = xasprintf("%s/.ncrewrite/cache.json", out_root), *text;
  size_t len;
  int rc = read_file(path, &text, &len);
  free(path);
  if (rc < 0) return 0;
  cJSON *c = cJSON_ParseWithLength(text, len);
  free(text);
  size_t n = 0;
  if (!c) return 0;
  const char *v = jstr(c, "version"), *dg = jstr(c, "rules_digest"), *op = jstr(c, "options");
  const char *bd = jstr(c, "build");
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(c, "files");
  if (!cJSON_IsArray(files) ||
      (!any && (!v || strcmp(v, NC_VERSION) || !bd || strcmp(bd, build_id()) || unhex(dg) != rules->digest || !op || strcmp(op, options)))) {
    cJSON_Delete(c);
    return 0;
  }
  FileResult *res = xcalloc((size_t)cJSON_GetArraySize(files) + 1, sizeof *res);
  const cJSON *e;
  cJSON_ArrayForEach(e, files) {
    const char *p = jstr(e, "path"), *act = jstr(e, "action");
    const char *st = jstr(e, "stat");
    int64_t sz, mt, osz, omt;
    uint64_t ino;
    if (!p || !act || !st ||
        sscanf(st, "%" SCNd64 " %" SCNd64 " %" SCNu64 " %" SCNd64 " %" SCNd64, &sz, &mt, &ino, &osz, &omt) != 5)
      continue;
    FileResult *r = &res[n++];
    r->rel = xstrdup(p);
    static const char *const acts[] = {"rewritten", "copied", "symlink", "unparsable", "already-instrumented", "failed", NULL};
    r->action = "copied";
    for (const char *const *a = acts; *a; a++)
      if (!strcmp(*a, act)) r->action = *a;
    r->src_hash = unhex(jstr(e, "src_hash"));
    r->out_hash = unhex(jstr(e, "out_hash"));
    r->src_size = sz, r->src_mtime = mt, r->src_ino = ino, r->out_size = osz, r->out_mtime = omt;
    if (rules) results_parse(rules, jstr(e, "hits"), jstr(e, "misses"), &r->rules);
    if (jstr(e, "diags")) buf_puts(&r->diags.text, jstr(e, "diags"));
    const cJSON *ne = cJSON_GetObjectItemCaseSensitive(e, "errors"), *nw = cJSON_GetObjectItemCaseSensitive(e, "warnings");
    r->diags.errors = cJSON_IsNumber(ne) ? ne->valueint : 0;
    r->diags.warnings = cJSON_IsNumber(nw) ? nw->valueint : 0;
    const cJSON *nr = cJSON_GetObjectItemCaseSensitive(e, "nranges");
    r->nranges = cJSON_IsNumber(nr) && nr->valuedouble >= 0 ? (size_t)nr->valuedouble : 0;
    /* an entry goes into manifest.json as it is: only if intact. One that
     * is not is kept all the same (entry NULL: never reused), so that its
     * output still counts as written by the last run (stale when SRC loses
     * the file). */
    const char *en = jstr(e, "entry");
    if (en && hash64(en, strlen(en), 0) == unhex(jstr(e, "entry_hash"))) r->entry = xstrdup(en);
    r->cached = true;
  }
  cJSON_Delete(c);
  *out = res;
  return n;
}

static int jint_at(const cJSON *arr, int i) {
  const cJSON *v = cJSON_GetArrayItem(arr, i);
  return cJSON_IsNumber(v) ? v->valueint : 0;
}

int manifest_read(const char *out_root, Manifest *m) {
  memset(m, 0, sizeof *m);
  char *path = xasprintf("%s/.ncrewrite/manifest.json", out_root), *text;
  size_t len;
  int rc = read_file(path, &text, &len);
  free(path);
  if (rc < 0) return -1;
  cJSON *j = cJSON_ParseWithLength(text, len);
  free(text);
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(j, "files"), *f;
  if (!cJSON_IsArray(files)) {
    cJSON_Delete(j);
    return -1;
  }
  /* a range's kind: a rule kind's (rules.h's table of kinds), or the full trace's */
  static const char *const other_kinds[] = {"full-trace", "replacement", NULL};
  const char *src = jstr(j, "source");
  m->source = src && *src ? xstrdup(src) : NULL;
  cJSON_ArrayForEach(f, files) {
    const char *p = jstr(f, "path");
    if (!p) continue;
    ManifestFile mf = {xstrdup(p), {0}};
    const cJSON *ranges = cJSON_GetObjectItemCaseSensitive(f, "ranges"), *r;
    cJSON_ArrayForEach(r, ranges) {
      const char *nm = jstr(r, "name"), *kind = jstr(r, "kind"), *rule = jstr(r, "rule");
      if (!nm) continue;
      RangeOut o = {xstrdup(nm), "", 0, 0, 0, 0, rule ? xstrdup(rule) : NULL, NULL};
      for (int k = 0; kind && k < RULE_NKINDS; k++)
        if (rule_kind((RuleKind)k)->range_kind && !strcmp(rule_kind((RuleKind)k)->range_kind, kind))
          o.kind = rule_kind((RuleKind)k)->range_kind;
      for (const char *const *k = other_kinds; kind && *k; k++)
        if (!strcmp(*k, kind)) o.kind = *k;
      const cJSON *ln = cJSON_GetObjectItemCaseSensitive(r, "lines"), *ol = cJSON_GetObjectItemCaseSensitive(r, "out_lines");
      o.line0 = jint_at(ln, 0), o.line1 = jint_at(ln, 1), o.out0 = jint_at(ol, 0), o.out1 = jint_at(ol, 1);
      vec_push(&mf.ranges, o);
    }
    vec_push(&m->files, mf);
  }
  cJSON_Delete(j);
  return 0;
}

void manifest_free(Manifest *m) {
  free(m->source);
  for (size_t i = 0; i < m->files.n; i++) {
    ManifestFile *f = &m->files.v[i];
    for (size_t k = 0; k < f->ranges.n; k++)
      free(f->ranges.v[k].name), free(f->ranges.v[k].rule_at), free(f->ranges.v[k].unranged);
    vec_free(&f->ranges);
    free(f->rel);
  }
  vec_free(&m->files);
}
