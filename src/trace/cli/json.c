/* json: see json.h. */
#include "json.h"

#include <math.h>
#include <string.h>

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

void json_bool(Buf *b, const char *k, bool v) { buf_printf(b, "\"%s\":%s,", k, v ? "true" : "false"); }

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

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t k;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) k = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) k = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) k = 4, min = 0x10000;
  else return 0;
  if (n < k) return 0;
  unsigned v = c & (0x7f >> k);
  for (size_t i = 1; i < k; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    v = v << 6 | (p[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  return k;
}

/* n bytes as a JSON string safe inside <script>: '<' as \u003c (no
 * "</script>"), control bytes and NUL escaped, bytes that are not UTF-8
 * (a Latin-1 file) as U+FFFD, so the page's data always parses. */
void json_script_strn(Buf *b, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  buf_putc(b, '"');
  while (p < end) {
    const unsigned char *run = p;
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\' && *p != '<') p++;
    if (p > run) buf_add(b, run, (size_t)(p - run));
    if (p == end) break;
    if (*p == '"' || *p == '\\') buf_putc(b, '\\'), buf_putc(b, (char)*p++);
    else if (*p == '<') buf_puts(b, "\\u003c"), p++;
    else if (*p == '\n') buf_puts(b, "\\n"), p++;
    else if (*p == '\t') buf_puts(b, "\\t"), p++;
    else if (*p < 0x20) buf_printf(b, "\\u%04x", *p++);
    else {
      size_t k = utf8_len(p, (size_t)(end - p));
      if (k) buf_add(b, p, k), p += k;
      else buf_puts(b, "\\ufffd"), p++;
    }
  }
  buf_putc(b, '"');
}

void json_script_str(Buf *b, const char *s) {
  if (s) json_script_strn(b, s, strlen(s));
  else buf_puts(b, "null");
}
