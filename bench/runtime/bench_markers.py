#!/usr/bin/env python3
"""Per-range cost of the shadow tree's markers (issue 15), side by side.

For each interpreter that has an ncrt build (its EXT_SUFFIX file in
NCRT/python; Debian's /usr/bin/python3 and pyenv's versions by default) this
times, in ns per range:

  floor          a loop whose body is `pass` (the loop itself)
  nullcontext    `with contextlib.nullcontext(): pass`        (the baseline)
  marker         `with __ncrt__.range("mk.f"): pass`, the line ncrewrite
                 writes, run in the instrumented module's own namespace
  torch marker   the torch-file form (record_function if scripting / if
                 compiling, else __ncrt__.range), from a file that imports torch
  record_function  `with torch.profiler.record_function("x"): pass`

and the same at the level of a call: `f()` from a module `def f(): return 1`
instrumented by `ncrewrite --full-trace`, minus the same f() uninstrumented
(so the difference is what the marker costs a call), beside an f() whose body
is wrapped in `with contextlib.nullcontext():` by hand.

Each interpreter runs in three modes, each a separate process:

  fallback  ncrt not importable: the prelude binds __ncrt__ to its no-op object
  ncrt      the ncrt C module on PYTHONPATH, no collector attached (plain python)
  ncrun     under NCRT/ncrun --throttle off: the collector records every range

Interpreters with torch get a second process per mode for the torch rows (so
importing torch does not touch the plain rows).

Method: timeit.Timer(stmt, timer=time.perf_counter_ns); all forms are
interleaved in rounds (R rounds of N iterations each, N/20 for
record_function); a figure is the minimum over the rounds (the least
disturbed) with the median beside it, minus the floor (bare forms) or minus
the uninstrumented call (call forms). Ratios are to nullcontext measured in
the same process the same way.

Allocations: 100 000 iterations of each form (after a warm-up) with the
garbage collector off, bracketed twice: "blocks" is the net change of
sys.getallocatedblocks() per iteration (what stays allocated); "allocs" is
the number of allocations per iteration, freed or not, counted by a small
hook (compiled here with cc, loaded with ctypes) that PyMem_SetAllocator
puts in front of Python's MEM and OBJ allocator domains -- every
PyMem_Malloc/PyObject_Malloc/calloc/realloc, so every object that does not
come from a free list; the same brackets around zero iterations are
subtracted. 0 allocs means that the form allocates nothing per call.

    bench_markers.py --ncrewrite BUILD/src/rewrite/ncrewrite --ncrt BUILD/ncrt
                     [--python PY]... [--n N] [--rounds R] [--quick]

A benchmark, not a test: it prints the figures and exits 0.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DEBIAN_PY = "/usr/bin/python3"
ALLOC_N = 100000

MODES = ("fallback", "ncrt", "ncrun")

# counts allocations in Python's MEM and OBJ domains; a hook that calls the
# allocator it replaces (as tracemalloc's does), so it may be set at run time
HOOK_C = r"""
#include <stddef.h>
typedef struct {
  void *ctx;
  void *(*malloc)(void *, size_t);
  void *(*calloc)(void *, size_t, size_t);
  void *(*realloc)(void *, void *, size_t);
  void (*free)(void *, void *);
} nc_alloc; /* PyMemAllocatorEx */
extern void PyMem_GetAllocator(int, nc_alloc *);
extern void PyMem_SetAllocator(int, nc_alloc *);
static nc_alloc old[3];
static unsigned long long calls;
static int on;
#define HOOK(d)                                                                      \
  static void *m##d(void *c, size_t n) {                                             \
    (void)c; calls++; return old[d].malloc(old[d].ctx, n); }                          \
  static void *c##d(void *c, size_t a, size_t b) {                                   \
    (void)c; calls++; return old[d].calloc(old[d].ctx, a, b); }                       \
  static void *r##d(void *c, void *p, size_t n) {                                    \
    (void)c; calls++; return old[d].realloc(old[d].ctx, p, n); }                      \
  static void f##d(void *c, void *p) { (void)c; old[d].free(old[d].ctx, p); }
HOOK(1) /* PYMEM_DOMAIN_MEM */
HOOK(2) /* PYMEM_DOMAIN_OBJ */
void nc_hook_start(void) {
  nc_alloc a1 = {0, m1, c1, r1, f1}, a2 = {0, m2, c2, r2, f2};
  if (on) return;
  PyMem_GetAllocator(1, &old[1]);
  PyMem_GetAllocator(2, &old[2]);
  PyMem_SetAllocator(1, &a1);
  PyMem_SetAllocator(2, &a2);
  on = 1;
}
void nc_hook_stop(void) {
  if (!on) return;
  PyMem_SetAllocator(1, &old[1]);
  PyMem_SetAllocator(2, &old[2]);
  on = 0;
}
unsigned long long nc_hook_calls(void) { return calls; }
"""

# ---------------------------------------------------------------- worker ---


def worker(spec):
    import contextlib
    import gc
    import importlib.util
    import itertools
    import statistics
    import timeit

    def load(name, path):
        s = importlib.util.spec_from_file_location(name, path)
        m = importlib.util.module_from_spec(s)
        sys.modules[name] = m
        s.loader.exec_module(m)
        return m

    torch_set = spec["set"] == "torch"
    suffix = "_torch" if torch_set else ""
    shadow = load("mk" + suffix, os.path.join(spec["shadow"], "mk%s.py" % suffix))
    plain = load("mk%s_plain" % suffix, os.path.join(spec["src"], "mk%s.py" % suffix))
    nullmod = load("nc_plain", os.path.join(spec["extra"], "nc.py"))

    nc = shadow.__ncrt__
    kind = "ncrt module" if type(nc) is type(sys) and getattr(nc, "__file__", None) else type(nc).__name__
    want = {"fallback": "ncrt_nop", "ncrt": "ncrt module", "ncrun": "ncrt module"}[spec["mode"]]
    if kind != want:
        raise SystemExit("mode %s: __ncrt__ is %r (%s), expected %s" % (spec["mode"], nc, kind, want))
    if spec["mode"] == "ncrun" and not os.environ.get("NVTX_INJECTION64_PATH"):
        raise SystemExit("mode ncrun: no collector attached (NVTX_INJECTION64_PATH unset)")

    # the `with` line ncrewrite wrote into f(), run as a bare statement in the
    # instrumented module's namespace
    with open(os.path.join(spec["shadow"], "mk%s.py" % suffix)) as fh:
        marker = [l.strip() for l in fh if l.lstrip().startswith("with ")][0]
    pass_body = "\n    pass"
    mns = shadow.__dict__
    items = [  # (key, statement, globals, iterations divisor)
        ("floor", "pass", {}, 1),
        ("nullcontext", "with contextlib.nullcontext():" + pass_body, {"contextlib": contextlib}, 1),
        ("torch_marker" if torch_set else "marker", marker + pass_body, mns, 1),
        ("call_plain", "f()", {"f": plain.f}, 1),
        ("call_nullcontext", "f()", {"f": nullmod.f}, 1),
        ("call_torch_marker" if torch_set else "call_marker", "f()", {"f": shadow.f}, 1),
    ]
    if torch_set:
        import torch
        import torch.profiler
        # the two tests the torch-file marker makes before it reaches __ncrt__.range
        items.append(("tm_jit", "__ncrt_t__.jit.is_scripting()", mns, 1))
        items.append(("tm_compiler", "__ncrt_t__.compiler.is_compiling()", mns, 1))
        items.append(("record_function", 'with torch.profiler.record_function("x"):' + pass_body,
                      {"torch": torch}, 20))

    n, rounds = spec["n"], spec["rounds"]
    timers = [(k, timeit.Timer(s, globals=g, timer=time.perf_counter_ns), max(n // d, 1000))
              for k, s, g, d in items]
    for k, t, m in timers:  # warm-up (specialisation, first-name marks, caches)
        t.timeit(max(m // 10, 100))
    per = dict((k, []) for k, _, _ in timers)
    for _ in range(rounds):
        for k, t, m in timers:
            per[k].append(t.timeit(m) / m)

    # allocations: net blocks (sys.getallocatedblocks) and, through the
    # counting hook, every allocation made in the loop, freed or not
    hook = None
    if spec.get("hook"):
        import ctypes
        hook = ctypes.CDLL(spec["hook"])
        hook.nc_hook_calls.restype = ctypes.c_ulonglong
        hook.nc_hook_start()
    allocs = {}
    for k, s, g, d in items:
        m = max(ALLOC_N // d, 1000)
        ns = dict(g)
        exec("def _loop(_it):\n    for _ in _it:\n" + "".join("        " + l + "\n" for l in s.splitlines()), ns)
        loop = ns["_loop"]
        loop(itertools.repeat(None, 1000))

        def measure(count):
            it = itertools.repeat(None, count)
            gc.collect()
            gc.disable()
            b0 = sys.getallocatedblocks()
            a0 = hook.nc_hook_calls() if hook else 0
            loop(it)
            a1 = hook.nc_hook_calls() if hook else 0
            b1 = sys.getallocatedblocks()
            gc.enable()
            return b1 - b0, a1 - a0
        # the same bracket around zero iterations: what the measurement itself
        # allocates (the ints it reads), subtracted below
        measure(0)
        z = measure(0)
        b, c = measure(m)
        allocs[k] = {"n": m, "blocks_per_call": (b - z[0]) / m,
                     "allocs_per_call": (c - z[1]) / m if hook else None}
    if hook:
        hook.nc_hook_stop()

    out = {"mode": spec["mode"], "set": spec["set"], "version": sys.version.split()[0],
           "executable": sys.executable, "marker": marker, "kind": kind,
           "min": dict((k, min(v)) for k, v in per.items()),
           "median": dict((k, statistics.median(v)) for k, v in per.items()),
           "alloc": allocs}
    print("RESULT " + json.dumps(out))


# ---------------------------------------------------------------- driver ---


def probe(py):
    code = ("import sys, sysconfig, importlib.util; print(sysconfig.get_config_var('EXT_SUFFIX') or '');"
            "print(sys.version.split()[0]); print(sys.executable);"
            "print(int(importlib.util.find_spec('torch') is not None))")
    try:
        p = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    suf, ver, exe, torch = p.stdout.split("\n")[:4]
    return {"py": py, "suffix": suf, "version": ver, "exe": exe, "torch": torch == "1"}


def pythons(a):
    if a.python:
        return a.python
    found = [DEBIAN_PY]
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    if shutil.which("pyenv"):
        p = subprocess.run(["pyenv", "root"], capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.strip():
            root = p.stdout.strip()

    def key(p):
        v = os.path.basename(os.path.dirname(os.path.dirname(p)))
        return [int(x) if x.isdigit() else x for x in v.replace("-", ".").split(".")]
    found += sorted(glob.glob(os.path.join(root, "versions", "*", "bin", "python3")), key=key)
    return found


SOURCES = {
    "mk.py": "def f():\n    return 1\n",
    "mk_torch.py": "import torch\n\n\ndef f():\n    return 1\n",
}
NULL_SOURCE = "import contextlib\n\n\ndef f():\n    with contextlib.nullcontext():\n        return 1\n"


def clean_env(pythonpath=None):
    env = dict(os.environ)
    for k in ("PYTHONPATH", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "LD_PRELOAD", "PYTHONHOME",
              "NCRT_TORCH", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    env["PYTHONNOUSERSITE"] = "1"  # no ncrt from ~/.local in the fallback mode
    return env


def run_worker(a, info, mode, which, tmp, dirs):
    spec = dict(dirs, mode=mode, set=which, n=a.n, rounds=a.rounds)
    cmd = [info["py"], os.path.abspath(__file__), "--worker", json.dumps(spec)]
    pydir = os.path.join(a.ncrt, "python")
    if mode == "fallback":
        env = clean_env()
    elif mode == "ncrt":
        env = clean_env(pydir)
    else:
        rd = os.path.join(tmp, "run-%s-%s-%s" % (info["version"], os.path.basename(info["py"]), which))
        rd += "-%d" % len(os.listdir(tmp))
        cmd = [os.path.join(a.ncrt, "ncrun"), "-q", "--run-dir", rd, "--throttle", "off", "--"] + cmd
        env = clean_env()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        sys.stderr.write("%s %s %s: failed (exit %d)\n%s%s" % (info["py"], mode, which, p.returncode,
                                                              p.stdout[-2000:], p.stderr[-4000:]))
        return None
    r = json.loads(lines[-1][len("RESULT "):])
    if mode == "ncrun":
        traces = glob.glob(os.path.join(rd, "*.trace.json*"))
        r["trace"] = traces[0] if traces else None
        r["trace_bytes"] = os.path.getsize(traces[0]) if traces else 0
        shutil.rmtree(rd, ignore_errors=True)
    return r


BARE = [("floor", "floor: loop, `pass` body (gross)"),
        ("nullcontext", "with contextlib.nullcontext()"),
        ("marker", "marker, plain file"),
        ("torch_marker", "marker, torch file"),
        ("tm_jit", "  its jit.is_scripting() test"),
        ("tm_compiler", "  its compiler.is_compiling() test"),
        ("record_function", "with torch.profiler.record_function")]
CALL = [("call_plain", "f() uninstrumented (gross)"),
        ("call_nullcontext", "f() + nullcontext by hand"),
        ("call_marker", "f() instrumented, plain file"),
        ("call_torch_marker", "f() instrumented, torch file")]


TORCH_KEYS = ("torch_marker", "tm_jit", "tm_compiler", "call_torch_marker", "record_function")


def net(r, key, stat):
    v = r[stat][key]
    if key in ("floor", "call_plain"):
        return v
    return v - r[stat]["call_plain" if key.startswith("call_") else "floor"]


def merge(results):
    """{mode: {"min": {...}, "median": {...}, "alloc": {...}, "net": {...}}} with the
    torch process's own nullcontext/floor used for its rows' ratios."""
    out = {}
    for mode, sets in results.items():
        m = {"net_min": {}, "net_med": {}, "ratio": {}, "alloc": {}}
        for which, r in sets.items():
            if r is None:
                continue
            for k in r["min"]:
                if which == "plain" or k in TORCH_KEYS:
                    m["net_min"][k] = net(r, k, "min")
                    m["net_med"][k] = net(r, k, "median")
                    m["alloc"][k] = r["alloc"][k]
                    base = "call_nullcontext" if k.startswith("call_") else "nullcontext"
                    b = net(r, base, "min")
                    if k not in ("floor", "call_plain"):
                        m["ratio"][k] = net(r, k, "min") / b if b > 0 else float("nan")
        out[mode] = m
    return out


def fmt_allocs(al):
    return "-" if al.get("allocs_per_call") is None else "%.3f" % al["allocs_per_call"]


def print_interp(info, results):
    m = merge(results)
    print("\n## CPython %s (%s)%s" % (info["version"], info["py"], ", with torch" if info["torch"] else ""))
    modes = [x for x in MODES if x in m]
    print("ns per range: min over rounds (median), minus the floor / the uninstrumented call; "
          "x = ratio to nullcontext (min)")
    hdr = "%-40s" % "" + "".join("%26s" % x for x in modes)
    print(hdr)
    for group, rows in (("bare `with` statement", BARE), ("per call of f()", CALL)):
        print("  " + group)
        for k, label in rows:
            if not any(k in m[x]["net_min"] for x in modes):
                continue
            cells = []
            for x in modes:
                if k not in m[x]["net_min"]:
                    cells.append("%26s" % "-")
                    continue
                s = "%.1f (%.1f)" % (m[x]["net_min"][k], m[x]["net_med"][k])
                if k in m[x]["ratio"]:
                    s += " %5.2fx" % m[x]["ratio"][k]
                else:
                    s += "       "
                cells.append("%26s" % s)
            print("    %-36s" % label + "".join(cells))
    print("  allocations per iteration, over %d iterations: allocs (every allocation), "
          "blocks (net, sys.getallocatedblocks)" % ALLOC_N)
    for k, label in BARE + CALL:
        if not any(k in m[x]["alloc"] for x in modes):
            continue
        cells = []
        for x in modes:
            al = m[x]["alloc"].get(k)
            cells.append("%26s" % ("-" if al is None else "%s, %.5f" % (fmt_allocs(al), al["blocks_per_call"])))
        print("    %-36s" % label + "".join(cells))
    for which in ("plain", "torch"):
        r = results.get("ncrun", {}).get(which)
        if r:
            print("  ncrun, %s process: trace %s, %.1f MiB" % (which, os.path.basename(r["trace"] or "MISSING"),
                                                               r["trace_bytes"] / 2**20))
    return m


def print_summary(summary):
    print("\n## Summary: ns per range (min over rounds), ratio to nullcontext in the same process")
    cols = [("nullcontext", "fallback", "nullctx"),
            ("marker", "fallback", "fallback"),
            ("marker", "ncrt", "ncrt"),
            ("marker", "ncrun", "ncrun"),
            ("call_nullcontext", "fallback", "call:nullctx"),
            ("call_marker", "fallback", "call:fallback"),
            ("call_marker", "ncrt", "call:ncrt"),
            ("call_marker", "ncrun", "call:ncrun")]
    print("%-26s" % "interpreter" + "".join("%16s" % c[2] for c in cols) + "%18s" % "allocs fb/null")
    for label, m in summary:
        cells = []
        for k, mode, _ in cols:
            if mode not in m or k not in m[mode]["net_min"]:
                cells.append("%16s" % "-")
                continue
            v = m[mode]["net_min"][k]
            r = m[mode]["ratio"].get(k)
            cells.append("%16s" % ("%.1f" % v if r is None or k in ("nullcontext", "call_nullcontext")
                                   else "%.1f %.2fx" % (v, r)))
        al = m.get("fallback", {}).get("alloc", {}).get("marker")
        an = m.get("fallback", {}).get("alloc", {}).get("nullcontext")
        alc = "-" if al is None or an is None else "%s / %s" % (fmt_allocs(al), fmt_allocs(an))
        print("%-26s" % label + "".join(cells) + "%18s" % alc)
    torch_rows = [(label, m) for label, m in summary if "torch_marker" in m.get("fallback", {}).get("net_min", {})]
    if torch_rows:
        print("\n## Torch file (ns per range, ratio to nullcontext)")
        tc = [("torch_marker", "fallback"), ("torch_marker", "ncrt"), ("torch_marker", "ncrun"),
              ("call_torch_marker", "fallback"), ("call_torch_marker", "ncrt"), ("call_torch_marker", "ncrun"),
              ("record_function", "fallback")]
        print("%-26s" % "interpreter" + "".join("%18s" % ("%s:%s" % ("call" if k.startswith("call") else
                                                                      ("rf" if k == "record_function" else "bare"),
                                                                      mode if k != "record_function" else "off"))
                                                   for k, mode in tc))
        for label, m in torch_rows:
            cells = []
            for k, mode in tc:
                if mode not in m or k not in m[mode]["net_min"]:
                    cells.append("%18s" % "-")
                    continue
                cells.append("%18s" % ("%.1f %.2fx" % (m[mode]["net_min"][k], m[mode]["ratio"][k])))
            print("%-26s" % label + "".join(cells))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        return worker(json.loads(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncrewrite", required=True, help="the ncrewrite binary")
    ap.add_argument("--ncrt", required=True, help="the directory of ncrun, libncrt.so and python/")
    ap.add_argument("--python", action="append", help="interpreter to measure (repeatable; default: "
                    "/usr/bin/python3 and pyenv's versions that have an ncrt build)")
    ap.add_argument("--n", type=int, default=20000, help="iterations per round (default 20000)")
    ap.add_argument("--rounds", type=int, default=60, help="rounds (default 60)")
    ap.add_argument("--quick", action="store_true", help="--n 5000 --rounds 5")
    a = ap.parse_args()
    if a.quick:
        a.n, a.rounds = 5000, 5
    a.ncrt = os.path.abspath(a.ncrt)
    pydir = os.path.join(a.ncrt, "python")
    print("# bench_markers: %s; n=%d x %d rounds; load average at start %s" %
          (time.strftime("%Y-%m-%d %H:%M"), a.n, a.rounds, " ".join("%.2f" % x for x in os.getloadavg())))
    with tempfile.TemporaryDirectory(prefix="bench_markers.") as tmp:
        dirs = {"src": os.path.join(tmp, "src"), "shadow": os.path.join(tmp, "shadow"),
                "extra": os.path.join(tmp, "extra")}
        for d in ("src", "extra"):
            os.makedirs(dirs[d])
        for name, text in SOURCES.items():
            with open(os.path.join(dirs["src"], name), "w") as f:
                f.write(text)
        with open(os.path.join(dirs["extra"], "nc.py"), "w") as f:
            f.write(NULL_SOURCE)
        p = subprocess.run([a.ncrewrite, "--full-trace", dirs["src"], dirs["shadow"]], capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write("ncrewrite failed:\n%s%s" % (p.stdout, p.stderr))
            return 1
        for name in ("mk.py", "mk_torch.py"):
            with open(os.path.join(dirs["shadow"], name)) as f:
                print("# marker written by ncrewrite in %s: %s" %
                      (name, [l.strip() for l in f if l.lstrip().startswith("with ")][0]))
        hook = os.path.join(tmp, "alloc_hook.so")
        with open(hook[:-3] + ".c", "w") as f:
            f.write(HOOK_C)
        p = subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", hook, hook[:-3] + ".c"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print("# allocation counting hook not built (%s): allocs not counted" % p.stderr.strip()[:200])
            hook = None
        dirs["hook"] = hook
        summary = []
        seen = set()
        for py in pythons(a):
            info = probe(py)
            if info is None:
                print("# skipped %s: does not run" % py)
                continue
            if info["exe"] in seen:
                continue
            seen.add(info["exe"])
            if not os.path.exists(os.path.join(pydir, "ncrt" + info["suffix"])):
                print("# skipped %s (%s): no ncrt%s in %s" % (py, info["version"], info["suffix"], pydir))
                continue
            results = {}
            for mode in MODES:
                results[mode] = {"plain": run_worker(a, info, mode, "plain", tmp, dirs)}
                if info["torch"]:
                    results[mode]["torch"] = run_worker(a, info, mode, "torch", tmp, dirs)
            results = dict((k, v) for k, v in results.items() if v.get("plain"))
            if not results:
                continue
            m = print_interp(info, results)
            summary.append(("%s %s" % (info["version"], "debian" if info["py"] == DEBIAN_PY else "pyenv"), m))
        print_summary(summary)
    print("# load average at end %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
