/* ncrewrite._engine: the compiler core inside a Python process.
 *
 * The glue between CPython and the same C code the ncrewrite command runs
 * (ncbase, src/rewrite/base, rules and core, tree-sitter): rule files are
 * loaded by rules_load/rules_parse, the targets that name a module are found
 * by targets.c's resolver (rules_targets_naming), and a module is rewritten
 * by the core's per-file pipeline, rewrite_run (rewrite_file, edits_apply,
 * the rules' misses), exactly as `ncrewrite --file` does it
 * (driver/onefile.c).
 * Nothing here matches or rewrites anything itself.
 *
 * Stable ABI (Py_LIMITED_API 0x03090000): one build imports on every
 * CPython >= 3.9 (file name _engine.abi3.so).
 *
 * The engine ends its process on out-of-memory and on broken invariants
 * unless a fatal handler is set (ncbase.h): this module sets one that
 * longjmps back to the entry point that called the engine, which raises
 * ncrewrite._engine.EngineError (tree-sitter's allocations go through
 * ncbase as well: see PyInit__engine). What that call had allocated is leaked (it
 * cannot be found any more); the interpreter lives on. The jump target is
 * per thread: rewrite() runs without the GIL, so threads may rewrite at
 * once (the rules are read-only once loaded, as in the driver's workers).
 *
 * Python API (the pure-Python package wraps it; see docs/python.md):
 *   version                      the engine's version (NC_VERSION)
 *   load(path) -> Rules          a rule file, YAML or JSON
 *   parse(text, name) -> Rules   rule text; `name` is the path diagnostics
 *                                show (".json" at its end: JSON)
 *   RulesError(ValueError)       args[0]: the engine's diagnostics, each at
 *                                file:line:col with the line and a caret
 *   EngineError(RuntimeError)    out of memory or an internal error
 *   Rules.warnings               diagnostics of a load that succeeded
 *   Rules.full_trace, .digest    full_trace_mode; FNV-1a digest of the text
 *   Rules.targets()              [(key, filePath|None, full_trace, path_glob)]
 *   Rules.lookup(module, is_package, root=None) -> 0, 1 or 2
 *        1: a target names the module (targets.c, as a tree run with SRC =
 *        root, the sys.path entry it was found under); 2: no target does,
 *        but full trace applies to every file (full_trace_mode with no
 *        targets); 0: the rules leave it alone
 *   Rules.rewrite(module, is_package, path, source, root=None)
 *        -> (text|None, warnings, ranges, line_map)
 *        text: the instrumented source (bytes), None when nothing changed;
 *        warnings: the diagnostics (rule misses at their rule, file notes
 *        at path:line:col); ranges: [(name, kind, line0, line1)];
 *        line_map: [(original line, delta)]: from that line on, output
 *        line = original + delta (edits.h's LineMap)
 *   yaml_tree(text, name) -> node   YAML or JSON (".json" name) read by the
 *        rule files' reader (ruledoc.c): node = (kind, line, col, value),
 *        kind "map" (value: [(key node, value node)]), "seq" ([node]) or
 *        "scalar" ((text, quoted, null)); None for an empty document;
 *        RulesError with the positioned diagnostic on a syntax error
 *   diagnostic(name, text, line, col, level, message) -> str
 *        the engine's rendering (diag.c): name:line:col: level: message,
 *        the source line and a caret; level "error", "warning" or "note"
 *   run_tool(argv) -> (status, stdout, stderr)
 *        one command of the nctrace or ncrewrite programs, in this process:
 *        argv[0] "nctrace" (summary, filter, merge, kernels, diff: not report,
 *        whose page assets only the CMake build makes) or
 *        "ncrewrite" (feedback, drill, prune, config), argv[1] the command;
 *        the very functions the programs' main() dispatch to. What they
 *        print on file descriptors 1 and 2 is captured and returned (the
 *        descriptors are redirected for the call, with the GIL held: other
 *        Python threads' output cannot slip in; C threads' could). */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include <fcntl.h>
#include <unistd.h>

#include "commands.h"
#include "ncbase.h"
#include "rewrite.h"
#include "ruledoc.h"
#include "rules.h"

static PyObject *RulesError, *EngineError;

/* ---- the fatal handler: a jump back to the entry point ---- */

static __thread jmp_buf *fatal_jump;
static __thread char fatal_msg[512];

static void on_fatal(const char *msg, void *ctx) {
  (void)ctx;
  if (!fatal_jump) return; /* not inside an engine call: ncbase ends the process */
  snprintf(fatal_msg, sizeof fatal_msg, "%s", msg);
  longjmp(*fatal_jump, 1);
}

/* ENGINE_GUARD(jb, on_fail) opens a guarded region (ENGINE_UNGUARD closes
 * it): a fatal error inside jumps
 * back here, runs on_fail (with the GIL) and raises EngineError. */
#define ENGINE_GUARD(jb, on_fail) \
  jmp_buf jb; \
  jmp_buf *volatile prev_##jb = fatal_jump; \
  if (setjmp(jb)) { \
    fatal_jump = prev_##jb; \
    on_fail; \
    PyErr_Format(EngineError, "ncrewrite engine: %s", fatal_msg); \
    return NULL; \
  } \
  fatal_jump = &jb
#define ENGINE_UNGUARD(jb) (fatal_jump = prev_##jb)

/* ---- Rules ---- */

typedef struct {
  PyObject_HEAD
  Rules rules;
  char *warnings;
} RulesObject;

static PyTypeObject *RulesType;

static void rules_dealloc(PyObject *self) {
  RulesObject *o = (RulesObject *)self;
  rules_free(&o->rules);
  free(o->warnings);
  PyTypeObject *tp = Py_TYPE(self);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

/* A loaded rule set, or RulesError with the diagnostics. */
static PyObject *rules_result(RulesObject *o, int rc, Diags *d) {
  if (rc < 0 || d->errors) {
    PyObject *msg = PyUnicode_DecodeUTF8(d->text.s ? d->text.s : "", (Py_ssize_t)d->text.len, "replace");
    diags_free(d);
    Py_DECREF(o);
    if (msg) {
      PyErr_SetObject(RulesError, msg);
      Py_DECREF(msg);
    }
    return NULL;
  }
  o->warnings = xstrdup(d->text.s ? d->text.s : "");
  diags_free(d);
  return (PyObject *)o;
}

static RulesObject *rules_new(void) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(RulesType, Py_tp_alloc);
  RulesObject *o = (RulesObject *)alloc(RulesType, 0);
  if (o) memset(&o->rules, 0, sizeof o->rules), o->warnings = NULL;
  return o;
}

static PyObject *eng_load(PyObject *mod, PyObject *arg) {
  PyObject *bpath;
  if (!PyUnicode_FSConverter(arg, &bpath)) return NULL;
  RulesObject *o = rules_new();
  if (!o) {
    Py_DECREF(bpath);
    return NULL;
  }
  Diags d = {0};
  ENGINE_GUARD(jb, Py_DECREF(bpath));
  int rc = rules_load(&o->rules, PyBytes_AsString(bpath), &d);
  ENGINE_UNGUARD(jb);
  Py_DECREF(bpath);
  return rules_result(o, rc, &d);
}

static PyObject *eng_parse(PyObject *mod, PyObject *args) {
  const char *text, *name;
  Py_ssize_t len;
  if (!PyArg_ParseTuple(args, "s#s:parse", &text, &len, &name)) return NULL;
  RulesObject *o = rules_new();
  if (!o) return NULL;
  Diags d = {0};
  ENGINE_GUARD(jb, (void)0);
  int rc = rules_parse(&o->rules, name, text, (size_t)len, &d);
  ENGINE_UNGUARD(jb);
  return rules_result(o, rc, &d);
}

static PyObject *str_or_none(const char *s) {
  if (!s) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static PyObject *rules_targets(PyObject *self, PyObject *unused) {
  RulesObject *o = (RulesObject *)self;
  PyObject *list = PyList_New(0);
  for (size_t i = 0; list && i < o->rules.targets.n; i++) {
    const Target *t = &o->rules.targets.v[i];
    PyObject *key = str_or_none(t->key), *fp = key ? str_or_none(t->file_path) : NULL;
    PyObject *tup = fp ? Py_BuildValue("(OOOO)", key, fp, t->full_trace ? Py_True : Py_False,
                                       t->path_glob ? Py_True : Py_False)
                       : NULL;
    Py_XDECREF(key), Py_XDECREF(fp);
    if (!tup || PyList_Append(list, tup) < 0) Py_CLEAR(list);
    Py_XDECREF(tup);
  }
  return list;
}

static PyObject *rules_get_warnings(PyObject *self, void *c) {
  return str_or_none(((RulesObject *)self)->warnings);
}
static PyObject *rules_get_full_trace(PyObject *self, void *c) {
  return PyBool_FromLong(((RulesObject *)self)->rules.full_trace);
}
static PyObject *rules_get_digest(PyObject *self, void *c) {
  return PyLong_FromUnsignedLongLong(((RulesObject *)self)->rules.digest);
}

/* ---- which targets name a module ---- */

/* The path a tree run with SRC = the module's sys.path entry would see:
 * pkg/mod.py, or pkg/__init__.py for a package. NULL for a name that is
 * not a dotted identifier path. */
static char *rel_of_module(const char *module, int is_package) {
  if (!*module || module[0] == '.' || strstr(module, "..") || strchr(module, '/') || module[strlen(module) - 1] == '.')
    return NULL;
  char *rel = xasprintf("%s%s", module, is_package ? "/__init__.py" : ".py");
  for (char *p = rel; *p && strcmp(p, "/__init__.py") && strcmp(p, ".py"); p++)
    if (*p == '.') *p = '/';
  return rel;
}

static char *real_root(const char *root) {
  return root ? realpath(root, NULL) : NULL;
}

static PyObject *rules_lookup(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"module", "is_package", "root", NULL};
  const char *module, *root = NULL;
  int is_package;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sp|z:lookup", kwlist, &module, &is_package, &root)) return NULL;
  RulesObject *o = (RulesObject *)self;
  TargetList tgs = {0};
  char *rel = NULL, *rr = NULL;
  ENGINE_GUARD(jb, (void)0);
  rel = rel_of_module(module, is_package);
  int what = 0;
  if (rel) {
    rr = real_root(root);
    rules_targets_naming(&o->rules, rel, rr, &tgs);
    what = tgs.n ? 1 : rules_full_trace(&o->rules, false, NULL, 0) ? 2 : 0;
  }
  ENGINE_UNGUARD(jb);
  vec_free(&tgs);
  free(rel), free(rr);
  return PyLong_FromLong(what);
}

/* ---- rewrite one module ---- */

typedef struct {
  Buf out;
  LineMap map;
  Diags diags;
  FileJob job;
  TargetList tgs;
  RuleResults results;
  void *parser;
  char *rel, *rr;
  int changed;
  int bad_rel;
} Work;

static void work_free(Work *w) {
  buf_free(&w->out);
  linemap_free(&w->map);
  diags_free(&w->diags);
  filejob_free(&w->job);
  job_parser_free(w->parser);
  vec_free(&w->tgs);
  rule_results_free(&w->results);
  free(w->rel), free(w->rr);
}

/* onefile_run without the files: the targets naming the module, then the
 * core's per-file pipeline (rewrite_run), then the misses of their rules. */
static void rewrite_one(Work *w, const Rules *rules, const char *module, int is_package, const char *path,
                        const char *src, size_t len, const char *root) {
  w->rel = rel_of_module(module, is_package);
  if (!w->rel) {
    w->bad_rel = 1;
    return;
  }
  w->rr = real_root(root);
  rules_targets_naming(rules, w->rel, w->rr, &w->tgs);
  filejob_init(&w->job, rules, w->rel, path, src, len, w->tgs.v, w->tgs.n);
  /* the module's name comes from rel; diagnostics and messages name the file */
  w->job.rel = path;
  filejob_full_trace(&w->job, false, 0);
  w->job.parser = &w->parser;
  w->changed = rewrite_run(&w->job, &w->out, &w->map, &w->results) == 1;
  rule_results_warn(rules, &w->results, &w->diags);
  diags_append(&w->diags, &w->job.diags);
  if (w->diags.errors) w->changed = 0;
}

static PyObject *rules_rewrite(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"module", "is_package", "path", "source", "root", NULL};
  const char *module, *path, *root = NULL;
  int is_package;
  PyObject *source;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "spsS|z:rewrite", kwlist, &module, &is_package, &path, &source, &root))
    return NULL;
  char *src;
  Py_ssize_t len;
  if (PyBytes_AsStringAndSize(source, &src, &len) < 0) return NULL;
  RulesObject *o = (RulesObject *)self;
  Work w;
  memset(&w, 0, sizeof w);
  Py_INCREF(source); /* bytes are immutable; kept alive while the GIL is released */
  PyThreadState *ts = PyEval_SaveThread();
  ENGINE_GUARD(jb, (PyEval_RestoreThread(ts), Py_DECREF(source)));
  rewrite_one(&w, &o->rules, module, is_package, path, src, (size_t)len, root);
  ENGINE_UNGUARD(jb);
  PyEval_RestoreThread(ts);

  PyObject *res = NULL, *text = NULL, *warn = NULL, *ranges = NULL, *map = NULL;
  if (w.bad_rel) {
    PyErr_Format(PyExc_ValueError, "not a module name: '%s'", module);
    goto done;
  }
  if (w.changed) text = PyBytes_FromStringAndSize(w.out.s, (Py_ssize_t)w.out.len);
  else text = Py_None, Py_INCREF(Py_None);
  warn = PyUnicode_DecodeUTF8(w.diags.text.s ? w.diags.text.s : "", (Py_ssize_t)w.diags.text.len, "replace");
  ranges = PyList_New(0);
  map = PyList_New(0);
  if (!text || !warn || !ranges || !map) goto done;
  for (size_t i = 0; w.changed && i < w.job.ranges.n; i++) {
    const RangeRec *r = &w.job.ranges.v[i];
    PyObject *t = Py_BuildValue("(ssii)", r->name, r->kind, r->line0, r->line1);
    if (!t || PyList_Append(ranges, t) < 0) {
      Py_XDECREF(t);
      goto done;
    }
    Py_DECREF(t);
  }
  for (size_t i = 0; w.changed && i < w.map.v.n; i++) {
    PyObject *t = Py_BuildValue("(ii)", w.map.v.v[i].orig, w.map.v.v[i].delta);
    if (!t || PyList_Append(map, t) < 0) {
      Py_XDECREF(t);
      goto done;
    }
    Py_DECREF(t);
  }
  res = PyTuple_Pack(4, text, warn, ranges, map);
done:
  Py_XDECREF(text), Py_XDECREF(warn), Py_XDECREF(ranges), Py_XDECREF(map);
  Py_DECREF(source);
  work_free(&w);
  return res;
}

static PyMethodDef rules_methods[] = {
  {"targets", rules_targets, METH_NOARGS, "[(key, filePath, full_trace, path_glob)] of the rule file"},
  {"lookup", (PyCFunction)(void (*)(void))rules_lookup, METH_VARARGS | METH_KEYWORDS,
   "lookup(module, is_package, root=None) -> 1 (a target names it), 2 (full trace everywhere), 0"},
  {"rewrite", (PyCFunction)(void (*)(void))rules_rewrite, METH_VARARGS | METH_KEYWORDS,
   "rewrite(module, is_package, path, source, root=None) -> (bytes|None, warnings, ranges, line_map)"},
  {NULL, NULL, 0, NULL},
};

static PyGetSetDef rules_getset[] = {
  {"warnings", rules_get_warnings, NULL, "diagnostics of the load (warnings only)", NULL},
  {"full_trace", rules_get_full_trace, NULL, "full_trace_mode at the top level", NULL},
  {"digest", rules_get_digest, NULL, "FNV-1a 64 of the rule text", NULL},
  {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot rules_slots[] = {
  {Py_tp_dealloc, rules_dealloc},
  {Py_tp_methods, rules_methods},
  {Py_tp_getset, rules_getset},
  {Py_tp_doc, "A loaded rule file (read-only; load() or parse() make one)."},
  {0, NULL},
};

static PyType_Spec rules_spec = {
  "ncrewrite._engine.Rules", sizeof(RulesObject), 0, Py_TPFLAGS_DEFAULT, rules_slots,
};

/* ---- YAML and diagnostics for the package's own files (profiling:) ---- */

static PyObject *node_obj(const RNode *n, int depth) {
  if (depth > 200) {
    PyErr_SetString(RulesError, "YAML nested too deeply");
    return NULL;
  }
  PyObject *v = NULL;
  const char *kind = n->kind == RN_MAP ? "map" : n->kind == RN_SEQ ? "seq" : "scalar";
  if (n->kind == RN_SCALAR) {
    v = Py_BuildValue("(sNN)", n->str ? n->str : "", PyBool_FromLong(n->quoted), PyBool_FromLong(n->null));
  } else {
    v = PyList_New(0);
    size_t step = n->kind == RN_MAP ? 2 : 1;
    for (size_t i = 0; v && i + step <= n->n; i += step) {
      PyObject *item;
      if (step == 2) {
        PyObject *k = node_obj(n->items[i], depth + 1), *val = k ? node_obj(n->items[i + 1], depth + 1) : NULL;
        item = k && val ? PyTuple_Pack(2, k, val) : NULL;
        Py_XDECREF(k);
        Py_XDECREF(val);
      } else {
        item = node_obj(n->items[i], depth + 1);
      }
      if (!item || PyList_Append(v, item) < 0) Py_CLEAR(v);
      Py_XDECREF(item);
    }
  }
  if (!v) return NULL;
  return Py_BuildValue("(siiN)", kind, n->line, n->col, v);
}

static PyObject *eng_yaml_tree(PyObject *mod, PyObject *args) {
  const char *text, *name;
  Py_ssize_t len;
  if (!PyArg_ParseTuple(args, "s#s", &text, &len, &name)) return NULL;
  RuleDoc doc;
  memset(&doc, 0, sizeof doc);
  Diags d = {0};
  PyObject *res;
  {
    ENGINE_GUARD(jb, diags_free(&d));
    int rc = ruledoc_parse(&doc, name, text, (size_t)len, &d);
    ENGINE_UNGUARD(jb);
    if (rc < 0) {
      PyErr_SetString(RulesError, d.text.s ? d.text.s : "cannot read the YAML");
      res = NULL;
    } else {
      res = doc.root ? node_obj(doc.root, 0) : (Py_INCREF(Py_None), Py_None);
    }
  }
  ruledoc_free(&doc);
  diags_free(&d);
  return res;
}

static PyObject *eng_diagnostic(PyObject *mod, PyObject *args) {
  const char *name, *text, *level, *msg;
  Py_ssize_t len;
  int line, col;
  if (!PyArg_ParseTuple(args, "sz#iiss", &name, &text, &len, &line, &col, &level, &msg)) return NULL;
  DiagLevel lvl = !strcmp(level, "warning") ? DIAG_WARNING : !strcmp(level, "note") ? DIAG_NOTE : DIAG_ERROR;
  Diags d = {0};
  diag_at(&d, lvl, name, text, text ? (size_t)len : 0, line, col, "%s", msg);
  PyObject *o = PyUnicode_DecodeUTF8(d.text.s ? d.text.s : "", (Py_ssize_t)d.text.len, "replace");
  diags_free(&d);
  return o;
}

/* ---- the programs' commands ---- */

typedef int (*SubcommandFn)(int argc, char **argv); /* tools/subcommands.h: ncrewrite's one table */
SubcommandFn subcommand_find(const char *name);

/* The commands the package's API runs, found through each program's own
 * table (nctrace's cli/commands.c, ncrewrite's tools/subcommands.c): the
 * rest (nctrace report, ncrewrite export-nsys) has no API here. */
static const char *const trace_tools[] = {"summary", "filter", "merge", "kernels", "diff"};
static const char *const rewrite_tools[] = {"feedback", "drill", "prune", "config"};

int nct_error(const char *fmt, ...); /* trace core's util.h (its name clashes with the rewriter's) */

/* nctrace's table names report, whose page assets only the CMake build
 * makes: the engine leaves report.c out, and this stands in for it */
int cmd_report(int argc, char **argv) {
  (void)argc;
  (void)argv;
  nct_error("report is not in the Python package's engine: run the nctrace program");
  return 2;
}

extern void (*nct_say)(const char *level, const char *where, const char *msg); /* trace core's util.h */
void progress_say(const char *level, const char *where, const char *msg);      /* cli/progress.h */

/* The bytes of a captured descriptor's file, from its start. */
static PyObject *slurp(int fd) {
  off_t n = lseek(fd, 0, SEEK_END);
  if (n < 0) n = 0;
  char *buf = malloc((size_t)n + 1);
  if (!buf) return PyErr_NoMemory();
  ssize_t got = n ? pread(fd, buf, (size_t)n, 0) : 0;
  PyObject *o = PyUnicode_DecodeUTF8(buf, got > 0 ? got : 0, "replace");
  free(buf);
  return o;
}

static PyObject *eng_run_tool(PyObject *mod, PyObject *arg) {
  if (!PyList_Check(arg) || PyList_Size(arg) < 2) {
    PyErr_SetString(PyExc_TypeError, "run_tool wants a list: [program, command, args...]");
    return NULL;
  }
  Py_ssize_t n = PyList_Size(arg);
  char **argv = calloc((size_t)n + 1, sizeof *argv);
  if (!argv) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *b;
    if (!PyUnicode_FSConverter(PyList_GetItem(arg, i), &b)) {
      for (Py_ssize_t k = 0; k < i; k++) free(argv[k]);
      free(argv);
      return NULL;
    }
    argv[i] = strdup(PyBytes_AsString(b));
    Py_DECREF(b);
  }
  int (*fn)(int, char **) = NULL;
  for (size_t i = 0; !strcmp(argv[0], "nctrace") && i < sizeof trace_tools / sizeof *trace_tools; i++)
    if (!strcmp(argv[1], trace_tools[i])) fn = command_find(argv[1])->run;
  for (size_t i = 0; !fn && !strcmp(argv[0], "ncrewrite") && i < sizeof rewrite_tools / sizeof *rewrite_tools; i++)
    if (!strcmp(argv[1], rewrite_tools[i])) fn = subcommand_find(argv[1]);
  PyObject *res = NULL;
  char out_path[] = "/tmp/ncrewrite-out-XXXXXX", err_path[] = "/tmp/ncrewrite-err-XXXXXX";
  int out = -1, err = -1, save1 = -1, save2 = -1;
  if (!fn) {
    PyErr_Format(PyExc_ValueError, "run_tool: no command '%s %s'", argv[0], argv[1]);
    goto done;
  }
  out = mkstemp(out_path);
  err = mkstemp(err_path);
  if (out < 0 || err < 0) {
    PyErr_SetFromErrno(PyExc_OSError);
    goto done;
  }
  unlink(out_path);
  unlink(err_path);
  fflush(stdout);
  fflush(stderr);
  save1 = dup(1);
  save2 = dup(2);
  if (save1 < 0 || save2 < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
    PyErr_SetFromErrno(PyExc_OSError);
    goto restore;
  }
  nct_say = progress_say; /* as nctrace prints them */
  int status;
  {
    ENGINE_GUARD(jb, (fflush(stdout), fflush(stderr), dup2(save1, 1), dup2(save2, 2), close(save1), close(save2),
                      close(out), close(err)));
    status = fn((int)n - 1, argv + 1);
    ENGINE_UNGUARD(jb);
  }
  fflush(stdout);
  fflush(stderr);
  res = Py_BuildValue("(iNN)", status, slurp(out), slurp(err));
restore:
  if (save1 >= 0) dup2(save1, 1), close(save1);
  if (save2 >= 0) dup2(save2, 2), close(save2);
done:
  if (out >= 0) close(out);
  if (err >= 0) close(err);
  for (Py_ssize_t i = 0; i < n; i++) free(argv[i]);
  free(argv);
  return res;
}

static PyMethodDef eng_methods[] = {
  {"yaml_tree", eng_yaml_tree, METH_VARARGS, "yaml_tree(text, name) -> (kind, line, col, value) or None"},
  {"diagnostic", eng_diagnostic, METH_VARARGS, "diagnostic(name, text, line, col, level, message) -> str"},
  {"run_tool", eng_run_tool, METH_O, "run_tool([program, command, args...]) -> (status, stdout, stderr)"},
  {"load", eng_load, METH_O, "load(path) -> Rules: a YAML or JSON rule file (RulesError with the diagnostics)"},
  {"parse", eng_parse, METH_VARARGS, "parse(text, name) -> Rules: rule text, diagnostics naming `name`"},
  {NULL, NULL, 0, NULL},
};

static struct PyModuleDef eng_module = {
  PyModuleDef_HEAD_INIT, "ncrewrite._engine", "The ncrewrite compiler core (C), for the import hook.", -1,
  eng_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__engine(void);
PyMODINIT_FUNC PyInit__engine(void) {
  PyObject *m = PyModule_Create(&eng_module);
  if (!m) return NULL;
  RulesError = PyErr_NewExceptionWithDoc("ncrewrite._engine.RulesError",
                                         "A rule file with errors; args[0] holds the engine's diagnostics.",
                                         PyExc_ValueError, NULL);
  EngineError = PyErr_NewExceptionWithDoc("ncrewrite._engine.EngineError",
                                          "The engine ran out of memory or broke an invariant.",
                                          PyExc_RuntimeError, NULL);
  RulesType = (PyTypeObject *)PyType_FromSpec(&rules_spec);
  if (!RulesError || !EngineError || !RulesType || PyModule_AddObject(m, "RulesError", RulesError) < 0) goto fail;
  Py_INCREF(RulesError);
  if (PyModule_AddObject(m, "EngineError", EngineError) < 0) goto fail;
  Py_INCREF(EngineError);
  if (PyModule_AddObject(m, "Rules", (PyObject *)RulesType) < 0) goto fail;
  Py_INCREF(RulesType);
  if (PyModule_AddStringConstant(m, "version", NC_VERSION) < 0) goto fail;
  /* from here on the engine raises instead of ending the interpreter; and
   * tree-sitter (which aborts when its own malloc fails) allocates through
   * ncbase too, so its failures take the same way out */
  nc_set_fatal_handler(on_fatal, NULL);
  ts_set_allocator(xmalloc, xcalloc, xrealloc, free);
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
