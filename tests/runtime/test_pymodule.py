#!/usr/bin/env python3
"""Tests of the ncrt Python module across interpreters, and of ncrun's
check that the program's Python can import it.

    test_pymodule.py CASE NCRUN_DIR PYTHONS AUTO

NCRUN_DIR holds ncrun, libncrt.so and python/ (one ncrt build per CPython
version). PYTHONS: the interpreters CMake built the module for,
"VERSION=PATH" joined by commas (NC_PY_FOUND); AUTO: 1 when CMake found
them itself, 0 when NCREWRITE_PYTHONS listed them. CASE is one of

  decorator-gc     decorated functions (methods, staticmethods, spans, cycles
                   through __dict__, __wrapped__ and bound methods) under
                   PYTHONMALLOC=debug and gc stress, on every interpreter
  jit-trace        torch.jit.trace of an instrumented module gives the graph
                   of the uninstrumented one (torch_range, torch_span, and
                   ncrt.range with NCRT_TORCH=1)
  python-X.Y       that CPython version imports its own build and records
  ncrun-check      ncrun warns, before the run, when the program's Python
                   cannot import ncrt, and runs it anyway
  recursion        `with ncrt.range(...)` costs at most one recursion level

Exit 0 passed, 1 failed, 77 skipped (the reason printed).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_runtime as tr  # noqa: E402  (its helpers: Ctx, traces, counts, spans)
from test_runtime import Fail, check, SKIP  # noqa: E402

PROGS = tr.PROGS


def interpreters(arg):
    """[(version, path)] from "3.11=/usr/bin/python3,3.12=..."."""
    out = []
    for item in filter(None, arg.split(",")):
        v, _, p = item.partition("=")
        out.append((v, p))
    return out


def ext_suffix(py):
    r = subprocess.run([py, "-c", "import sysconfig;print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                       capture_output=True, text=True)
    return r.stdout.strip()


def all_counts(t):
    """Every range by name, push/pop and start/end alike."""
    n = {}
    for e in t["traceEvents"]:
        if e["ph"] == "X" and e["cat"] == "user_annotation":
            n[e["name"]] = n.get(e["name"], 0) + 1
    return n


def pyenv(c, extra=None):
    e = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(c.ncrun), "python"))
    e.update(extra or {})
    return e


# ---------------------------------------------------------------- cases

def case_decorator_gc(c, pythons, auto):
    """The decorator forms are GC-correct: tracked wrappers whose traverse
    sees the function, the range and __dict__. Under PYTHONMALLOC=debug
    (allocator misuse aborts) and a collector running at nearly every
    allocation; every cycle is collected and every call recorded."""
    check(pythons, "no interpreter given")
    for v, py in pythons:
        prog = os.path.join(PROGS, "decorator_gc.py")
        env = {"PYTHONMALLOC": "debug", "PYTHONFAULTHANDLER": "1"}
        plain = subprocess.run([py, prog, "300"], capture_output=True, text=True, env=pyenv(c, env))
        check(plain.returncode == 0, "%s (%s), no collector: exit %d\n%s" % (py, v, plain.returncode,
                                                                             plain.stderr[-3000:]))
        p, d = c.run([py, prog, "300"], env=env, opts=["--throttle", "off", "--name", "gc"], expect_rc=None)
        check(p.returncode == 0, "%s (%s) under ncrun: exit %d\n%s" % (py, v, p.returncode, p.stderr[-3000:]))
        want = json.loads(p.stdout)
        check(want == json.loads(plain.stdout), "calls differ with and without the collector")
        t = tr.one_trace(d, "gc-rank0.pt.trace.json.gz")
        got = all_counts(t)
        check(got == want, "%s (%s): recorded %s, called %s" % (py, v, got, want))
        sp = {e["name"] for e in tr.spans(t)}
        check(sp == {"C.sp", "C.tsp", "holder.scb", "tmp.span"}, "%s: start/end ranges %s" % (py, sorted(sp)))
        print("%s (CPython %s): %d decorated calls recorded, cycles collected" % (py, v, sum(got.values())))


def case_jit_trace(c, pythons, auto):
    """Under torch.jit.trace the torch bridge opens no record_function: the
    traced graph equals the uninstrumented module's, with no profiler::
    node; outside tracing the bridge still reaches torch.profiler."""
    py = tr.PY
    if subprocess.run([py, "-c", "import torch"], capture_output=True).returncode:
        print("SKIPPED: torch is not importable by %s (apt-get install python3-torch)" % py)
        return SKIP
    r = subprocess.run([py, "-c", "import ncrt"], capture_output=True, text=True, env=pyenv(c))
    if r.returncode:
        print("SKIPPED: %s has no ncrt build here (NCREWRITE_PYTHONS?): %s" % (py, r.stderr.strip()[-200:]))
        return SKIP
    prog = os.path.join(PROGS, "jit_trace.py")

    def run(mode, env=None):
        p, d = c.run([py, prog, mode], env=env, opts=["--name", "jit"], expect_rc=None)
        check(p.returncode == 0, "%s: exit %d\n%s" % (mode, p.returncode, p.stderr[-3000:]))
        lines = p.stdout.strip().splitlines()
        check(lines and lines[-1].startswith("PROFILED "), "%s: output %r" % (mode, p.stdout))
        return "\n".join(lines[:-1]), lines[-1], d

    base, prof, _ = run("plain")
    check("aten::relu" in base and "profiler::" not in base, "plain graph:\n" + base)
    check(prof == "PROFILED True []", "plain: %s" % prof)
    for mode, env in (("torch_range", None), ("torch_span", None), ("range", {"NCRT_TORCH": "1"})):
        g, prof, d = run(mode, env)
        check("profiler::" not in g, "%s: record_function traced into the graph:\n%s" % (mode, g))
        check(g == base, "%s: the graph differs from the uninstrumented one:\n%s\n--- uninstrumented:\n%s" % (
            mode, g, base))
        check(prof == "PROFILED True ['Block.act', 'Block.forward']",
              "%s: after tracing, torch.profiler saw %s" % (mode, prof))
        # the NVTX ranges are kept, in tracing too (1 traced call, 1 check, 2 eager)
        n = all_counts(tr.one_trace(d, "jit-rank0.pt.trace.json.gz"))
        check(n.get("Block.forward", 0) >= 3 and n.get("Block.act", 0) >= 3, "%s: ncrt ranges %s" % (mode, n))
        print("%s: graph unchanged, no profiler:: node; ranges %s" % (mode, n))


def find_on_machine(ver):
    """Interpreters of version ver a user would reach: python3.X on PATH,
    /usr/bin, /usr/local/bin, pyenv's versions."""
    found = []
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/local/bin", "/usr/bin"]:
        p = os.path.join(d, "python" + ver)
        if os.access(p, os.X_OK):
            found.append(p)
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found += sorted(glob.glob(os.path.join(root, "versions", ver + ".*", "bin", "python3")))
    real = []
    for p in found:
        r = subprocess.run([p, "-c", "import sys, sysconfig, os; print(sys.executable); "
                            "print(os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"],
                           capture_output=True, text=True)
        out = r.stdout.split()
        if r.returncode == 0 and len(out) == 2:
            real.append((out[0], out[1] == "True"))
    return real


def case_python_version(c, pythons, auto, ver):
    """CPython ver imports its own ncrt build from ncrun's directory and
    records (a program with decorators, methods, threads, a span across
    threads; an async program)."""
    mine = [py for v, py in pythons if v == ver]
    if not mine:
        seen = find_on_machine(ver)
        with_headers = [p for p, h in seen if h]
        if auto and with_headers:
            raise Fail("CPython %s with its headers is here (%s) but CMake built no ncrt for it (found: %s)" % (
                ver, ", ".join(with_headers), ", ".join("%s=%s" % x for x in pythons)))
        if seen:
            print("SKIPPED: CPython %s is here (%s) but %s" % (
                ver, ", ".join(p for p, h in seen),
                "without its headers (Python.h)" if not with_headers else "not in NCREWRITE_PYTHONS"))
        else:
            print("SKIPPED: no CPython %s on this machine (PATH, /usr/bin, /usr/local/bin, pyenv)" % ver)
        return SKIP
    pydir = os.path.join(os.path.dirname(c.ncrun), "python")
    for py in mine:
        suf = ext_suffix(py)
        r = subprocess.run([py, "-c", "import ncrt, sys; print(ncrt.__file__); print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True, env=pyenv(c))
        check(r.returncode == 0, "%s cannot import ncrt: %s" % (py, r.stderr))
        f, v = r.stdout.split()
        check(v == ver and f == os.path.join(pydir, "ncrt" + suf), "%s imported %s (CPython %s)" % (py, f, v))
        # records: the python case's program, as test_runtime checks it
        prog = os.path.join(PROGS, "model.py")
        p, d = c.run([py, prog])
        check(p.stdout == "total 51\n", "%s: output %r" % (py, p.stdout))
        check("cannot import ncrt" not in p.stderr, "%s: ncrun warned: %s" % (py, p.stderr))
        t = tr.one_trace(d, "model-rank0.pt.trace.json.gz")
        tr.check_nesting(t)
        want = {"main": 1, "train_step": 6, "Attention.forward": 6, "Block.run": 6, "helper": 6, "42": 1,
                "worker.item": 10}
        check(tr.counts(t) == want, "%s: ranges %s, expected %s" % (py, tr.counts(t), want))
        line = [e for e in tr.xs(t) if e["name"] == "Attention.forward"][0]["args"]
        check((line.get("file"), line.get("line")) == (prog, 11), "%s: source location %s" % (py, line))
        check([x["name"] for x in tr.spans(t)] == ["handoff"], "%s: spans %s" % (py, tr.spans(t)))
        p, d = c.run([py, os.path.join(PROGS, "async_prog.py")])
        check(p.stdout == "10 6\n", "%s: async output %r" % (py, p.stdout))
        n = {}
        for x in tr.spans(tr.one_trace(d, "async_prog-rank0.pt.trace.json.gz")):
            n[x["name"]] = n.get(x["name"], 0) + 1
        check(n == {"main": 1, "consume": 5, "fetch": 5, "gen": 1}, "%s: async spans %s" % (py, n))
        print("%s: CPython %s imports %s and records" % (py, ver, os.path.basename(f)))


def case_ncrun_check(c, pythons, auto):
    """ncrun says before the run, in one line, when the program's Python
    cannot import ncrt (which interpreter, its version, why), and runs the
    program anyway with its output and status; it says nothing when the
    import works or the command is no Python."""
    py = tr.PY
    suf = ext_suffix(py)
    ver = subprocess.run([py, "-c", "import sys;print('%d.%d.%d' % sys.version_info[:3])"], capture_output=True,
                         text=True).stdout.strip()
    mm = ".".join(ver.split(".")[:2])
    # a copy of the runtime whose python/ lacks this interpreter's build
    cp = os.path.join(c.tmp, "rt")
    os.makedirs(os.path.join(cp, "python"))
    shutil.copy2(c.ncrun, cp)
    shutil.copy2(c.lib, cp)
    pydir = os.path.join(os.path.dirname(c.ncrun), "python")
    others = sorted(f for f in os.listdir(pydir) if f.startswith("ncrt.") and f != "ncrt" + suf)
    for f in others:
        shutil.copy2(os.path.join(pydir, f), os.path.join(cp, "python"))
    cpdir = os.path.realpath(os.path.join(cp, "python"))
    prog = os.path.join(c.tmp, "prog.py")
    with open(prog, "w") as f:
        f.write("#!%s\n"
                "import contextlib, sys\n"
                "try:\n"
                "    from ncrt import range as _ncrt_range\n"
                "except ImportError:\n"
                "    _ncrt_range = contextlib.nullcontext\n"
                "with _ncrt_range('prog'):\n"
                "    print('prog ran', sys.argv[1:])\n"
                "sys.exit(3)\n" % py)
    os.chmod(prog, 0o755)
    envscript = os.path.join(c.tmp, "envprog")
    with open(envscript, "w") as f:
        f.write("#!/usr/bin/env %s\n" % os.path.basename(py) + open(prog).read().split("\n", 1)[1])
    os.chmod(envscript, 0o755)

    def run(ncrun, cmd, opts=(), env=None):
        c.runs += 1
        d = os.path.join(c.tmp, "chk%d" % c.runs)
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run([ncrun, "--run-dir", d] + list(opts) + ["--"] + cmd, capture_output=True, text=True,
                           env=e, cwd=c.tmp)
        check(p.returncode == 3 and p.stdout == "prog ran ['x']\n",
              "%s: status %d, output %r (the program must run anyway)\n%s" % (cmd, p.returncode, p.stdout, p.stderr))
        return [l for l in p.stderr.splitlines() if "cannot import ncrt" in l], p.stderr, d

    def one_warning(w, err, what, *needles):
        check(len(w) == 1, "%s: want one warning, stderr:\n%s" % (what, err))
        for n in needles:
            check(n in w[0], "%s: %r not in the warning: %s" % (what, n, w[0]))
        # before the run: the warning comes before the program's end and ncrun's summary
        check(err.index(w[0]) < err.index("no trace was written"), "%s: warning after the run" % what)

    rt = os.path.join(cp, "ncrun")
    nobuild = "ncrt has no build for CPython %s (looked in %s for ncrt%s" % (mm, cpdir, suf)
    w, err, _ = run(rt, [py, prog, "x"])
    one_warning(w, err, "interpreter", py, "CPython " + ver, nobuild)
    print(w[0])
    if others:
        built = sorted(m.group(1) + "." + m.group(2) for m in (re.match(r"ncrt\.cpython-(\d)(\d+)", f)
                                                                for f in others) if m)
        check(all(b in w[0] for b in built), "the builds there are not named: %s" % w[0])
    w, err, _ = run(rt, [prog, "x"])
    one_warning(w, err, "#! script", py, nobuild)
    w, err, _ = run(rt, [envscript, "x"], env={"PATH": os.path.dirname(py) + os.pathsep + os.environ["PATH"]})
    one_warning(w, err, "#!/usr/bin/env script", os.path.basename(py), nobuild)
    # a build that does not load: the import error, as the interpreter says it
    with open(os.path.join(cp, "python", "ncrt" + suf), "w") as f:
        f.write("not an ELF file\n")
    w, err, _ = run(rt, [py, "-u", prog, "x"])
    one_warning(w, err, "broken build", "ImportError", "ncrt" + suf)
    # a build whose import kills the interpreter
    crash = os.path.join(c.tmp, "crash.c")
    with open(crash, "w") as f:
        f.write("#include <signal.h>\nvoid *PyInit_ncrt(void);\n"
                "void *PyInit_ncrt(void) { raise(SIGSEGV); return 0; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", crash, "-o", os.path.join(cp, "python", "ncrt" + suf)], check=True)
    c.runs += 1
    p = subprocess.run([rt, "--run-dir", os.path.join(c.tmp, "crash"), "--", py, "-c", "print('fine')"],
                       capture_output=True, text=True)
    w = [l for l in p.stderr.splitlines() if "cannot import ncrt" in l]
    check(p.returncode == 0 and p.stdout == "fine\n" and len(w) == 1 and "importing ncrt killed it (signal 11)" in w[0],
          "a crashing build: %d %r %r" % (p.returncode, p.stdout, p.stderr))
    os.remove(os.path.join(cp, "python", "ncrt" + suf))
    # isolated mode ignores PYTHONPATH, where ncrun puts ncrt
    w, err, _ = run(c.ncrun, [py, "-I", prog, "x"])
    one_warning(w, err, "-I", "ignores PYTHONPATH")
    w, err, _ = run(c.ncrun, [py, "-W", "ignore", "-IS", prog, "x"])
    one_warning(w, err, "-W ignore -IS", "ignores PYTHONPATH")
    # quiet: no message; a working import or no Python at all: no warning
    w, err, _ = run(rt, [py, prog, "x"], opts=["-q"])
    check(not err.strip(), "-q printed %r" % err)
    w, err, d = run(c.ncrun, [py, prog, "x"])
    check(not w, "a false warning: %s" % err)
    check([os.path.basename(x) for x in tr.traces(d)] == ["prog-rank0.pt.trace.json.gz"],
          "the check must write no trace of its own: %s" % tr.traces(d))
    w, err, _ = run(rt, ["sh", "-c", "%s %s x" % (py, prog)])
    check(not w, "warned for a command that is no Python: %s" % err)
    print("ok: warnings for a missing build, a #! script, env, a broken build, -I; none otherwise")


def case_recursion(c, pythons, auto):
    """On CPython before 3.12 C calls count toward the recursion limit, so
    `with ncrt.range(...)` in a recursive function costs one level there;
    never more than one, on every interpreter. (@ncrt.range as a decorator
    costs none below CPython 3.12's C recursion limit.)"""
    check(pythons, "no interpreter given")
    for v, py in pythons:
        p, d = c.run([py, os.path.join(PROGS, "recursion.py")], opts=["--name", "rec"])
        res = json.loads(p.stdout)
        for limit, r in sorted(res.items(), key=lambda x: int(x[0])):
            cost = r["plain"] - r["with"]
            check(0 <= cost <= 1, "%s (CPython %s), limit %s: `with ncrt.range` costs %d levels (%s)" % (
                py, v, limit, cost, r))
            # CPython 3.12 also limits calls through C to ~750 levels (its
            # C recursion limit: 1500 units, two per call into Python)
            if int(limit) <= 700:
                check(r["plain"] - r["decorated"] <= 1, "%s, limit %s: the decorator costs %d levels" % (
                    py, limit, r["plain"] - r["decorated"]))
        n = all_counts(tr.one_trace(d, "rec-rank0.pt.trace.json.gz"))
        check(n.get("rec.with", 0) > 0 and n.get("rec.decorated", 0) > 0, "%s: ranges %s" % (py, n))
        print("%s (CPython %s): deepest recursion %s" % (py, v, json.dumps(res)))


CASES = {"decorator-gc": case_decorator_gc, "jit-trace": case_jit_trace, "ncrun-check": case_ncrun_check,
         "recursion": case_recursion}


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    case, ncrun_dir, pys, auto = sys.argv[1:]
    pythons = interpreters(pys)
    m = re.match(r"python-(\d+\.\d+)$", case)
    if m:
        fn = lambda c, p, a: case_python_version(c, p, a, m.group(1))  # noqa: E731
    elif case in CASES:
        fn = CASES[case]
    else:
        print("unknown case %s; cases: %s python-X.Y" % (case, " ".join(sorted(CASES))))
        return 2
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rc = fn(tr.Ctx(ncrun_dir, tmp), pythons, auto == "1")
        except Fail as e:
            print("FAILED: %s" % e)
            return 1
    if rc == SKIP:
        return SKIP
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
