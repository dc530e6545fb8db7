/* history: writing a changed rule file, and stepping back.
 *
 * A change is committed atomically after the new text loads as a rule file;
 * RULES.history.jsonl beside it gets one JSON object per line: the command,
 * what changed, why, when, the edits themselves and the digests of the file
 * before and after. An undo checks that the file is still the one the last
 * change produced (so nothing written by hand since is lost), applies the
 * inverse edits, checks the "before" digest, and appends an undo entry;
 * undo entries cancel the latest entry still in effect, so repeated undos
 * step further back. */
#include "history.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "emit.h"

char *history_path(const char *rules_path) { return xasprintf("%s.history.jsonl", rules_path); }

static void split_path(const char *path, char **dir, char **base) {
  const char *s = strrchr(path, '/');
  *dir = s ? (s == path ? xstrdup("/") : xstrndup(path, (size_t)(s - path))) : xstrdup(".");
  *base = xstrdup(s ? s + 1 : path);
}

/* Atomic write of a file by path (emit_file writes under a root). */
static int write_atomic(const char *path, const char *data, size_t n, Diags *d) {
  char *dir, *base;
  /* through a symbolic link: the file it names is replaced, the link stays */
  char *real = realpath(path, NULL);
  split_path(real ? real : path, &dir, &base);
  free(real);
  struct stat st;
  mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
  int rc = emit_file(dir, base, data, n, mode, d);
  free(dir), free(base);
  return rc;
}

static void hex64(char out[17], uint64_t h) { snprintf(out, 17, "%016llx", (unsigned long long)h); }

/* UTC time; SOURCE_DATE_EPOCH pins it (reproducible tests). */
static void now_iso(char out[32]) {
  const char *sde = getenv("SOURCE_DATE_EPOCH");
  time_t t = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int history_append(const char *rules_path, cJSON *entry, Diags *d) {
  char *hp = history_path(rules_path), *old = NULL;
  size_t oldlen = 0;
  if (read_file(hp, &old, &oldlen) < 0) old = NULL, oldlen = 0;
  char *line = cJSON_PrintUnformatted(entry);
  Buf b = {0};
  if (old) buf_add(&b, old, oldlen);
  if (b.len && b.s[b.len - 1] != '\n') buf_putc(&b, '\n');
  buf_puts(&b, line);
  buf_putc(&b, '\n');
  int rc = write_atomic(hp, b.s, b.len, d);
  free(line), free(old), free(hp);
  buf_free(&b);
  return rc;
}

static cJSON *entry_new(const char *command, const char *what, const char *why) {
  cJSON *e = cJSON_CreateObject();
  char ts[32];
  now_iso(ts);
  cJSON_AddStringToObject(e, "time", ts);
  cJSON_AddStringToObject(e, "command", command);
  if (what) cJSON_AddStringToObject(e, "what", what);
  if (why) cJSON_AddStringToObject(e, "why", why);
  return e;
}

static void add_digests(cJSON *e, const char *old, size_t oldlen, const char *text, size_t len) {
  char h[17];
  hex64(h, hash64(old, oldlen, 0));
  cJSON_AddStringToObject(e, "before", h);
  hex64(h, hash64(text, len, 0));
  cJSON_AddStringToObject(e, "after", h);
}

int history_commit(const char *rules_path, const char *old, size_t oldlen, const char *text, size_t len,
                   TextEdits *e, const char *command, const char *what, const char *why, Diags *d) {
  Rules check = {0};
  Diags cd = {0};
  if (rules_parse(&check, rules_path, text, len, &cd) < 0 || cd.errors) {
    diag_at(d, DIAG_ERROR, rules_path, NULL, 0, 0, 0,
            "the edited rule file would not load, so it is left unchanged:\n%s",
            cd.text.s ? cd.text.s : "");
    rules_free(&check);
    diags_free(&cd);
    return -1;
  }
  rules_free(&check);
  diags_free(&cd);
  if (write_atomic(rules_path, text, len, d) < 0) return -1;
  cJSON *entry = entry_new(command, what, why);
  add_digests(entry, old, oldlen, text, len);
  cJSON *arr = cJSON_AddArrayToObject(entry, "edits");
  for (size_t i = 0; i < e->n; i++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "at", (double)e->v[i].at);
    char *rem = xstrndup(old + e->v[i].at, e->v[i].del);
    cJSON_AddStringToObject(x, "removed", rem);
    cJSON_AddStringToObject(x, "inserted", e->v[i].ins);
    free(rem);
    cJSON_AddItemToArray(arr, x);
  }
  int rc = history_append(rules_path, entry, d);
  cJSON_Delete(entry);
  return rc;
}

/* The history's entries, and the indices of those still in effect (each
 * undo entry cancels the latest one in effect). */
typedef struct {
  VEC(cJSON *) all;
  VEC(size_t) live;
} History;

static void history_free(History *h) {
  for (size_t i = 0; i < h->all.n; i++) cJSON_Delete(h->all.v[i]);
  vec_free(&h->all);
  vec_free(&h->live);
}

static int history_load(const char *rules_path, History *h, Diags *d) {
  char *hp = history_path(rules_path), *text;
  size_t len;
  memset(h, 0, sizeof *h);
  if (read_file(hp, &text, &len) < 0) {
    if (errno != ENOENT) diag_at(d, DIAG_ERROR, hp, NULL, 0, 0, 0, "cannot read the history: %s", strerror(errno));
    int rc = errno == ENOENT ? 0 : -1;
    free(hp);
    return rc;
  }
  int line = 0, rc = 0;
  for (char *p = text; *p && rc == 0;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    line++;
    if (*p) {
      cJSON *e = cJSON_Parse(p);
      const cJSON *cmd = e ? cJSON_GetObjectItemCaseSensitive(e, "command") : NULL;
      if (!cJSON_IsString(cmd)) {
        diag_at(d, DIAG_ERROR, hp, NULL, 0, line, 1, "not a history entry (a JSON object with a command)");
        cJSON_Delete(e);
        rc = -1;
        break;
      }
      vec_push(&h->all, e);
      if (!strcmp(cmd->valuestring, "undo")) {
        if (h->live.n) h->live.n--;
      } else {
        vec_push(&h->live, h->all.n - 1);
      }
    }
    if (!nl) break;
    p = nl + 1;
  }
  free(text);
  free(hp);
  if (rc) history_free(h);
  return rc;
}

/* Text of the file before entry `e`, given the text after it. */
static char *step_back(const cJSON *e, const char *text, size_t len, size_t *outlen) {
  const cJSON *edits = cJSON_GetObjectItemCaseSensitive(e, "edits"), *x;
  TextEdits inv = {0};
  long shift = 0;
  cJSON_ArrayForEach(x, edits) {
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(x, "at");
    const cJSON *rem = cJSON_GetObjectItemCaseSensitive(x, "removed");
    const cJSON *ins = cJSON_GetObjectItemCaseSensitive(x, "inserted");
    if (!cJSON_IsNumber(at) || !cJSON_IsString(rem) || !cJSON_IsString(ins)) goto bad;
    size_t il = strlen(ins->valuestring), rl = strlen(rem->valuestring);
    long pos = (long)at->valuedouble + shift;
    if (pos < 0 || (size_t)pos + il > len || memcmp(text + pos, ins->valuestring, il)) goto bad;
    vec_push(&inv, ((TextEdit){(size_t)pos, il, xstrdup(rem->valuestring)}));
    shift += (long)il - (long)rl;
  }
  char *r = ruledit_apply(text, len, &inv, outlen);
  textedits_free(&inv);
  return r;
bad:
  textedits_free(&inv);
  return NULL;
}

static bool digest_is(const cJSON *e, const char *key, const char *text, size_t len) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
  char h[17];
  hex64(h, hash64(text, len, 0));
  return cJSON_IsString(v) && !strcmp(v->valuestring, h);
}

/* Undo the last `count` live entries (all when count < 0). */
static int step_back_n(const char *rules_path, long count, const char *command, Diags *d) {
  History h;
  if (history_load(rules_path, &h, d) < 0) return -1;
  char *hp = history_path(rules_path);
  if (!h.live.n && count < 0) {
    fprintf(stderr, "ncrewrite: %s has no recorded change in effect; nothing to reset\n", rules_path);
    free(hp);
    history_free(&h);
    return 0;
  }
  if (!h.live.n) {
    diag_at(d, DIAG_ERROR, rules_path, NULL, 0, 0, 0, "nothing to undo: %s records no change in effect", hp);
    free(hp);
    history_free(&h);
    return -1;
  }
  char *text, *cur;
  size_t len, curlen;
  if (read_file(rules_path, &text, &len) < 0) {
    diag_at(d, DIAG_ERROR, rules_path, NULL, 0, 0, 0, "cannot read rule file: %s", strerror(errno));
    free(hp);
    history_free(&h);
    return -1;
  }
  cur = xstrndup(text, len);
  curlen = len;
  size_t steps = count < 0 ? h.live.n : (size_t)count;
  int rc = 0;
  for (size_t k = 0; k < steps && rc == 0; k++) {
    const cJSON *e = h.all.v[h.live.v[h.live.n - 1 - k]];
    if (!digest_is(e, "after", cur, curlen)) {
      diag_at(d, DIAG_ERROR, rules_path, NULL, 0, 0, 0,
              "changed since ncrewrite last wrote it (digest differs from %s); not undone: edit it by hand", hp);
      rc = -1;
      break;
    }
    size_t nl;
    char *prev = step_back(e, cur, curlen, &nl);
    if (!prev || !digest_is(e, "before", prev, nl)) {
      diag_at(d, DIAG_ERROR, hp, NULL, 0, 0, 0, "entry %zu does not undo cleanly; rule file left unchanged",
              h.live.v[h.live.n - 1 - k] + 1);
      free(prev);
      rc = -1;
      break;
    }
    free(cur);
    cur = prev, curlen = nl;
  }
  if (rc == 0) {
    /* one history entry per undone step, so the stack stays exact */
    rc = write_atomic(rules_path, cur, curlen, d);
    for (size_t k = 0; k < steps && rc == 0; k++) {
      cJSON *u = entry_new("undo", command, NULL);
      cJSON_AddNumberToObject(u, "undoes", (double)(h.live.v[h.live.n - 1 - k] + 1));
      rc = history_append(rules_path, u, d);
      cJSON_Delete(u);
    }
    if (rc == 0) {
      for (size_t k = 0; k < steps; k++) {
        const cJSON *e = h.all.v[h.live.v[h.live.n - 1 - k]];
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "command");
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "what");
        fprintf(stderr, "ncrewrite: undid %s%s%s\n", c->valuestring, cJSON_IsString(w) ? ": " : "",
                cJSON_IsString(w) ? w->valuestring : "");
      }
    }
  }
  free(text), free(cur), free(hp);
  history_free(&h);
  return rc;
}

int history_undo(const char *rules_path, Diags *d) { return step_back_n(rules_path, 1, "undo", d); }
int history_reset(const char *rules_path, Diags *d) { return step_back_n(rules_path, -1, "reset", d); }
