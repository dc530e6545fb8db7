/* fuzz_trace: nctrace's streaming reader (src/trace/core/reader.c) on arbitrary
 * bytes, plain or gzip (zlib's gz* reads both), with every value helper
 * applied to every member of every event and its args. The reader either
 * walks the file or reports an error; no crash, leak or undefined
 * behaviour (the sanitizers). The reader takes a path, so each input is
 * written to one temporary file per process. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "reader.h"

static void values(const Member *m, size_t n) {
  Buf tmp = {0};
  for (size_t i = 0; i < n; i++) {
    Span s;
    int64_t v;
    double dv;
    span_string(m[i].val, &tmp, &s);
    tmp.len = 0;
    span_us_to_ns(m[i].val, &v);
    span_int(m[i].val, &v);
    span_double(m[i].val, &dv);
    ObjIter it;
    Member sub;
    if (obj_iter_init(&it, m[i].val))
      while (obj_iter_next(&it, &sub)) span_eq(sub.val, "null");
  }
  buf_free(&tmp);
}

static int on_header(void *ctx, Walker *w, Span key, Span val) {
  Member m = {key, val};
  values(&m, 1);
  return 0;
}

static int on_event(void *ctx, Walker *w, const Member *m, size_t n, Span raw) {
  values(m, n);
  size_t na;
  const Member *a = walk_args(w, &na);
  values(a, na);
  (void)walk_ordinal(w);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/nc-fuzz-trace-%d.json", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fwrite(data, 1, size, f);
  fclose(f);
  Visitor v = {on_header, on_event, NULL, NULL, NULL};
  bool legacy;
  /* the reader reports errors on stderr: hide them to keep the fuzzer's
   * output readable (sanitizers write to the descriptor, not the FILE) */
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  FILE *keep = stderr;
  stderr = devnull;
  trace_walk(path, &v, &legacy);
  stderr = keep;
  unlink(path);
  return 0;
}
