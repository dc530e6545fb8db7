/* crewrite.h: what the C-family rewriter's files share (not a public
 * header: crewrite.c, cfuncs.c and cstmts.c only).
 *
 *   cfuncs.c  finds the functions of a file and why some are never
 *             instrumented (GPU code, constexpr, macros, prototypes); the
 *             preprocessor's view without expansion: directives, the
 *             macros of the file and its local headers, which of them only
 *             decorate a declaration (blanked before parsing), and which
 *             headers configure the system headers (feature-test macros);
 *   cstmts.c  statement lists, and the checks that make wrapping some of
 *             them in a new block safe (declarations, labels);
 *   crewrite.c matches the rules (C_PLAN: a planner per rule kind the C
 *             family takes), plans the ranges and emits the edits.
 *
 * Ownership: a CFile lives for one c_rewrite call and owns its vectors and
 * the strings in them; TSNodes point into its tree. */
#ifndef NC_CREWRITE_H
#define NC_CREWRITE_H

#include <string.h>
#include <tree_sitter/api.h>

#include "rewrite.h"
#include "tsnode.h"

typedef VEC(TSNode) CNodes;
typedef VEC(char *) CStrs;

typedef struct {
  TSNode def, body;
  char *name, *qual;  /* qual: ns::Class::name for C++ */
  const char *skip;   /* why it is never instrumented, or NULL */
  const char *inl;    /* why full trace leaves it out by default (straight-
                       * line code that cannot take time by itself), or
                       * NULL; rules naming it still wrap it */
  bool addr;          /* its address is taken in the file (kept by full
                       * trace: a call through a pointer is not inlined) */
  bool proto;         /* a declaration without a body (body is null) */
  bool wrapped, explained;
  bool targeted;      /* a rule or full trace asked for it */
  char *why;          /* owned text behind skip, if built */
  char *unknown;      /* its header does not parse around these words, which
                       * look like macros without a known definition
                       * ("LUA_API", "ZEXTERN, ZEXPORT"), or NULL */
  bool rough;         /* its body does not parse in places (a macro
                       * tree-sitter cannot expand) but its header and
                       * braces are certain: a range over the whole
                       * function only, nothing inside it */
} CFunc;

/* A preprocessor directive: one logical line, continuations and comments
 * that span lines included. */
typedef struct {
  size_t at, end;     /* the start of its first line; past its last newline */
  int row;            /* 0-based row of its first line */
  size_t k0, k1;      /* its keyword (define, include, if, ...; k0 == k1: none) */
  size_t a0, a1;      /* the rest of the logical line */
} CDir;
typedef VEC(CDir) CDirs;

typedef struct {
  size_t a, b;
} CSpan;

/* A #define of the file or of a local header it includes. */
typedef struct {
  char *name, *params, *body; /* params: what the parentheses of a function-like one hold */
  bool fnlike;
} CDef;

/* What a header does to feature-test macros (ordered: the most wins). */
enum { CONF_NO, CONF_MAYBE, CONF_SETS };

/* A local header read for its macros (memo: each is read once per file). */
typedef struct {
  char *path;         /* realpath */
  int configures;     /* -1 being read, else CONF_NO, CONF_MAYBE or CONF_SETS */
} CHdr;

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
  CDirs dirs;          /* every directive of the file */
  size_t code0;        /* the first byte of code (not a directive, comment or blank) */
  VEC(CDef) defs;      /* #defines of the file and the local headers read */
  VEC(CHdr) hdrs;      /* local headers read */
  size_t hdr_bytes;    /* how much of them was read (bounded) */
  bool defs_read;      /* the file's and all its local headers' #defines are in defs */
  CStrs def_names;     /* defs' names, sorted (c_is_macro), not owned */
  CStrs attr;          /* sorted: macros that only decorate a declaration */
  char *psrc;          /* what tree-sitter parses: src with the attr macros
                        * blanked (same bytes, same rows); NULL: src */
  VEC(CSpan) blanks;   /* the bytes of psrc that differ from src (unsorted) */
} CFile;

/* (the tree-sitter helpers, is, row0, row1, node_text and name_match, are
 * tsnode.h's, shared with the Python rewriter) */

/* cfuncs.c */
/* Is w in s[0, n) as a whole word? */
bool c_word_in(const char *s, size_t n, const char *w);
/* Add the functions (with bodies or not), macro-made code and risky
 * macros found under n to c; scope: the enclosing C++ qualified name. */
void c_funcs_collect(CFile *c, TSNode n, const char *scope);
/* Visit every node under n (n first) in document order with a cursor, not
 * recursion (an expression may nest 500000 deep: tests/badinput); visit
 * returns false to stop the walk. */
void c_walk(TSNode n, bool (*visit)(void *ctx, TSNode k), void *ctx);
/* Is name #defined in the file or a local header it includes (read once)? */
bool c_is_macro(CFile *c, const char *name);
/* Full trace's candidates for leaving out (CFunc.inl) whose address the
 * file takes (a use of the name other than a call or its declarator):
 * their inl is cleared and addr set. */
void c_funcs_addr_taken(CFile *c);
/* The C++-only syntax that makes a .h file C++, or NULL. */
const char *c_cpp_marker(const char *s, size_t n);

/* The directives of s[0, n) into dirs, and (if code0) the offset of its first
 * code byte (n if none); ident (may be NULL) is called for every identifier
 * in code (not in directives, comments or literals). */
void c_lex(const char *s, size_t n, CDirs *dirs, size_t *code0, void (*ident)(void *ctx, size_t a, size_t b),
           void *ctx);
/* Is directive d's keyword w? */
bool c_dir_is(const char *s, const CDir *d, const char *w);
/* s[a, b) is one brace block, '{' at a matching the '}' at b - 1, as the
 * compiler's lexer sees it (comments, literals, directive lines skipped). */
bool c_braces_match(const char *s, size_t a, size_t b);
/* The first identifier of s[a, b) (after blanks and comments): its start,
 * and its end in *e; b if none. */
size_t c_dir_word(const char *s, size_t a, size_t b, size_t *e);
/* Is this a feature-test macro, which must be defined before the first
 * system header (_GNU_SOURCE, _XOPEN_SOURCE, _POSIX_C_SOURCE,
 * _FILE_OFFSET_BITS, __STDC_FORMAT_MACROS, WIN32_LEAN_AND_MEAN, ...)? */
bool c_feature_macro(const char *s, size_t n);
/* Does the header that #include directive d names set a feature-test
 * macro? CONF_SETS: a local header (read, and its own includes followed)
 * defines one; CONF_MAYBE: it includes, or is, a header that cannot be found
 * (config.h, Python.h, a library's); CONF_NO: a C, POSIX, C++ or CUDA system
 * header, or local headers that set none. */
int c_include_configures(CFile *c, const CDir *d);
/* Read the #defines of the file and (recursively) of the local headers it
 * includes, then decide which macros only decorate a declaration (storage
 * classes, attributes, calling conventions, export decorations: LUA_API,
 * PNGAPI, `#define l_sinline static inline`) and which may hide constexpr
 * or GPU code (added to c->risky). Fills c->attr with the first kind and
 * the rule file's c_attribute_macros, and builds c->psrc: the text with
 * those blanked, declarator macros (PNG_FUNCTION) reduced to what they
 * expand to and statement macros (PNG_UNUSED(x) with its ';' inside) ended
 * with one; c->blanks says where. Returns true if anything changed, so the
 * text must be parsed again. */
bool c_macros_blank(CFile *c);
/* h with, appended, what the attribute macros in it expand to (all
 * definitions, recursively): the words the compiler sees. Malloc'ed. */
char *c_expand_attrs(CFile *c, const char *h, size_t n);
void c_macros_free(CFile *c);

/* cstmts.c */
/* The statements of a list: a compound statement, a case, or a body
 * without braces (a list of one). */
void c_stmts_list(TSNode block, CNodes *out);
/* The statement lists directly under statement s. */
void c_stmts_sub_blocks(TSNode s, CNodes *out);
/* Plan a `{ NCRT_RANGE(name); ... }` around statements [i0, i1] of kids,
 * or report (at rule r) why that would change the program. */
bool c_stmts_wrap(CFile *c, CNodes *kids, int i0, int i1, const Rule *r, const char *name, const char *kind);
/* The first name that statements [i0, i1] declare and later statements of
 * kids use (malloc'ed; "using" for a using-declaration), or NULL. */
char *c_stmts_hidden(CFile *c, CNodes *kids, int i0, int i1);

#endif
