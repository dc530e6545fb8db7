/* The per-file pipeline (src/rewrite/core/rewrite.h's rewrite_run) and
 * the table of rule kinds (rules.h) as a spec: what a file made of each
 * rule of its targets comes back structured (hit, or why not; a rule with
 * neither is left out), a kind a language does not plan is warned about
 * from its row, a full trace leaves out the languages --languages does not
 * list, and every kind has its row. */
#include "rewrite.h"
#include "check.h"

#include <stdlib.h>

static const char *const RULES =
    "targets:\n"
    "  m:\n"
    "    func_context_wrappings:\n"
    "      f: {}\n"
    "      g: {}\n"
    "    class_replacements:\n"
    "      A: pkg.mod.B\n"
    "      Missing: pkg.mod.C\n"
    "  \"f.c\":\n"
    "    func_context_wrappings:\n"
    "      work: {}\n"
    "    class_replacements:\n"
    "      A: pkg.mod.B\n";

static const RuleResult *result_of(const RuleResults *v, const Rule *r) {
  for (size_t i = 0; i < v->n; i++)
    if (v->v[i].rule == r) return &v->v[i];
  return NULL;
}

static void python_results(const Rules *rules) {
  const char *src = "class A:\n    pass\n\n\ndef f():\n    return 1\n";
  TargetList tgs = {0};
  rules_targets_naming(rules, "m.py", NULL, &tgs);
  CHECK(tgs.n == 1);
  FileJob job;
  filejob_init(&job, rules, "m.py", "m.py", src, strlen(src), tgs.v, tgs.n);
  filejob_full_trace(&job, false, 0);
  CHECK(!job.full_trace);
  void *parser = NULL;
  job.parser = &parser;
  Buf out = {0};
  LineMap map = {0};
  RuleResults res = {0};
  CHECK(rewrite_run(&job, &out, &map, &res) == 1);
  CHECK(strstr(out.s, "__ncrt__.range(\"f\")") != NULL);
  CHECK(strstr(out.s, "from pkg.mod import B as A") != NULL);
  const Target *tg = tgs.v[0];
  /* rules in rule-file order: f, g (func_context_wrappings), then A, Missing */
  const RuleResult *f = result_of(&res, &tg->rules.v[0]), *g = result_of(&res, &tg->rules.v[1]);
  const RuleResult *a = result_of(&res, &tg->rules.v[2]), *miss = result_of(&res, &tg->rules.v[3]);
  CHECK(f && f->hit && !f->why);
  CHECK(g && !g->hit);
  if (g) CHECK_STR(g->why, "no module-level function 'g' in m.py (did you mean 'f'?)");
  /* a replacement makes no range: its hit is the planner's */
  CHECK(!rule_kind(RULE_CLASS_REPL)->range_kind);
  CHECK(a && a->hit);
  CHECK(miss && !miss->hit);
  if (miss) CHECK_STR(miss->why, "no class 'Missing' in m.py");
  CHECK(res.n == 4);
  /* the results are in rule-file order */
  CHECK(res.n == 4 && res.v[0].rule == &tg->rules.v[0] && res.v[3].rule == &tg->rules.v[3]);
  rule_results_free(&res);
  buf_free(&out);
  linemap_free(&map);
  filejob_free(&job);
  job_parser_free(parser);
  vec_free(&tgs);
}

static void c_takes_no_replacement(const Rules *rules) {
  const char *src = "int work(void) { return 1; }\n";
  TargetList tgs = {0};
  rules_targets_naming(rules, "f.c", NULL, &tgs);
  CHECK(tgs.n == 1);
  FileJob job;
  filejob_init(&job, rules, "f.c", "f.c", src, strlen(src), tgs.v, tgs.n);
  void *parser = NULL;
  job.parser = &parser;
  Buf out = {0};
  RuleResults res = {0};
  CHECK(rewrite_run(&job, &out, NULL, &res) == 1);
  /* the function rule hit; the replacement is warned about at its rule,
   * from its row, and has no result */
  CHECK(res.n == 1 && res.v[0].hit && res.v[0].rule->kind == RULE_FUNC);
  CHECK(job.diags.warnings == 1);
  CHECK(job.diags.text.s && strstr(job.diags.text.s, "replacements apply to Python modules only; ignored for f.c"));
  rule_results_free(&res);
  buf_free(&out);
  filejob_free(&job);
  job_parser_free(parser);
  vec_free(&tgs);
}

static void full_trace_languages(void) {
  Rules rules = {0};
  Diags d = {0};
  const char *text = "full_trace_mode: true\n";
  CHECK(rules_parse(&rules, "ft.yaml", text, strlen(text), &d) == 0);
  const char *src = "int work(void) { return 1; }\n";
  FileJob job;
  filejob_init(&job, &rules, "f.c", "f.c", src, strlen(src), NULL, 0);
  job.explain = true;
  filejob_full_trace(&job, false, 1u << LANG_PYTHON);
  CHECK(!job.full_trace);
  CHECK(job.explain_text.s && strstr(job.explain_text.s, "--languages leaves C files out of the full trace"));
  Buf out = {0};
  CHECK(rewrite_run(&job, &out, NULL, NULL) == 0); /* nothing to do: copied */
  CHECK(out.len == 0);
  filejob_free(&job);
  filejob_init(&job, &rules, "f.c", "f.c", src, strlen(src), NULL, 0);
  filejob_full_trace(&job, false, (1u << LANG_PYTHON) | (1u << LANG_C));
  CHECK(job.full_trace);
  filejob_free(&job);
  rules_free(&rules);
  diags_free(&d);
}

static void kinds_and_places(const Rules *rules) {
  for (int k = 0; k < RULE_NKINDS; k++) {
    const RuleKindRow *row = rule_kind((RuleKind)k);
    CHECK(row->kind == (RuleKind)k && row->schema && row->plural && row->langs);
    for (int j = 0; j < k; j++)
      CHECK(!row->range_kind || !rule_kind((RuleKind)j)->range_kind ||
            strcmp(row->range_kind, rule_kind((RuleKind)j)->range_kind));
  }
  for (size_t t = 0; t < rules->targets.n; t++)
    for (size_t k = 0; k < rules->targets.v[t].rules.n; k++) {
      size_t t2 = 99, k2 = 99;
      CHECK(rule_place(rules, &rules->targets.v[t].rules.v[k], &t2, &k2) && t2 == t && k2 == k);
      CHECK(rule_at_place(rules, t, k) == &rules->targets.v[t].rules.v[k]);
    }
  CHECK(rule_at_place(rules, rules->targets.n, 0) == NULL);
  Rule other = {0};
  size_t t, k;
  CHECK(!rule_place(rules, &other, &t, &k));
}

int main(void) {
  Rules rules = {0};
  Diags d = {0};
  CHECK(rules_parse(&rules, "r.yaml", RULES, strlen(RULES), &d) == 0 && !d.errors);
  python_results(&rules);
  c_takes_no_replacement(&rules);
  full_trace_languages();
  kinds_and_places(&rules);
  rules_free(&rules);
  diags_free(&d);
  return unit_failures("unit/pipeline");
}
