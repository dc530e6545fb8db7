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

/* Append the source line `line` and a caret under byte column `col`. Tabs in
 * the prefix are copied so the caret lines up in any tab width. */
static void show_line(Buf *b, const char *src, size_t n, int line, int col) {
  size_t i = 0;
  for (int l = 1; l < line && i < n; i++)
    if (src[i] == '\n') l++;
  if (i >= n && line > 1) return;
  size_t e = i;
  while (e < n && src[e] != '\n' && src[e] != '\r') e++;
  buf_puts(b, "    ");
  for (size_t k = i; k < e; k++) buf_putc(b, src[k] == 0 ? ' ' : src[k]);
  buf_puts(b, "\n    ");
  for (size_t k = i; k < e && (int)(k - i) < col - 1; k++)
    buf_putc(b, src[k] == '\t' ? '\t' : ' ');
  buf_puts(b, "^\n");
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
