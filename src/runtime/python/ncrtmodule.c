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
 * frame) go to the collector as a control mark, so traces carry them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t domain, control;
static PyObject *cache;      /* str -> RangeObject */
static PyObject *record_function; /* torch.profiler.record_function or NULL */
static int torch_checked, torch_forced;
static PyObject *async_wrap; /* Python helper for coroutine/generator functions */

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
  const char *file = code ? PyUnicode_AsUTF8(code->co_filename) : NULL;
  const char *n = PyUnicode_AsUTF8(name);
  if (file && n) {
    PyObject *msg = PyUnicode_FromFormat("loc\t%s\t%s\t%d", n, file, PyFrame_GetLineNumber(f));
    const char *m = msg ? PyUnicode_AsUTF8(msg) : NULL;
    if (m) control_mark(m);
    Py_XDECREF(msg);
  }
  PyErr_Clear();
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
  if (PyDict_GET_SIZE(cache) < CACHE_MAX && PyDict_SetItem(cache, key, (PyObject *)r) < 0) {
    Py_DECREF(r);
    return NULL;
  }
  return r;
}

static void range_dealloc(RangeObject *self) {
  Py_XDECREF(self->name);
  PyObject_Free(self);
}

static int is_async_or_gen(PyObject *fn) {
  PyObject *code = PyObject_GetAttrString(fn, "__code__");
  if (!code) {
    PyErr_Clear();
    return 0;
  }
  int flags = PyCode_Check(code) ? ((PyCodeObject *)code)->co_flags : 0;
  Py_DECREF(code);
  return (flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) != 0;
}

typedef struct {
  PyObject_HEAD
  PyObject *fn;
  RangeObject *range;
  PyObject *dict;
  vectorcallfunc vectorcall;
} WrapperObject;

static PyObject *wrapper_vcall(WrapperObject *w, PyObject *const *args, size_t nargsf, PyObject *kw) {
  nvtxDomainRangePushEx(domain, &w->range->attr);
  PyObject *r = PyObject_Vectorcall(w->fn, args, nargsf, kw);
  nvtxDomainRangePop(domain);
  return r;
}

/* @ncrt.range("x") on a function: push/pop around each call. Coroutine and
 * generator functions get a span around their whole life instead (a
 * Python helper: they suspend, and may resume on another thread). */
static PyObject *range_call(RangeObject *self, PyObject *args, PyObject *kw) {
  PyObject *fn;
  if (kw || !PyArg_ParseTuple(args, "O:range decorator", &fn)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "ncrt.range(name) decorates one function");
    return NULL;
  }
  if (is_async_or_gen(fn)) return PyObject_CallFunctionObjArgs(async_wrap, self->name, fn, NULL);
  WrapperObject *w = PyObject_New(WrapperObject, &WrapperType);
  if (!w) return NULL;
  Py_INCREF(fn);
  Py_INCREF(self);
  w->fn = fn;
  w->range = self;
  w->dict = NULL;
  w->vectorcall = (vectorcallfunc)wrapper_vcall;
  /* functools.update_wrapper-like: __wrapped__, __name__, __doc__, ... */
  PyObject *ft = PyImport_ImportModule("functools");
  PyObject *res = ft ? PyObject_CallMethod(ft, "update_wrapper", "OO", (PyObject *)w, fn) : NULL;
  Py_XDECREF(ft);
  if (!res) PyErr_Clear();
  Py_XDECREF(res);
  return (PyObject *)w;
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

/* ---- Wrapper: a decorated function ---- */

static void wrapper_dealloc(WrapperObject *w) {
  PyObject_GC_UnTrack(w);
  Py_XDECREF(w->fn);
  Py_XDECREF(w->range);
  Py_XDECREF(w->dict);
  PyObject_GC_Del(w);
}
static int wrapper_traverse(WrapperObject *w, visitproc visit, void *arg) {
  Py_VISIT(w->fn);
  Py_VISIT(w->dict);
  return 0;
}
static PyObject *wrapper_get(PyObject *self, PyObject *obj, PyObject *type) {
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

static PyGetSetDef wrapper_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL}, {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject WrapperType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ncrt.RangeFunction",
    .tp_basicsize = sizeof(WrapperObject),
    .tp_dealloc = (destructor)wrapper_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = (traverseproc)wrapper_traverse,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(WrapperObject, vectorcall),
    .tp_descr_get = wrapper_get,
    .tp_dictoffset = offsetof(WrapperObject, dict),
    .tp_getset = wrapper_getset,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
};

/* ---- Span: start/end, and the torch bridges ---- */

typedef struct {
  PyObject_HEAD
  nvtxRangeId_t id;
  RangeObject *range;
  PyObject *rf;   /* record_function instance, or NULL */
  char push;      /* 1: push/pop (torch_range), 0: start/end */
  char started;
} SpanObject;

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
  if (!record_function) PyErr_Clear();
  return record_function != NULL;
}

static PyObject *span_new(PyObject *arg, int push, int torch) {
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
  if (torch && torch_on()) {
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
  /* @ncrt.span("x") / @ncrt.torch_range("x") as decorators */
  return range_call(s->range, args, kw);
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
  if (torch_forced) return span_new(arg, 1, 1);
  return (PyObject *)range_get(arg);
}
static PyObject *m_span(PyObject *mod, PyObject *arg) { return span_new(arg, 0, 0); }
static PyObject *m_torch_range(PyObject *mod, PyObject *arg) {
  if (!record_function && !torch_on()) return (PyObject *)range_get(arg);
  return span_new(arg, 1, 1);
}
static PyObject *m_torch_span(PyObject *mod, PyObject *arg) { return span_new(arg, 0, 1); }

static PyObject *m_control(const char *what) {
  control_mark(what);
  Py_RETURN_NONE;
}
static PyObject *m_step(PyObject *mod, PyObject *unused) { return m_control("step"); }
static PyObject *m_start(PyObject *mod, PyObject *unused) { return m_control("start"); }
static PyObject *m_stop(PyObject *mod, PyObject *unused) { return m_control("stop"); }
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
    {NULL, NULL, 0, NULL}};

static const char helper_src[] =
    "import functools, inspect\n"
    "def _async_wrap(name, fn):\n"
    "    import ncrt\n"
    "    if inspect.iscoroutinefunction(fn):\n"
    "        @functools.wraps(fn)\n"
    "        async def w(*a, **k):\n"
    "            with ncrt.span(name):\n"
    "                return await fn(*a, **k)\n"
    "    elif inspect.isasyncgenfunction(fn):\n"
    "        @functools.wraps(fn)\n"
    "        async def w(*a, **k):\n"
    "            with ncrt.span(name):\n"
    "                async for x in fn(*a, **k):\n"
    "                    yield x\n"
    "    else:\n"
    "        @functools.wraps(fn)\n"
    "        def w(*a, **k):\n"
    "            with ncrt.span(name):\n"
    "                return (yield from fn(*a, **k))\n"
    "    return w\n";

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ncrt",
                                    "NVTX ranges for Python (ncrewrite's runtime).", -1, methods};

PyMODINIT_FUNC PyInit_ncrt(void);
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit_ncrt(void) {
  if (PyType_Ready(&RangeType) < 0 || PyType_Ready(&SpanType) < 0 || PyType_Ready(&WrapperType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  domain = nvtxDomainCreateA("ncrt");
  control = nvtxDomainCreateA("ncrt.control");
  cache = PyDict_New();
  const char *tv = getenv("NCRT_TORCH");
  torch_forced = tv && tv[0] == '1';
  PyObject *g = PyDict_New();
  if (!cache || !g) return NULL;
  PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins());
  PyObject *r = PyRun_String(helper_src, Py_file_input, g, g);
  if (!r) return NULL;
  Py_DECREF(r);
  async_wrap = PyDict_GetItemString(g, "_async_wrap");
  Py_XINCREF(async_wrap);
  Py_DECREF(g);
  PyModule_AddObject(m, "_cache", cache);
  Py_INCREF(cache);
  return m;
}
