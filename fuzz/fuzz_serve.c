/* fuzz_serve: the served report's request parser and answer
 * (src/trace/cli/serve.c, serve_request) on arbitrary request heads, over a
 * small site of three events in one lane. The checks a request passes (the
 * request line, GET, Host, Origin, the token, the query's integers, the
 * window and its overflow) either answer or refuse it with a status of
 * theirs; no crash, leak or undefined behaviour, and nothing past the
 * head is read. The token is fixed here: the seeds carry it. Issue 42
 * items 5, 6, 10. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "serve.h"

#define TOKEN "00112233445566778899aabbccddeeff"

static ServeSite site;

static void setup(void) {
  static Trace t;
  static uint32_t idx[3] = {0, 1, 2};
  static WinLane lane;
  static int64_t shift = 0, names[3] = {0, 1, 2};
  static const char page[] = "<html>the page</html>";
  Ev e = {0};
  e.corr = e.bytes = -1;
  for (int i = 0; i < 3; i++) {
    e.ts = 1000 * i, e.dur = 500 + 1000 * i, e.name = (uint32_t)i, e.ord = (uint32_t)i;
    vec_push(&t.ev, e);
  }
  win_build(&lane, &t, idx, 3);
  site = (ServeSite){page, sizeof page - 1, &lane, 1, &shift, names};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!site.page) setup();
  if (size > 16384) size = 16384; /* the server reads no more */
  char *req = malloc(size + 1);
  memcpy(req, data, size);
  Buf body = {0};
  const char *ctype, *location;
  int st = serve_request(&site, TOKEN, 8080, req, size, &body, &ctype, &location);
  static const int ok[] = {200, 204, 302, 400, 403, 404, 405, 413, 431};
  bool known = false;
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) known |= st == ok[i];
  if (!known) abort();
  if (st == 200 && ctype != SERVE_PAGE && (!body.len || body.s[0] != '{')) abort();
  if (st >= 400 && (!body.len || memcmp(body.s, "{\"error\":", 9))) abort();
  buf_free(&body);
  free(req);
  return 0;
}
