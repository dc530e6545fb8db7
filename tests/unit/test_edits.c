/* edits (src/rewrite/core/edits.h) as a spec: edits apply once to the
 * original bytes, every byte outside an edit is copied, insertions at one
 * offset go in `order` then in the order added (before a replacement
 * there), overlaps are refused, and the line map follows added and
 * removed lines. */
#include "edits.h"
#include "check.h"

static char *apply(Edits *e, const char *src, LineMap *map, int *rc) {
  Buf out = {0};
  *rc = edits_apply(e, src, strlen(src), &out, map);
  buf_putc(&out, 0);
  return buf_steal(&out);
}

static void no_edits_copies_everything(void) {
  Edits e = {0};
  int rc;
  char *out = apply(&e, "a\nb\n", NULL, &rc);
  CHECK(rc == 0);
  CHECK_STR(out, "a\nb\n");
  free(out);
}

static void replace_and_insert(void) {
  Edits e = {0};
  const char *src = "x = f(1)\ny = 2\n";
  edits_add(&e, 4, 8, "g(1)", 0);       /* f(1) -> g(1) */
  edits_add(&e, 9, 9, "# before y\n", 0); /* an insertion at y's line */
  int rc;
  char *out = apply(&e, src, NULL, &rc);
  CHECK(rc == 0);
  CHECK_STR(out, "x = g(1)\n# before y\ny = 2\n");
  free(out);
  edits_free(&e);
}

static void insertions_at_one_offset(void) {
  Edits e = {0};
  /* added out of order: `order` first, then the order added; all before
   * the replacement that starts there */
  edits_add(&e, 0, 1, "R", 0);
  edits_add(&e, 0, 0, "b", 1);
  edits_add(&e, 0, 0, "a", 0);
  edits_add(&e, 0, 0, "c", 1);
  int rc;
  char *out = apply(&e, "xyz", NULL, &rc);
  CHECK(rc == 0);
  CHECK_STR(out, "abcRyz");
  free(out);
  edits_free(&e);
}

static void overlap_refused(void) {
  Edits e = {0};
  edits_add(&e, 0, 3, "A", 0);
  edits_add(&e, 2, 4, "B", 0);
  int rc;
  char *out = apply(&e, "abcdef", NULL, &rc);
  CHECK(rc == -1);
  CHECK_STR(out, ""); /* nothing written */
  free(out);
  edits_free(&e);
  /* touching is not overlapping */
  edits_add(&e, 0, 2, "A", 0);
  edits_add(&e, 2, 4, "B", 0);
  out = apply(&e, "abcdef", NULL, &rc);
  CHECK(rc == 0);
  CHECK_STR(out, "ABef");
  free(out);
  edits_free(&e);
}

static void line_map(void) {
  Edits e = {0};
  LineMap m = {0};
  /* 5 lines; two lines inserted before line 2, line 4 removed */
  const char *src = "l1\nl2\nl3\nl4\nl5\n";
  edits_add(&e, 3, 3, "n1\nn2\n", 0);
  edits_add(&e, 9, 12, "", 0);
  int rc;
  char *out = apply(&e, src, &m, &rc);
  CHECK(rc == 0);
  CHECK_STR(out, "l1\nn1\nn2\nl2\nl3\nl5\n");
  CHECK(linemap_get(&m, 1) == 1);
  CHECK(linemap_get(&m, 2) == 4);
  CHECK(linemap_get(&m, 3) == 5);
  CHECK(linemap_get(&m, 5) == 6);
  free(out);
  edits_free(&e);
  linemap_free(&m);
}

static void addf_formats(void) {
  Edits e = {0};
  edits_addf(&e, 1, 1, 0, "[%d:%s]", 7, "x");
  int rc;
  char *out = apply(&e, "ab", NULL, &rc);
  CHECK(rc == 0);
  CHECK_STR(out, "a[7:x]b");
  free(out);
  edits_free(&e);
}

int main(void) {
  no_edits_copies_everything();
  replace_and_insert();
  insertions_at_one_offset();
  overlap_refused();
  line_map();
  addf_formats();
  return unit_failures("edits");
}
