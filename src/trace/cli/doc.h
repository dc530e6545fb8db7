/* doc: a document -- headings, paragraphs, tables, lists -- built once and
 * written two ways: as Markdown (`nctrace summary`, and the "markdown" field
 * of its JSON) and as HTML (the tables under `nctrace report`'s pictures).
 * render.c builds the summary as one; with both writers reading the same
 * blocks the page and the text say the same, and nothing parses Markdown
 * back.
 *
 * The model is what the summary needs and no more: headings (level 1 or
 * 2), paragraphs, tables (a header row, each column left- or right-aligned,
 * rows of cells) and lists (numbered from 1, or bulleted). The text of each
 * is a run of spans, plain, bold or code. The text of a
 * table cell or a list item is one line: a newline in it is written as a
 * space, in both formats.
 *
 * Ownership: the Doc owns its blocks and all their text (what is passed in
 * is copied); doc_free releases everything. The Buf a builder returns is
 * the text of the span it just added: fill it (buf_puts, buf_ms, ...)
 * before the next doc_ call, which may move it (the arrays behind it
 * grow). */
#ifndef NCT_DOC_H
#define NCT_DOC_H

#include "util.h"

typedef enum { SPAN_PLAIN, SPAN_BOLD, SPAN_CODE } SpanKind;

typedef struct {
  SpanKind kind;
  Buf text;
} DocSpan;

typedef VEC(DocSpan) DocText; /* a heading's, a paragraph's, a cell's or an item's text */

typedef enum { BLOCK_HEADING, BLOCK_PARAGRAPH, BLOCK_TABLE, BLOCK_LIST } BlockKind;

typedef struct {
  BlockKind kind;
  int level;          /* heading: 1 or 2 */
  bool ordered;       /* list: numbered (1., 2., ...) rather than bulleted */
  char *align;        /* table: one 'l' or 'r' per column */
  size_t ncols;       /* table */
  size_t rows;        /* table: rows begun, the header row included */
  VEC(DocText) texts; /* heading, paragraph: one; table: the header row, then
                       * each row, ncols texts each; list: one per item */
} DocBlock;

typedef struct {
  VEC(DocBlock) blocks;
} Doc;

/* Blocks, appended in order. */
void doc_heading(Doc *d, int level, const char *text);
Buf *doc_para(Doc *d); /* a paragraph; returns its first span (plain) */
/* A table: align has one letter per column, 'l' or 'r' (numbers); then
 * that many header texts. Rows follow with doc_row and doc_cell. */
void doc_table(Doc *d, const char *align, ...);
/* The same with the header texts in an array (columns counted at run time) */
void doc_table_v(Doc *d, const char *align, const char *const *heads);
void doc_row(Doc *d);
Buf *doc_cell(Doc *d); /* the next cell of the last row; its first span (plain) */
void doc_list(Doc *d, bool ordered);
Buf *doc_item(Doc *d); /* the next item of the last list; its first span (plain) */

/* A new span at the end of the last text (the paragraph, cell or item
 * just started). */
Buf *doc_span(Doc *d, SpanKind kind);

/* Markdown (GitHub's tables): blocks separated by a blank line; '|' in a
 * cell or an item is escaped ("\|"). Nothing else is: '*' and '`' in a
 * name go out as they are, as `nctrace summary` has always written them
 * (its output is compared byte for byte by the golden tests). */
void doc_write_md(const Doc *d, Buf *out);
/* HTML for inside a <body>: <h1>/<h2>, <p>, <table> (right-aligned cells
 * are <td class=n>), <ol>/<ul>; <b> and <code> spans; text escaped. A
 * cell's leading and trailing spaces are dropped, as Markdown drops them,
 * so both formats show the same cell. */
void doc_write_html(const Doc *d, Buf *out);

void doc_free(Doc *d);

#endif
