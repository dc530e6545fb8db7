/* rules: schema checking of a RuleDoc into the Rules model.
 *
 * Every key is checked: an unknown key, a wrong type or a duplicate is an
 * error at its exact place in the rule file. Both context_values forms are
 * accepted (plain strings; {name, value, type: literal|variable}) and both
 * method forms (whole body {context_class, context_values}; {wrap_calls}). */
#include "rules.h"
#include "targets.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  Rules *r;
  Diags *d;
  int errors;
} Ck;

static void err(Ck *ck, const RNode *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err(Ck *ck, const RNode *at, const char *fmt, ...) {
  Buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  ruledoc_diag(&ck->r->doc, ck->d, DIAG_ERROR, at, "%s", b.s);
  buf_free(&b);
  ck->errors++;
}

static const char *kind_name(RNodeKind k) {
  return k == RN_MAP ? "a mapping" : k == RN_SEQ ? "a list" : "a scalar";
}

static bool want(Ck *ck, const RNode *n, RNodeKind k, const char *what) {
  if (n && n->kind == k) return true;
  err(ck, n, "%s must be %s, not %s", what, kind_name(k), n ? kind_name(n->kind) : "nothing");
  return false;
}

/* Check a mapping's keys against `allowed` (NULL-terminated): unknown and
 * duplicate keys are errors. Returns false if the node is not a mapping. */
static bool check_keys(Ck *ck, const RNode *m, const char *what, const char *const *allowed) {
  if (!want(ck, m, RN_MAP, what)) return false;
  for (size_t i = 0; i < m->n; i += 2) {
    const RNode *k = m->items[i];
    if (k->kind != RN_SCALAR) {
      err(ck, k, "keys of %s must be plain names", what);
      continue;
    }
    for (size_t j = 0; j < i; j += 2)
      if (m->items[j]->kind == RN_SCALAR && !strcmp(m->items[j]->str, k->str)) {
        err(ck, k, "duplicate key '%s' in %s (first at line %d)", k->str, what, m->items[j]->line);
        break;
      }
    if (!allowed) continue;
    bool ok = false;
    for (const char *const *a = allowed; *a; a++) ok |= !strcmp(*a, k->str);
    if (!ok) {
      Buf list = {0};
      size_t na = 0;
      for (const char *const *a = allowed; *a; a++, na++) buf_printf(&list, "%s%s", a == allowed ? "" : ", ", *a);
      const char *near = nearest_word(k->str, allowed, na);
      if (near) err(ck, k, "unknown key '%s' in %s (did you mean '%s'?)", k->str, what, near);
      else err(ck, k, "unknown key '%s' in %s (expected one of: %s)", k->str, what, list.s);
      buf_free(&list);
    }
  }
  return true;
}

/* The key `key` of mapping m as written, whatever its value; NULL if absent. */
static const RNode *key_of(const RNode *m, const char *key) {
  if (!m || m->kind != RN_MAP) return NULL;
  for (size_t i = 0; i + 1 < m->n; i += 2)
    if (m->items[i]->kind == RN_SCALAR && !strcmp(m->items[i]->str, key)) return m->items[i];
  return NULL;
}

/* The value of key `key` of mapping m; NULL if absent. A key whose value is
 * null (JSON null; YAML null, ~ or nothing: see ruledoc.h) is absent: the
 * nCompass SDK writes every unset field of its configs as null. */
static const RNode *get(const RNode *m, const char *key) {
  if (!m || m->kind != RN_MAP) return NULL;
  for (size_t i = 0; i + 1 < m->n; i += 2)
    if (m->items[i]->kind == RN_SCALAR && !strcmp(m->items[i]->str, key))
      return m->items[i + 1]->kind == RN_SCALAR && m->items[i + 1]->null ? NULL : m->items[i + 1];
  return NULL;
}

static bool is_null(const RNode *n) { return n && n->kind == RN_SCALAR && n->null; }

/* Where to report a required key that is missing: the key itself when it is
 * written with a null value, else the mapping that lacks it. */
static const RNode *missing_at(const RNode *m, const char *key) {
  const RNode *k = key_of(m, key);
  return k ? k : m;
}

static char *str_of(Ck *ck, const RNode *n, const char *what) {
  if (!n) return NULL;
  if (n->kind != RN_SCALAR) {
    err(ck, n, "%s must be a string, not %s", what, kind_name(n->kind));
    return NULL;
  }
  if (!n->quoted && !strcmp(n->str, "")) {
    err(ck, n, "%s must not be empty", what);
    return NULL;
  }
  if (n->null) { /* a null where a value is needed (a list entry, a replacement) */
    err(ck, n, "%s must be a string, not null", what);
    return NULL;
  }
  return xstrdup(n->str);
}

static bool bool_of(Ck *ck, const RNode *n, const char *what, bool dflt) {
  if (!n) return dflt;
  if (n->kind == RN_SCALAR && !n->quoted) {
    const char *s = n->str;
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "yes") || !strcmp(s, "on")) return true;
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "no") || !strcmp(s, "off")) return false;
  }
  err(ck, n, "%s must be true or false", what);
  return dflt;
}

static int int_of(Ck *ck, const RNode *n, const char *what) {
  if (!n) return 0;
  if (n->kind == RN_SCALAR && !n->quoted) {
    char *end;
    errno = 0;
    long v = strtol(n->str, &end, 10);
    if (!*end && end != n->str && errno == 0 && v >= 1 && v <= 100000000) return (int)v;
  }
  err(ck, n, "%s must be a line number (a whole number from 1)", what);
  return 0;
}

static void str_list(Ck *ck, const RNode *n, const char *what, void *vecp) {
  VEC(char *) *v = vecp;
  if (!n || is_null(n)) return;
  if (!want(ck, n, RN_SEQ, what)) return;
  for (size_t i = 0; i < n->n; i++) {
    char *s = str_of(ck, n->items[i], what);
    if (s) vec_push(v, s);
  }
}

/* context_values: ["a", ...] or [{name, value, type: literal|variable}, ...] */
static void parse_context(Ck *ck, const RNode *owner, Context *c) {
  static const char *const vkeys[] = {"name", "value", "type", NULL};
  c->at = (RNode *)owner;
  c->cls = str_of(ck, get(owner, "context_class"), "context_class");
  const RNode *vals = get(owner, "context_values");
  if (!vals) return;
  if (!want(ck, vals, RN_SEQ, "context_values")) return;
  for (size_t i = 0; i < vals->n; i++) {
    const RNode *v = vals->items[i];
    CtxValue cv = {.at = (RNode *)v};
    if (v->kind == RN_SCALAR) {
      if (v->null && *v->str) {
        err(ck, v, "a context value must be a string, not null");
        continue;
      }
      cv.value = xstrdup(v->str);
    } else if (check_keys(ck, v, "a context value", vkeys)) {
      const RNode *val = get(v, "value"), *ty = get(v, "type");
      if (!val) {
        err(ck, missing_at(v, "value"), "context value needs a 'value'");
        continue;
      }
      if (val->kind != RN_SCALAR) {
        err(ck, val, "context value must be a string");
        continue;
      }
      cv.value = xstrdup(val->str);
      if (ty) {
        if (ty->kind == RN_SCALAR && !strcmp(ty->str, "variable")) cv.variable = true;
        else if (!(ty->kind == RN_SCALAR && !strcmp(ty->str, "literal")))
          err(ck, ty, "type must be 'literal' or 'variable'");
      }
      if (cv.variable && !*cv.value) err(ck, val, "a variable context value needs an expression");
    } else {
      continue;
    }
    vec_push(&c->values, cv);
  }
}

static Rule rule_new(RuleKind k, const RNode *at) {
  Rule r = {0};
  r.kind = k;
  r.at = (RNode *)at;
  return r;
}

/* A method/function entry: {context_class?, context_values?, wrap_calls?}. */
static void parse_func_entry(Ck *ck, Target *t, const char *cls, const RNode *cls_key, const char *name,
                             const RNode *key, const RNode *v) {
  static const char *const keys[] = {"context_class", "context_values", "wrap_calls", NULL};
  static const char *const ckeys[] = {"call_pattern", "context_class", "context_values", NULL};
  if (!check_keys(ck, v, "a function entry", keys)) return;
  const RNode *calls = get(v, "wrap_calls");
  if (get(v, "context_class") || get(v, "context_values") || !calls) {
    Rule r = rule_new(RULE_FUNC, key);
    r.cls = cls ? xstrdup(cls) : NULL;
    r.cls_at = (RNode *)cls_key;
    r.func = xstrdup(name);
    parse_context(ck, v, &r.ctx);
    vec_push(&t->rules, r);
  }
  if (!calls) return;
  if (!want(ck, calls, RN_SEQ, "wrap_calls")) return;
  for (size_t i = 0; i < calls->n; i++) {
    const RNode *c = calls->items[i];
    if (!check_keys(ck, c, "a wrap_calls entry", ckeys)) continue;
    char *pat = str_of(ck, get(c, "call_pattern"), "call_pattern");
    if (!pat) {
      if (!get(c, "call_pattern")) err(ck, missing_at(c, "call_pattern"), "wrap_calls entry needs a call_pattern");
      continue;
    }
    Rule r = rule_new(RULE_CALLS, c);
    r.cls = cls ? xstrdup(cls) : NULL;
    r.cls_at = (RNode *)cls_key;
    r.func = xstrdup(name);
    r.call = pat;
    parse_context(ck, c, &r.ctx);
    vec_push(&t->rules, r);
  }
}

/* NVTX attributes end up as C literals in the instrumented code: a value
 * that is not a category number or a color would become a compile error
 * there (or a silently wrong color), so it is refused here, at its place. */
static bool all_hex(const char *s, size_t n) {
  if (strlen(s) != n) return false;
  for (size_t i = 0; i < n; i++)
    if (!isxdigit((unsigned char)s[i])) return false;
  return true;
}

static void check_nvtx(Ck *ck, const RNode *nv, const Target *t) {
  if (t->domain && !t->domain[0]) err(ck, get(nv, "domain"), "nvtx domain is empty");
  if (t->category) {
    const char *s = t->category;
    size_t n = strspn(s, "0123456789");
    if (!n || s[n] || n > 10 || strtoull(s, NULL, 10) > 0xffffffffull)
      err(ck, get(nv, "category"), "nvtx category '%s' is not a number from 0 to 4294967295", s);
  }
  if (t->color) {
    const char *s = t->color;
    bool ok = (s[0] == '#' && all_hex(s + 1, 6)) ||
              (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && (all_hex(s + 2, 6) || all_hex(s + 2, 8)));
    if (!ok) err(ck, get(nv, "color"), "nvtx color '%s' is not #RRGGBB, 0xRRGGBB or 0xAARRGGBB", s);
  }
}

static void parse_target(Ck *ck, Target *t, const RNode *key, const RNode *m) {
  static const char *const keys[] = {
      "filePath", "class_func_context_wrappings", "func_context_wrappings",
      "func_line_range_wrappings", "class_replacements", "class_func_replacements",
      "call_wrappings", "exclude", "full_trace_mode", "full_trace_inline", "nvtx", NULL};
  static const char *const lkeys[] = {
      "function", "start_line", "end_line", "context_class", "context_values", "reasoning",
      "start_line_content", "end_line_content", NULL};
  static const char *const nkeys[] = {"domain", "category", "color", NULL};
  t->key = xstrdup(key->str);
  t->at = (RNode *)key;
  /* path globs and C-family file names name files, not modules */
  t->path_glob = target_key_is_path(t->key);
  if (is_null(m)) return; /* `module:` with nothing (or null): full-trace target */
  if (!check_keys(ck, m, "a target", keys)) return;
  t->file_path = str_of(ck, get(m, "filePath"), "filePath");
  t->full_trace = bool_of(ck, get(m, "full_trace_mode"), "full_trace_mode", false);
  t->full_trace_inline = bool_of(ck, get(m, "full_trace_inline"), "full_trace_inline", false);
  str_list(ck, get(m, "exclude"), "exclude", &t->exclude);
  const RNode *nv = get(m, "nvtx");
  if (nv && check_keys(ck, nv, "nvtx", nkeys)) {
    t->domain = str_of(ck, get(nv, "domain"), "domain");
    t->category = str_of(ck, get(nv, "category"), "category");
    t->color = str_of(ck, get(nv, "color"), "color");
    check_nvtx(ck, nv, t);
  }

  const RNode *cf = get(m, "class_func_context_wrappings");
  if (cf && want(ck, cf, RN_MAP, "class_func_context_wrappings")) {
    check_keys(ck, cf, "class_func_context_wrappings", NULL);
    for (size_t i = 0; i + 1 < cf->n; i += 2) {
      const RNode *methods = cf->items[i + 1];
      if (!want(ck, methods, RN_MAP, "a class entry")) continue;
      check_keys(ck, methods, "a class entry", NULL);
      for (size_t j = 0; j + 1 < methods->n; j += 2)
        parse_func_entry(ck, t, cf->items[i]->str, cf->items[i], methods->items[j]->str, methods->items[j],
                         methods->items[j + 1]);
    }
  }
  const RNode *ff = get(m, "func_context_wrappings");
  if (ff && want(ck, ff, RN_MAP, "func_context_wrappings")) {
    check_keys(ck, ff, "func_context_wrappings", NULL);
    for (size_t i = 0; i + 1 < ff->n; i += 2) {
      const char *name = ff->items[i]->str;
      const char *dot = strrchr(name, '.');
      if (dot && dot != name && dot[1]) {
        /* "Class.method" in func_context_wrappings is accepted too */
        char *cls = xstrndup(name, (size_t)(dot - name));
        parse_func_entry(ck, t, cls, NULL, dot + 1, ff->items[i], ff->items[i + 1]);
        free(cls);
      } else {
        parse_func_entry(ck, t, NULL, NULL, name, ff->items[i], ff->items[i + 1]);
      }
    }
  }
  const RNode *cw = get(m, "call_wrappings");
  if (cw) {
    static const char *const ckeys[] = {"call_pattern", "function", "context_class", "context_values", NULL};
    if (want(ck, cw, RN_SEQ, "call_wrappings"))
      for (size_t i = 0; i < cw->n; i++) {
        const RNode *c = cw->items[i];
        if (!check_keys(ck, c, "a call_wrappings entry", ckeys)) continue;
        char *pat = str_of(ck, get(c, "call_pattern"), "call_pattern");
        if (!pat) {
          if (!get(c, "call_pattern"))
            err(ck, missing_at(c, "call_pattern"), "call_wrappings entry needs a call_pattern");
          continue;
        }
        Rule r = rule_new(RULE_CALLS, c);
        r.call = pat;
        r.func = str_of(ck, get(c, "function"), "function");
        parse_context(ck, c, &r.ctx);
        vec_push(&t->rules, r);
      }
  }
  const RNode *lr = get(m, "func_line_range_wrappings");
  if (lr && want(ck, lr, RN_SEQ, "func_line_range_wrappings")) {
    for (size_t i = 0; i < lr->n; i++) {
      const RNode *e = lr->items[i];
      if (!check_keys(ck, e, "a line range", lkeys)) continue;
      Rule r = rule_new(RULE_LINES, e);
      r.func = str_of(ck, get(e, "function"), "function");
      if (!get(e, "start_line") || !get(e, "end_line")) {
        /* at the key written null, if one is */
        bool no_start = !get(e, "start_line"), no_end = !get(e, "end_line");
        const char *miss = no_start && (!no_end || key_of(e, "start_line") || !key_of(e, "end_line"))
                               ? "start_line" : "end_line";
        err(ck, missing_at(e, miss), "a line range needs start_line and end_line");
        free(r.func);
        continue;
      }
      r.start_line = int_of(ck, get(e, "start_line"), "start_line");
      r.end_line = int_of(ck, get(e, "end_line"), "end_line");
      if (r.start_line && r.end_line && r.end_line < r.start_line)
        err(ck, get(e, "end_line"), "end_line %d is before start_line %d", r.end_line, r.start_line);
      r.start_content = str_of(ck, get(e, "start_line_content"), "start_line_content");
      r.end_content = str_of(ck, get(e, "end_line_content"), "end_line_content");
      const RNode *why = get(e, "reasoning");
      if (why && why->kind != RN_SCALAR) err(ck, why, "reasoning must be a string");
      parse_context(ck, e, &r.ctx);
      vec_push(&t->rules, r);
    }
  }
  const RNode *cr = get(m, "class_replacements");
  if (cr && !(cr->kind == RN_MAP && cr->n == 0) && want(ck, cr, RN_MAP, "class_replacements")) {
    check_keys(ck, cr, "class_replacements", NULL);
    for (size_t i = 0; i + 1 < cr->n; i += 2) {
      Rule r = rule_new(RULE_CLASS_REPL, cr->items[i]);
      r.cls = xstrdup(cr->items[i]->str);
      r.replacement = str_of(ck, cr->items[i + 1], "a class replacement");
      if (r.replacement && !strchr(r.replacement, '.'))
        err(ck, cr->items[i + 1], "a replacement must be a dotted path 'package.module.Class'");
      vec_push(&t->rules, r);
    }
  }
  const RNode *mr = get(m, "class_func_replacements");
  if (mr && !(mr->kind == RN_MAP && mr->n == 0) && want(ck, mr, RN_MAP, "class_func_replacements")) {
    check_keys(ck, mr, "class_func_replacements", NULL);
    for (size_t i = 0; i + 1 < mr->n; i += 2) {
      const RNode *meths = mr->items[i + 1];
      if (!want(ck, meths, RN_MAP, "a class entry")) continue;
      check_keys(ck, meths, "a class entry", NULL);
      for (size_t j = 0; j + 1 < meths->n; j += 2) {
        Rule r = rule_new(RULE_METHOD_REPL, meths->items[j]);
        r.cls = xstrdup(mr->items[i]->str);
        r.func = xstrdup(meths->items[j]->str);
        r.replacement = str_of(ck, meths->items[j + 1], "a method replacement");
        if (r.replacement && !strchr(r.replacement, '.'))
          err(ck, meths->items[j + 1], "a replacement must be a dotted path 'package.module.Class.method'");
        vec_push(&t->rules, r);
      }
    }
  }
}

/* c_attribute_macros: a list of macro names (C identifiers). */
static void attr_macros(Ck *ck, const RNode *n, void *vecp) {
  VEC(char *) *v = vecp;
  if (!n) return;
  if (!want(ck, n, RN_SEQ, "c_attribute_macros")) return;
  for (size_t i = 0; i < n->n; i++) {
    char *s = str_of(ck, n->items[i], "an entry of c_attribute_macros");
    if (!s) continue;
    bool ok = *s == '_' || isalpha((unsigned char)*s);
    for (const char *p = s; ok && *p; p++) ok = *p == '_' || isalnum((unsigned char)*p);
    if (!ok) {
      err(ck, n->items[i], "c_attribute_macros: '%s' is not a macro name (letters, digits and '_', not starting "
          "with a digit)", s);
      free(s);
      continue;
    }
    vec_push(v, s);
  }
}

static int check(Rules *r, Diags *d) {
  static const char *const keys[] = {"targets", "ai_analysis_targets", "full_trace_mode", "full_trace_inline",
                                     "exclude", "default_context", "c_attribute_macros", NULL};
  Ck ck = {r, d, 0};
  const RNode *root = r->doc.root;
  if (!root || is_null(root)) return 0; /* an empty rule file (or only `null`): nothing targeted */
  if (!check_keys(&ck, root, "the rule file", keys)) return -1;
  r->full_trace = bool_of(&ck, get(root, "full_trace_mode"), "full_trace_mode", false);
  r->full_trace_inline = bool_of(&ck, get(root, "full_trace_inline"), "full_trace_inline", false);
  str_list(&ck, get(root, "ai_analysis_targets"), "ai_analysis_targets", &r->ai_targets);
  str_list(&ck, get(root, "exclude"), "exclude", &r->exclude);
  attr_macros(&ck, get(root, "c_attribute_macros"), &r->attr_macros);
  const RNode *dc = get(root, "default_context");
  if (dc) {
    static const char *const dkeys[] = {"context_class", "context_values", NULL};
    if (check_keys(&ck, dc, "default_context", dkeys)) parse_context(&ck, dc, &r->default_ctx);
  }
  const RNode *t = get(root, "targets");
  if (t && !(t->kind == RN_SEQ && t->n == 0) && want(&ck, t, RN_MAP, "targets")) {
    check_keys(&ck, t, "targets", NULL);
    for (size_t i = 0; i + 1 < t->n; i += 2) {
      Target tg = {0};
      parse_target(&ck, &tg, t->items[i], t->items[i + 1]);
      vec_push(&r->targets, tg);
    }
  }
  return ck.errors ? -1 : 0;
}

int rules_parse(Rules *r, const char *path, const char *text, size_t len, Diags *d) {
  memset(r, 0, sizeof *r);
  r->loaded = true;
  r->digest = hash64(text, len, 0x6e63);
  if (ruledoc_parse(&r->doc, path, text, len, d) < 0) return -1;
  return check(r, d);
}

int rules_load(Rules *r, const char *path, Diags *d) {
  char *text;
  size_t len;
  if (read_file(path, &text, &len) < 0) {
    memset(r, 0, sizeof *r);
    diag_at(d, DIAG_ERROR, path, NULL, 0, 0, 0, "cannot read rule file: %s", strerror(errno));
    return -1;
  }
  int rc = rules_parse(r, path, text, len, d);
  free(text);
  return rc;
}

static void ctx_free(Context *c) {
  free(c->cls);
  for (size_t i = 0; i < c->values.n; i++) free(c->values.v[i].value);
  vec_free(&c->values);
}

static void strs_free(void *vp) {
  VEC(char *) *v = vp;
  for (size_t i = 0; i < v->n; i++) free(v->v[i]);
  vec_free(v);
}

void rules_free(Rules *r) {
  for (size_t i = 0; i < r->targets.n; i++) {
    Target *t = &r->targets.v[i];
    for (size_t j = 0; j < t->rules.n; j++) {
      Rule *u = &t->rules.v[j];
      free(u->cls), free(u->func), free(u->call), free(u->replacement);
      free(u->start_content), free(u->end_content);
      ctx_free(&u->ctx);
    }
    vec_free(&t->rules);
    strs_free(&t->exclude);
    free(t->key), free(t->file_path);
    free(t->domain), free(t->category), free(t->color);
  }
  vec_free(&r->targets);
  strs_free(&r->ai_targets);
  strs_free(&r->exclude);
  strs_free(&r->attr_macros);
  ctx_free(&r->default_ctx);
  ruledoc_free(&r->doc);
}

CtxKind ctx_kind(const char *cls) {
  if (!cls) return CTX_NCRT_RANGE;
  if (!strcmp(cls, "ncompass.trace.profile.torch.TorchRecordContext") ||
      !strcmp(cls, "ncompass.trace.profile.torch.TorchProfilerContext") ||
      !strcmp(cls, "ncrt.torch_range"))
    return CTX_NCRT_TORCH;
  if (!strcmp(cls, "ncompass.trace.profile.nvtx.NvtxContext") || !strcmp(cls, "ncrt.range"))
    return CTX_NCRT_RANGE;
  return CTX_USER;
}

bool rules_full_trace(const Rules *r, bool cli, const Target *const *tgs, size_t n) {
  bool asked = r->full_trace || cli;
  if (asked && (r->targets.n == 0 || n)) return true;
  for (size_t i = 0; i < n; i++)
    if (tgs[i]->full_trace) return true;
  return false;
}

void rules_targets_naming(const Rules *r, const char *rel, const char *src_real, TargetList *out) {
  for (size_t t = 0; t < r->targets.n; t++) {
    const Target *tg = &r->targets.v[t];
    if (target_names_file(tg->key, tg->file_path, tg->path_glob, rel, src_real)) vec_push(out, tg);
  }
}

/* ---- the table of rule kinds ------------------------------------------ */

static const RuleKindRow KINDS[] = {
  {RULE_FUNC, "class_func_context_wrappings, func_context_wrappings", "function", RULE_IN_PYTHON | RULE_IN_C,
   "function wrappings", RULE_NSYS_FUNCTION},
  {RULE_CALLS, "wrap_calls, call_wrappings", "calls", RULE_IN_PYTHON | RULE_IN_C, "call wrappings",
   RULE_NSYS_WIDENED},
  {RULE_LINES, "func_line_range_wrappings", "lines", RULE_IN_PYTHON | RULE_IN_C, "line ranges", RULE_NSYS_WIDENED},
  {RULE_CLASS_REPL, "class_replacements", NULL, RULE_IN_PYTHON, "replacements", RULE_NSYS_NONE},
  {RULE_METHOD_REPL, "class_func_replacements", NULL, RULE_IN_PYTHON, "replacements", RULE_NSYS_NONE},
};
_Static_assert(sizeof KINDS / sizeof *KINDS == RULE_NKINDS, "one row per rule kind");

const RuleKindRow *rule_kind(RuleKind k) {
  if ((unsigned)k >= RULE_NKINDS || KINDS[k].kind != k) BUG("rule kind %d has no row", (int)k);
  return &KINDS[k];
}

bool rule_place(const Rules *r, const Rule *ru, size_t *t, size_t *k) {
  for (size_t i = 0; i < r->targets.n; i++) {
    const Target *tg = &r->targets.v[i];
    if (ru >= tg->rules.v && ru < tg->rules.v + tg->rules.n) {
      *t = i, *k = (size_t)(ru - tg->rules.v);
      return true;
    }
  }
  return false;
}

const Rule *rule_at_place(const Rules *r, size_t t, size_t k) {
  return t < r->targets.n && k < r->targets.v[t].rules.n ? &r->targets.v[t].rules.v[k] : NULL;
}
