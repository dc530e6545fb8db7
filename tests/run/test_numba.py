#!/usr/bin/env python3
"""Differential test: numba-compiled functions in a full-trace shadow tree.

    test_numba.py NCREWRITE NCRUN_DIR                 (differential/numba)

Writes a small program of numba kernels beside plain Python into a temporary
directory (the ways numba is commonly spelled: @njit, @jit(nopython=True),
@numba.vectorize with a signature, @vectorize without one, @guvectorize,
@njit with an eager signature, `from numba import njit as nj`,
`import numba as nb; @nb.njit(cache=False)`, @numba.njit(...) with keywords,
and numba.njit(f) called at run time, at module level and inside a
function), instruments it with `ncrewrite --full-trace -q`, and checks:
  - the manifest and the instrumented text: the plain Python functions have
    ranges (a marker in their text), the decorated numba functions none;
    for the two functions compiled by a run-time numba.njit(f) call, what
    the rewriter did is printed (they are checked by running);
  - the program prints exactly what the original prints (every kernel's
    result, and that each was compiled by numba), from the shadow tree with
    no ncrt importable and under ncrun;
  - under ncrun a trace was written holding the plain functions' ranges.
Exit 0 passed, 1 failed, 77 skipped (numba or numpy not importable by
/usr/bin/python3). NC_KEEP_TMP=1 keeps the temporary directory.
"""
import ast
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchjit"))
import common  # noqa: E402
from common import PY, check  # noqa: E402

KERNELS = '''"""numba kernels beside plain Python (written by tests/run/test_numba.py)."""
import numba
import numba as nb
import numpy as np
from numba import jit, njit, vectorize
from numba import njit as nj


@njit
def nj_sumsq(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    return s


@jit(nopython=True)
def jit_fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@vectorize
def vec_lazy(x):
    return x * 2.0 - 1.0


@nj
def alias_nj(x, y):
    return x * y + 1


@nb.njit(cache=False)
def nb_triple(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    return out


@numba.njit(fastmath=False, boundscheck=False)
def kw_njit(a, k):
    return a[k] - a[0]


def runtime_kernel(a):
    # numba.njit(runtime_kernel) below, run when the module is imported
    t = 0.0
    for i in range(a.shape[0]):
        t += a[i] * i
    return t


runtime_fast = numba.njit(runtime_kernel)


def plain_head(a):
    # plain Python: gets a range like every function in full trace
    return [float(x) for x in a[:3]]


class Stats:
    def mean(self, a):
        return float(sum(a)) / len(a)
'''

EAGER = '''"""numba kernels compiled when the module is imported (a signature is given),
beside plain Python (written by tests/run/test_numba.py)."""
import math

import numba
from numba import guvectorize, njit


@numba.vectorize(["float64(float64)"])
def vec_sig(x):
    return math.sqrt(x) + 1.0


@guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def gu_sum(a, out):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    out[0] = s


@njit("float64(float64, float64)")
def eager_sig(x, y):
    return x - y / 2.0


def plain_norm(a):
    # plain Python
    return math.sqrt(sum(float(x) * float(x) for x in a))
'''

MAIN = '''"Drives kernels.py and eager.py; prints every result (written by tests/run/test_numba.py)."
import sys
import traceback

import numba
import numpy as np

import kernels

try:
    import eager
except Exception as e:
    eager = None
    EAGER_ERROR = e
    traceback.print_exc()


def late(x):
    # compiled by numba.njit(late) inside main(), at run time
    y = x * x
    return y - 2.0


def report(name, value):
    if isinstance(value, np.ndarray):
        value = [round(float(v), 6) for v in value.ravel()]
    print("%-12s %s" % (name, value))


def case(name, fn, *args):
    # one kernel: its result, or the error (the first lines, and the traceback on stderr)
    try:
        report(name, fn(*args))
    except Exception as e:
        report(name, "FAILED: %s: %s" % (type(e).__name__, " | ".join(str(e).strip().splitlines()[:4])))
        traceback.print_exc()


def compiled(f):
    # each kernel must be a numba object that has compiled code now
    kind = type(f).__name__
    sigs = getattr(f, "signatures", None) or getattr(f, "types", None)  # Dispatcher / DUFunc, GUFunc
    return "%s:%s" % (kind, "compiled" if sigs else "NOT COMPILED")


def main():
    print("origin", kernels.__file__, file=sys.stderr)
    a = np.arange(1.0, 9.0)
    case("nj_sumsq", kernels.nj_sumsq, a)
    case("jit_fib", kernels.jit_fib, 30)
    case("vec_lazy", kernels.vec_lazy, a)
    case("alias_nj", kernels.alias_nj, 6, 7)
    case("nb_triple", kernels.nb_triple, a)
    case("kw_njit", kernels.kw_njit, a, 5)
    case("runtime", kernels.runtime_fast, a)
    case("late", lambda x: numba.njit(late)(x), 7.0)
    case("plain_head", kernels.plain_head, a)
    case("Stats.mean", kernels.Stats().mean, [1.0, 2.0, 6.0])
    if eager is None:
        report("eager.py", "FAILED at import: %s: %s" % (type(EAGER_ERROR).__name__,
                                                        " | ".join(str(EAGER_ERROR).strip().splitlines()[:4])))
    else:
        case("vec_sig", eager.vec_sig, a)
        case("gu_sum", eager.gu_sum, a.reshape(2, 4))
        case("eager_sig", eager.eager_sig, 3.0, 5.0)
        case("plain_norm", eager.plain_norm, a)
    for mod, names in ((kernels, ("nj_sumsq", "jit_fib", "vec_lazy", "alias_nj", "nb_triple", "kw_njit",
                                  "runtime_fast")),
                       (eager, ("vec_sig", "gu_sum", "eager_sig"))):
        for name in names:
            if mod is not None:
                report(name, compiled(getattr(mod, name)))


if __name__ == "__main__":
    main()
'''

# function name -> what it is, per file
JITTED = {"kernels.py": ["nj_sumsq", "jit_fib", "vec_lazy", "alias_nj", "nb_triple", "kw_njit"],
          "eager.py": ["vec_sig", "gu_sum", "eager_sig"]}
RUNTIME_JITTED = {"kernels.py": ["runtime_kernel"], "main.py": ["late"]}
PLAIN = {"kernels.py": ["plain_head", "Stats.mean"], "eager.py": ["plain_norm"],
         "main.py": ["main", "report", "case", "compiled"]}


def functions(path):
    """qualname -> text of the function, decorators included."""
    text = open(path).read()
    lines = text.splitlines()
    out = {}

    def walk(node, prefix):
        for n in ast.iter_child_nodes(node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([d.lineno for d in n.decorator_list] + [n.lineno])
                out[prefix + n.name] = "\n".join(lines[first - 1:n.end_lineno])
            elif isinstance(n, ast.ClassDef):
                walk(n, prefix + n.name + ".")
    walk(ast.parse(text), "")
    return out


def main():
    ncrewrite, ncrun = sys.argv[1], os.path.join(sys.argv[2], "ncrun")
    why = common.have(["numba", "numpy"])
    if why:
        print("skipped: %s cannot import numba, numpy: %s" % (PY, why))
        return 77
    t0 = time.time()
    tmp = common.mkdtemp("numba")
    try:
        src, out = os.path.join(tmp, "src"), os.path.join(tmp, "shadow")
        os.makedirs(src)
        for name, text in (("kernels.py", KERNELS), ("eager.py", EAGER), ("main.py", MAIN)):
            with open(os.path.join(src, name), "w") as f:
                f.write(text)
        if not common.ncrewrite_full(ncrewrite, src, out):
            return common.finish()

        names, per_file = common.manifest_names(out)
        for fname in ("kernels.py", "eager.py", "main.py"):
            mod = fname[:-3]
            fns = functions(os.path.join(out, fname))
            for fn in PLAIN.get(fname, []):
                check("%s.%s" % (mod, fn) in names and "ncrt" in fns.get(fn, ""),
                      "%s: plain function %s has its range (manifest: %s; marker in the text: %s)" %
                      (fname, fn, "%s.%s" % (mod, fn) in names, "ncrt" in fns.get(fn, "")))
            for fn in JITTED.get(fname, []):
                body = fns.get(fn, "")
                check("%s.%s" % (mod, fn) not in names and "ncrt" not in body and body,
                      "%s: numba function %s is left as written (no range in the manifest, no marker)%s" %
                      (fname, fn, "" if "ncrt" not in body else ":\n" + common.first_lines(body, 6)))
            for fn in RUNTIME_JITTED.get(fname, []):
                body = fns.get(fn, "")
                print("  note: %s: %s (numba.njit(%s) at run time): %s" %
                      (fname, fn, fn, "instrumented: range %s" % ("%s.%s" % (mod, fn)) if "ncrt" in body
                       else "left as written"))

        env = common.clean_env()
        runs = {}
        for label, cmd, e in (("original", [PY, "-s", os.path.join(src, "main.py")], env),
                              ("shadow tree, no ncrt", [PY, "-s", os.path.join(out, "main.py")], env)):
            t = time.time()
            p = subprocess.run(cmd, env=e, capture_output=True, text=True, cwd=tmp)
            runs[label] = p
            print("[%s] exit %d in %.1fs" % (label, p.returncode, time.time() - t))
            for line in p.stdout.splitlines():
                print("    " + line)
            if p.returncode:
                print(common.first_lines(p.stderr[-4000:], 1000)[-6000:])
        want = runs["original"]
        if not check(want.returncode == 0 and "NOT COMPILED" not in want.stdout,
                     "original: runs and every kernel is compiled by numba"):
            return common.finish()
        got = runs["shadow tree, no ncrt"]
        check(("origin " + os.path.join(out, "kernels.py")) in got.stderr,
              "shadow tree, no ncrt: kernels.py imported from the shadow tree")
        check((got.returncode, got.stdout) == (0, want.stdout),
              "shadow tree, no ncrt: exit 0 and the same output as the original%s" %
              ("" if (got.returncode, got.stdout) == (0, want.stdout) else
               " (exit %d); lines that differ:\n%s\n    stderr:\n%s" %
               (got.returncode, differ(want.stdout, got.stdout), numba_error(got.stderr))))

        (rc, so, se, _, _), evs = common.under_ncrun(ncrun, os.path.join(tmp, "run"), "numba", None,
                                                      [PY, "-s", os.path.join(out, "main.py")], env, None, cwd=tmp)
        check(("origin " + os.path.join(out, "kernels.py")) in se, "under ncrun: kernels.py imported from the shadow tree")
        check((rc, so) == (0, want.stdout), "under ncrun: exit 0 and the same output as the original%s" %
              ("" if (rc, so) == (0, want.stdout) else " (exit %d); lines that differ:\n%s\n    stderr:\n%s" %
               (rc, differ(want.stdout, so), numba_error(se))))
        counts = common.range_counts(evs)
        for n, k in (("kernels.plain_head", 1), ("kernels.Stats.mean", 1), ("eager.plain_norm", 1), ("main.main", 1),
                     ("main.report", 24)):
            check(counts.get(n, 0) >= k, "under ncrun: the trace holds %s (%d, want at least %d)" %
                  (n, counts.get(n, 0), k))
        jitted = sorted(n for n in counts if n.split(".")[-1] in sum(JITTED.values(), []))
        check(not jitted, "under ncrun: no range named after a numba function%s" % (": %s" % jitted if jitted else ""))
    finally:
        common.rmtree(tmp)
    print("total %.0fs" % (time.time() - t0))
    return common.finish()


def differ(want, got):
    w, g = want.splitlines(), got.splitlines()
    out = ["      - %s\n      + %s" % (a, b) for a, b in zip(w, g) if a != b]
    out += ["      - %s" % a for a in w[len(g):]] + ["      + %s" % b for b in g[len(w):]]
    return "\n".join(out[:16])


def numba_error(stderr):
    """The useful part of a numba failure: the exception line and the lines after it."""
    lines = [l for l in stderr.splitlines() if l.strip() and not l.startswith("origin ")]
    for i, l in enumerate(lines):
        if l.startswith(("numba.core.errors.", "numba.", "TypeError", "NotImplementedError", "Exception")) or \
                "Error:" in l.split(" ")[0]:
            return "\n".join("      " + x for x in lines[i:i + 6])
    return "\n".join("      " + x for x in lines[-14:])


if __name__ == "__main__":
    sys.exit(main())
