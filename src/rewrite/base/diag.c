/* diag: rendering of file:line:col diagnostics with source line and caret. */
#include "diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *level_name(DiagLevel l) {
  switch (l) {
  case DIAG_NOTE: return "note";
  case DIAG_WARNING: return "warning";
  case DIAG_ERROR: return "error";
  }
  return "?";
}

/* Length of the UTF-8 sequence at s[0..n), or 0 if it is not valid UTF-8. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  size_t k = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
  if (!k || k > n || (k == 2 && s[0] < 0xc2)) return 0;
  for (size_t i = 1; i < k; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return k;
}

/* The shown part of a line: at most this many bytes around the column, so a
 * minified file or a 1 MB rule key doesn't flood the terminal. */
#define SHOW_WIDTH 160

/* Append the source line `line` and a caret under byte column `col`. Tabs in
 * the prefix are copied so the caret lines up in any tab width; control bytes
 * and bytes that are not UTF-8 (a binary file) show as '?', one column each. */
static void show_line(Buf *b, const char *src, size_t n, int line, int col) {
  size_t i = 0;
  for (int l = 1; l < line && i < n; i++)
    if (src[i] == '\n') l++;
  if (i >= n && line > 1) return;
  size_t e = i;
  while (e < n && src[e] != '\n' && src[e] != '\r') e++;
  size_t at = i + (size_t)(col - 1) < e ? i + (size_t)(col - 1) : e;
  size_t from = i, to = e;
  if (to - from > SHOW_WIDTH) {
    from = at > i + SHOW_WIDTH / 2 ? at - SHOW_WIDTH / 2 : i;
    to = from + SHOW_WIDTH < e ? from + SHOW_WIDTH : e;
    while (from > i && (src[from] & 0xc0) == 0x80) from--; /* start on a character */
  }
  Buf caret = {0};
  buf_puts(b, from > i ? "    ..." : "    ");
  buf_puts(&caret, from > i ? "       " : "    ");
  for (size_t k = from; k < to;) {
    const unsigned char *u = (const unsigned char *)src + k;
    size_t len = utf8_len(u, to - k);
    bool ok = len && (u[0] >= 0x20 || u[0] == '\t') && u[0] != 0x7f;
    if (ok) buf_add(b, u, len);
    else buf_putc(b, '?'), len = 1;
    if (k < at) buf_putc(&caret, u[0] == '\t' ? '\t' : ' ');
    k += len;
  }
  if (to < e) buf_puts(b, "...");
  buf_putc(b, '\n');
  buf_add(b, caret.s, caret.len);
  buf_puts(b, "^\n");
  buf_free(&caret);
}

void diag_at(Diags *d, DiagLevel lvl, const char *path, const char *src, size_t srclen,
             int line, int col, const char *fmt, ...) {
  if (lvl == DIAG_WARNING && d->strict) lvl = DIAG_ERROR;
  if (lvl == DIAG_ERROR) d->errors++;
  if (lvl == DIAG_WARNING) d->warnings++;
  if (d->quiet && lvl != DIAG_ERROR) return;
  if (line > 0)
    buf_printf(&d->text, "%s:%d:%d: %s: ", path, line, col > 0 ? col : 1, level_name(lvl));
  else
    buf_printf(&d->text, "%s: %s: ", path, level_name(lvl));
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&d->text, fmt, ap);
  va_end(ap);
  buf_putc(&d->text, '\n');
  if (src && line > 0) show_line(&d->text, src, srclen, line, col > 0 ? col : 1);
}

void diags_append(Diags *to, const Diags *from) {
  if (from->text.len) buf_add(&to->text, from->text.s, from->text.len);
  to->errors += from->errors;
  to->warnings += from->warnings;
}

void diags_free(Diags *d) { buf_free(&d->text); }

void diags_print(const Diags *d) {
  if (d->text.len) fwrite(d->text.s, 1, d->text.len, stderr);
}
