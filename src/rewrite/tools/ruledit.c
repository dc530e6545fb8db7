/* ruledit: where a change goes in a rule file, as text edits.
 *
 * Where an edit goes is read off the positioned node tree (ruledoc.c gives
 * every node its byte span). Block-style YAML gets whole new lines, indented
 * like their neighbours, after the last line of the collection they extend;
 * flow collections (YAML [..]/{..} and all of JSON) get a JSON-form item
 * after their last item, which is valid in both syntaxes. Removals take
 * whole lines in block style and a member with one comma in flow style.
 * history.c writes the result and records it. */
#include "ruledit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Plain YAML when it is safe (names and dotted paths), quoted otherwise. */
static void yaml_word(Buf *b, const char *s, bool json) {
  bool plain = !json && *s && !strchr("-?:,[]{}#&*!|>'\"%@`0123456789", *s);
  for (const char *p = s; *p && plain; p++)
    plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("_./-", *p);
  /* words YAML reads as something other than a string */
  static const char *const special[] = {"null", "true", "false", "yes", "no", "on", "off", "y", "n", NULL};
  for (const char *const *w = special; *w && plain; w++) plain = strcasecmp(s, *w) != 0;
  if (plain) buf_puts(b, s);
  else buf_json_string(b, s);
}

static bool is_json_path(const char *path) {
  size_t n = strlen(path);
  return n >= 5 && !strcmp(path + n - 5, ".json");
}

static bool is_flow(const RuleDoc *doc, const RNode *n) {
  return n->off < doc->len && (doc->src[n->off] == '[' || doc->src[n->off] == '{');
}

/* One past the last byte of real content under n: block collections' own
 * spans run on to the next token, past comments and blank lines. */
static size_t content_end(const RuleDoc *doc, const RNode *n) {
  if (n->kind == RN_SCALAR || is_flow(doc, n)) return n->end;
  size_t e = n->off;
  for (size_t i = 0; i < n->n; i++) {
    size_t c = content_end(doc, n->items[i]);
    if (c > e) e = c;
  }
  return e;
}

/* The start of the line after the one holding offset end-1 (or EOF). */
static size_t after_line(const RuleDoc *doc, size_t end) {
  if (end && doc->src[end - 1] == '\n') return end;
  const char *nl = memchr(doc->src + end, '\n', doc->len - end);
  return nl ? (size_t)(nl - doc->src) + 1 : doc->len;
}

static void spaces(Buf *b, int n) {
  for (int i = 0; i < n; i++) buf_putc(b, ' ');
}

/* One rule as a block item: "- key: value" lines, dash at column `dash`,
 * keys at column `key` (0-based). */
static void key_at(Buf *b, bool *first, int dash, int key, const char *k) {
  if (*first) spaces(b, dash), buf_puts(b, "- "), spaces(b, key - dash - 2);
  else spaces(b, key);
  *first = false;
  buf_printf(b, "%s: ", k);
}

static void item_block(Buf *b, const LineRule *r, int dash, int key) {
  bool f = true;
  if (r->function) key_at(b, &f, dash, key, "function"), yaml_word(b, r->function, false), buf_putc(b, '\n');
  key_at(b, &f, dash, key, "start_line"), buf_printf(b, "%d\n", r->start);
  key_at(b, &f, dash, key, "end_line"), buf_printf(b, "%d\n", r->end);
  if (r->start_content)
    key_at(b, &f, dash, key, "start_line_content"), buf_json_string(b, r->start_content), buf_putc(b, '\n');
  if (r->context) key_at(b, &f, dash, key, "context_class"), yaml_word(b, r->context, false), buf_putc(b, '\n');
  if (r->name)
    key_at(b, &f, dash, key, "context_values"), buf_putc(b, '['), buf_json_string(b, r->name), buf_puts(b, "]\n");
  if (r->reasoning) key_at(b, &f, dash, key, "reasoning"), buf_json_string(b, r->reasoning), buf_putc(b, '\n');
}

/* The same rule as a JSON object (valid YAML flow too). */
static void item_flow(Buf *b, const LineRule *r) {
  buf_putc(b, '{');
  if (r->function) buf_puts(b, "\"function\": "), buf_json_string(b, r->function), buf_puts(b, ", ");
  buf_printf(b, "\"start_line\": %d, \"end_line\": %d", r->start, r->end);
  if (r->start_content) buf_puts(b, ", \"start_line_content\": "), buf_json_string(b, r->start_content);
  if (r->context) buf_puts(b, ", \"context_class\": "), buf_json_string(b, r->context);
  if (r->name) buf_puts(b, ", \"context_values\": ["), buf_json_string(b, r->name), buf_putc(b, ']');
  if (r->reasoning) buf_puts(b, ", \"reasoning\": "), buf_json_string(b, r->reasoning);
  buf_putc(b, '}');
}

static const RNode *map_get(const RNode *m, const char *key, size_t *at) {
  for (size_t i = 0; i + 1 < m->n; i += 2)
    if (m->items[i]->kind == RN_SCALAR && !strcmp(m->items[i]->str, key)) {
      if (at) *at = i;
      return m->items[i + 1];
    }
  return NULL;
}

/* A path is targets/<module>/func_line_range_wrappings (the list takes the
 * line rules), or targets/<module> with path[2] NULL (a target of its own,
 * no value: as `mypkg.model:` for full trace). Below, k is a level of it. */
static bool leaf(const char *const *path, int k) { return k == 2 || !path[k + 1]; }

/* The missing part of the path from level k on, as block lines with the
 * first key at column `col`. */
static void rest_block(Buf *b, const char *const *path, int k, int col, const LineRule *lr, size_t n) {
  spaces(b, col);
  yaml_word(b, path[k], false);
  buf_puts(b, ":\n");
  if (!leaf(path, k)) {
    rest_block(b, path, k + 1, col + 2, lr, n);
    return;
  }
  for (size_t i = 0; k == 2 && i < n; i++) item_block(b, &lr[i], col + 2, col + 4);
}

static void value_flow(Buf *b, const char *const *path, int k, const LineRule *lr, size_t n);

/* ... and as one flow member "key": value. */
static void rest_flow(Buf *b, const char *const *path, int k, const LineRule *lr, size_t n) {
  buf_json_string(b, path[k]);
  buf_puts(b, ": ");
  value_flow(b, path, k, lr, n);
}

static void push_edit(TextEdits *out, size_t at, size_t del, Buf *ins) {
  vec_push(out, ((TextEdit){at, del, buf_steal(ins)}));
}

/* The value that path[k] takes (the map below it, or the list), as JSON;
 * k == -1: the whole document. */
static void value_flow(Buf *b, const char *const *path, int k, const LineRule *lr, size_t n) {
  if (k < 0 || !leaf(path, k)) {
    buf_putc(b, '{');
    rest_flow(b, path, k + 1, lr, n);
    buf_putc(b, '}');
    return;
  }
  if (k < 2) { /* a target with nothing in it yet */
    buf_puts(b, "{}");
    return;
  }
  buf_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i) buf_puts(b, ", ");
    item_flow(b, &lr[i]);
  }
  buf_putc(b, ']');
}

/* A null written as a value in a flow collection (all of JSON): `"k": null`,
 * `{k: ~}`, `{k: }`. It is replaced by the value path[k] takes. */
static void null_replace(const RuleDoc *doc, const RNode *key, const RNode *null, const char *const *path, int k,
                         const LineRule *lr, size_t n, TextEdits *out) {
  Buf t = {0};
  if (null->end == null->off) { /* nothing written: libyaml places it at the next token */
    bool colon = false;
    for (size_t p = key->end; p < null->off && p < doc->len; p++) colon |= doc->src[p] == ':';
    if (!colon) buf_puts(&t, ": ");
  }
  value_flow(&t, path, k, lr, n);
  push_edit(out, null->off, null->end - null->off, &t);
}

/* Append to a flow collection: after its last member, in the layout of the
 * members before (one per line when the collection is written so). */
static int flow_append(const RuleDoc *doc, const RNode *c, Buf *text, TextEdits *out, Diags *d) {
  char close = doc->src[c->off] == '[' ? ']' : '}';
  if (c->end == 0 || doc->src[c->end - 1] != close) {
    ruledoc_diag(doc, d, DIAG_ERROR, c, "cannot find the end of this collection to add to it");
    return -1;
  }
  Buf ins = {0};
  size_t at;
  if (!c->n) {
    at = c->off + 1;
    buf_add(&ins, text->s, text->len);
  } else {
    const RNode *last = c->items[c->n - 1];
    at = content_end(doc, last);
    const RNode *first = c->items[0];
    bool lines = false;
    for (size_t p = c->off + 1; p < first->off; p++) lines |= doc->src[p] == '\n';
    buf_putc(&ins, ',');
    if (lines) buf_putc(&ins, '\n'), spaces(&ins, first->col - 1);
    else buf_putc(&ins, ' ');
    buf_add(&ins, text->s, text->len);
  }
  push_edit(out, at, 0, &ins);
  return 0;
}

static int add_path(const RuleDoc *doc, const char *const *path, const LineRule *lr, size_t n, TextEdits *out,
                    Diags *d) {
  bool json = is_json_path(doc->path);
  Buf t = {0};
  const RNode *node = doc->root;
  if (!node || (node->kind == RN_SCALAR && node->null && node->end == node->off)) {
    /* an empty file, or one holding only comments (or `---`) */
    if (doc->len && doc->src[doc->len - 1] != '\n') buf_putc(&t, '\n');
    rest_block(&t, path, 0, 0, lr, n);
    push_edit(out, doc->len, 0, &t);
    return 0;
  }
  if (node->kind == RN_SCALAR && node->null) { /* a file that reads `null` or `~` */
    value_flow(&t, path, -1, lr, n);
    push_edit(out, node->off, node->end - node->off, &t);
    return 0;
  }
  for (int k = 0; k < 3 && path[k]; k++) {
    if (node->kind != RN_MAP) {
      ruledoc_diag(doc, d, DIAG_ERROR, node, "expected a mapping here to add '%s' to", path[k]);
      return -1;
    }
    size_t ki = 0;
    const RNode *next = map_get(node, path[k], &ki);
    if (next && k < 2 && leaf(path, k)) return 0; /* the target is there already */
    if (next && next->kind == RN_SCALAR && next->null && (is_flow(doc, node) || json)) {
      null_replace(doc, node->items[ki], next, path, k, lr, n, out);
      return 0;
    }
    /* an empty flow collection in a block document (`targets: {}`,
     * `func_line_range_wrappings: []`) goes like a null: filling it in
     * flow style made a full-trace file one 5 KB line nobody could read */
    bool empty_flow = next && !json && !is_flow(doc, node) && is_flow(doc, next) && !next->n &&
                      next->kind == (k < 2 ? RN_MAP : RN_SEQ);
    if (next && ((next->kind == RN_SCALAR && next->null) || empty_flow)) {
      /* a key with no value (`mypkg.model:` for full trace), or a null one
       * (`targets: ~`, which goes): what goes below it starts on the next
       * line, indented under it */
      const RNode *key = node->items[ki];
      size_t from = key->end;
      if (next->end > next->off) {
        /* the null goes, with the blanks before it when nothing follows */
        size_t b = next->off, e = next->end;
        while (e < doc->len && (doc->src[e] == ' ' || doc->src[e] == '\t')) e++;
        if (e == doc->len || doc->src[e] == '\n' || doc->src[e] == '\r')
          while (b > key->end && (doc->src[b - 1] == ' ' || doc->src[b - 1] == '\t')) b--;
        Buf none = {0};
        buf_puts(&none, "");
        push_edit(out, b, next->end - b, &none);
        from = next->end;
      }
      size_t at = after_line(doc, from);
      if (at == doc->len && doc->len && doc->src[doc->len - 1] != '\n') buf_putc(&t, '\n');
      if (!leaf(path, k)) rest_block(&t, path, k + 1, key->col + 1, lr, n);
      else
        for (size_t i = 0; i < n; i++) item_block(&t, &lr[i], key->col + 1, key->col + 3);
      push_edit(out, at, 0, &t);
      return 0;
    }
    if (next && k == 2) {
      if (next->kind != RN_SEQ) {
        ruledoc_diag(doc, d, DIAG_ERROR, next, "func_line_range_wrappings is not a list");
        return -1;
      }
      if (is_flow(doc, next)) {
        for (size_t i = 0; i < n; i++) {
          if (i) buf_puts(&t, ", ");
          item_flow(&t, &lr[i]);
        }
        int rc = flow_append(doc, next, &t, out, d);
        buf_free(&t);
        return rc;
      }
      if (!next->n || next->off >= doc->len || doc->src[next->off] != '-') {
        ruledoc_diag(doc, d, DIAG_ERROR, next, "cannot tell how this list is laid out to add to it");
        return -1;
      }
      int dash = next->col - 1;
      const RNode *it0 = next->items[0];
      int key = it0->kind == RN_MAP && it0->line == next->line ? it0->col - 1 : dash + 2;
      size_t at = after_line(doc, content_end(doc, next));
      if (at == doc->len && doc->len && doc->src[doc->len - 1] != '\n') buf_putc(&t, '\n');
      for (size_t i = 0; i < n; i++) item_block(&t, &lr[i], dash, key);
      push_edit(out, at, 0, &t);
      return 0;
    }
    if (next) {
      node = next;
      continue;
    }
    /* the key is missing: add it, and what lies below it, to this map */
    if (is_flow(doc, node)) {
      rest_flow(&t, path, k, lr, n);
      int rc = flow_append(doc, node, &t, out, d);
      buf_free(&t);
      return rc;
    }
    if (json) { /* JSON is always flow: is_flow failed to see a '{' */
      ruledoc_diag(doc, d, DIAG_ERROR, node, "cannot add to this object");
      return -1;
    }
    size_t at = after_line(doc, content_end(doc, node));
    if (at == doc->len && doc->len && doc->src[doc->len - 1] != '\n') buf_putc(&t, '\n');
    rest_block(&t, path, k, node->col - 1, lr, n);
    push_edit(out, at, 0, &t);
    return 0;
  }
  buf_free(&t);
  return -1; /* not reached */
}

int ruledit_add_lines(const RuleDoc *doc, const char *module, const LineRule *lr, size_t n, TextEdits *out,
                      Diags *d) {
  const char *const path[3] = {"targets", module, "func_line_range_wrappings"};
  return add_path(doc, path, lr, n, out, d);
}

int ruledit_add_target(const RuleDoc *doc, const char *module, TextEdits *out, Diags *d) {
  const char *const path[3] = {"targets", module, NULL};
  return add_path(doc, path, NULL, 0, out, d);
}

int ruledit_add_excludes(const RuleDoc *doc, const char *const *names, size_t n, TextEdits *out, Diags *d) {
  bool json = is_json_path(doc->path);
  const RNode *root = doc->root;
  Buf t = {0};
  if (!n) return 0;
  if (!root || (root->kind == RN_SCALAR && root->null)) {
    /* an empty file (or only comments, or `null`): a new block list */
    if (root && root->end > root->off) {
      ruledoc_diag(doc, d, DIAG_ERROR, root, "expected a mapping here to add 'exclude' to");
      return -1;
    }
    if (doc->len && doc->src[doc->len - 1] != '\n') buf_putc(&t, '\n');
    buf_puts(&t, "exclude:\n");
    for (size_t i = 0; i < n; i++) buf_puts(&t, "  - "), yaml_word(&t, names[i], json), buf_putc(&t, '\n');
    push_edit(out, doc->len, 0, &t);
    return 0;
  }
  if (root->kind != RN_MAP) {
    ruledoc_diag(doc, d, DIAG_ERROR, root, "expected a mapping here to add 'exclude' to");
    return -1;
  }
  size_t ki = 0;
  const RNode *ex = map_get(root, "exclude", &ki);
  if (!ex || (ex->kind == RN_SCALAR && ex->null)) {
    if (ex) {
      ruledoc_diag(doc, d, DIAG_ERROR, ex, "'exclude' is empty (null): make it a list to add to it");
      return -1;
    }
    if (is_flow(doc, root)) { /* JSON or a flow mapping: a new member */
      buf_puts(&t, "\"exclude\": [");
      for (size_t i = 0; i < n; i++) buf_puts(&t, i ? ", " : ""), buf_json_string(&t, names[i]);
      buf_putc(&t, ']');
      int rc = flow_append(doc, root, &t, out, d);
      buf_free(&t);
      return rc;
    }
    /* a block mapping: a new top-level key after its last content line */
    size_t at = after_line(doc, content_end(doc, root));
    if (at == doc->len && doc->len && doc->src[doc->len - 1] != '\n') buf_putc(&t, '\n');
    spaces(&t, root->col - 1);
    buf_puts(&t, "exclude:\n");
    for (size_t i = 0; i < n; i++) {
      spaces(&t, root->col + 1);
      buf_puts(&t, "- "), yaml_word(&t, names[i], json), buf_putc(&t, '\n');
    }
    push_edit(out, at, 0, &t);
    return 0;
  }
  if (ex->kind != RN_SEQ) {
    ruledoc_diag(doc, d, DIAG_ERROR, ex, "'exclude' is not a list");
    return -1;
  }
  if (is_flow(doc, ex)) {
    for (size_t i = 0; i < n; i++) {
      if (i) buf_puts(&t, ", ");
      if (json) buf_json_string(&t, names[i]);
      else yaml_word(&t, names[i], false);
    }
    int rc = flow_append(doc, ex, &t, out, d);
    buf_free(&t);
    return rc;
  }
  if (!ex->n || ex->off >= doc->len || doc->src[ex->off] != '-') {
    ruledoc_diag(doc, d, DIAG_ERROR, ex, "cannot tell how this list is laid out to add to it");
    return -1;
  }
  size_t at = after_line(doc, content_end(doc, ex));
  if (at == doc->len && doc->len && doc->src[doc->len - 1] != '\n') buf_putc(&t, '\n');
  for (size_t i = 0; i < n; i++) {
    spaces(&t, ex->col - 1);
    buf_puts(&t, "- "), yaml_word(&t, names[i], json), buf_putc(&t, '\n');
  }
  push_edit(out, at, 0, &t);
  return 0;
}

static bool find_parent(const RNode *n, const RNode *want, const RNode **parent, size_t *idx) {
  if (n->kind == RN_SCALAR) return false;
  for (size_t i = 0; i < n->n; i++) {
    if (n->items[i] == want) {
      *parent = n, *idx = i;
      return true;
    }
    if (find_parent(n->items[i], want, parent, idx)) return true;
  }
  return false;
}

/* Is node inside a removal planned already? */
static bool removed(const TextEdits *out, const RNode *n) {
  for (size_t i = 0; i < out->n; i++)
    if (!*out->v[i].ins && n->off >= out->v[i].at && n->off < out->v[i].at + out->v[i].del) return true;
  return false;
}

int ruledit_remove_node(const RuleDoc *doc, const RNode *node, TextEdits *out, Diags *d) {
  const RNode *par = NULL, *gp = NULL;
  size_t idx = 0, gidx = 0;
  if (!doc->root || !find_parent(doc->root, node, &par, &idx)) return -1;
  /* the last entry left in its list or map: an empty key does not load, so
   * the entry that holds the collection goes instead (never a top-level
   * key) */
  size_t left = 0;
  for (size_t i = 0; i < par->n; i += par->kind == RN_MAP ? 2 : 1)
    left += i != (par->kind == RN_MAP ? idx - idx % 2 : idx) && !removed(out, par->items[i]);
  if (!left) {
    if (par == doc->root || !find_parent(doc->root, par, &gp, &gidx) || gp == doc->root) {
      ruledoc_diag(doc, d, DIAG_WARNING, node, "the last entry of its section; remove it by hand");
      return -1;
    }
    return ruledit_remove_node(doc, par, out, d);
  }
  /* the member: a list item, or a map entry's key and value */
  size_t step = par->kind == RN_MAP ? 2 : 1, m = idx - idx % step;
  const RNode *first = par->items[m], *last = par->items[m + step - 1];
  size_t b = first->off, e;
  if (is_flow(doc, par)) {
    /* [a, b, c] / {k: v, ...} (all of JSON): the member goes with one comma,
     * the one up to the next member left, or, for the last one left, the
     * one after the member before it */
    size_t j = m + step;
    while (j < par->n && removed(out, par->items[j])) j += step;
    e = content_end(doc, last);
    if (j < par->n) {
      e = par->items[j]->off;
    } else {
      for (size_t p = m; p >= step;) {
        p -= step;
        if (removed(out, par->items[p])) continue;
        b = content_end(doc, par->items[p + step - 1]);
        break;
      }
    }
  } else {
    /* a list item from its dash; a map entry from its key; whole lines */
    while (b > 0 && doc->src[b - 1] != '\n') b--;
    e = after_line(doc, content_end(doc, last));
  }
  /* removals planned inside this one are part of it now */
  size_t k = 0;
  for (size_t i = 0; i < out->n; i++) {
    if (!*out->v[i].ins && out->v[i].at >= b && out->v[i].at + out->v[i].del <= e) free(out->v[i].ins);
    else out->v[k++] = out->v[i];
  }
  out->n = k;
  Buf none = {0};
  buf_puts(&none, "");
  push_edit(out, b, e - b, &none);
  return 0;
}

char *ruledit_apply(const char *src, size_t len, TextEdits *e, size_t *outlen) {
  /* insertion sort: stable, so edits at one offset keep their order */
  TextEdit *v = e->v;
  for (size_t i = 1; i < e->n; i++)
    for (size_t j = i; j > 0 && v[j - 1].at > v[j].at; j--) {
      TextEdit t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  Buf b = {0};
  size_t pos = 0;
  for (size_t i = 0; i < e->n; i++) {
    if (v[i].at < pos) BUG("overlapping rule-file edits");
    buf_add(&b, src + pos, v[i].at - pos);
    buf_puts(&b, v[i].ins);
    pos = v[i].at + v[i].del;
  }
  buf_add(&b, src + pos, len - pos);
  if (!b.s) buf_puts(&b, "");
  *outlen = b.len;
  return buf_steal(&b);
}

void textedits_free(TextEdits *e) {
  for (size_t i = 0; i < e->n; i++) free(e->v[i].ins);
  vec_free(e);
}
