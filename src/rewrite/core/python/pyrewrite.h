/* pyrewrite.h: the Python rewriter's internal header (core/python only,
 * as crewrite.h is for C): one file's state (Py), its functions (Func),
 * the wraps planned (Wrap), and the calls between the rewriter's files.
 *
 *   pycollect.c  the tree and the rows: statement lists and blocks, the
 *                row index, rows inside strings, the indent unit, the
 *                file's functions (collect)
 *   pyplan.c     contexts (the `with` text, aliases) and the planners: what
 *                each rule kind (rules.h's table of kinds; PY_PLAN) and the
 *                full trace wrap, and the replacements
 *   pylayout.c   the wraps laid out as byte edits that keep line numbers,
 *                the prelude, --explain's moved lines
 *   pyrewrite.c  the entry, py_rewrite (parse, syntax errors, then collect,
 *                plan, layout, prelude), and drill's py_inner_statements
 *   pyjit.c      what the file's JIT compilers compile (pyjit.h)
 *
 * Calls go one way: pyrewrite.c calls the others, pylayout.c calls pyplan.c
 * and pycollect.c, pyplan.c calls pycollect.c; no file calls one that calls
 * it back (tests/arch). Everything here is internal to the core: the
 * rewriter's one entry is rewrite.h's py_rewrite.
 *
 * What the rewriter does: parse with tree-sitter-python, find what the
 * rules name (functions, call sites, line ranges, full trace), plan
 * "wraps" (a run of whole statements of one block put under a `with`),
 * then lay the wraps out as byte edits that keep original line numbers
 * wherever the layout allows (pylayout.c says how). Async functions and
 * generators get start/end spans (ncrt.span), never push/pop ranges, which
 * must not stay open across await/yield. */
#ifndef NC_PYREWRITE_H
#define NC_PYREWRITE_H

#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "pyjit.h"
#include "rewrite.h"
#include "tsnode.h"

/* What marks a file already instrumented (pyrewrite.c), and what the
 * prelude imports (pylayout.c). */
#define NC_PY_MARK "__import__(\"ncrt\")"

typedef VEC(TSNode) Nodes;
typedef VEC(char *) Strs;
typedef VEC(size_t) Offsets;

typedef struct Func Func;
struct Func {
  TSNode def;       /* function_definition */
  TSNode outer;     /* decorated_definition or def */
  char *name, *qual, *cls_qual; /* cls_qual: qualname of the class it is a method of */
  bool is_async, is_gen;
  Func *parent;     /* enclosing function, if any */
  bool has_func_wrap;
  bool folded;      /* a row of its header or docstring was given to a range */
  TSNode body;      /* its block */
  Nodes kids;       /* the body's statements, listed once */
};

typedef struct {
  TSNode block;     /* block holding the statements (or module) */
  int i0, i1;       /* first and last wrapped statement, indices into kids */
  Nodes kids;       /* statement children of block */
  size_t b0, b1;    /* bytes: start of first, end of last */
  int r0, r1;       /* rows */
  bool oneline;     /* first wrapped statement is on its block's header row */
  bool inline_;     /* simple statements of one logical line: `with X: stmt` on their own row */
  size_t colon;     /* oneline: offset just after the header's ':' */
  int hrow;         /* oneline: header row */
  char *with;       /* "with X(args):" */
  int depth, k;     /* nesting among multi-line wraps; index among one-line wraps */
  const Rule *rule; /* NULL: full trace */
  Func *fn;         /* function whose body is wrapped whole, or NULL */
  TSNode stmt_outer;/* the compound statement owning a oneline block */
  RangeRec rec;
  bool dropped;
} Wrap;

typedef struct {
  FileJob *job;
  const char *src;  /* after any BOM */
  size_t len, bom;
  TSParser *parser;
  TSTree *tree;
  TSNode root;
  const char *nl;
  char unit[16];
  size_t *rows;     /* byte offset of each row start */
  int nrows;
  VEC(Func *) funcs;
  VEC(Wrap) wraps;
  bool *used_blank; /* rows already taken by a layout decision */
  unsigned char *defedge; /* DEF_FIRST/DEF_LAST rows of definitions; NULL until a blank is sought */
  char *strskip;    /* rows that start inside a multi-line string */
  bool uses_ncrt;    /* the prelude must import ncrt (with its fallback) */
  PyJit *jit;       /* what the file's JIT compilers compile */
  bool uses_torch;  /* the prelude must bind __ncrt_t__ (TorchScript-safe markers) */
  /* context aliases used, in first-use order */
  VEC(char *) alias_names;
  VEC(char *) alias_defs;
} Py;

/* pycollect.c: the tree */
void py_statements(TSNode block, Nodes *out); /* a block's statements (no comments), through a cursor */
bool py_is_compound(TSNode n);
bool py_is_clause(TSNode n);                 /* elif/else/except/finally/case */
void py_sub_blocks(TSNode n, Nodes *out);    /* a compound statement's body and its clauses' blocks */
TSNode py_def_of(TSNode outer);              /* the definition inside a decorated one */
bool py_is_docstring(TSNode stmt);
/* Does the subtree hold a node of `type`, outside nested functions,
 * classes and lambdas? */
bool py_contains_outside_nested(TSNode n, const char *type);
/* pycollect.c: the rows */
void py_index_rows(Py *py);                  /* py->rows, py->nrows */
size_t py_row_end(Py *py, int r);            /* offset of the row's '\n' (or '\r\n') or EOF */
size_t py_ws_len(Py *py, int r);             /* the row's leading blanks */
bool py_row_blank(Py *py, int r);            /* nothing but blanks */
/* Does row r continue the logical line above (a backslash ending r-1)? */
bool py_continued(Py *py, int r);
void py_mark_strings(Py *py, TSNode root);   /* py->strskip: rows that start inside a multi-line string */
void py_pick_unit(Py *py);                   /* py->unit: the file's indent unit */
/* pycollect.c: the file's functions into py->funcs, qualified names
 * from `prefix` (cls_qual: the class they are methods of; parent: the
 * enclosing function) */
void py_collect(Py *py, TSNode block, const char *prefix, const char *cls_qual, Func *parent);

/* pyplan.c */
/* The wraps of the rules of the targets naming the file, in rule-file
 * order: of the kinds that make ranges (`ranges`), or of those that make
 * none (replacements: after, since they void the wraps inside them). */
void py_plan_rules(Py *py, bool ranges);
void py_plan_full_trace(Py *py);
Func *py_func_at(Py *py, size_t off);        /* the innermost function around a byte offset */
char *py_alias_import(const char *def);      /* the import line of a context alias */

/* pylayout.c */
void py_layout(Py *py);        /* the wraps as edits (py->job->edits, ranges) */
void py_prelude(Py *py);       /* import each context once, on an existing line where possible */
void py_explain_moves(Py *py); /* --explain: the functions whose lines moved */

#endif
