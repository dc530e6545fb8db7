/* drill and prune: rule-file changes computed from a trace.
 *
 *   ncrewrite drill --config R --src SRC --trace T [--top K] [--lines] [--min-share PCT] [--out OUT]
 *   ncrewrite prune --config R --trace T [--min-calls N] [--max-mean-us U] [--out OUT]
 *
 * Both read the user-annotation ranges of the trace (tracescan.c) and find
 * where each range came from through the manifest of the shadow tree that
 * ran: a range's args.file is the user's file (ncrt maps shadow copies back
 * through the manifest's "source"; the tree is then the one the run's
 * env.json names, or --out) or, in older traces, a file of that tree, whose
 * root holds .ncrewrite/manifest.json with each range's name, original
 * lines and rule (--out names the tree, for ranges without a file).
 *
 * drill takes the K ranges with the largest exclusive time (time not spent
 * in a nested range on the same thread) and adds a line range for each
 * statement one level inside them (py_inner_statements: compound ones
 * whole, and those that do work, operators included; --lines: every
 * statement, each range named "FILE:LINE TEXT"), so the next run splits
 * that time. It never splits a range holding under --min-share (1 %) of
 * all exclusive time, nor one no rule can split (an operator's range, a
 * call site's), and never proposes a statement under a range that has no
 * call in the trace (its lines did not run). When nothing qualifies it
 * says so and exits 3, the rule file unchanged. A missing rule file starts
 * empty. prune removes the rules of ranges whose cost outweighs
 * what they tell: called at least N times at a mean under U µs (the
 * runtime's own throttle defaults: 100000 calls, 10 µs). Each is checked and
 * committed like feedback: atomically, with a history entry, undoable. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "feedback.h"
#include "manifest.h"
#include "tracefig.h"
#include "rundir.h"

/* ---- where a range came from: the shadow tree's manifest ---------------- */

typedef struct {
  char *rel;     /* file relative to SRC (= to the shadow root) */
  int line0, line1;
  char *kind;
  char *rule_at; /* "rules:line:col" or NULL */
  const ManifestFile *mfile; /* its file's ranges (the Manifests own them) */
} Origin;

static void origin_free(Origin *o) {
  free(o->rel), free(o->kind), free(o->rule_at);
  memset(o, 0, sizeof *o);
}

/* The shadow root above `file`: the nearest ancestor holding a manifest. */
static char *root_of(const char *file) {
  char *dir = xstrdup(file);
  for (char *s; (s = strrchr(dir, '/'));) {
    *s = 0;
    char *m = xasprintf("%s/.ncrewrite/manifest.json", *dir ? dir : "/");
    struct stat st;
    bool hit = stat(m, &st) == 0;
    free(m);
    if (hit) return dir;
  }
  free(dir);
  return NULL;
}

/* The manifests of the shadow roots a trace's ranges come from, each read
 * once (prune locates every frequent range: a parse of manifest.json per
 * range was most of its time on a full-trace tree). An unreadable one is
 * kept empty. */
typedef struct {
  char *root;
  Manifest m;
} RootManifest;
typedef VEC(RootManifest) Manifests;

static const Manifest *manifest_of(Manifests *ms, const char *root) {
  for (size_t i = 0; i < ms->n; i++)
    if (!strcmp(ms->v[i].root, root)) return &ms->v[i].m;
  RootManifest r = {xstrdup(root), {0}};
  if (manifest_read(root, &r.m) < 0) memset(&r.m, 0, sizeof r.m);
  vec_push(ms, r);
  return &ms->v[ms->n - 1].m;
}

static void manifests_free(Manifests *ms) {
  for (size_t i = 0; i < ms->n; i++) free(ms->v[i].root), manifest_free(&ms->v[i].m);
  vec_free(ms);
}

/* Find the range `a` in the manifest: by file when the trace names one, by
 * name; among several of that name in a file, the one whose lines hold (or
 * lie just below) the recorded line. The file is a shadow copy (its root
 * holds the manifest; lines are output lines) or, as ncrt now records it,
 * the user's own: then the tree is one whose manifest's "source" holds it
 * (--out, or the shadow tree the run's env.json names), and lines are the
 * original ones. */
/* The shadow root (malloc'd) a file the trace names belongs to, and *rel
 * (inside `file`) its path under it; *orig: the file is the user's own (its
 * lines are original ones), not a shadow copy. NULL when no tree holds it. */
static char *root_and_rel(Manifests *ms, const char *file, const char *out_opt, const char *env_shadow,
                          const char **rel, bool *orig) {
  char *root = root_of(file);
  *rel = root ? file + strlen(root) + 1 : NULL;
  *orig = false;
  for (int c = 0; !root && c < 2; c++) {
    const char *tree = c ? env_shadow : out_opt;
    const Manifest *tm = tree ? manifest_of(ms, tree) : NULL;
    size_t n = tm && tm->source ? strlen(tm->source) : 0;
    if (n && !strncmp(file, tm->source, n) && file[n] == '/') root = xstrdup(tree), *rel = file + n + 1, *orig = true;
  }
  return root;
}

static int locate(Manifests *ms, const Agg *a, const char *out_opt, const char *env_shadow, Origin *o) {
  memset(o, 0, sizeof *o);
  const char *rel = NULL;
  bool orig = false;
  char *root = a->file ? root_and_rel(ms, a->file, out_opt, env_shadow, &rel, &orig) : NULL;
  if (!root && out_opt) root = xstrdup(out_opt);
  if (!root) return -1;
  const Manifest *m = manifest_of(ms, root);
  long best = -1;
  for (size_t i = 0; i < m->files.n; i++) {
    const ManifestFile *f = &m->files.v[i];
    if (rel && strcmp(f->rel, rel)) continue;
    for (size_t k = 0; k < f->ranges.n; k++) {
      const RangeOut *r = &f->ranges.v[k];
      if (strcmp(r->name, a->name)) continue;
      long o0 = orig ? r->line0 : r->out0 - 1, o1 = orig ? r->line1 : r->out1;
      long dist = a->line < o0 ? o0 - a->line : a->line > o1 ? a->line - o1 : 0;
      if (!a->line) dist = 0;
      if (best >= 0 && dist >= best) continue;
      best = dist;
      origin_free(o);
      o->rel = xstrdup(f->rel);
      o->line0 = r->line0, o->line1 = r->line1;
      o->kind = xstrdup(r->kind);
      o->rule_at = r->rule_at ? xstrdup(r->rule_at) : NULL;
      o->mfile = f;
    }
  }
  free(root);
  return best >= 0 ? 0 : -1;
}

/* The rule written at line:col of the rule file (the manifest's "rule"). */
static const Rule *rule_at(const Rules *r, const char *at) {
  const char *c2 = strrchr(at, ':');
  if (!c2 || c2 == at) return NULL;
  const char *c1 = c2 - 1;
  while (c1 > at && *c1 != ':') c1--;
  int line = atoi(c1 + 1), col = atoi(c2 + 1);
  for (size_t t = 0; t < r->targets.n; t++)
    for (size_t i = 0; i < r->targets.v[t].rules.n; i++) {
      const Rule *ru = &r->targets.v[t].rules.v[i];
      if (ru->at && ru->at->line == line && ru->at->col == col) return ru;
    }
  return NULL;
}

static void ms(char *buf, size_t n, int64_t ns) { snprintf(buf, n, "%.3f ms", (double)ns / 1e6); }

/* ---- drill --------------------------------------------------------------- */

typedef struct {
  const char *config, *src, *trace, *out;
  int top;
  double min_share; /* --min-share: percent of all exclusive time a range needs to be split */
  bool stale;       /* --stale: use a trace recorded before OUT or the rules changed */
  bool lines;       /* --lines: every statement, each range named after its line */
} DrillOpts;

/* drill's exit status when nothing qualified (rule file unchanged): the
 * loop is done at this depth, which is not an error. */
enum { DRILL_NOTHING_LEFT = 3 };

static int cmp_excl(const void *pa, const void *pb) {
  const Agg *a = pa, *b = pb;
  if (a->excl != b->excl) return a->excl > b->excl ? -1 : 1;
  return strcmp(a->name, b->name);
}

typedef struct {
  char *key;               /* module (target key) */
  VEC(LineRule) rules;
  VEC(char *) owned;       /* strings the LineRules point to */
} Group;

typedef VEC(Group) Groups;

static Group *group_for(Groups *gs, const char *key) {
  for (size_t i = 0; i < gs->n; i++)
    if (!strcmp(gs->v[i].key, key)) return &gs->v[i];
  Group g = {0};
  g.key = xstrdup(key);
  vec_push(gs, g);
  return &gs->v[gs->n - 1];
}

/* Is this child range accepted by the rewriter on its own, exactly? */
static bool child_ok(const char *config, const RuleDoc *doc, const char *srcdir, const ModFile *mf,
                     const char *key, const LineRule *lr, char **why) {
  TextEdits e = {0};
  Diags d = {0};
  Proposal p = {0};
  bool ok = false;
  *why = NULL;
  if (ruledit_add_lines(doc, key, lr, 1, &e, &d) == 0 &&
      proposal_run(&p, config, doc->src, doc->len, &e, srcdir, mf, &d) == 0) {
    const Rule *nr = proposal_new_rule(&p, e.v[0].at, 0);
    const RangeRec *rr = nr ? proposal_range_of(&p, nr) : NULL;
    char *err = proposal_error(&p);
    if (err) *why = err;
    else if (!rr) {
      const RuleOutcome *oc = nr ? job_rule_outcome(&p.job, nr) : NULL;
      *why = xstrdup(oc && oc->miss ? oc->miss : "no range");
    }
    else if (rr->line0 != lr->start || rr->line1 != lr->end) *why = xasprintf("snaps to lines %d-%d", rr->line0, rr->line1);
    else {
      ok = true;
      for (size_t i = 0; i < p.job.ranges.n && ok; i++) {
        const RangeRec *o = &p.job.ranges.v[i];
        if (o != rr && o->line0 == rr->line0 && o->line1 == rr->line1) {
          ok = false;
          *why = xasprintf("already a range ('%s')", o->name);
        }
      }
    }
  }
  if (!ok && !*why) *why = xstrdup(d.text.s ? d.text.s : "refused");
  proposal_free(&p);
  textedits_free(&e);
  diags_free(&d);
  return ok;
}

/* ---- a trace must come from the rules and the shadow tree as they are ---- */

/* The env.json of the run directory a trace (a file or the directory) is in. */
static char *env_json_path(const char *trace) {
  struct stat st;
  if (stat(trace, &st) == 0 && S_ISDIR(st.st_mode)) return xasprintf("%s/" NC_RUN_ENV, trace);
  char *t = xstrdup(trace), *slash = strrchr(t, '/');
  if (slash) *slash = 0;
  char *envp = xasprintf("%s/" NC_RUN_ENV, slash ? t : ".");
  free(t);
  return envp;
}

/* ncrun records in the run directory's env.json what the run was made from
 * (the shadow tree, a hash of its manifest, the digest of the rules it was
 * written with). A trace recorded before OUT was rewritten names ranges and
 * lines that may no longer exist (drill then refined the wrong ranges and
 * said nothing); one recorded before the rules changed is judged against
 * rules it was not made from (prune gave a wrong reason). Both refuse, and
 * say what changed, unless --stale. *shadow: the shadow tree env.json names
 * (ncrun --shadow, malloc'd), or NULL. */
static int stale_check(const char *cmd, const char *trace, const Rules *rules, bool allow, char **shadow, Diags *d) {
  *shadow = NULL;
  char *envp = env_json_path(trace);
  char *text = NULL;
  size_t len = 0;
  int rc = 0;
  if (read_file(envp, &text, &len) < 0) {
    free(envp);
    return 0; /* not an ncrun run directory: nothing to compare */
  }
  cJSON *env = cJSON_Parse(text);
  cJSON *sh = env ? cJSON_GetObjectItem(env, "shadow") : NULL;
  cJSON *dir = sh ? cJSON_GetObjectItem(sh, "dir") : NULL, *man = sh ? cJSON_GetObjectItem(sh, "manifest") : NULL,
        *rd = sh ? cJSON_GetObjectItem(sh, "rules_digest") : NULL;
  if (cJSON_IsString(dir) && *dir->valuestring) *shadow = xstrdup(dir->valuestring);
  if (cJSON_IsString(dir) && cJSON_IsString(man)) {
    char *mp = xasprintf("%s/.ncrewrite/manifest.json", dir->valuestring), *mt = NULL;
    size_t ml = 0;
    char now[17] = "(gone)";
    if (read_file(mp, &mt, &ml) == 0) snprintf(now, sizeof now, "%016llx", (unsigned long long)fnv1a64(mt, ml));
    if (strcmp(now, man->valuestring)) {
      diag_at(d, allow ? DIAG_WARNING : DIAG_ERROR, trace, NULL, 0, 0, 0,
              "%s: the shadow tree %s was rewritten after this run (its manifest is not the one the run used): the "
              "trace's ranges and lines are those of the older tree; run the program again on the new tree%s",
              cmd, dir->valuestring, allow ? " (--stale: used anyway)" : ", or pass --stale to use this trace anyway");
      rc = allow ? 0 : -1;
    }
    free(mp);
    free(mt);
  }
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)rules->digest);
  /* rules that name no target made no range of the run (a full trace of
   * everything, or none): nothing in them can be older than the trace, so
   * drilling from a full trace into a new `targets: {}` file needs no
   * --stale; the shadow tree's manifest above still guards the lines */
  if (!rc && rules->targets.n && cJSON_IsString(rd) && strcmp(rd->valuestring, hex)) {
    diag_at(d, allow ? DIAG_WARNING : DIAG_ERROR, trace, NULL, 0, 0, 0,
            "%s: %s changed after the shadow tree of this run was written from it: the trace's ranges come from the "
            "older rules; rewrite the tree and run again%s",
            cmd, rules->doc.path ? rules->doc.path : "the rule file",
            allow ? " (--stale: used anyway)" : ", or pass --stale to use this trace anyway");
    rc = allow ? 0 : -1;
  }
  cJSON_Delete(env);
  free(text);
  free(envp);
  return rc;
}

/* Ranges no rule can split: their time is spent in no line of the program
 * (an operator a profiler records, `aten::mm`), so a finer rule has nothing
 * to wrap. The reason, or NULL when a rule may split it. */
static const char *unsplittable(const Agg *a) {
  if (strstr(a->name, "::"))
    return "an operator's range: no line of the program is inside it (ncrun --backend torch or --ncu shows "
           "what it runs)";
  return NULL;
}

/* The name of a range that covers lines [l0, l1] of the file and has no
 * call in the trace, or NULL: a range added by an earlier round (or any
 * rule) that never ran shows that its lines did not run, and a statement
 * that did not run is no answer to where the time went. */
static const char *not_run(const Figures *f, const Rules *rules, const ManifestFile *mfile, int l0, int l1) {
  for (size_t i = 0; mfile && i < mfile->ranges.n; i++) {
    const RangeOut *r = &mfile->ranges.v[i];
    if (r->line0 > l0 || l1 > r->line1 || figures_ran(f, r->name)) continue;
    /* the manifest has the name as written: a `type: variable` one is an
     * expression the trace never shows, and a rule not found (changed
     * since, --stale) may be one: neither is evidence */
    if (r->rule_at) {
      const Rule *ru = rule_at(rules, r->rule_at);
      if (!ru) continue;
      const Context *cx = ru->ctx.values.n ? &ru->ctx : &rules->default_ctx;
      if (cx->values.n && cx->values.v[0].variable) continue;
    }
    return r->name;
  }
  return NULL;
}

/* --lines names each range after its line, as line_profiler shows them:
 * "REL:LINE TEXT" (REL the file under SRC, TEXT the statement's first line
 * with runs of blanks squeezed, cut at 60 bytes): unique (a file and a
 * line), stable while the file is, and readable in any table. */
static char *line_name(const char *rel, int line, const char *content) {
  Buf b = {0};
  buf_printf(&b, "%s:%d ", rel, line);
  size_t start = b.len;
  for (const char *p = content; *p; p++) {
    bool blank = *p == ' ' || *p == '\t';
    if (blank && (b.len == start || b.s[b.len - 1] == ' ')) continue;
    if (b.len - start >= 60) {
      /* back to a whole UTF-8 character before the mark */
      while (b.len > start && ((unsigned char)b.s[b.len - 1] & 0xC0) == 0x80) b.len--;
      if (b.len > start && ((unsigned char)b.s[b.len - 1] & 0xC0) == 0xC0) b.len--;
      b.s[b.len] = 0;
      buf_puts(&b, "...");
      break;
    }
    buf_putc(&b, blank ? ' ' : *p);
  }
  while (b.len > start && b.s[b.len - 1] == ' ') b.s[--b.len] = 0;
  return buf_steal(&b);
}

typedef VEC(char *) Keys;

static int cmp_str(const void *pa, const void *pb) { return strcmp(*(char *const *)pa, *(char *const *)pb); }

/* The modules (target keys, sorted, malloc'd) of the files whose ranges
 * ran in the trace. */
static void modules_that_ran(const Figures *f, Manifests *ms, const DrillOpts *o, const char *env_shadow,
                             const Rules *rules, Keys *keys) {
  VEC(const char *) files = {0}; /* each file once: a full trace has thousands of names in a few files */
  for (size_t i = 0; i < f->aggs.n; i++) {
    const char *file = f->aggs.v[i].file;
    bool seen = !file;
    for (size_t k = 0; k < files.n && !seen; k++) seen = !strcmp(files.v[k], file);
    if (seen) continue;
    vec_push(&files, file);
    const char *rel;
    bool orig;
    char *root = root_and_rel(ms, file, o->out, env_shadow, &rel, &orig);
    if (!root) continue;
    char *key = modfile_key_of(o->src, rules, rel);
    bool dup = false;
    for (size_t k = 0; k < keys->n && !dup; k++) dup = !strcmp(keys->v[k], key);
    if (dup) free(key);
    else vec_push(keys, key);
    free(root);
  }
  vec_free(&files);
  if (keys->n) qsort(keys->v, keys->n, sizeof *keys->v, cmp_str);
}


/* One edit of the rule text in *text (replaced): the line ranges lr[0..n)
 * of `module`, or with lr NULL the module as a target with no rule of its
 * own. 0, or -1 with the diagnostics in d (the text then unchanged). */
static int edit_text(const char *config, char **text, size_t *len, const char *module, const LineRule *lr, size_t n,
                     Diags *d) {
  RuleDoc doc;
  TextEdits e = {0};
  int rc = ruledoc_parse(&doc, config, *text, *len, d);
  if (rc == 0) rc = lr ? ruledit_add_lines(&doc, module, lr, n, &e, d) : ruledit_add_target(&doc, module, &e, d);
  if (rc == 0 && e.n) {
    size_t nl;
    char *nt = ruledit_apply(*text, *len, &e, &nl);
    free(*text);
    *text = nt, *len = nl;
  }
  textedits_free(&e);
  ruledoc_free(&doc);
  return rc;
}

/* What drill and prune both start from: the rule file (drill may start
 * from none: `missing`), the trace checked against the shadow tree it ran
 * (stale_check; env_shadow, the run's shadow tree), and its figures by
 * name, the most exclusive time first. 0, or 1 with d saying why (all
 * freed). */
typedef struct {
  Rules rules;
  Manifests mans;
  char *env_shadow;
  Figures f;
} TraceRun;

static int trace_run_open(const char *cmd, const char *config, const char *trace, bool stale, bool may_be_missing,
                          bool *missing, TraceRun *r, Diags *d) {
  memset(r, 0, sizeof *r);
  struct stat st;
  *missing = may_be_missing && stat(config, &st) < 0 && errno == ENOENT;
  if ((*missing ? rules_parse(&r->rules, config, "", 0, d) : rules_load(&r->rules, config, d)) < 0) {
    diag_at(d, DIAG_ERROR, config, NULL, 0, 0, 0, "rule file has errors; left unchanged");
    rules_free(&r->rules);
    return 1;
  }
  if (stale_check(cmd, trace, &r->rules, stale, &r->env_shadow, d) < 0 || figures_load(trace, &r->f) < 0) {
    rules_free(&r->rules);
    free(r->env_shadow);
    figures_free(&r->f);
    return 1;
  }
  qsort(r->f.aggs.v, r->f.aggs.n, sizeof *r->f.aggs.v, cmp_excl);
  return 0;
}

static void trace_run_close(TraceRun *r) {
  manifests_free(&r->mans);
  free(r->env_shadow);
  figures_free(&r->f);
  rules_free(&r->rules);
}

/* A drill in progress: the ranges it adds, grouped by module, and the
 * modules they are in (each checked with all of its additions at the end). */
typedef struct {
  const DrillOpts *o;
  TraceRun *run;
  Groups groups;
  VEC(ModFile) mods;
  size_t added;
} Drill;

/* Ranges one level inside the range a (its exclusive time t, as text):
 * each statement of it that ran and that the rewriter accepts as a range
 * of its own. Says what it did; the count added is in dr->added. */
static void refine(Drill *dr, const Agg *a, const char *t) {
  const DrillOpts *o = dr->o;
  TraceRun *run = dr->run;
  const char *cannot = unsplittable(a);
  if (cannot) {
    printf("    skipped: %s\n", cannot);
    return;
  }
  Origin org;
  if (locate(&run->mans, a, o->out, run->env_shadow, &org) < 0) {
    printf("    not found in a shadow tree's manifest%s; skipped\n",
           a->file ? " (without the run's env.json, --out names the shadow tree)" : " (the trace gives no file: try --out)");
    return;
  }
  if (!strcmp(org.kind, "calls")) {
    printf("    skipped: a call site's range: its time is the called function's (a range on that function splits "
           "it)\n");
    origin_free(&org);
    return;
  }
  char *key = modfile_key_of(o->src, &run->rules, org.rel);
  ModFile mf;
  Diags md = {0};
  if (modfile_find(o->src, &run->rules, key, &mf, &md) < 0) {
    printf("    %s: %s", org.rel, md.text.s ? md.text.s : "not found\n");
    diags_free(&md), modfile_free(&mf), free(key), origin_free(&org);
    return;
  }
  diags_free(&md);
  InnerStmts kids = {0};
  int irc = inner_statements(mf.lang, mf.text, mf.len, org.line0, org.line1, o->lines, &kids);
  if (irc < 0) {
    printf("    %s does not parse; skipped\n", org.rel);
  } else if (!kids.n) {
    printf("    %s:%d-%d: nothing inside worth a range of its own\n", org.rel, org.line0, org.line1);
  }
  Group *g = kids.n ? group_for(&dr->groups, key) : NULL;
  for (size_t k = 0; k < kids.n; k++) {
    InnerStmt *s = &kids.v[k];
    const char *idle = not_run(&run->f, &run->rules, org.mfile, s->line0, s->line1);
    if (idle) {
      printf("    - %s:%d-%d skipped: did not run in this trace ('%s' around it has no call)\n", org.rel, s->line0,
             s->line1, idle);
      free(s->func);
      continue;
    }
    char *content = modfile_line(&mf, s->line0);
    char *why = xasprintf("drill: '%s' took %s exclusive over %llu call%s", a->name, t, (unsigned long long)a->count,
                          a->count == 1 ? "" : "s");
    char *name = o->lines ? line_name(org.rel, s->line0, content) : NULL;
    LineRule lr = {s->func, s->line0, s->line1, content, name, NULL, why};
    char *no;
    if (child_ok(o->config, &run->rules.doc, o->src, &mf, key, &lr, &no)) {
      vec_push(&g->rules, lr);
      vec_push(&g->owned, content);
      vec_push(&g->owned, why);
      if (name) vec_push(&g->owned, name);
      if (s->func) vec_push(&g->owned, s->func);
      printf("    + %s:%d-%d%s%s%s%s%s\n", org.rel, s->line0, s->line1, s->func ? " in " : "", s->func ? s->func : "",
             name ? " as '" : "", name ? name : "", name ? "'" : "");
      dr->added++;
    } else {
      printf("    - %s:%d-%d skipped: %s\n", org.rel, s->line0, s->line1, no);
      free(content), free(why), free(name), free(s->func);
    }
    free(no);
  }
  vec_free(&kids);
  vec_push(&dr->mods, mf);
  free(key);
  origin_free(&org);
}

/* The rule file with every addition, each module checked with all of its
 * own, committed (history). 0 when written; 1 with d saying why. split
 * names the ranges split; ft_everything: full_trace_mode with no targets. */
static int drill_commit(Drill *dr, bool missing, bool ft_everything, const char *split, Diags *d) {
  const DrillOpts *o = dr->o;
  TraceRun *run = dr->run;
  const Rules *rules = &run->rules;
  int status = 1;
  /* all groups, module by module, each edit on the text the last one made */
  char *text = xstrndup(rules->doc.src, rules->doc.len);
  size_t len = rules->doc.len;
  int rc = 0;
  for (size_t gi = 0; gi < dr->groups.n && rc == 0; gi++) {
    Group *g = &dr->groups.v[gi];
    if (g->rules.n) rc = edit_text(o->config, &text, &len, g->key, g->rules.v, g->rules.n, d);
  }
  /* full_trace_mode with no targets traced every module: the drilled ones
   * become targets now, which would limit the full trace to them, so every
   * module whose ranges ran is named too (those none of whose ranges ran
   * recorded nothing in this run) */
  Keys kept = {0};
  if (ft_everything && rc == 0) modules_that_ran(&run->f, &run->mans, o, run->env_shadow, rules, &kept);
  for (size_t ki = 0; ki < kept.n && rc == 0; ki++) rc = edit_text(o->config, &text, &len, kept.v[ki], NULL, 0, d);
  /* check every module with everything added */
  for (size_t mi = 0; mi < dr->mods.n && rc == 0; mi++) {
    Proposal p;
    TextEdits none = {0};
    rc = proposal_run(&p, o->config, text, len, &none, o->src, &dr->mods.v[mi], d);
    char *err = rc == 0 ? proposal_error(&p) : NULL;
    if (err) {
      diag_at(d, DIAG_ERROR, dr->mods.v[mi].path, NULL, 0, 0, 0, "the ranges added together are refused: %s", err);
      rc = -1;
    }
    free(err);
    proposal_free(&p);
  }
  if (rc == 0) {
    TextEdits whole = {0};
    Buf b = {0};
    buf_add(&b, text, len);
    if (!b.s) buf_puts(&b, "");
    vec_push(&whole, ((TextEdit){0, rules->doc.len, buf_steal(&b)}));
    /* the ranges split by name: when the top ones had nothing inside, the
     * turn went further down, and "inside the top K" said otherwise */
    char *what = xasprintf("%zu range%s inside %s of %s", dr->added, dr->added == 1 ? "" : "s", split, o->trace);
    if (history_commit(o->config, rules->doc.src, rules->doc.len, text, len, &whole, "drill", what, NULL, d) == 0) {
      printf("drill: added %s to %s%s\n", what, o->config, missing ? " (a new file)" : "");
      if (ft_everything)
        printf("drill: full_trace_mode with no targets traced every module; %s now names as targets the %zu "
               "module%s whose ranges ran in this trace, so the full trace goes on tracing %s (a module none of "
               "whose ranges ran is left out: add it as a target to trace it)\n",
               o->config, kept.n, kept.n == 1 ? "" : "s", kept.n == 1 ? "it" : "them");
      status = 0;
    }
    free(what);
    textedits_free(&whole);
  }
  for (size_t ki = 0; ki < kept.n; ki++) free(kept.v[ki]);
  vec_free(&kept);
  free(text);
  return status;
}

static int drill(const DrillOpts *o, Diags *d) {
  TraceRun run;
  bool missing;
  /* a rule file that does not exist yet starts empty (as with feedback):
   * drilling from a full trace made with --full-trace has none */
  if (trace_run_open("drill", o->config, o->trace, o->stale, true, &missing, &run, d)) return 1;
  /* full_trace_mode with no targets traced every module; naming targets
   * would limit the full trace to them (the modules that ran are named
   * too, drill_commit) */
  bool ft_everything = run.rules.full_trace && !run.rules.targets.n;
  const Figures *f = &run.f;
  int64_t total = 0;
  for (size_t i = 0; i < f->aggs.n; i++) total += f->aggs.v[i].excl;
  Drill dr = {o, &run, {0}, {0}, 0};
  int status = 1;
  printf("drill: the %d range%s with the most exclusive time in %s%s\n", o->top, o->top == 1 ? "" : "s", o->trace,
         o->lines ? ", one range per line" : "");
  /* K counts the ranges refined: one with nothing inside worth a range (a
   * function of single calls already split, a range the trace cannot trace
   * back) passes the turn to the next, but never below --min-share: a range
   * holding nothing is no answer however far down the list it is */
  int refined = 0;
  Buf split = {0}; /* the names of the ranges split, for the message */
  for (size_t i = 0; i < f->aggs.n && refined < o->top; i++) {
    const Agg *a = &f->aggs.v[i];
    size_t added_before = dr.added;
    char t[32];
    ms(t, sizeof t, a->excl);
    double share = total ? 100.0 * (double)a->excl / (double)total : 0.0;
    if (share < o->min_share) {
      size_t rest = f->aggs.n - i;
      if (rest == 1) printf("  the other range holds under %g%% of the exclusive time (--min-share): not split\n", o->min_share);
      else
        printf("  the other %zu ranges hold under %g%% of the exclusive time each (--min-share): not split\n", rest,
               o->min_share);
      break;
    }
    printf("  %-40s %12s exclusive (%4.1f%%), %llu call%s\n", a->name, t, share, (unsigned long long)a->count,
           a->count == 1 ? "" : "s");
    refine(&dr, a, t);
    if (dr.added > added_before) {
      refined++;
      buf_printf(&split, "%s'%s'", split.len ? ", " : "", a->name);
    }
  }
  if (!dr.added) {
    printf("drill: nothing left worth splitting (rule file unchanged): no range over %g%% of the exclusive time "
           "holds a statement that ran and is not a range already\n",
           o->min_share);
    status = DRILL_NOTHING_LEFT;
  } else {
    status = drill_commit(&dr, missing, ft_everything, split.s, d);
  }
  buf_free(&split);
  for (size_t gi = 0; gi < dr.groups.n; gi++) {
    for (size_t k = 0; k < dr.groups.v[gi].owned.n; k++) free(dr.groups.v[gi].owned.v[k]);
    vec_free(&dr.groups.v[gi].owned);
    vec_free(&dr.groups.v[gi].rules);
    free(dr.groups.v[gi].key);
  }
  vec_free(&dr.groups);
  for (size_t i = 0; i < dr.mods.n; i++) modfile_free(&dr.mods.v[i]);
  vec_free(&dr.mods);
  trace_run_close(&run);
  return status;
}

static void usage_drill(FILE *f) {
  fputs("usage: ncrewrite drill --config RULES --src SRC --trace TRACE [--top K] [--lines] [--min-share PCT]\n"
        "                       [--out OUT] [--stale]\n"
        "\n"
        "Add line ranges one level inside the K ranges (default 3) with the most\n"
        "exclusive time in TRACE, so the next run splits that time. Ranges are\n"
        "traced back to their source through the manifest of the shadow tree that\n"
        "ran (found from the trace's file names, or given by --out). A missing\n"
        "RULES file is created.\n"
        "\n"
        "  --lines          one range for every statement (not only those that do\n"
        "                   work), each named after its line: 'FILE:LINE TEXT'\n"
        "  --min-share PCT  never split a range holding under PCT % of all\n"
        "                   exclusive time (default 1)\n"
        "\n"
        "Exit status: 0 ranges added, 1 error (RULES unchanged), 2 bad usage,\n"
        "3 nothing left worth splitting (RULES unchanged).\n",
        f);
}

int cmd_drill(int argc, char **argv) {
  enum { O_SRC = 256, O_TRACE, O_TOP, O_OUT, O_STALE, O_LINES, O_SHARE };
  static const struct option longs[] = {{"config", required_argument, 0, 'c'}, {"src", required_argument, 0, O_SRC},
                                        {"trace", required_argument, 0, O_TRACE}, {"top", required_argument, 0, O_TOP},
                                        {"out", required_argument, 0, O_OUT},    {"help", no_argument, 0, 'h'},
                                        {"stale", no_argument, 0, O_STALE},      {"lines", no_argument, 0, O_LINES},
                                        {"min-share", required_argument, 0, O_SHARE},
                                        {0, 0, 0, 0}};
  DrillOpts o = {0};
  o.src = ".";
  o.top = 3;
  o.min_share = 1.0;
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "c:h", longs, NULL)) != -1;) {
    switch (c) {
    case 'c': o.config = optarg; break;
    case O_SRC: o.src = optarg; break;
    case O_TRACE: o.trace = optarg; break;
    case O_OUT: o.out = optarg; break;
    case O_STALE: o.stale = true; break;
    case O_LINES: o.lines = true; break;
    case O_SHARE: {
      char *end;
      o.min_share = strtod(optarg, &end);
      if (*end || !(o.min_share >= 0 && o.min_share <= 100)) {
        fprintf(stderr, "ncrewrite drill: error: --min-share needs a percentage from 0 to 100, not '%s'\n", optarg);
        return 2;
      }
      break;
    }
    case O_TOP: {
      char *end;
      long k = strtol(optarg, &end, 10);
      if (*end || k < 1 || k > 1000) {
        fprintf(stderr, "ncrewrite drill: error: --top needs a number from 1 to 1000, not '%s'\n", optarg);
        return 2;
      }
      o.top = (int)k;
      break;
    }
    case 'h': usage_drill(stdout); return 0;
    default: usage_drill(stderr); return 2;
    }
  }
  if (!o.config || !o.trace || optind != argc) {
    fprintf(stderr, "ncrewrite drill: error: --config and --trace are required\n");
    usage_drill(stderr);
    return 2;
  }
  Diags d = {0};
  int rc = drill(&o, &d);
  diags_print(&d);
  if (rc == 1) fprintf(stderr, "ncrewrite: %s left unchanged\n", o.config);
  diags_free(&d);
  return rc;
}

/* ---- prune --------------------------------------------------------------- */

typedef struct {
  const char *config, *trace, *out;
  long min_calls;
  double max_mean_us;
  bool stale;
} PruneOpts;

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int prune(const PruneOpts *o, Diags *d) {
  TraceRun run;
  bool missing;
  if (trace_run_open("prune", o->config, o->trace, o->stale, false, &missing, &run, d)) return 1;
  TextEdits e = {0};
  VEC(const Rule *) done = {0};
  VEC(const char *) excl = {0}; /* full-trace ranges: exclude entries to add */
  Buf what = {0};
  int status = 1;
  size_t removed = 0;
  for (size_t i = 0; i < run.f.aggs.n; i++) {
    const Agg *a = &run.f.aggs.v[i];
    double mean_us = (double)a->incl / (double)a->count / 1e3;
    if ((long)a->count < o->min_calls || mean_us >= o->max_mean_us) continue;
    printf("prune: %-40s %llu calls, mean %.3f us", a->name, (unsigned long long)a->count, mean_us);
    Origin org;
    const Rule *ru = NULL;
    if (locate(&run.mans, a, o->out, run.env_shadow, &org) == 0 && org.rule_at) ru = rule_at(&run.rules, org.rule_at);
    bool seen = false;
    for (size_t k = 0; k < done.n; k++) seen |= done.v[k] == ru;
    bool full = !ru && org.kind && !strcmp(org.kind, "full-trace");
    for (size_t k = 0; full && k < excl.n; k++) full = strcmp(excl.v[k], a->name) != 0;
    if (full && has_glob_chars(a->name)) {
      printf(": a full-trace range whose name holds glob characters; exclude it by hand\n");
    } else if (full) {
      /* full trace made it: the entry to write is an exclude */
      printf(": full trace made it; exclude entry added\n");
      vec_push(&excl, a->name);
      buf_printf(&what, "%s%s", what.len ? ", " : "", a->name);
    } else if (!ru) {
      printf(": no rule of %s made it; exclude it by hand\n", o->config);
    } else if (seen) {
      printf(": its rule is removed already\n");
    } else if (ruledit_remove_node(&run.rules.doc, ru->at, &e, d) == 0) {
      printf(": rule at %s:%d removed\n", o->config, ru->at->line);
      vec_push(&done, ru);
      buf_printf(&what, "%s%s", what.len ? ", " : "", a->name);
      removed++;
    } else {
      printf(": rule at %s:%d cannot be removed automatically\n", o->config, ru->at->line);
    }
    origin_free(&org);
  }
  if (excl.n) qsort(excl.v, excl.n, sizeof *excl.v, cmp_cstr); /* the file's order: by name */
  if (excl.n && ruledit_add_excludes(&run.rules.doc, excl.v, excl.n, &e, d)) {
    /* the diagnostic says why; the rule file is left as it is */
  } else if (!removed && !excl.n) {
    printf("prune: nothing to remove\n");
    status = 0;
  } else {
    size_t len;
    char *text = ruledit_apply(run.rules.doc.src, run.rules.doc.len, &e, &len);
    char *w = xasprintf("%s %s", removed ? "removed" : "excluded", what.s);
    if (history_commit(o->config, run.rules.doc.src, run.rules.doc.len, text, len, &e, "prune", w, NULL, d) == 0) {
      if (removed) printf("prune: %zu rule%s removed from %s\n", removed, removed == 1 ? "" : "s", o->config);
      if (excl.n)
        printf("prune: %zu full-trace name%s added to exclude in %s\n", excl.n, excl.n == 1 ? "" : "s", o->config);
      status = 0;
    }
    free(w);
    free(text);
  }
  buf_free(&what);
  vec_free(&done);
  vec_free(&excl);
  textedits_free(&e);
  trace_run_close(&run);
  return status;
}

int cmd_prune(int argc, char **argv) {
  enum { O_TRACE = 256, O_OUT, O_CALLS, O_MEAN, O_STALE };
  static const struct option longs[] = {{"config", required_argument, 0, 'c'}, {"trace", required_argument, 0, O_TRACE},
                                        {"out", required_argument, 0, O_OUT}, {"min-calls", required_argument, 0, O_CALLS},
                                        {"max-mean-us", required_argument, 0, O_MEAN}, {"help", no_argument, 0, 'h'},
                                        {"stale", no_argument, 0, O_STALE},
                                        {0, 0, 0, 0}};
  PruneOpts o = {0};
  o.min_calls = 100000;
  o.max_mean_us = 10;
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "c:h", longs, NULL)) != -1;) {
    char *end;
    switch (c) {
    case 'c': o.config = optarg; break;
    case O_TRACE: o.trace = optarg; break;
    case O_OUT: o.out = optarg; break;
    case O_STALE: o.stale = true; break;
    case O_CALLS:
      o.min_calls = strtol(optarg, &end, 10);
      if (*end || o.min_calls < 1) {
        fprintf(stderr, "ncrewrite prune: error: --min-calls needs a positive number, not '%s'\n", optarg);
        return 2;
      }
      break;
    case O_MEAN:
      o.max_mean_us = strtod(optarg, &end);
      if (*end || !(o.max_mean_us > 0)) {
        fprintf(stderr, "ncrewrite prune: error: --max-mean-us needs a positive number, not '%s'\n", optarg);
        return 2;
      }
      break;
    case 'h':
      fputs("usage: ncrewrite prune --config RULES --trace TRACE [--min-calls N] [--max-mean-us U] [--out OUT] [--stale]\n"
            "\nRemove the rules of ranges called at least N times (default 100000) at a mean\n"
            "under U microseconds (default 10): they cost more than they tell.\n",
            stdout);
      return 0;
    default: return 2;
    }
  }
  if (!o.config || !o.trace || optind != argc) {
    fprintf(stderr, "ncrewrite prune: error: --config and --trace are required\n");
    return 2;
  }
  Diags d = {0};
  int rc = prune(&o, &d);
  diags_print(&d);
  if (rc == 1) fprintf(stderr, "ncrewrite: %s left unchanged\n", o.config);
  diags_free(&d);
  return rc;
}
