/* ncrtmodule.c: the ncrt Python module.
 *
 * Ranges call NVTX directly (domain "ncrt", registered strings), so they
 * show under libncrt and under nsys alike; without a tool each call is a
 * pointer test inside NVTX.
 *
 *   ncrt.range(name)        push/pop context manager, also a decorator
 *   ncrt.span(name)         start/end range: async code, generators, may
 *                           end on another thread
 *   ncrt.torch_range(name)  range + torch.profiler.record_function
 *   ncrt.torch_span(name)   span + torch.profiler.record_function
 *   ncrt.step(), ncrt.start(), ncrt.stop(), ncrt.mark(name)
 *
 * Each of the four range callables takes one positional argument (any
 * object; str() of it is the name) and returns a context manager: this is
 * the contract with the rewriter's output. Speed: range(name) returns one
 * cached object per name (push/pop keep no state in it), so `with
 * ncrt.range("x"):` costs a dict lookup and two NVTX calls. The torch bridge
 * is used when torch is already imported by the program or NCRT_TORCH=1,
 * and never imports torch on its own otherwise.
 *
 * The first time a name is seen, its source file and line (the caller's
 * frame; in a shadow tree the user's own, through the manifest: _where)
 * go to the collector as a control mark, so traces carry them.
 *
 * Built once per CPython minor version (3.9 and later: one file per
 * EXT_SUFFIX, see src/runtime/CMakeLists.txt), so only public API: frames
 * and code objects are read through PyFrame_* accessors and attributes,
 * never through struct fields.
 *
 * Decorators: @ncrt.range("x") and @ncrt.span("x") on a plain function
 * are a C wrapper (a GC-tracked object: it holds the function and, through
 * __dict__ and __wrapped__, can sit in reference cycles); the other forms
 * (torch_*, coroutine and generator functions) are Python functions made by
 * a small helper, GC-correct by construction.
 *
 * torch.jit.trace records every torch op called while it traces, and
 * record_function's enter/exit are ops: under tracing the torch bridge
 * opens no record_function (one call of torch._C._get_tracing_state(), on
 * the torch path only), so a traced graph is the one the code gives without
 * ncrt. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "ncrt_protocol.h"

static nvtxDomainHandle_t domain, control;
static PyObject *cache;      /* str -> RangeObject */
static PyObject *record_function; /* torch.profiler.record_function or NULL */
static int torch_checked, torch_forced;
static PyObject *async_wrap; /* Python helper: torch_* and coroutine/generator decorators */
static PyObject *where_fn;   /* Python helper: a shadow copy's location -> the user's */

#define CACHE_MAX 100000

/* ---- names ---- */

typedef struct {
  PyObject_HEAD
  nvtxEventAttributes_t attr;
  PyObject *name; /* str */
} RangeObject;

static void set_attr(nvtxEventAttributes_t *a, PyObject *name) {
  memset(a, 0, sizeof *a);
  a->version = NVTX_VERSION;
  a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  const char *s = PyUnicode_AsUTF8(name);
  if (!s) {
    PyErr_Clear();
    s = "?";
  }
  nvtxStringHandle_t h = nvtxDomainRegisterStringA(domain, s);
  if (h) {
    a->messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a->message.registered = h;
  } else {
    a->messageType = NVTX_MESSAGE_TYPE_ASCII;
    a->message.ascii = s; /* owned by the str, kept alive by the object */
  }
}

static void control_mark(const char *msg) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = msg;
  nvtxDomainMarkEx(control, &a);
}

static void tell_location(PyObject *name) {
  PyFrameObject *f = PyEval_GetFrame();
  if (!f) return;
  PyCodeObject *code = PyFrame_GetCode(f);
  PyObject *fname = code ? PyObject_GetAttrString((PyObject *)code, "co_filename") : NULL;
  const char *file = fname && PyUnicode_Check(fname) ? PyUnicode_AsUTF8(fname) : NULL;
  const char *n = PyUnicode_AsUTF8(name);
  int line = PyFrame_GetLineNumber(f);
  /* in a shadow tree, the user's own file and line (_where) */
  PyObject *orig = file && n && where_fn ? PyObject_CallFunction(where_fn, "Osi", fname, n, line) : NULL;
  if (orig && PyTuple_Check(orig) && PyTuple_GET_SIZE(orig) == 2) {
    const char *of = PyUnicode_Check(PyTuple_GET_ITEM(orig, 0)) ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(orig, 0)) : NULL;
    long ol = PyLong_Check(PyTuple_GET_ITEM(orig, 1)) ? PyLong_AsLong(PyTuple_GET_ITEM(orig, 1)) : -1;
    if (of && ol > 0) file = of, line = (int)ol;
  }
  PyErr_Clear();
  if (file && n) {
    PyObject *msg = PyUnicode_FromFormat(NCRT_LOC_PREFIX "%s\t%s\t%d", n, file, line);
    const char *m = msg ? PyUnicode_AsUTF8(msg) : NULL;
    if (m) control_mark(m);
    Py_XDECREF(msg);
  }
  PyErr_Clear();
  Py_XDECREF(orig);
  Py_XDECREF(fname);
  Py_XDECREF(code);
}

/* The first range on each thread names the OS thread after the Python
 * thread (threading.current_thread().name), so traces show "py-worker"
 * rather than "python3". One thread-local test per call after that. */
static __thread int thread_named;

static void name_thread(void) {
  thread_named = 1;
  PyObject *th = PyImport_ImportModule("threading");
  PyObject *cur = th ? PyObject_CallMethod(th, "current_thread", NULL) : NULL;
  PyObject *name = cur ? PyObject_GetAttrString(cur, "name") : NULL;
  const char *n = name ? PyUnicode_AsUTF8(name) : NULL;
  if (n) nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), n);
  Py_XDECREF(name);
  Py_XDECREF(cur);
  Py_XDECREF(th);
  PyErr_Clear();
}

/* Who this process is, told to the collector at the first range of each
 * process (after a fork too): a DataLoader or Pool worker is not a rank
 * (libncrt's RtProcess; nctrace groups such processes under their rank).
 * The first range in a worker runs inside the worker's loop, where torch
 * and multiprocessing have said what it is. */
static int role_told;
static PyObject *role_fn, *dist_fn; /* Python helpers _role, _dist */
static int dist_rank = -1;

static void tell_role(void) {
  role_told = 1;
  PyObject *r = role_fn ? PyObject_CallNoArgs(role_fn) : NULL;
  if (r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
    PyObject *msg = PyUnicode_FromFormat(NCRT_ROLE_PREFIX "%S\t%S", PyTuple_GET_ITEM(r, 0), PyTuple_GET_ITEM(r, 1));
    const char *m = msg ? PyUnicode_AsUTF8(msg) : NULL;
    if (m) control_mark(m);
    Py_XDECREF(msg);
  }
  Py_XDECREF(r);
  PyErr_Clear();
}

/* torch.distributed, once initialized, names the rank (an mp.spawn child
 * has no RANK variable): asked at each step, at a process's first range,
 * when a range name is new, just before destroy_process_group (which the
 * helper wraps) and at exit. A forked child (a DataLoader worker) that
 * inherited its parent's group says so: it is a helper of that rank. */
static void tell_rank(void) {
  PyObject *r = dist_fn ? PyObject_CallNoArgs(dist_fn) : NULL;
  if (r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 4) {
    long rank = PyLong_AsLong(PyTuple_GET_ITEM(r, 0)), world = PyLong_AsLong(PyTuple_GET_ITEM(r, 1));
    int inherited = PyObject_IsTrue(PyTuple_GET_ITEM(r, 2)) == 1;
    const char *backend = PyUnicode_Check(PyTuple_GET_ITEM(r, 3)) ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(r, 3)) : NULL;
    if (rank >= 0 && rank != dist_rank) {
      dist_rank = (int)rank;
      char m[128];
      snprintf(m, sizeof m, NCRT_RANK_PREFIX "%ld\t%ld\t%s\t%.15s", rank, world,
               inherited ? NCRT_RANK_INHERITED : "torch.distributed", backend ? backend : "");
      control_mark(m);
    }
  }
  Py_XDECREF(r);
  PyErr_Clear();
}

static void role_after_fork(void) {
  role_told = 0;
  dist_rank = -1;
}

static PyObject *as_name(PyObject *arg) {
  if (PyUnicode_CheckExact(arg)) {
    Py_INCREF(arg);
    return arg;
  }
  return PyObject_Str(arg);
}

/* ---- Range: push/pop, one shared object per name ---- */

static PyTypeObject RangeType, SpanType, WrapperType;

static PyObject *range_enter(RangeObject *self, PyObject *unused) {
  nvtxDomainRangePushEx(domain, &self->attr);
  Py_INCREF(self);
  return (PyObject *)self;
}

static PyObject *range_exit(RangeObject *self, PyObject *const *args, Py_ssize_t n) {
  nvtxDomainRangePop(domain);
  Py_RETURN_FALSE;
}

static RangeObject *range_get(PyObject *arg) {
  if (__builtin_expect(!thread_named, 0)) name_thread();
  if (__builtin_expect(!role_told, 0)) {
    tell_role();
    tell_rank();
  }
  PyObject *key = as_name(arg);
  if (!key) return NULL;
  RangeObject *r = (RangeObject *)PyDict_GetItemWithError(cache, key);
  if (r) {
    Py_INCREF(r);
    Py_DECREF(key);
    return r;
  }
  if (PyErr_Occurred()) {
    Py_DECREF(key);
    return NULL;
  }
  r = PyObject_New(RangeObject, &RangeType);
  if (!r) {
    Py_DECREF(key);
    return NULL;
  }
  r->name = key; /* reference moves into the object */
  set_attr(&r->attr, key);
  tell_location(key);
  if (dist_rank < 0) tell_rank(); /* once per new name: init_process_group may have run since */
  if (PyDict_GET_SIZE(cache) < CACHE_MAX && PyDict_SetItem(cache, key, (PyObject *)r) < 0) {
    Py_DECREF(r);
    return NULL;
  }
  return r;
}

/* RangeObject holds only its name (a str): it can be in no cycle, so it is
 * not a GC type. */
static void range_dealloc(RangeObject *self) {
  Py_XDECREF(self->name);
  PyObject_Free(self);
}

/* ---- decorators ---- */

/* The kinds of range a decorator makes; the helper is given the module's
 * own callables for them (sync, and async for coroutine/generator life). */
enum { K_RANGE, K_SPAN, K_TORCH_RANGE, K_TORCH_SPAN, K_N };
static PyObject *kind_fn[K_N]; /* ncrt.range, ncrt.span, ncrt.torch_range, ncrt.torch_span */

static int is_async_or_gen(PyObject *fn) {
  PyObject *code = PyObject_GetAttrString(fn, "__code__");
  if (!code) {
    PyErr_Clear();
    return 0;
  }
  long flags = 0;
  if (PyCode_Check(code)) {
    PyObject *f = PyObject_GetAttrString(code, "co_flags");
    flags = f && PyLong_Check(f) ? PyLong_AsLong(f) : 0;
    Py_XDECREF(f);
    PyErr_Clear();
  }
  Py_DECREF(code);
  return (flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) != 0;
}

typedef struct {
  PyObject_HEAD
  PyObject *fn;
  RangeObject *range;
  PyObject *dict;
  PyObject *weakrefs;
  vectorcallfunc vectorcall;
  int span; /* 1: start/end around each call (@ncrt.span), 0: push/pop */
} WrapperObject;

static PyObject *wrapper_vcall(WrapperObject *w, PyObject *const *args, size_t nargsf, PyObject *kw) {
  if (__builtin_expect(!w->fn, 0)) {
    /* only after tp_clear, i.e. while its cycle is being collected */
    PyErr_SetString(PyExc_ReferenceError, "ncrt: this decorated function is being garbage-collected");
    return NULL;
  }
  if (w->span) {
    nvtxRangeId_t id = nvtxDomainRangeStartEx(domain, &w->range->attr);
    PyObject *r = PyObject_Vectorcall(w->fn, args, nargsf, kw);
    nvtxDomainRangeEnd(domain, id);
    return r;
  }
  nvtxDomainRangePushEx(domain, &w->range->attr);
  PyObject *r = PyObject_Vectorcall(w->fn, args, nargsf, kw);
  nvtxDomainRangePop(domain);
  return r;
}

static PyObject *helper_wrap(PyObject *name, PyObject *fn, int kind) {
  int torch = kind == K_TORCH_RANGE || kind == K_TORCH_SPAN;
  return PyObject_CallFunctionObjArgs(async_wrap, name, fn, kind_fn[kind], kind_fn[torch ? K_TORCH_SPAN : K_SPAN],
                                      is_async_or_gen(fn) ? Py_True : Py_False, NULL);
}

/* @ncrt.range("x") / @ncrt.span("x") on a plain function: push/pop or
 * start/end around each call, a C wrapper (it adds no recursion level).
 * The torch kinds, and coroutine and generator functions (which suspend,
 * and may resume on another thread: a span around their whole life), go to
 * the Python helper. */
static PyObject *decorate(RangeObject *range, int kind, PyObject *args, PyObject *kw) {
  PyObject *fn;
  if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, "O:range decorator", &fn)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "ncrt.range(name) decorates one function");
    return NULL;
  }
  if ((kind != K_RANGE && kind != K_SPAN) || is_async_or_gen(fn)) return helper_wrap(range->name, fn, kind);
  WrapperObject *w = PyObject_GC_New(WrapperObject, &WrapperType);
  if (!w) return NULL;
  Py_INCREF(fn);
  Py_INCREF(range);
  w->fn = fn;
  w->range = range;
  w->dict = NULL;
  w->weakrefs = NULL;
  w->vectorcall = (vectorcallfunc)wrapper_vcall;
  w->span = kind == K_SPAN;
  PyObject_GC_Track((PyObject *)w); /* every field set: the collector may look now */
  /* functools.update_wrapper: __wrapped__, __name__, __qualname__, __doc__,
   * __module__ and the function's __dict__ */
  PyObject *ft = PyImport_ImportModule("functools");
  PyObject *res = ft ? PyObject_CallMethod(ft, "update_wrapper", "OO", (PyObject *)w, fn) : NULL;
  Py_XDECREF(ft);
  if (!res) PyErr_Clear();
  Py_XDECREF(res);
  return (PyObject *)w;
}

static PyObject *range_call(RangeObject *self, PyObject *args, PyObject *kw) {
  return decorate(self, K_RANGE, args, kw);
}

static PyObject *range_repr(RangeObject *self) { return PyUnicode_FromFormat("ncrt.range(%R)", self->name); }

static PyMethodDef range_methods[] = {
    {"__enter__", (PyCFunction)range_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))range_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject RangeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ncrt.Range",
    .tp_basicsize = sizeof(RangeObject),
    .tp_dealloc = (destructor)range_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = range_methods,
    .tp_call = (ternaryfunc)range_call,
    .tp_repr = (reprfunc)range_repr,
    .tp_doc = "A push/pop NVTX range: a context manager and a decorator.",
};

/* ---- Wrapper: a function decorated by @ncrt.range or @ncrt.span ---- */

static int wrapper_traverse(WrapperObject *w, visitproc visit, void *arg) {
  Py_VISIT(w->fn);
  Py_VISIT(w->range);
  Py_VISIT(w->dict);
  return 0;
}
static int wrapper_clear(WrapperObject *w) {
  Py_CLEAR(w->dict);
  Py_CLEAR(w->fn);
  /* the range stays: it holds no references but its name, and a call after
   * clearing is refused before it is read */
  return 0;
}
static void wrapper_dealloc(WrapperObject *w) {
  PyObject_GC_UnTrack(w);
  if (w->weakrefs) PyObject_ClearWeakRefs((PyObject *)w);
  wrapper_clear(w);
  Py_CLEAR(w->range);
  PyObject_GC_Del(w);
}
static PyObject *wrapper_get(PyObject *self, PyObject *obj, PyObject *type) {
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}
static PyObject *wrapper_repr(WrapperObject *w) {
  return PyUnicode_FromFormat(w->span ? "<ncrt.span(%R) of %R>" : "<ncrt.range(%R) of %R>",
                              w->range ? w->range->name : Py_None, w->fn ? w->fn : Py_None);
}

static PyGetSetDef wrapper_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL}, {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject WrapperType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ncrt.RangeFunction",
    .tp_basicsize = sizeof(WrapperObject),
    .tp_dealloc = (destructor)wrapper_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = (traverseproc)wrapper_traverse,
    .tp_clear = (inquiry)wrapper_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(WrapperObject, vectorcall),
    .tp_descr_get = wrapper_get,
    .tp_dictoffset = offsetof(WrapperObject, dict),
    .tp_weaklistoffset = offsetof(WrapperObject, weakrefs),
    .tp_getset = wrapper_getset,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_repr = (reprfunc)wrapper_repr,
};

/* ---- Span: start/end, and the torch bridges ---- */

typedef struct {
  PyObject_HEAD
  nvtxRangeId_t id;
  RangeObject *range;
  PyObject *rf;   /* record_function instance, or NULL */
  char push;      /* 1: push/pop (torch_range), 0: start/end */
  char started;
  char kind;      /* K_*: what a decorator made from it does */
} SpanObject;

static PyObject *tracing_state; /* torch._C._get_tracing_state, or NULL */

static int torch_on(void) {
  if (record_function) return 1;
  if (torch_checked && !torch_forced) {
    /* torch may have been imported since: look again, cheaply */
    PyObject *mods = PyImport_GetModuleDict();
    if (!PyDict_GetItemString(mods, "torch")) return 0;
  }
  torch_checked = 1;
  PyObject *mods = PyImport_GetModuleDict();
  if (!torch_forced && !PyDict_GetItemString(mods, "torch")) return 0;
  PyObject *prof = PyImport_ImportModule("torch.profiler");
  if (!prof) {
    PyErr_Clear();
    torch_forced = 0;
    return 0;
  }
  record_function = PyObject_GetAttrString(prof, "record_function");
  Py_DECREF(prof);
  if (!record_function) {
    PyErr_Clear();
    return 0;
  }
  PyObject *tc = PyImport_ImportModule("torch._C");
  tracing_state = tc ? PyObject_GetAttrString(tc, "_get_tracing_state") : NULL;
  Py_XDECREF(tc);
  PyErr_Clear();
  return 1;
}

/* torch.jit.trace in progress: record_function's ops would be traced into
 * the graph, so the bridge stays out (NVTX ranges are not ops: kept). */
static int torch_tracing(void) {
  if (!tracing_state) return 0;
  PyObject *st = PyObject_CallNoArgs(tracing_state);
  if (!st) {
    PyErr_Clear();
    return 0;
  }
  int on = st != Py_None;
  Py_DECREF(st);
  return on;
}

static PyObject *span_new(PyObject *arg, int push, int torch, int kind) {
  RangeObject *r = range_get(arg);
  if (!r) return NULL;
  SpanObject *s = PyObject_New(SpanObject, &SpanType);
  if (!s) {
    Py_DECREF(r);
    return NULL;
  }
  s->range = r;
  s->id = 0;
  s->rf = NULL;
  s->push = (char)push;
  s->started = 0;
  s->kind = (char)kind;
  if (torch && torch_on() && !torch_tracing()) {
    s->rf = PyObject_CallOneArg(record_function, r->name);
    if (!s->rf) {
      PyErr_Clear();
    }
  }
  return (PyObject *)s;
}

static PyObject *span_enter(SpanObject *s, PyObject *unused) {
  if (s->push) nvtxDomainRangePushEx(domain, &s->range->attr);
  else s->id = nvtxDomainRangeStartEx(domain, &s->range->attr);
  s->started = 1;
  if (s->rf) {
    PyObject *r = PyObject_CallMethod(s->rf, "__enter__", NULL);
    if (!r) PyErr_Clear();
    Py_XDECREF(r);
  }
  Py_INCREF(s);
  return (PyObject *)s;
}

static PyObject *span_exit(SpanObject *s, PyObject *const *args, Py_ssize_t n) {
  if (s->rf) {
    PyObject *r = PyObject_CallMethod(s->rf, "__exit__", "OOO", Py_None, Py_None, Py_None);
    if (!r) PyErr_Clear();
    Py_XDECREF(r);
  }
  if (s->started) {
    if (s->push) nvtxDomainRangePop(domain);
    else nvtxDomainRangeEnd(domain, s->id);
    s->started = 0;
  }
  Py_RETURN_FALSE;
}

static PyObject *span_call(SpanObject *s, PyObject *args, PyObject *kw) {
  /* @ncrt.span("x"), @ncrt.torch_range("x"), ... as decorators */
  return decorate(s->range, s->kind, args, kw);
}

static void span_dealloc(SpanObject *s) {
  Py_XDECREF(s->range);
  Py_XDECREF(s->rf);
  PyObject_Free(s);
}

static PyMethodDef span_methods[] = {
    {"__enter__", (PyCFunction)span_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))span_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

/* Not a GC type: a span holds its range and a record_function instance,
 * neither of which can lead back to it. */
static PyTypeObject SpanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ncrt.Span",
    .tp_basicsize = sizeof(SpanObject),
    .tp_dealloc = (destructor)span_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = span_methods,
    .tp_call = (ternaryfunc)span_call,
    .tp_doc = "A start/end NVTX range (may end on another thread), optionally with record_function.",
};

/* ---- module functions ---- */

static PyObject *m_range(PyObject *mod, PyObject *arg) {
  if (torch_forced) return span_new(arg, 1, 1, K_TORCH_RANGE);
  return (PyObject *)range_get(arg);
}
static PyObject *m_span(PyObject *mod, PyObject *arg) { return span_new(arg, 0, 0, K_SPAN); }
static PyObject *m_torch_range(PyObject *mod, PyObject *arg) {
  if (!record_function && !torch_on()) return (PyObject *)range_get(arg);
  return span_new(arg, 1, 1, K_TORCH_RANGE);
}
static PyObject *m_torch_span(PyObject *mod, PyObject *arg) { return span_new(arg, 0, 1, K_TORCH_SPAN); }

static PyObject *m_control(const char *what) {
  control_mark(what);
  Py_RETURN_NONE;
}
static PyObject *m_step(PyObject *mod, PyObject *unused) {
  tell_rank();
  return m_control(NCRT_VERB_STEP);
}
static PyObject *m_at_exit(PyObject *mod, PyObject *unused) {
  tell_rank();
  Py_RETURN_NONE;
}
static PyObject *m_start(PyObject *mod, PyObject *unused) { return m_control(NCRT_VERB_START); }
static PyObject *m_stop(PyObject *mod, PyObject *unused) { return m_control(NCRT_VERB_STOP); }
/* _control(msg): a control verb as it is (ncrt_protocol.h; the Python
 * package's profilers: write, schedule, schedule_end); _attached(): whether
 * an NVTX tool took the calls when this module was imported (NVTX's no-tool
 * stubs return a NULL domain) */
static PyObject *m_control_msg(PyObject *mod, PyObject *arg) {
  const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
  if (!s) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "_control wants a str");
    return NULL;
  }
  return m_control(s);
}
static PyObject *m_attached(PyObject *mod, PyObject *unused) { return PyBool_FromLong(control != NULL); }
/* _torch_bridge(on) -> was: every ncrt.range opens a record_function too
 * (as NCRT_TORCH=1 does from the start), for ranges made from now on; the
 * Python package's torch profiler turns it on for its region */
static PyObject *m_torch_bridge(PyObject *mod, PyObject *arg) {
  int on = PyObject_IsTrue(arg);
  if (on < 0) return NULL;
  int was = torch_forced;
  torch_forced = on;
  if (on) torch_checked = 0;
  return PyBool_FromLong(was);
}
static PyObject *m_mark(PyObject *mod, PyObject *arg) {
  RangeObject *r = range_get(arg);
  if (!r) return NULL;
  nvtxDomainMarkEx(domain, &r->attr);
  Py_DECREF(r);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"range", m_range, METH_O, "range(name): NVTX push/pop range; context manager and decorator."},
    {"span", m_span, METH_O, "span(name): NVTX start/end range for async code and generators."},
    {"torch_range", m_torch_range, METH_O, "torch_range(name): range + torch.profiler.record_function."},
    {"torch_span", m_torch_span, METH_O, "torch_span(name): span + torch.profiler.record_function."},
    {"step", m_step, METH_NOARGS, "step(): a step boundary for the capture schedule."},
    {"start", m_start, METH_NOARGS, "start(): resume recording."},
    {"stop", m_stop, METH_NOARGS, "stop(): pause recording."},
    {"mark", m_mark, METH_O, "mark(name): an instant event."},
    {"_at_exit", m_at_exit, METH_NOARGS, "_at_exit(): tell the collector this process's torch.distributed rank, if any."},
    {"_control", m_control_msg, METH_O, "_control(msg): a control verb for the collector (ncrewrite's profilers)."},
    {"_torch_bridge", m_torch_bridge, METH_O, "_torch_bridge(on) -> was: ranges open record_function too."},
    {"_attached", m_attached, METH_NOARGS, "_attached(): whether an NVTX tool (libncrt, nsys) is attached."},
    {NULL, NULL, 0, NULL}};

/* Decorators other than the plain @ncrt.range on a plain function. `cm`
 * makes the context manager for one call, `life` the span around a
 * coroutine's or generator's whole life. functools is imported when the
 * first such decorator is made, not when ncrt is. */
static const char helper_src[] =
    /* What this process is, from what torch and multiprocessing say: a
     * (role, detail) pair, or None (the main process, or nothing known). */
    "def _role():\n"
    "    import sys\n"
    "    w = sys.modules.get('torch.utils.data._utils.worker')\n"
    "    info = getattr(w, '_worker_info', None) if w is not None else None\n"
    "    if info is not None:\n"
    "        return 'dataloader worker', 'worker %d of %d' % (info.id, info.num_workers)\n"
    "    p = sys.modules.get('multiprocessing.process')\n"
    "    if p is not None:\n"
    "        name = p.current_process().name\n"
    "        if name != 'MainProcess':\n"
    "            return ('pool worker' if 'PoolWorker' in name else 'multiprocessing process'), name\n"
    "    return None\n"
    /* torch.distributed's (rank, world), or None; _dist adds whether a
     * forked child inherited it (its parent's group: a helper of that
     * rank), and wraps destroy_process_group so that the rank is told
     * before the group goes (programs destroy it before exit). */
    "def _dist_now():\n"
    "    import sys\n"
    "    d = sys.modules.get('torch.distributed')\n"
    "    try:\n"
    "        if d is not None and d.is_available() and d.is_initialized():\n"
    "            return d.get_rank(), d.get_world_size(), str(d.get_backend())\n"
    "    except Exception:\n"
    "        pass\n"
    "    return None\n"
    "_forked = [None]\n"
    "def _after_fork():\n"
    "    _forked[0] = _dist_now()\n"
    "def _dist(_wrapped=[]):\n"
    "    import sys\n"
    "    d = sys.modules.get('torch.distributed')\n"
    "    if d is not None and not _wrapped and callable(getattr(d, 'destroy_process_group', None)):\n"
    "        _wrapped.append(1)\n"
    "        try:\n"
    "            import functools\n"
    "            orig = d.destroy_process_group\n"
    "            def destroy_process_group(*a, **k):\n"
    "                _tell()\n"
    "                return orig(*a, **k)\n"
    "            w = functools.update_wrapper(destroy_process_group, orig)\n"
    "            d.destroy_process_group = w\n"
    "            c = sys.modules.get('torch.distributed.distributed_c10d')\n"
    "            if c is not None and getattr(c, 'destroy_process_group', None) is orig:\n"
    "                c.destroy_process_group = w\n"
    "        except Exception:\n"
    "            pass\n"
    "    r = _dist_now()\n"
    "    return None if r is None else (r[0], r[1], r == _forked[0], r[2])\n"
    "import os as _os\n"
    "if hasattr(_os, 'register_at_fork'):\n"
    "    _os.register_at_fork(after_in_child=_after_fork)\n"
    "def _wrap(name, fn, cm, life, is_async):\n"
    "    import functools, inspect\n"
    "    if not is_async:\n"
    "        def w(*a, **k):\n"
    "            with cm(name):\n"
    "                return fn(*a, **k)\n"
    "    elif inspect.iscoroutinefunction(fn):\n"
    "        async def w(*a, **k):\n"
    "            with life(name):\n"
    "                return await fn(*a, **k)\n"
    "    elif inspect.isasyncgenfunction(fn):\n"
    "        async def w(*a, **k):\n"
    "            with life(name):\n"
    "                async for x in fn(*a, **k):\n"
    "                    yield x\n"
    "    else:\n"
    "        def w(*a, **k):\n"
    "            with life(name):\n"
    "                return (yield from fn(*a, **k))\n"
    "    return functools.update_wrapper(w, fn)\n"
    /* _where(file, name, line): the user's (file, line) for a range first
     * seen at `line` of `file`, when file is a shadow copy: the nearest
     * directory above it holding .ncrewrite/manifest.json is the shadow
     * tree, the manifest's "source" the user's tree, and the range of that
     * name whose output lines hold `line` (the inserted `with` sits just
     * above them) gives the original first line. None when it is not one.
     * Manifests and directory look-ups are cached: once per process. */
    "def _where(file, name, line, _roots={}, _maps={}):\n"
    "    import os, json\n"
    "    f = os.path.abspath(file)\n"
    "    d, walked = os.path.dirname(f), []\n"
    "    while d not in _roots:\n"
    "        walked.append(d)\n"
    "        if os.path.isfile(os.path.join(d, '.ncrewrite', 'manifest.json')):\n"
    "            _roots[d] = d\n"
    "            break\n"
    "        up = os.path.dirname(d)\n"
    "        if up == d:\n"
    "            _roots[d] = None\n"
    "            break\n"
    "        d = up\n"
    "    root = _roots[d]\n"
    "    for w in walked:\n"
    "        _roots[w] = root\n"
    "    if root is None:\n"
    "        return None\n"
    "    if root not in _maps:\n"
    "        try:\n"
    "            with open(os.path.join(root, '.ncrewrite', 'manifest.json'), encoding='utf-8') as fh:\n"
    "                m = json.load(fh)\n"
    "            _maps[root] = (m.get('source') or None, {e['path']: e.get('ranges', []) for e in m['files']})\n"
    "        except Exception:\n"
    "            _maps[root] = (None, {})\n"
    "    src, files = _maps[root]\n"
    "    rel = os.path.relpath(f, root)\n"
    "    if not src or rel not in files:\n"
    "        return None\n"
    "    best = None\n"
    "    for r in files[rel]:\n"
    "        if r.get('name') != name:\n"
    "            continue\n"
    "        o, l = r.get('out_lines', [0, 0]), r.get('lines', [0, 0])\n"
    "        if o[0] - 1 <= line <= o[1]:\n"
    "            return os.path.join(src, rel), l[0]\n"
    "        best = best or (os.path.join(src, rel), l[0])\n"
    "    return best\n";

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ncrt",
                                    "NVTX ranges for Python (ncrewrite's runtime).", -1, methods};

PyMODINIT_FUNC PyInit_ncrt(void);
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit_ncrt(void) {
  if (PyType_Ready(&RangeType) < 0 || PyType_Ready(&SpanType) < 0 || PyType_Ready(&WrapperType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  domain = nvtxDomainCreateA("ncrt");
  control = nvtxDomainCreateA(NCRT_CONTROL_DOMAIN);
  cache = PyDict_New();
  const char *tv = getenv(NCRT_ENV_TORCH);
  torch_forced = tv && tv[0] == '1';
  PyObject *g = PyDict_New();
  if (!cache || !g) goto fail;
  if (PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0) goto fail;
  PyObject *r = PyRun_String(helper_src, Py_file_input, g, g);
  if (!r) goto fail;
  Py_DECREF(r);
  async_wrap = PyDict_GetItemString(g, "_wrap");
  Py_XINCREF(async_wrap);
  where_fn = PyDict_GetItemString(g, "_where");
  Py_XINCREF(where_fn);
  role_fn = PyDict_GetItemString(g, "_role");
  Py_XINCREF(role_fn);
  dist_fn = PyDict_GetItemString(g, "_dist");
  Py_XINCREF(dist_fn);
  pthread_atfork(NULL, NULL, role_after_fork);
  {
    PyObject *tell = PyObject_GetAttrString(m, "_at_exit"); /* tells the rank */
    if (!tell || PyDict_SetItemString(g, "_tell", tell) < 0) PyErr_Clear();
    Py_XDECREF(tell);
  }
  Py_CLEAR(g);
  static const char *const kinds[K_N] = {"range", "span", "torch_range", "torch_span"};
  for (int k = 0; k < K_N; k++)
    if (!(kind_fn[k] = PyObject_GetAttrString(m, kinds[k]))) goto fail;
  if (!async_wrap || PyModule_AddObject(m, "_cache", cache) < 0) goto fail;
  Py_INCREF(cache);
  {
    /* at exit, the rank torch.distributed gave (before the collector's exit write) */
    PyObject *ax = PyImport_ImportModule("atexit"), *fn = PyObject_GetAttrString(m, "_at_exit");
    PyObject *reg = ax && fn ? PyObject_CallMethod(ax, "register", "O", fn) : NULL;
    Py_XDECREF(reg);
    Py_XDECREF(fn);
    Py_XDECREF(ax);
    PyErr_Clear();
  }
  return m;
fail:
  Py_XDECREF(g);
  Py_DECREF(m);
  return NULL;
}
