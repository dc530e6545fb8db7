/* The rules are read-only once loaded (the worker threads share them): a
 * file's compiler reaches them through const pointers, and a diagnostic at
 * a rule needs only a const document. Compiled with -Werror by ctest
 * (arch/const-rules): a ruledoc_diag that takes a mutable RuleDoc *, which
 * made the core cast the const away ten times, fails it (issue 34,
 * defect 10). */
#include "rules.h"

void say_at(const Rules *rules, const Target *t, Diags *d);
void say_at(const Rules *rules, const Target *t, Diags *d) {
  const Rule *r = &t->rules.v[0];
  ruledoc_diag(&rules->doc, d, DIAG_WARNING, r->at, "%s", "read-only");
}
