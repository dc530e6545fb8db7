/* fuzz_pftrace: the Perfetto reader (src/trace/core/pbread.c) on arbitrary
 * bytes named .pftrace, both ways the reader hands it out: as the JSON it
 * stands for (the generic walk: convert, filter, merge) and in direct mode
 * (summary, report: ranges as DirectEv, whose texts are read whole here so
 * a dangling one shows). Either it reads or it reports; no crash, leak,
 * undefined behaviour, nor memory beyond the input's content (libFuzzer's
 * -rss_limit_mb and -malloc_limit_mb). Issue 42 items 3, 4, 9, 10. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "reader.h"

static int on_event(void *ctx, Walker *w, const Member *m, size_t n, Span raw) {
  (void)w, (void)m, (void)n;
  *(size_t *)ctx += raw.n;
  return 0;
}

static int on_direct(void *ctx, Walker *w, const DirectEv *e) {
  (void)w;
  size_t sum = 0;
  for (size_t i = 0; i < e->name_n; i++) sum += (unsigned char)e->name[i];
  for (size_t i = 0; i < e->rest_n; i++) sum += (unsigned char)e->rest[i];
  if (e->kind >= (1ull << 32)) abort(); /* pbread.h: an index, below 2^32 */
  *(size_t *)ctx += sum + (size_t)e->track;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/nc-fuzz-pftrace-%d.pftrace", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fwrite(data, 1, size, f);
  fclose(f);
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  FILE *keep = stderr;
  stderr = devnull;
  size_t seen = 0;
  bool legacy;
  Visitor generic = {NULL, on_event, &seen, NULL, NULL};
  trace_walk(path, &generic, &legacy);
  Visitor direct = {NULL, on_event, &seen, NULL, on_direct};
  trace_walk(path, &direct, &legacy);
  stderr = keep;
  unlink(path);
  return 0;
}
