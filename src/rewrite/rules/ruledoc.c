/* ruledoc: YAML and JSON rule files into one positioned node tree.
 *
 * YAML is read as libyaml parse events and built with an explicit stack;
 * anchors and aliases are resolved by sharing the anchored node. JSON is
 * parsed by cJSON, which keeps members in document order but records no
 * positions, so a small scanner walks the (already validated) text in the same
 * order and attaches each value's line and column. */
#include "ruledoc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static RNode *node_new(RuleDoc *doc, RNodeKind k, int line, int col) {
  RNode *n = xcalloc(1, sizeof *n);
  n->kind = k;
  n->line = line;
  n->col = col;
  vec_push(&doc->all, n);
  return n;
}

static void node_add(RNode *parent, RNode *child) {
  parent->items = xrealloc(parent->items, (parent->n + 1) * sizeof *parent->items);
  parent->items[parent->n++] = child;
}

void ruledoc_diag(const RuleDoc *doc, Diags *d, DiagLevel lvl, const RNode *at, const char *fmt, ...) {
  Buf msg = {0};
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&msg, fmt, ap);
  va_end(ap);
  diag_at(d, lvl, doc->path, doc->src, doc->len, at ? at->line : 1, at ? at->col : 1, "%s",
          msg.s);
  buf_free(&msg);
}

/* ---- YAML ------------------------------------------------------------ */

typedef struct { char *name; RNode *node; } Anchor;

/* Aliases share the anchored node, so a small file can stand for a huge tree
 * ("billion laughs": ten aliases of ten aliases of ...), which the schema
 * checker would walk node by node. A real rule file expands to a few
 * thousand nodes; past this limit (which the schema checker walks in
 * milliseconds) the file is refused. */
#define RULEDOC_MAX_EXPANDED 100000
/* Rule files nest a few levels; libyaml's scanner slows down quadratically
 * with depth (100000 '[' took minutes), so stop long before that. */
#define RULEDOC_MAX_DEPTH 64

/* A null in the YAML 1.2 core schema: a plain scalar without a tag reading
 * null, Null, NULL, ~ or nothing (`key:`), or one tagged !!null. Quoted and
 * block scalars, and plain ones tagged otherwise (!!str null), are strings. */
static bool yaml_null(const yaml_event_t *ev) {
  const char *tag = (const char *)ev->data.scalar.tag;
  if (tag) return !strcmp(tag, YAML_NULL_TAG);
  if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !ev->data.scalar.plain_implicit) return false;
  static const char *const nulls[] = {"", "null", "Null", "NULL", "~"};
  for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++)
    if (ev->data.scalar.length == strlen(nulls[i]) &&
        !memcmp(ev->data.scalar.value, nulls[i], ev->data.scalar.length))
      return true;
  return false;
}

static int load_yaml(RuleDoc *doc, Diags *d) {
  yaml_parser_t p;
  yaml_event_t ev;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_string(&p, (const unsigned char *)doc->src, doc->len);
  VEC(RNode *) stack = {0};
  VEC(Anchor) anchors = {0};
  int rc = 0, docs = 0;
  for (bool done = false; !done;) {
    if (!yaml_parser_parse(&p, &ev)) {
      int line = (int)p.problem_mark.line + 1, col = (int)p.problem_mark.column + 1;
      /* libyaml stops looking for a plain key's ':' after 1024 characters */
      bool long_key = p.problem && strstr(p.problem, "mapping values are not allowed") && col > 1024;
      diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col, "YAML syntax error: %s%s%s%s",
              p.problem ? p.problem : "malformed", p.context ? " " : "", p.context ? p.context : "",
              long_key ? " (a YAML key may be at most 1024 characters long)" : "");
      rc = -1;
      break;
    }
    int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
    RNode *made = NULL;
    const char *anchor = NULL;
    switch (ev.type) {
    case YAML_STREAM_END_EVENT: done = true; break;
    case YAML_DOCUMENT_START_EVENT:
      if (++docs > 1) {
        diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col,
                "a rule file holds one document; found a second one here");
        rc = -1;
        done = true;
      }
      break;
    case YAML_MAPPING_START_EVENT:
      made = node_new(doc, RN_MAP, line, col);
      anchor = (const char *)ev.data.mapping_start.anchor;
      break;
    case YAML_SEQUENCE_START_EVENT:
      made = node_new(doc, RN_SEQ, line, col);
      anchor = (const char *)ev.data.sequence_start.anchor;
      break;
    case YAML_SCALAR_EVENT:
      made = node_new(doc, RN_SCALAR, line, col);
      made->weight = 1;
      made->str = xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
      made->quoted = ev.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                     ev.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE ||
                     ev.data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
                     ev.data.scalar.style == YAML_FOLDED_SCALAR_STYLE;
      made->null = yaml_null(&ev);
      anchor = (const char *)ev.data.scalar.anchor;
      break;
    case YAML_ALIAS_EVENT: {
      const char *name = (const char *)ev.data.alias.anchor;
      for (size_t i = anchors.n; i-- > 0;)
        if (!strcmp(anchors.v[i].name, name)) { made = anchors.v[i].node; break; }
      for (size_t i = 0; made && i < stack.n; i++)
        if (stack.v[i] == made) {
          diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col,
                  "YAML alias '*%s' refers to a node that contains it (a cycle)", name);
          made = NULL;
          rc = -1;
          done = true;
          break;
        }
      if (!made && !done) {
        diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col,
                "unknown YAML alias '*%s'", name);
        rc = -1;
        done = true;
      }
      break;
    }
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT: {
      RNode *closed = stack.v[--stack.n];
      closed->end = ev.end_mark.index;
      closed->weight = 1;
      for (size_t i = 0; i < closed->n; i++) closed->weight += closed->items[i]->weight;
      if (closed->weight > RULEDOC_MAX_EXPANDED) {
        diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, closed->line, closed->col,
                "YAML aliases expand this node to more than %d nodes; refusing it (an alias bomb?)",
                RULEDOC_MAX_EXPANDED);
        rc = -1;
        done = true;
      }
      break;
    }
    default: break;
    }
    if (made && stack.n && stack.v[stack.n - 1]->kind == RN_MAP && stack.v[stack.n - 1]->n % 2 == 0 &&
        made->kind != RN_SCALAR) {
      /* YAML allows `? [a, b]: v`; a rule file's keys are names */
      diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col, "a key must be a name, not a %s",
              made->kind == RN_MAP ? "mapping" : "list");
      made = NULL;
      rc = -1;
      done = true;
    }
    if (made && !made->end) { /* its byte span (a map's or list's end comes with its end event) */
      made->off = ev.start_mark.index;
      made->end = ev.end_mark.index;
    }
    if (made) {
      if (anchor) vec_push(&anchors, ((Anchor){xstrdup(anchor), made}));
      if (stack.n) node_add(stack.v[stack.n - 1], made);
      else doc->root = made;
      if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
        vec_push(&stack, made);
        if (stack.n > RULEDOC_MAX_DEPTH) {
          diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col,
                  "nested more than %d levels deep; a rule file needs far fewer", RULEDOC_MAX_DEPTH);
          rc = -1;
          done = true;
        }
      }
    }
    yaml_event_delete(&ev);
  }
  for (size_t i = 0; i < anchors.n; i++) free(anchors.v[i].name);
  vec_free(&anchors);
  vec_free(&stack);
  yaml_parser_delete(&p);
  return rc;
}

/* ---- JSON ------------------------------------------------------------ */

typedef struct { const char *s; size_t n, i; } Scan;

static void sc_ws(Scan *sc) {
  while (sc->i < sc->n && strchr(" \t\r\n", sc->s[sc->i])) sc->i++;
}

static void sc_string(Scan *sc) {
  sc->i++; /* opening quote */
  while (sc->i < sc->n && sc->s[sc->i] != '"') sc->i += sc->s[sc->i] == '\\' ? 2 : 1;
  sc->i++;
}

static void pos_of(const char *s, size_t off, int *line, int *col) {
  int l = 1, c = 1;
  for (size_t k = 0; k < off; k++) {
    if (s[k] == '\n') l++, c = 1;
    else c++;
  }
  *line = l;
  *col = c;
}

static RNode *from_json(RuleDoc *doc, const cJSON *j, Scan *sc) {
  sc_ws(sc);
  int line, col;
  pos_of(sc->s, sc->i, &line, &col);
  RNode *n;
  if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
    bool obj = cJSON_IsObject(j);
    n = node_new(doc, obj ? RN_MAP : RN_SEQ, line, col);
    n->off = sc->i;
    sc->i++; /* { or [ */
    for (const cJSON *c = j->child; c; c = c->next) {
      sc_ws(sc);
      if (obj) {
        int kl, kc;
        pos_of(sc->s, sc->i, &kl, &kc);
        RNode *k = node_new(doc, RN_SCALAR, kl, kc);
        k->str = xstrdup(c->string);
        k->quoted = true;
        node_add(n, k);
        k->off = sc->i;
        sc_string(sc);
        k->end = sc->i;
        sc_ws(sc);
        sc->i++; /* : */
      }
      node_add(n, from_json(doc, c, sc));
      sc_ws(sc);
      if (sc->i < sc->n && sc->s[sc->i] == ',') sc->i++;
    }
    sc_ws(sc);
    sc->i++; /* } or ] */
    n->end = sc->i;
    return n;
  }
  n = node_new(doc, RN_SCALAR, line, col);
  n->off = sc->i;
  if (cJSON_IsString(j)) {
    n->str = xstrdup(j->valuestring);
    n->quoted = true;
    sc_string(sc);
  } else {
    n->null = cJSON_IsNull(j);
    size_t b = sc->i;
    while (sc->i < sc->n && !strchr(",]} \t\r\n", sc->s[sc->i])) sc->i++;
    n->str = xstrndup(sc->s + b, sc->i - b);
  }
  n->end = sc->i;
  return n;
}

static int load_json(RuleDoc *doc, Diags *d) {
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(doc->src, doc->len, &end, false);
  if (!j) {
    size_t off = end ? (size_t)(end - doc->src) : 0;
    const char *e = cJSON_GetErrorPtr();
    if (!end && e && e >= doc->src && e <= doc->src + doc->len) off = (size_t)(e - doc->src);
    int line, col;
    pos_of(doc->src, off, &line, &col);
    diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col, "JSON syntax error");
    return -1;
  }
  Scan sc = {doc->src, doc->len, 0};
  doc->root = from_json(doc, j, &sc);
  cJSON_Delete(j);
  sc_ws(&sc);
  if (sc.i < doc->len) {
    int line, col;
    pos_of(doc->src, sc.i, &line, &col);
    diag_at(d, DIAG_ERROR, doc->path, doc->src, doc->len, line, col,
            "unexpected text after the JSON document");
    return -1;
  }
  return 0;
}

static bool looks_json(const char *path) {
  size_t pl = strlen(path);
  return pl >= 5 && !strcmp(path + pl - 5, ".json");
}

int ruledoc_parse(RuleDoc *doc, const char *path, const char *text, size_t len, Diags *d) {
  memset(doc, 0, sizeof *doc);
  doc->path = xstrdup(path);
  doc->src = xstrndup(text, len);
  doc->len = len;
  if (memchr(text, 0, len)) {
    diag_at(d, DIAG_ERROR, path, NULL, 0, 0, 0, "rule file contains a NUL byte; is it binary?");
    return -1;
  }
  return looks_json(path) ? load_json(doc, d) : load_yaml(doc, d);
}

int ruledoc_load(RuleDoc *doc, const char *path, Diags *d) {
  char *text;
  size_t len;
  if (read_file(path, &text, &len) < 0) {
    memset(doc, 0, sizeof *doc);
    diag_at(d, DIAG_ERROR, path, NULL, 0, 0, 0, "cannot read rule file: %s", strerror(errno));
    return -1;
  }
  int rc = ruledoc_parse(doc, path, text, len, d);
  free(text);
  return rc;
}

void ruledoc_free(RuleDoc *doc) {
  for (size_t i = 0; i < doc->all.n; i++) {
    free(doc->all.v[i]->str);
    free(doc->all.v[i]->items);
    free(doc->all.v[i]);
  }
  vec_free(&doc->all);
  free(doc->path);
  free(doc->src);
  memset(doc, 0, sizeof *doc);
}
