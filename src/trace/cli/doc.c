/* doc: building a document and writing it as Markdown or HTML (see doc.h).
 * The builders append to the last block, so a document is written top to
 * bottom in one pass; misuse (a cell outside a table, a row left short)
 * is a bug in the caller and stops at BUG rather than writing a table
 * whose columns do not line up. */
#include "doc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ---- */

static DocBlock *add_block(Doc *d, BlockKind kind) {
  DocBlock blk = {0};
  blk.kind = kind;
  vec_push(&d->blocks, blk);
  return &d->blocks.v[d->blocks.n - 1];
}

static DocBlock *last_block(Doc *d, BlockKind kind, const char *what) {
  if (!d->blocks.n || d->blocks.v[d->blocks.n - 1].kind != kind) BUG("doc: %s outside its block", what);
  return &d->blocks.v[d->blocks.n - 1];
}

/* A new text in blk with one plain span, which is returned. */
static Buf *add_text(DocBlock *blk) {
  DocText t = {0};
  vec_push(&blk->texts, t);
  DocSpan sp = {SPAN_PLAIN, {0}};
  vec_push(&blk->texts.v[blk->texts.n - 1], sp);
  return &blk->texts.v[blk->texts.n - 1].v[0].text;
}

void doc_heading(Doc *d, int level, const char *text) {
  DocBlock *blk = add_block(d, BLOCK_HEADING);
  blk->level = level;
  buf_puts(add_text(blk), text);
}

Buf *doc_para(Doc *d) { return add_text(add_block(d, BLOCK_PARAGRAPH)); }

void doc_table(Doc *d, const char *align, ...) {
  DocBlock *blk = add_block(d, BLOCK_TABLE);
  blk->align = xstrdup(align);
  blk->ncols = strlen(align);
  blk->rows = 1;
  va_list ap;
  va_start(ap, align);
  for (size_t i = 0; i < blk->ncols; i++) buf_puts(add_text(blk), va_arg(ap, const char *));
  va_end(ap);
}

void doc_table_v(Doc *d, const char *align, const char *const *heads) {
  DocBlock *blk = add_block(d, BLOCK_TABLE);
  blk->align = xstrdup(align);
  blk->ncols = strlen(align);
  blk->rows = 1;
  for (size_t i = 0; i < blk->ncols; i++) buf_puts(add_text(blk), heads[i]);
}

void doc_row(Doc *d) {
  DocBlock *blk = last_block(d, BLOCK_TABLE, "row");
  if (blk->texts.n != blk->rows * blk->ncols) BUG("doc: a row of %zu cells, not %zu", blk->texts.n % blk->ncols, blk->ncols);
  blk->rows++;
}

Buf *doc_cell(Doc *d) {
  DocBlock *blk = last_block(d, BLOCK_TABLE, "cell");
  if (blk->texts.n >= blk->rows * blk->ncols) BUG("doc: more than %zu cells in a row", blk->ncols);
  return add_text(blk);
}

void doc_list(Doc *d, bool ordered) { add_block(d, BLOCK_LIST)->ordered = ordered; }

Buf *doc_item(Doc *d) { return add_text(last_block(d, BLOCK_LIST, "item")); }

Buf *doc_span(Doc *d, SpanKind kind) {
  if (!d->blocks.n || !d->blocks.v[d->blocks.n - 1].texts.n) BUG("doc: a span with no text to go in");
  DocBlock *blk = &d->blocks.v[d->blocks.n - 1];
  DocText *t = &blk->texts.v[blk->texts.n - 1];
  DocSpan sp = {kind, {0}};
  vec_push(t, sp);
  return &t->v[t->n - 1].text;
}

void doc_free(Doc *d) {
  for (size_t i = 0; i < d->blocks.n; i++) {
    DocBlock *blk = &d->blocks.v[i];
    for (size_t k = 0; k < blk->texts.n; k++) {
      for (size_t j = 0; j < blk->texts.v[k].n; j++) buf_free(&blk->texts.v[k].v[j].text);
      vec_free(&blk->texts.v[k]);
    }
    vec_free(&blk->texts);
    free(blk->align);
  }
  vec_free(&d->blocks);
}

static void check_rows(const DocBlock *blk) {
  if (blk->texts.n != blk->rows * blk->ncols) BUG("doc: a table's last row is short");
}

/* ---- Markdown ---- */

static const char *md_mark(SpanKind k) { return k == SPAN_BOLD ? "**" : k == SPAN_CODE ? "`" : ""; }

/* one_line: a cell's or an item's text, where '|' would end the cell and a
 * newline the row or item. */
static void md_text(Buf *b, const DocText *t, bool one_line) {
  for (size_t i = 0; i < t->n; i++) {
    const Buf *s = &t->v[i].text;
    buf_puts(b, md_mark(t->v[i].kind));
    for (size_t k = 0; k < s->len; k++) {
      char c = s->s[k];
      if (one_line && c == '|') buf_puts(b, "\\|");
      else if (one_line && c == '\n') buf_putc(b, ' ');
      else buf_putc(b, c);
    }
    buf_puts(b, md_mark(t->v[i].kind));
  }
}

static void md_row(Buf *b, const DocText *cells, size_t n) {
  buf_puts(b, "| ");
  for (size_t i = 0; i < n; i++) {
    if (i) buf_puts(b, " | ");
    md_text(b, &cells[i], true);
  }
  buf_puts(b, " |\n");
}

void doc_write_md(const Doc *d, Buf *b) {
  for (size_t i = 0; i < d->blocks.n; i++) {
    const DocBlock *blk = &d->blocks.v[i];
    if (i) buf_putc(b, '\n');
    switch (blk->kind) {
    case BLOCK_HEADING:
      for (int k = 0; k < blk->level; k++) buf_putc(b, '#');
      buf_putc(b, ' ');
      md_text(b, &blk->texts.v[0], false);
      buf_putc(b, '\n');
      break;
    case BLOCK_PARAGRAPH:
      md_text(b, &blk->texts.v[0], false);
      buf_putc(b, '\n');
      break;
    case BLOCK_TABLE:
      check_rows(blk);
      md_row(b, blk->texts.v, blk->ncols);
      buf_putc(b, '|');
      for (size_t k = 0; k < blk->ncols; k++) buf_puts(b, blk->align[k] == 'r' ? "---:|" : "---|");
      buf_putc(b, '\n');
      for (size_t r = 1; r < blk->rows; r++) md_row(b, blk->texts.v + r * blk->ncols, blk->ncols);
      break;
    case BLOCK_LIST:
      for (size_t k = 0; k < blk->texts.n; k++) {
        if (blk->ordered) buf_printf(b, "%zu. ", k + 1);
        else buf_puts(b, "- ");
        md_text(b, &blk->texts.v[k], true);
        buf_putc(b, '\n');
      }
      break;
    }
  }
}

/* ---- HTML ---- */

static bool blank(char c, bool one_line) { return c == ' ' || (one_line && c == '\n'); }

/* trim: a table cell, whose leading and trailing spaces Markdown drops;
 * the page drops them too, so both show the same cell. */
static void html_text(Buf *b, const DocText *t, bool one_line, bool trim) {
  size_t total = 0;
  for (size_t i = 0; i < t->n; i++) total += t->v[i].text.len;
  size_t lo = 0, hi = total; /* what is written: [lo, hi) of the text's characters */
  if (trim) {
    size_t pos = 0;
    for (size_t i = 0; i < t->n && lo == pos; i++) {
      const Buf *s = &t->v[i].text;
      for (size_t k = 0; k < s->len && blank(s->s[k], one_line); k++) lo++;
      pos += s->len;
    }
    pos = total;
    for (size_t i = t->n; i-- > 0 && hi == pos && hi > lo;) {
      const Buf *s = &t->v[i].text;
      for (size_t k = s->len; k-- > 0 && hi > lo && blank(s->s[k], one_line);) hi--;
      pos -= s->len;
    }
  }
  size_t pos = 0;
  for (size_t i = 0; i < t->n; i++) {
    const DocSpan *sp = &t->v[i];
    buf_puts(b, sp->kind == SPAN_BOLD ? "<b>" : sp->kind == SPAN_CODE ? "<code>" : "");
    for (size_t k = 0; k < sp->text.len; k++, pos++) {
      if (pos < lo || pos >= hi) continue;
      char one[2] = {one_line && sp->text.s[k] == '\n' ? ' ' : sp->text.s[k], 0};
      buf_html(b, one);
    }
    buf_puts(b, sp->kind == SPAN_BOLD ? "</b>" : sp->kind == SPAN_CODE ? "</code>" : "");
  }
}

static void html_table(Buf *b, const DocBlock *blk) {
  check_rows(blk);
  buf_puts(b, "<table><thead><tr>");
  for (size_t k = 0; k < blk->ncols; k++) {
    buf_puts(b, "<th>");
    html_text(b, &blk->texts.v[k], true, true);
    buf_puts(b, "</th>");
  }
  buf_puts(b, "</tr></thead><tbody>\n");
  for (size_t r = 1; r < blk->rows; r++) {
    buf_puts(b, "<tr>");
    for (size_t k = 0; k < blk->ncols; k++) {
      buf_puts(b, blk->align[k] == 'r' ? "<td class=n>" : "<td>");
      html_text(b, &blk->texts.v[r * blk->ncols + k], true, true);
      buf_puts(b, "</td>");
    }
    buf_puts(b, "</tr>\n");
  }
  buf_puts(b, "</tbody></table>\n");
}

void doc_write_html(const Doc *d, Buf *b) {
  for (size_t i = 0; i < d->blocks.n; i++) {
    const DocBlock *blk = &d->blocks.v[i];
    switch (blk->kind) {
    case BLOCK_HEADING:
      buf_printf(b, "<h%d>", blk->level);
      html_text(b, &blk->texts.v[0], false, false);
      buf_printf(b, "</h%d>\n", blk->level);
      break;
    case BLOCK_PARAGRAPH:
      buf_puts(b, "<p>");
      html_text(b, &blk->texts.v[0], false, false);
      buf_puts(b, "</p>\n");
      break;
    case BLOCK_TABLE:
      html_table(b, blk);
      break;
    case BLOCK_LIST:
      buf_puts(b, blk->ordered ? "<ol>\n" : "<ul>\n");
      for (size_t k = 0; k < blk->texts.n; k++) {
        buf_puts(b, "<li>");
        html_text(b, &blk->texts.v[k], true, false);
        buf_puts(b, "</li>\n");
      }
      buf_puts(b, blk->ordered ? "</ol>\n" : "</ul>\n");
      break;
    }
  }
}
