/* crewrite.h: what the C-family rewriter's files share (not a public
 * header: crewrite.c, cfuncs.c and cstmts.c only).
 *
 *   cfuncs.c  finds the functions of a file and why some are never
 *             instrumented (GPU code, constexpr, macros, prototypes);
 *   cstmts.c  statement lists, and the checks that make wrapping some of
 *             them in a new block safe (declarations, labels);
 *   crewrite.c matches the rules, plans the ranges and emits the edits.
 *
 * Ownership: a CFile lives for one c_rewrite call and owns its vectors and
 * the strings in them; TSNodes point into its tree. */
#ifndef NC_CREWRITE_H
#define NC_CREWRITE_H

#include <string.h>
#include <tree_sitter/api.h>

#include "rewrite.h"

typedef VEC(TSNode) CNodes;
typedef VEC(char *) CStrs;

typedef struct {
  TSNode def, body;
  char *name, *qual;  /* qual: ns::Class::name for C++ */
  const char *skip;   /* why it is never instrumented, or NULL */
  bool proto;         /* a declaration without a body (body is null) */
  bool wrapped, explained;
  char *why;          /* owned text behind skip, if built */
} CFunc;

/* Code that macros produce: a macro called at file or class scope
 * (`MAKE_GETTER(get_seven, 7)`) or a #define whose body holds a block. */
typedef struct {
  TSNode node;
  char *macro;
} CMacro;

typedef struct {
  size_t b0, b1;      /* bytes: start of first, end of last statement */
  int r0, r1;
  const Rule *rule;
  char *name;
  const char *kind;
  bool expr;          /* around an initializer: `__extension__ ({ ...; })` */
} CWrap;

typedef struct {
  FileJob *job;
  const char *src;
  size_t len, bom;
  TSParser *parser;
  TSTree *tree;
  TSNode root;
  const char *nl;
  VEC(CFunc) funcs;
  VEC(CWrap) wraps;
  VEC(CMacro) macros;
  CStrs risky;         /* object-like macros defined to constexpr/device words */
  TSNode fbody;        /* body of the function being matched */
  Lang lang;           /* the grammar used: a .h may turn out to be C++ */
} CFile;


static inline bool is(TSNode n, const char *t) { return !strcmp(ts_node_type(n), t); }
static inline int row0(TSNode n) { return (int)ts_node_start_point(n).row; }
static inline int row1(TSNode n) { return (int)ts_node_end_point(n).row; }

/* cfuncs.c */
char *c_text(CFile *c, TSNode n); /* n's source text, malloc'ed */
/* Is w in s[0, n) as a whole word? */
bool c_word_in(const char *s, size_t n, const char *w);
/* Add the functions (with bodies or not), macro-made code and risky
 * macros found under n to c; scope: the enclosing C++ qualified name. */
void c_funcs_collect(CFile *c, TSNode n, const char *scope);
/* The C++-only syntax that makes a .h file C++, or NULL. */
const char *c_cpp_marker(const char *s, size_t n);

/* cstmts.c */
/* The statements of a list: a compound statement, a case, or a body
 * without braces (a list of one). */
void c_stmts_list(TSNode block, CNodes *out);
/* The statement lists directly under statement s. */
void c_stmts_sub_blocks(TSNode s, CNodes *out);
/* Plan a `{ NCRT_RANGE(name); ... }` around statements [i0, i1] of kids,
 * or report (at rule r) why that would change the program. */
bool c_stmts_wrap(CFile *c, CNodes *kids, int i0, int i1, Rule *r, const char *name, const char *kind);
/* The first name that statements [i0, i1] declare and later statements of
 * kids use (malloc'ed; "using" for a using-declaration), or NULL. */
char *c_stmts_hidden(CFile *c, CNodes *kids, int i0, int i1);

#endif
