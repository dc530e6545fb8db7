/* pyjit: which functions of a Python file a JIT compiles (see pyjit.h). */
#include "pyjit.h"

#include <string.h>

#include "tsnode.h"
#include "util.h"

/* The compilers, by the full dotted name of their decorator or function.
 * `why` is what --explain says after "skipped NAME: ". */
typedef struct {
  const char *name, *why;
} Jit;

#define TS "compiled by TorchScript: it does not run as Python, so a range there would not record"
#define NB "compiled by numba: numba cannot compile a with-range"
#define TR "compiled by Triton: Triton cannot compile a with-range"
#define JX "traced by JAX: a range would time the tracing, not the run"
#define CP "compiled by CuPy: CuPy cannot compile a with-range"

static const Jit jits[] = {
    /* TorchScript (@ignore and @unused are not here: those bodies run in Python) */
    {"torch.jit.script", TS}, {"torch.jit.script_method", TS}, {"torch.jit.export", TS},
    {"torch.jit._overload", TS}, {"torch.jit._overload_method", TS}, {"torch.jit.script_if_tracing", TS},
    {"torch.jit.interface", TS}, {"torch.jit._script.script", TS}, {"torch.jit._script.script_method", TS},
    {"torch.jit._script.interface", TS}, {"torch._jit_internal.export", TS},
    {"torch._jit_internal._overload", TS}, {"torch._jit_internal._overload_method", TS},
    {"torch._jit_internal.interface", TS},
    /* numba (decorators and their run-time forms) */
    {"numba.njit", NB}, {"numba.jit", NB}, {"numba.vectorize", NB}, {"numba.guvectorize", NB},
    {"numba.cfunc", NB}, {"numba.stencil", NB}, {"numba.generated_jit", NB}, {"numba.jitclass", NB},
    {"numba.experimental.jitclass", NB}, {"numba.cuda.jit", NB}, {"numba.core.decorators.njit", NB},
    {"numba.core.decorators.jit", NB}, {"numba.extending.register_jitable", NB},
    {"numba.extending.overload", NB}, {"numba.extending.overload_method", NB},
    {"numba.extending.overload_attribute", NB}, {"numba.extending.intrinsic", NB},
    {"numba.core.extending.register_jitable", NB}, {"numba.core.extending.overload", NB},
    /* Triton */
    {"triton.jit", TR}, {"triton.autotune", TR}, {"triton.heuristics", TR}, {"triton.runtime.jit", TR},
    {"triton.runtime.autotune", TR}, {"triton.runtime.heuristics", TR}, {"triton.runtime.jit.jit", TR},
    {"triton.runtime.autotuner.autotune", TR}, {"triton.runtime.autotuner.heuristics", TR},
    /* JAX (and the transformations that trace the same way) */
    {"jax.jit", JX}, {"jax.pmap", JX}, {"jax.vmap", JX}, {"jax.grad", JX}, {"jax.value_and_grad", JX},
    {"jax.jacfwd", JX}, {"jax.jacrev", JX}, {"jax.hessian", JX}, {"jax.checkpoint", JX}, {"jax.remat", JX},
    {"jax.custom_jvp", JX}, {"jax.custom_vjp", JX}, {"jax.experimental.pjit.pjit", JX},
    {"jax.experimental.shard_map.shard_map", JX}, {"equinox.filter_jit", JX},
    /* CuPy */
    {"cupy.fuse", CP}, {"cupyx.jit.rawkernel", CP}, {"cupyx.jit.kernel", CP},
};

typedef struct {
  char *name, *full; /* local name -> dotted name it stands for */
} Alias;

typedef struct {
  char *name;        /* a name of this file handed to a compiler at run time */
  char *why;
} RunCompile;

struct PyJit {
  const char *src;
  VEC(Alias) aliases;
  VEC(char *) stars;   /* modules imported with `from M import *` */
  VEC(RunCompile) calls;
  VEC(char *) whys;    /* owned reason strings */
  bool torch;
};

static void alias_add(PyJit *j, char *name, char *full) {
  Alias a = {name, full};
  vec_push(&j->aliases, a);
}

static void note_torch(PyJit *j, const char *mod) {
  if (!strncmp(mod, "torch", 5) && (mod[5] == 0 || mod[5] == '.')) j->torch = true;
}

static void scan_import(PyJit *j, TSNode n) {
  TSTreeCursor c = ts_tree_cursor_new(n);
  bool from = is(n, "import_from_statement");
  char *module = NULL;
  if (from) {
    TSNode m = child_by_field(n, "module_name");
    if (ts_node_is_null(m) || is(m, "relative_import")) { /* targets unknown from one file */
      ts_tree_cursor_delete(&c);
      return;
    }
    module = node_squeezed(j->src, m);
    note_torch(j, module);
  }
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&c);
      const char *field = ts_tree_cursor_current_field_name(&c);
      if (from && is(k, "wildcard_import")) {
        vec_push(&j->stars, xstrdup(module));
        continue;
      }
      if (!field || strcmp(field, "name")) continue;
      if (is(k, "aliased_import")) {
        char *full = node_squeezed(j->src, child_by_field(k, "name"));
        char *alias = node_squeezed(j->src, child_by_field(k, "alias"));
        if (from) {
          char *f = xasprintf("%s.%s", module, full);
          free(full);
          full = f;
        } else {
          note_torch(j, full);
        }
        alias_add(j, alias, full);
      } else if (is(k, "dotted_name")) {
        char *t = node_squeezed(j->src, k);
        if (from) {
          alias_add(j, t, xasprintf("%s.%s", module, t));
        } else {
          /* `import a.b.c` binds a to a */
          note_torch(j, t);
          char *dot = strchr(t, '.');
          if (dot) *dot = 0;
          alias_add(j, xstrdup(t), t);
        }
      }
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  free(module);
}

/* The dotted name a name expression stands for, through the imports; NULL
 * if it is not a plain dotted name. */
static char *resolve(const PyJit *j, TSNode expr) {
  if (!is(expr, "identifier") && !is(expr, "attribute")) return NULL;
  char *t = node_squeezed(j->src, expr);
  size_t first = strcspn(t, ".");
  /* the last binding wins, as in the module (imports in try/except blocks) */
  for (size_t i = j->aliases.n; i-- > 0;) {
    const Alias *a = &j->aliases.v[i];
    if (strlen(a->name) == first && !strncmp(a->name, t, first)) {
      char *r = xasprintf("%s%s", a->full, t + first);
      free(t);
      return r;
    }
  }
  return t;
}

static const char *lookup(const PyJit *j, const char *full) {
  for (size_t i = 0; i < sizeof jits / sizeof *jits; i++)
    if (!strcmp(jits[i].name, full)) return jits[i].why;
  /* a bare name may come from `from M import *` */
  if (!strchr(full, '.'))
    for (size_t s = 0; s < j->stars.n; s++) {
      char *f = xasprintf("%s.%s", j->stars.v[s], full);
      const char *w = NULL;
      for (size_t i = 0; i < sizeof jits / sizeof *jits && !w; i++)
        if (!strcmp(jits[i].name, f)) w = jits[i].why;
      free(f);
      if (w) return w;
    }
  return NULL;
}

/* The compiler a callee expression names: `njit`, `numba.jit(nopython=True)`
 * (a call of the compiler that returns the decorator), `partial(jax.jit,
 * static_argnums=0)`. *shown gets the name as written, for messages. */
static const char *compiler_of(const PyJit *j, TSNode e, char **shown) {
  for (int depth = 0; depth < 4 && !ts_node_is_null(e); depth++) {
    if (is(e, "call")) {
      TSNode fn = child_by_field(e, "function");
      char *full = resolve(j, fn);
      bool partial = full && (!strcmp(full, "functools.partial") || !strcmp(full, "partial"));
      free(full);
      if (partial) { /* partial(COMPILER, ...): the first argument */
        TSNode args = child_by_field(e, "arguments");
        e = ts_node_is_null(args) ? args : ts_node_named_child(args, 0);
      } else {
        e = fn;
      }
      continue;
    }
    char *full = resolve(j, e);
    if (!full) return NULL;
    const char *why = lookup(j, full);
    if (why) *shown = node_squeezed(j->src, e);
    free(full);
    return why;
  }
  return NULL;
}

static const char *intern(PyJit *j, char *s) {
  for (size_t i = 0; i < j->whys.n; i++)
    if (!strcmp(j->whys.v[i], s)) {
      free(s);
      return j->whys.v[i];
    }
  vec_push(&j->whys, s);
  return s;
}

/* `f2 = numba.njit(f)`, `numba.vectorize(sig)(g)`, `jax.jit(loss, ...)`:
 * the first positional argument, a plain name, is compiled. */
static void scan_call(PyJit *j, TSNode call) {
  TSNode args = child_by_field(call, "arguments");
  if (ts_node_is_null(args) || !is(args, "argument_list")) return;
  TSNode a0 = ts_node_named_child(args, 0);
  if (ts_node_is_null(a0) || !is(a0, "identifier")) return;
  char *shown = NULL;
  const char *why = compiler_of(j, child_by_field(call, "function"), &shown);
  if (!why) return;
  char *name = node_squeezed(j->src, a0);
  char *call_text = node_squeezed(j->src, call);
  if (strlen(call_text) > 60) strcpy(call_text + 56, "...)");
  const char *colon = strchr(why, ':');
  RunCompile rc = {name, (char *)intern(j, xasprintf("%.*s at line %u (%s)%s", (int)(colon - why), why,
                                                     ts_node_start_point(call).row + 1, call_text, colon))};
  vec_push(&j->calls, rc);
  free(call_text);
  free(shown);
}

/* One walk over the tree: imports (anywhere: `try: import numba` blocks are
 * common) and calls. Calls are collected first and matched after, so an
 * import below a call still counts (as it does at run time for a function
 * body). */
typedef VEC(TSNode) Nodes;

static void walk(PyJit *j, TSNode root, Nodes *calls) {
  TSTreeCursor c = ts_tree_cursor_new(root);
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    bool descend = true;
    if (is(n, "import_statement") || is(n, "import_from_statement")) {
      scan_import(j, n);
      descend = false;
    } else if (is(n, "call")) {
      vec_push(calls, n);
    } else if (is(n, "string") || is(n, "comment")) {
      descend = false;
    }
    if (!walk_next(&c, descend)) break;
  }
  ts_tree_cursor_delete(&c);
}

PyJit *pyjit_scan(const char *src, TSNode root, const char *origin) {
  PyJit *j = xcalloc(1, sizeof *j);
  j->src = src;
  Nodes calls = {0};
  walk(j, root, &calls);
  /* only calls that can name a compiler are worth resolving */
  if (j->aliases.n || j->stars.n)
    for (size_t i = 0; i < calls.n; i++) scan_call(j, calls.v[i]);
  vec_free(&calls);
  /* torch's own package: its modules (nn/_reduction.py, ...) are compiled
   * by TorchScript from nn/functional.py without importing torch */
  if (origin) {
    const char *p = origin;
    while ((p = strstr(p, "torch/"))) {
      if (p == origin || p[-1] == '/') j->torch = true;
      p += 6;
    }
  }
  return j;
}

void pyjit_free(PyJit *j) {
  if (!j) return;
  for (size_t i = 0; i < j->aliases.n; i++) free(j->aliases.v[i].name), free(j->aliases.v[i].full);
  for (size_t i = 0; i < j->stars.n; i++) free(j->stars.v[i]);
  for (size_t i = 0; i < j->calls.n; i++) free(j->calls.v[i].name);
  for (size_t i = 0; i < j->whys.n; i++) free(j->whys.v[i]);
  vec_free(&j->aliases);
  vec_free(&j->stars);
  vec_free(&j->calls);
  vec_free(&j->whys);
  free(j);
}

bool pyjit_torch(const PyJit *j) { return j->torch; }

/* A decorated definition's compiler, with the decorator in the reason. */
static const char *decorated_why(PyJit *j, TSNode outer) {
  if (!is(outer, "decorated_definition")) return NULL;
  const char *why = NULL;
  TSTreeCursor c = ts_tree_cursor_new(outer);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode d = ts_tree_cursor_current_node(&c);
      if (!is(d, "decorator")) continue;
      char *shown = NULL;
      const char *w = compiler_of(j, ts_node_named_child(d, 0), &shown);
      if (w) {
        const char *colon = strchr(w, ':');
        why = intern(j, xasprintf("%.*s (@%s)%s", (int)(colon - w), w, shown, colon));
        free(shown);
      }
    } while (!why && ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  return why;
}

const char *pyjit_why(PyJit *j, TSNode def) {
  for (TSNode n = def; !ts_node_is_null(n); n = ts_node_parent(n)) {
    bool fn = is(n, "function_definition");
    if (!fn && !is(n, "class_definition")) continue;
    TSNode up = ts_node_parent(n);
    const char *why = !ts_node_is_null(up) ? decorated_why(j, up) : NULL;
    if (why) return why;
    if (!j->calls.n) continue;
    /* a run-time compile names a function or class of the module (or a
     * local one), never a method */
    TSNode holder = ts_node_is_null(up) ? up : is(up, "decorated_definition") ? ts_node_parent(up) : up;
    if (!ts_node_is_null(holder) && is(holder, "block") && !ts_node_is_null(ts_node_parent(holder)) &&
        is(ts_node_parent(holder), "class_definition"))
      continue;
    TSNode nm = child_by_field(n, "name");
    uint32_t a = ts_node_start_byte(nm), b = ts_node_end_byte(nm);
    for (size_t i = 0; i < j->calls.n; i++)
      if (strlen(j->calls.v[i].name) == b - a && !memcmp(j->calls.v[i].name, j->src + a, b - a))
        return j->calls.v[i].why;
  }
  return NULL;
}
