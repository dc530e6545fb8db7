/* fuzz_partial: a partial summary (src/trace/core/partial.c) written by
 * anyone: `nctrace summary PART...` parses it, merges it with a second copy
 * of itself (the way two nodes' files are combined), and finishes the
 * summary (ranks side by side, bottlenecks). Either it is read or it is
 * reported; no crash, leak, undefined behaviour, nor memory beyond the
 * input's content. Issue 41 item 6, issue 42's rule for every reader. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "partial.h"

static void quiet(const char *level, const char *where, const char *msg) { (void)level, (void)where, (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nct_say = quiet;
  SummaryOptions opt = {"ProfilerStep#*", 20, 20};
  SumState a, b, c;
  if (sumstate_parse(&a, "fuzz.part", (const char *)data, size, &opt) == 0) {
    /* what is written reads back, and is written again the same */
    Buf one = {0}, two = {0};
    sumstate_write(&a, &one);
    if (sumstate_parse(&c, "again.part", one.s, one.len, &opt)) abort();
    sumstate_write(&c, &two);
    if (one.len != two.len || memcmp(one.s, two.s, one.len)) abort();
    sumstate_free(&c);
    buf_free(&one);
    buf_free(&two);
    /* merged with itself (two nodes' files) and finished */
    if (sumstate_parse(&b, "fuzz.part", (const char *)data, size, &opt)) abort();
    sumstate_merge(&a, &b);
    sumstate_sort(&a);
    sumstate_finish(&a);
  }
  sumstate_free(&a);
  return 0;
}
