/* manifest: manifest.json (deterministic record) and cache.json (stat and
 * hash data for incremental runs), both written with cJSON. */
#include "manifest.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

void result_free(FileResult *r) {
  free(r->rel);
  for (size_t i = 0; i < r->ranges.n; i++) free(r->ranges.v[i].name), free(r->ranges.v[i].rule_at);
  vec_free(&r->ranges);
  linemap_free(&r->map);
  free(r->hits);
  free(r->misses);
  diags_free(&r->diags);
}

static void hex(char out[17], uint64_t v) { snprintf(out, 17, "%016" PRIx64, v); }

static int write_json(const char *out_root, const char *name, cJSON *j, bool pretty, Diags *d) {
  char *s = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
  size_t n = strlen(s);
  s = xrealloc(s, n + 2);
  s[n++] = '\n';
  char *rel = xasprintf(".ncrewrite/%s", name);
  int rc = emit_file(out_root, rel, s, n, 0644, d);
  free(rel);
  free(s);
  return rc;
}

int manifest_write(const char *out_root, const char *rules_path, uint64_t rules_digest, const char *options,
                   FileResult *res, size_t n, Diags *d) {
  char h[17];
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "tool", "ncrewrite");
  cJSON_AddStringToObject(m, "version", NC_VERSION);
  cJSON_AddStringToObject(m, "rules", rules_path ? rules_path : "");
  hex(h, rules_digest);
  cJSON_AddStringToObject(m, "rules_digest", h);
  cJSON_AddStringToObject(m, "options", options);
  cJSON *files = cJSON_AddArrayToObject(m, "files");
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "version", NC_VERSION);
  cJSON_AddStringToObject(c, "rules_digest", h);
  cJSON_AddStringToObject(c, "options", options);
  cJSON *cfiles = cJSON_AddArrayToObject(c, "files");
  for (size_t i = 0; i < n; i++) {
    FileResult *r = &res[i];
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "path", r->rel);
    cJSON_AddStringToObject(f, "action", r->action);
    if (r->ranges.n) {
      cJSON *rs = cJSON_AddArrayToObject(f, "ranges");
      for (size_t k = 0; k < r->ranges.n; k++) {
        RangeOut *x = &r->ranges.v[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", x->name);
        cJSON_AddStringToObject(o, "kind", x->kind);
        int l[2] = {x->line0, x->line1}, ol[2] = {x->out0, x->out1};
        cJSON_AddItemToObject(o, "lines", cJSON_CreateIntArray(l, 2));
        cJSON_AddItemToObject(o, "out_lines", cJSON_CreateIntArray(ol, 2));
        if (x->rule_at) cJSON_AddStringToObject(o, "rule", x->rule_at);
        cJSON_AddItemToArray(rs, o);
      }
    }
    if (r->map.v.n) {
      cJSON *lm = cJSON_AddArrayToObject(f, "line_map");
      for (size_t k = 0; k < r->map.v.n; k++) {
        int p[2] = {r->map.v.v[k].orig, r->map.v.v[k].orig + r->map.v.v[k].delta};
        cJSON_AddItemToArray(lm, cJSON_CreateIntArray(p, 2));
      }
    }
    cJSON_AddItemToArray(files, f);

    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "path", r->rel);
    cJSON_AddStringToObject(e, "action", r->action);
    hex(h, r->src_hash);
    cJSON_AddStringToObject(e, "src_hash", h);
    hex(h, r->out_hash);
    cJSON_AddStringToObject(e, "out_hash", h);
    /* as text: nanosecond times do not fit a double */
    char st[128];
    snprintf(st, sizeof st, "%" PRId64 " %" PRId64 " %" PRIu64 " %" PRId64 " %" PRId64, r->src_size, r->src_mtime,
             r->src_ino, r->out_size, r->out_mtime);
    cJSON_AddStringToObject(e, "stat", st);
    cJSON_AddItemToObject(e, "manifest", cJSON_Duplicate(f, true));
    if (r->hits) cJSON_AddStringToObject(e, "hits", r->hits);
    if (r->misses) cJSON_AddStringToObject(e, "misses", r->misses);
    if (r->diags.text.len) cJSON_AddStringToObject(e, "diags", r->diags.text.s);
    cJSON_AddNumberToObject(e, "errors", r->diags.errors);
    cJSON_AddNumberToObject(e, "warnings", r->diags.warnings);
    cJSON_AddItemToArray(cfiles, e);
  }
  int rc = write_json(out_root, "manifest.json", m, true, d);
  if (rc == 0) rc = write_json(out_root, "cache.json", c, false, d);
  cJSON_Delete(m);
  cJSON_Delete(c);
  return rc;
}

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static uint64_t unhex(const char *s) { return s ? strtoull(s, NULL, 16) : 0; }

size_t cache_load(const char *out_root, uint64_t rules_digest, const char *options, bool any, FileResult **out) {
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
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(c, "files");
  if (!cJSON_IsArray(files) ||
      (!any && (!v || strcmp(v, NC_VERSION) || unhex(dg) != rules_digest || !op || strcmp(op, options)))) {
    cJSON_Delete(c);
    return 0;
  }
  FileResult *res = xcalloc((size_t)cJSON_GetArraySize(files) + 1, sizeof *res);
  const cJSON *e;
  cJSON_ArrayForEach(e, files) {
    const char *p = jstr(e, "path"), *act = jstr(e, "action");
    const char *st = jstr(e, "stat");
    const cJSON *mf = cJSON_GetObjectItemCaseSensitive(e, "manifest");
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
    if (jstr(e, "hits")) r->hits = xstrdup(jstr(e, "hits"));
    if (jstr(e, "misses")) r->misses = xstrdup(jstr(e, "misses"));
    if (jstr(e, "diags")) buf_puts(&r->diags.text, jstr(e, "diags"));
    const cJSON *ne = cJSON_GetObjectItemCaseSensitive(e, "errors"), *nw = cJSON_GetObjectItemCaseSensitive(e, "warnings");
    r->diags.errors = cJSON_IsNumber(ne) ? ne->valueint : 0;
    r->diags.warnings = cJSON_IsNumber(nw) ? nw->valueint : 0;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(mf, "ranges"), *x;
    cJSON_ArrayForEach(x, rs) {
      RangeOut o = {0};
      o.name = xstrdup(jstr(x, "name") ? jstr(x, "name") : "");
      const char *k = jstr(x, "kind");
      static const char *const kinds[] = {"function", "calls", "lines", "full-trace", NULL};
      o.kind = "lines";
      for (const char *const *q = kinds; *q; q++)
        if (k && !strcmp(*q, k)) o.kind = *q;
      const cJSON *l = cJSON_GetObjectItemCaseSensitive(x, "lines"), *ol = cJSON_GetObjectItemCaseSensitive(x, "out_lines");
      o.line0 = cJSON_GetArrayItem(l, 0) ? cJSON_GetArrayItem(l, 0)->valueint : 0;
      o.line1 = cJSON_GetArrayItem(l, 1) ? cJSON_GetArrayItem(l, 1)->valueint : 0;
      o.out0 = cJSON_GetArrayItem(ol, 0) ? cJSON_GetArrayItem(ol, 0)->valueint : 0;
      o.out1 = cJSON_GetArrayItem(ol, 1) ? cJSON_GetArrayItem(ol, 1)->valueint : 0;
      if (jstr(x, "rule")) o.rule_at = xstrdup(jstr(x, "rule"));
      vec_push(&r->ranges, o);
    }
    const cJSON *lm = cJSON_GetObjectItemCaseSensitive(mf, "line_map");
    cJSON_ArrayForEach(x, lm) {
      int a = cJSON_GetArrayItem(x, 0) ? cJSON_GetArrayItem(x, 0)->valueint : 0;
      int b = cJSON_GetArrayItem(x, 1) ? cJSON_GetArrayItem(x, 1)->valueint : 0;
      vec_push(&r->map.v, ((LineShift){a, b - a}));
    }
    r->cached = true;
  }
  cJSON_Delete(c);
  *out = res;
  return n;
}
