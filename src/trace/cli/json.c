/* json: see json.h. */
#include "json.h"

#include <math.h>

void json_key(Buf *b, const char *k) {
  buf_json_string(b, k);
  buf_putc(b, ':');
}

void json_str(Buf *b, const char *k, const char *v) {
  json_key(b, k);
  if (v) buf_json_string(b, v);
  else buf_puts(b, "null");
  buf_putc(b, ',');
}

void json_int(Buf *b, const char *k, long long v) { buf_printf(b, "\"%s\":%lld,", k, v); }

void json_num(Buf *b, const char *k, const char *fmt, double v) {
  json_key(b, k);
  if (isnan(v)) buf_puts(b, "null");
  else buf_printf(b, fmt, v);
  buf_putc(b, ',');
}

void json_us(Buf *b, const char *k, int64_t ns) {
  json_key(b, k);
  buf_us(b, ns);
  buf_putc(b, ',');
}

void json_us_opt(Buf *b, const char *k, int64_t ns) {
  if (ns >= 0) {
    json_us(b, k, ns);
    return;
  }
  json_key(b, k);
  buf_puts(b, "null,");
}

void json_end(Buf *b, char close) {
  if (b->len && b->s[b->len - 1] == ',') b->len--;
  buf_putc(b, close);
}
