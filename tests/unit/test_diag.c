/* diag (src/rewrite/base/diag.h) as a spec: file:line:col: level: message,
 * then the source line and a caret under the column; counts; --strict and
 * --quiet. */
#include "diag.h"
#include "check.h"

static void at_a_column(void) {
  Diags d = {0};
  const char *src = "targets:\n  m:\n    bad: 1\n";
  diag_at(&d, DIAG_ERROR, "r.yaml", src, strlen(src), 3, 5, "unknown key '%s'", "bad");
  buf_putc(&d.text, 0);
  CHECK_STR(d.text.s, "r.yaml:3:5: error: unknown key 'bad'\n        bad: 1\n        ^\n");
  CHECK(d.errors == 1 && d.warnings == 0);
  diags_free(&d);
}

static void no_source_or_position(void) {
  Diags d = {0};
  diag_at(&d, DIAG_WARNING, "a.py", NULL, 0, 2, 0, "no source");
  diag_at(&d, DIAG_NOTE, "OUT", NULL, 0, 0, 0, "no position");
  buf_putc(&d.text, 0);
  CHECK_STR(d.text.s, "a.py:2:1: warning: no source\nOUT: note: no position\n");
  CHECK(d.errors == 0 && d.warnings == 1);
  diags_free(&d);
}

static void tabs_and_bytes(void) {
  Diags d = {0};
  /* a tab before the column is copied into the caret line; a byte that is
   * not UTF-8 shows as '?' */
  const char *src = "\tx = \xff\n";
  diag_at(&d, DIAG_ERROR, "f", src, strlen(src), 1, 6, "here");
  buf_putc(&d.text, 0);
  CHECK_STR(d.text.s, "f:1:6: error: here\n    \tx = ?\n    \t    ^\n");
  diags_free(&d);
}

static void strict_and_quiet(void) {
  Diags d = {.strict = true};
  diag_at(&d, DIAG_WARNING, "f", NULL, 0, 1, 1, "w");
  buf_putc(&d.text, 0);
  CHECK_STR(d.text.s, "f:1:1: error: w\n");
  CHECK(d.errors == 1 && d.warnings == 0);
  diags_free(&d);
  Diags q = {.quiet = true};
  diag_at(&q, DIAG_WARNING, "f", NULL, 0, 1, 1, "w");
  diag_at(&q, DIAG_ERROR, "f", NULL, 0, 1, 1, "e");
  buf_putc(&q.text, 0);
  CHECK_STR(q.text.s, "f:1:1: error: e\n"); /* counted, not shown */
  CHECK(q.errors == 1 && q.warnings == 1);
  diags_free(&q);
}

static void append_keeps_order_and_counts(void) {
  Diags a = {0}, b = {0};
  diag_at(&a, DIAG_ERROR, "a", NULL, 0, 1, 1, "first");
  diag_at(&b, DIAG_WARNING, "b", NULL, 0, 2, 3, "second");
  diags_append(&a, &b);
  buf_putc(&a.text, 0);
  CHECK_STR(a.text.s, "a:1:1: error: first\nb:2:3: warning: second\n");
  CHECK(a.errors == 1 && a.warnings == 1);
  diags_free(&a);
  diags_free(&b);
}

int main(void) {
  at_a_column();
  no_source_or_position();
  tabs_and_bytes();
  strict_and_quiet();
  append_keeps_order_and_counts();
  return unit_failures("diag");
}
