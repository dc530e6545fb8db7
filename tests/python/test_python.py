#!/usr/bin/env python3
"""The Python package (python/: ncrewrite and its C extension _engine).

    test_python.py SOURCE_DIR DEPS_DIR BUILD_DIR

Builds python/ once with Debian's pip and setuptools, offline
(--no-build-isolation --no-index), into a temporary user site
(PYTHONUSERBASE: a real site directory, so ncrewrite-bootstrap.pth runs in
child processes), then checks, each in a fresh interpreter:
  - the abi3 extension imports and rewrites under every CPython >= 3.9 found
    (Debian's, pyenv's), and the hook works there too;
  - a bad rule file (and a bad dict config) raise RulesError with the
    engine's file:line:col diagnostics;
  - enable_rewrites on a package installed in that site directory: the
    module is rewritten by the engine (the cached source shows the range),
    __file__ and tracebacks point at the original file and line;
  - a second process hits the cache (no engine call);
  - target modules imported before enabling are named in the warning;
  - a multiprocessing spawn worker imports the target rewritten;
  - disable_rewrites stops rewriting and stops passing the hook on;
  - enable_full_trace_mode: the program's own modules, excludes, modules=;
  - an engine out-of-memory raises EngineError and the interpreter lives on;
  - under build/bin/ncrun, nctrace summary --format json counts the ranges;
  - the profiling side: profiling_cases.py (sessions, profilers, loaders).
Nothing depends on timing. Exit 0 passed, 1 failed, 77 skipped (with why).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

PY = "/usr/bin/python3"
FAILS = []
NOTES = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
    return cond


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


MOD = '''\
import os


def work(x):

    y = x + 1
    if y > 2:
        raise ValueError("boom %d" % y)
    return y


def probe(_=None):
    import sys
    import ncrewrite
    m = sys.modules[__name__]
    return {"pid": os.getpid(), "instrumented": "__ncrt__" in vars(m), "loader": type(m.__loader__).__name__,
            "stats": ncrewrite.stats(), "hook_env": bool(os.environ.get("NCREWRITE_HOOK"))}
'''
RAISE_LINE = 8  # of MOD: raise ValueError(...)

OTHER = '''\
def other():

    return 1
'''

RULES = '''\
targets:
  demo.mod:
    func_context_wrappings:
      work: {}
  demo.other:
    func_context_wrappings:
      other: {}
'''

BAD_RULES = '''\
targets:
  demo.mod:
    func_context_wrappings:
      work: {contxt_class: x}
'''


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, deps, build = (os.path.abspath(a) for a in sys.argv[1:])
    for what, cmd in (("pip", [PY, "-m", "pip", "--version"]),
                      ("setuptools and wheel", [PY, "-c", "import setuptools, wheel"])):
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            skip("Debian's %s missing for %s (scripts/setup-deps installs python3-pip, python3-setuptools, "
                 "python3-wheel)" % (what, PY))
    if not glob.glob(os.path.join(deps, "tree-sitter-*.tgz")):
        skip("no tree-sitter tarballs in %s (cmake's configure step fetches them)" % deps)
    tmp = tempfile.mkdtemp(prefix="nc-python-")
    try:
        run_all(src, deps, build, tmp)
    finally:
        if not FAILS:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("(kept %s)" % tmp)
    for n in NOTES:
        print("note: " + n)
    if FAILS:
        print("FAILED:\n" + "\n".join("  " + f.replace("\n", "\n    ") for f in FAILS))
        sys.exit(1)
    print("python: all checks passed")


def base_env(tmp):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NCRT_", "NVTX_", "NCREWRITE_")) and k not in ("PYTHONPATH", "PYTHONNOUSERSITE",
                                                                              "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONUSERBASE"] = os.path.join(tmp, "userbase")
    env["NCREWRITE_CACHE"] = os.path.join(tmp, "cache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["HOME"] = tmp  # nothing of the user's ~/.cache
    return env


def py(code, env, cwd, exe=PY, args=(), want_rc=0, name="program"):
    """Run code (a file in cwd) with exe; its stdout's last line is JSON."""
    path = os.path.join(cwd, name + ".py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(code))
    p = subprocess.run([exe, path] + list(args), env=env, cwd=cwd, capture_output=True, text=True)
    if not check(p.returncode == want_rc, "%s (%s): exit %d, want %d\n%s%s" % (name, exe, p.returncode, want_rc,
                                                                              p.stdout, p.stderr)):
        return None, p
    try:
        return json.loads(p.stdout.strip().splitlines()[-1]), p
    except (ValueError, IndexError):
        FAILS.append("%s: no JSON on stdout\n%s%s" % (name, p.stdout, p.stderr))
        return None, p


def run_all(src, deps, build, tmp):
    env = base_env(tmp)
    usersite = subprocess.run([PY, "-c", "import site; print(site.getusersitepackages())"], env=env,
                              capture_output=True, text=True, check=True).stdout.strip()
    # one wheel for every CPython >= 3.9, built out of tree by scripts/wheel
    # (the clone stays clean), installed with plain `pip install FILE.whl`
    dist = os.path.join(tmp, "dist")
    benv = dict(env, NCREWRITE_BUILD=build, NCREWRITE_DEPS_DIR=deps)
    p = subprocess.run(["bash", os.path.join(src, "scripts", "wheel"), dist], env=benv, cwd=tmp,
                       capture_output=True, text=True)
    if not check(p.returncode == 0, "scripts/wheel failed:\n%s%s" % (p.stdout, p.stderr[-4000:])):
        return
    whl = p.stdout.strip().splitlines()[-1]
    check(os.path.basename(whl).endswith("-cp39-abi3-linux_x86_64.whl"), "wheel's tags: %s" % whl)
    check("wheel: the parsers" in p.stderr and "wheel: the ncrt module for" in p.stderr,
          "scripts/wheel shows no progress:\n%s" % p.stderr)
    p = subprocess.run([PY, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
                        "--target", usersite, whl], env=env, cwd=tmp, capture_output=True, text=True)
    if not check(p.returncode == 0, "pip install %s failed:\n%s%s" % (whl, p.stdout, p.stderr[-4000:])):
        return
    wheel_everywhere(whl, tmp, env)
    locations(PY, "debian", env, tmp)
    torchscript_hook(env, tmp)
    so = glob.glob(os.path.join(usersite, "ncrewrite", "_engine*.so"))
    check([os.path.basename(s) for s in so] == ["_engine.abi3.so"], "extension file: %s (want _engine.abi3.so)" % so)
    check(os.path.isfile(os.path.join(usersite, "ncrewrite-bootstrap.pth")), "ncrewrite-bootstrap.pth not installed")
    # the small package, installed into the same site directory
    os.makedirs(os.path.join(usersite, "demo"))
    for name, text in (("__init__.py", ""), ("mod.py", MOD), ("other.py", OTHER)):
        with open(os.path.join(usersite, "demo", name), "w") as f:
            f.write(text)
    modpath = os.path.join(usersite, "demo", "mod.py")
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    rules = os.path.join(work, "rules.yaml")
    with open(rules, "w") as f:
        f.write(RULES)
    with open(os.path.join(work, "bad.yaml"), "w") as f:
        f.write(BAD_RULES)

    out, _ = py('''\
        import json, site, sys
        print(json.dumps([site.ENABLE_USER_SITE, site.getusersitepackages() in sys.path]))
        ''', env, work, name="usersite")
    if out != [True, True]:
        FAILS.append("the user site directory is not in use (%s): the tests need it" % out)
        return

    abi3_everywhere(usersite, work, env, rules)
    bad_rules(work, env)
    first_import(work, env, rules, modpath)
    second_import(work, env, rules)
    imported_before(work, env, rules)
    spawn_worker(work, env, rules)
    disable(work, env, rules)
    full_trace(work, env, tmp)
    engine_oom(work, env)
    under_ncrun(work, env, rules, build, tmp)
    import profiling_cases
    profiling_cases.run(sys.modules[__name__], usersite, work, env, tmp)


def interpreters():
    """CPython >= 3.9 besides Debian's: pyenv's, python3.N on PATH."""
    found = {}
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    cands = sorted(glob.glob(os.path.join(root, "versions", "*", "bin", "python3")))
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/local/bin", "/usr/bin"]:
        cands += sorted(glob.glob(os.path.join(d, "python3.[0-9]*")))
    for exe in cands:
        if not re.search(r"python3(\.\d+)?$", exe) or not os.access(exe, os.X_OK):
            continue
        p = subprocess.run([exe, "-c", "import sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2], "
                                       "sys.version_info >= (3, 9), hasattr(sys, '_is_gil_enabled') and not sys._is_gil_enabled())"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            continue
        impl, ver, ok, ft = p.stdout.split()
        if impl == "cpython" and ok == "True" and ft == "False" and ver not in found:
            found[ver] = exe
    return found


# Locations through the import hook (issue 31): a few PEP 8 modules of the
# running interpreter's own standard library, copied into a package and
# fully traced, against the same files loaded without the hook: every
# function's and method's inspect.getsource, co_firstlineno and statement
# lines, and a traceback's (file, line, text) frames, are the original's.
LOCATIONS = """\
import dis, importlib, importlib.util, inspect, json, os, shutil, sys, traceback, types
work = sys.argv[1]
pkg = "locpkg_%d%d" % sys.version_info[:2]
names = ["textwrap", "shlex", "fractions", "colorsys", "statistics"]
os.makedirs(os.path.join(work, pkg), exist_ok=True)
open(os.path.join(work, pkg, "__init__.py"), "w").close()
for n in names:
    shutil.copy(importlib.util.find_spec(n).origin, os.path.join(work, pkg, n + ".py"))
sys.path.insert(0, work)
orig = {}
for n in names:
    spec = importlib.util.spec_from_file_location("orig_" + n, os.path.join(work, pkg, n + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    orig[n] = m
import ncrewrite
hook = ncrewrite.enable_full_trace_mode(modules=[pkg], warn_imported=False)
inst = {n: importlib.import_module(pkg + "." + n) for n in names}


def functions(mod):
    out = {}
    def walk(obj, prefix, depth):
        for k, v in sorted(vars(obj).items()):
            f = v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
            if isinstance(f, types.FunctionType) and f.__code__.co_filename == mod.__file__:
                out[prefix + k] = f
            elif isinstance(v, type) and depth < 3 and vars(mod).get(v.__name__) is v or (
                    isinstance(v, type) and depth and v.__qualname__ == prefix + k):
                walk(v, prefix + k + ".", depth + 1)
    walk(mod, "", 0)
    return out


def lines(code):
    out = set(l for _, l in dis.findlinestarts(code) if l)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= lines(c)
    return out


import ast
res = {"functions": 0, "source": [], "first": [], "lines": [], "ranges": 0}
for n in names:
    with open(os.path.join(work, pkg, n + ".py"), "rb") as fh:
        stmts = set(x.lineno for x in ast.walk(ast.parse(fh.read())) if isinstance(x, ast.stmt))
    a, b = functions(orig[n]), functions(inst[n])
    for q, f in a.items():
        g = b.get(q)
        if g is None:
            continue
        res["functions"] += 1
        if inspect.getsource(f) != inspect.getsource(g):
            res["source"].append(n + "." + q)
        if f.__code__.co_firstlineno != g.__code__.co_firstlineno:
            res["first"].append("%s.%s %d %d" % (n, q, f.__code__.co_firstlineno, g.__code__.co_firstlineno))
        lo, li = lines(f.__code__), lines(g.__code__)
        # every original line start is kept, and an added one (an inserted
        # `with`, at the statement it wraps: 3.9 starts no line at `while 1:`)
        # is a statement's line
        if not lo <= li or not li <= lo | stmts | {f.__code__.co_firstlineno}:
            res["lines"].append("%s.%s %s %s" % (n, q, sorted(lo - li), sorted(li - lo)))
    res["ranges"] += len(hook.loaded.get(pkg + "." + n, {}).get("ranges", []))


def frames(fn, *a):
    try:
        fn(*a)
    except Exception:
        return [(f.filename, f.lineno, f.line) for f in traceback.extract_tb(sys.exc_info()[2])[1:]]
    return None


res["tracebacks"] = []
for n, call, args in (("fractions", "Fraction", ("not a number",)), ("statistics", "mean", ([],)),
                      ("shlex", "split", ("'unterminated",)), ("textwrap", "dedent", (None,))):
    fo, fi = frames(getattr(orig[n], call), *args), frames(getattr(inst[n], call), *args)
    res["tracebacks"].append([n, fo == fi and fo is not None, fi])
print(json.dumps(res))
"""


def locations(exe, ver, env, tmp):
    d = os.path.join(tmp, "loc-%s" % ver)
    os.makedirs(d, exist_ok=True)
    out, p = py(LOCATIONS, dict(env, NCREWRITE_CACHE=os.path.join(d, "cache")), d, exe=exe, args=[d],
                name="locations")
    if out is None:
        return
    what = "hook locations (%s)" % ver
    check(out["functions"] > 100 and out["ranges"] > 100, "%s: too little compared: %s" % (what, out))
    check(not out["source"], "%s: inspect.getsource differs for %s" % (what, out["source"][:10]))
    check(not out["first"], "%s: co_firstlineno differs: %s" % (what, out["first"][:10]))
    check(not out["lines"], "%s: statement lines differ: %s" % (what, out["lines"][:10]))
    for name, same, frames_ in out["tracebacks"]:
        check(same, "%s: %s's traceback frames differ from the original's: %s" % (what, name, frames_))


TORCHSCRIPT = """\
import json, os, sys, traceback
import torch
d = sys.argv[1]
os.makedirs(os.path.join(d, "tsm"), exist_ok=True)
open(os.path.join(d, "tsm", "__init__.py"), "w").close()
with open(os.path.join(d, "tsm", "ff.py"), "w") as f:
    f.write('''import torch


class FF(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.l(x)


class Attn(torch.nn.Module):
    \\"\\"\\"Scripted, with a helper the full trace wraps.\\"\\"\\"

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(4, 4)

    def forward(self, x):
        w = (self.q(x) @ x.transpose(-2, -1)).softmax(-1)
        return w @ x
''')
sys.path.insert(0, d)
torch.manual_seed(0)
import ncrewrite
ncrewrite.enable_full_trace_mode(modules=["tsm"], warn_imported=False)
import tsm.ff as m
x = torch.ones(2, 4)
res = {}
for cls in ("FF", "Attn"):
    torch.manual_seed(0)
    eager = getattr(m, cls)()
    try:
        scripted = torch.jit.script(eager)
        res[cls] = bool(torch.allclose(scripted(x), eager(x)))
    except Exception as e:
        res[cls] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0])
res["instrumented"] = "__ncrt__" in m.FF.forward.__globals__
print(json.dumps(res))
"""


def torchscript_hook(env, tmp):
    """torch.jit.script of modules under the hook (issue 31: it failed with
    "'Tensor' object has no attribute or method '__init__'" on the smallest
    PEP 8 module): TorchScript reads the user's original text and compiles it."""
    if subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode:
        NOTES.append("torch.jit.script under the hook: Debian's python3-torch missing: left out")
        return
    d = os.path.join(tmp, "torchscript")
    os.makedirs(d, exist_ok=True)
    out, p = py(TORCHSCRIPT, dict(env, NCREWRITE_CACHE=os.path.join(d, "cache")), d, args=[d], name="torchscript")
    if out is not None:
        check(out == {"FF": True, "Attn": True, "instrumented": True},
              "torch.jit.script under the hook: %s" % out)


def wheel_everywhere(whl, tmp, env):
    """The one wheel installs with each other CPython's own pip (pyenv's
    3.12 and 3.13 have no setuptools, 3.9 and 3.10 no wheel package: a
    wheel needs neither) and works there: the engine rewrites, the ncrt
    module for that minor version records."""
    for ver, exe in sorted(interpreters().items()):
        if os.path.realpath(exe) == os.path.realpath(PY):
            continue
        site = os.path.join(tmp, "site-%s" % ver)
        p = subprocess.run([exe, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
                            "--target", site, whl], env=env, cwd=tmp, capture_output=True, text=True)
        if not check(p.returncode == 0, "pip install of the wheel with %s (%s) failed:\n%s%s"
                     % (ver, exe, p.stdout, p.stderr[-3000:])):
            continue
        out, _ = py('''\
            import json, ncrewrite, ncrt
            from ncrewrite import _engine
            print(json.dumps([ncrewrite.__file__.startswith(%r), ncrt.__file__.startswith(%r)]))
            ''' % (site, site), dict(env, PYTHONPATH=site), tmp, exe=exe, name="wheel-%s" % ver)
        check(out == [True, True], "the wheel under %s: %s" % (ver, out))
        locations(exe, ver, dict(env, PYTHONPATH=site), tmp)


def abi3_everywhere(usersite, work, env, rules):
    """The one abi3 build imports, rewrites and hooks on every CPython >= 3.9."""
    others = {v: e for v, e in interpreters().items() if os.path.realpath(e) != os.path.realpath(PY)}
    if not others:
        NOTES.append("abi3: no CPython besides %s found; the extension was tried there only" % PY)
    penv = dict(env, PYTHONPATH=usersite, NCREWRITE_CACHE=os.path.join(os.path.dirname(work), "cache-abi3"))
    for ver, exe in sorted(others.items()) + [("debian", PY)]:
        out, _ = py('''\
            import json, sys
            import ncrewrite
            from ncrewrite import _engine
            r = _engine.parse("targets: {m: {func_context_wrappings: {f: {}}}}", "x.yaml")
            text, warns, ranges, lmap = r.rewrite("m", False, "/nowhere/m.py", b"def f():\\n    return 1\\n")
            ncrewrite.enable_rewrites(sys.argv[1])
            import demo.mod
            print(json.dumps({"file": _engine.__file__, "text": text.decode(), "ranges": ranges,
                              "hooked": "__ncrt__" in vars(demo.mod), "version": sys.version}))
            ''', penv, work, exe=exe, args=[rules], name="abi3")
        if out is None:
            continue
        check(out["file"].endswith("_engine.abi3.so"), "abi3 %s: imported %s" % (ver, out["file"]))
        check('with __ncrt__.range("f"):' in out["text"], "abi3 %s: rewrite gave\n%s" % (ver, out["text"]))
        check(out["ranges"] == [["f", "function", 2, 2]], "abi3 %s: ranges %s" % (ver, out["ranges"]))
        check(out["hooked"], "abi3 %s: demo.mod not rewritten by the hook" % ver)
    if others:
        NOTES.append("abi3: one build imported under %s and %s" % (", ".join(sorted(others)), PY))


def bad_rules(work, env):
    out, _ = py('''\
        import json, ncrewrite
        res = []
        for cfg in ("bad.yaml", {"targets": {"demo.mod": {"func_context_wrappings": {"work": {"contxt_class": "x"}}}}}):
            try:
                ncrewrite.enable_rewrites(cfg)
                res.append(None)
            except ncrewrite.RulesError as e:
                res.append(str(e))
        try:
            ncrewrite.RewriteConfig.from_dict({"targets": 3}).validate()
        except ncrewrite.RulesError as e:
            res.append(str(e))
        print(json.dumps([res, ncrewrite.stats()]))
        ''', env, work, name="bad_rules")
    if out is None:
        return
    (f, d, v), st = out
    check(f and f.startswith("bad.yaml:4:14: error: unknown key 'contxt_class'") and "^" in f,
          "bad rule file: %r" % f)
    check(d and re.match(r"<RewriteConfig>\.json:\d+:\d+: error: unknown key 'contxt_class'", d),
          "bad dict config: %r" % d)
    check(v and re.match(r"<RewriteConfig>\.json:\d+:\d+: error: ", v), "bad RewriteConfig: %r" % v)
    check(st is None, "a failed enable_rewrites left a hook: %s" % st)


def first_import(work, env, rules, modpath):
    out, p = py('''\
        import json, sys, traceback, warnings
        import ncrewrite
        hook = ncrewrite.enable_rewrites(sys.argv[1])
        import demo.mod
        try:
            demo.mod.work(5)
        except ValueError as e:
            fr = traceback.extract_tb(e.__traceback__)[-1]
        print(json.dumps({"stats": ncrewrite.stats(), "file": demo.mod.__file__, "tb": [fr.filename, fr.lineno, fr.line],
                          "ok": demo.mod.work(0), "cache": hook.cache_dir, "already": hook.already_imported}))
        ''', env, work, args=[rules], name="first")
    if out is None:
        return
    check(out["stats"] == {"rewritten": 1, "cache_hits": 0, "unchanged": 0}, "first import: stats %s" % out["stats"])
    check(out["file"] == modpath, "__file__ %s, want %s" % (out["file"], modpath))
    check(out["tb"] == [modpath, RAISE_LINE, 'raise ValueError("boom %d" % y)'],
          "traceback frame %s, want %s line %d" % (out["tb"], modpath, RAISE_LINE))
    check(out["ok"] == 1 and out["already"] == [], "work(0) %s, already imported %s" % (out["ok"], out["already"]))
    check("NcrewriteWarning" not in p.stderr, "unexpected warnings:\n" + p.stderr)
    cached = glob.glob(os.path.join(out["cache"], "demo.mod.*.py"))
    if check(len(cached) == 1, "cache: %s" % os.listdir(out["cache"])):
        text = open(cached[0]).read()
        check('    with __ncrt__.range("work"):\n        y = x + 1\n' in text, "cached source:\n" + text)
        check(text.splitlines()[RAISE_LINE - 1].strip() == 'raise ValueError("boom %d" % y)',
              "cached source: line %d moved" % RAISE_LINE)
        meta = json.load(open(cached[0][:-3] + ".json"))
        check(meta["module"] == "demo.mod" and meta["path"] == modpath and meta["ranges"] ==
              [{"name": "work", "kind": "function", "lines": [6, 9]}], "cache metadata: %s" % meta)


def second_import(work, env, rules):
    out, _ = py('''\
        import json, sys
        import ncrewrite
        ncrewrite.enable_rewrites(sys.argv[1])
        import demo.mod
        print(json.dumps({"stats": ncrewrite.stats(), "hooked": "__ncrt__" in vars(demo.mod)}))
        ''', env, work, args=[rules], name="second")
    if out is not None:
        check(out["stats"] == {"rewritten": 0, "cache_hits": 1, "unchanged": 0} and out["hooked"],
              "second import (want a cache hit, no engine call): %s" % out)


def imported_before(work, env, rules):
    out, _ = py('''\
        import json, sys, warnings
        import demo.mod
        import ncrewrite
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            hook = ncrewrite.enable_rewrites(sys.argv[1])
        print(json.dumps({"already": hook.already_imported, "warnings": [str(x.message) for x in w],
                          "hooked": "__ncrt__" in vars(demo.mod)}))
        ''', env, work, args=[rules], name="before")
    if out is None:
        return
    check(out["already"] == ["demo.mod"], "already imported: %s" % out["already"])
    check(len(out["warnings"]) == 1 and "demo.mod" in out["warnings"][0] and "before" in out["warnings"][0],
          "warning about modules imported before: %s" % out["warnings"])
    check(not out["hooked"], "a module imported before enabling was changed")


def spawn_worker(work, env, rules):
    out, _ = py('''\
        import json, os, sys
        import multiprocessing as mp
        import ncrewrite

        if __name__ == "__main__":
            ncrewrite.enable_rewrites(sys.argv[1])
            import demo.mod
            ctx = mp.get_context("spawn")
            with ctx.Pool(1) as pool:
                child = pool.apply(demo.mod.probe)
            print(json.dumps({"parent": demo.mod.probe(), "child": child}))
        ''', env, work, args=[rules], name="spawn")
    if out is None:
        return
    c = out["child"]
    check(c["pid"] != out["parent"]["pid"], "the worker ran in the parent?")
    check(c["instrumented"] and c["loader"] == "Loader" and c["hook_env"],
          "spawn worker: demo.mod not rewritten there: %s" % c)
    check(c["stats"] is not None and c["stats"]["rewritten"] + c["stats"]["cache_hits"] == 1,
          "spawn worker stats: %s" % c["stats"])


def disable(work, env, rules):
    out, _ = py('''\
        import json, os, sys
        import multiprocessing as mp
        import ncrewrite

        if __name__ == "__main__":
            ncrewrite.enable_rewrites(sys.argv[1])
            ncrewrite.disable_rewrites()
            import demo.other, demo.mod
            with mp.get_context("spawn").Pool(1) as pool:
                child = pool.apply(demo.mod.probe)
            print(json.dumps({"other": "__ncrt__" in vars(demo.other), "env": os.environ.get("NCREWRITE_HOOK"),
                              "stats": ncrewrite.stats(), "child": child}))
        ''', env, work, args=[rules], name="disable")
    if out is not None:
        check(out["other"] is False and out["env"] is None and out["stats"] is None,
              "after disable_rewrites: %s" % out)
        check(not out["child"]["instrumented"] and not out["child"]["hook_env"],
              "after disable_rewrites a spawned worker still rewrites: %s" % out["child"])


def full_trace(work, env, tmp):
    app = os.path.join(tmp, "app")
    os.makedirs(os.path.join(app, "appskip"))
    with open(os.path.join(app, "appmod.py"), "w") as f:
        f.write("def f():\n    return 1\n\n\nclass C:\n    def m(self):\n        return 2\n")
    with open(os.path.join(app, "appskip", "__init__.py"), "w") as f:
        f.write("def g():\n    return 1\n")
    code = '''\
        import json, sys
        import ncrewrite
        mods = json.loads(sys.argv[1])
        hook = ncrewrite.enable_full_trace_mode(excludes=["appskip"], modules=mods)
        import appmod, appskip, demo.mod
        print(json.dumps({m: "__ncrt__" in vars(sys.modules[m]) for m in ("appmod", "appskip", "demo.mod")}
                         | {"f": appmod.f(), "m": appmod.C().m()}))
        '''
    out, _ = py(code, env, app, args=["null"], name="fulltrace")
    if out is not None:
        check(out == {"appmod": True, "appskip": False, "demo.mod": False, "f": 1, "m": 2},
              "full trace of the program's own modules: %s" % out)
        metas = [json.load(open(m)) for m in glob.glob(os.path.join(tmp, "cache", "*", "appmod.*.json"))]
        check(len(metas) == 1 and sorted(r["name"] for r in metas[0]["ranges"]) == ["appmod.C.m", "appmod.f"],
              "full trace ranges: %s" % [m["ranges"] for m in metas])
    out, _ = py(code, env, app, args=['["demo"]'], name="fulltrace_modules")
    if out is not None:
        check(out == {"appmod": False, "appskip": False, "demo.mod": True, "f": 1, "m": 2},
              "full trace with modules=['demo']: %s" % out)


def engine_oom(work, env):
    """Out of memory inside the engine (an address-space limit, then a big
    file) raises EngineError; the interpreter goes on and rewrites again."""
    out, p = py('''\
        import json, resource
        import ncrewrite
        from ncrewrite import _engine
        r = _engine.parse("full_trace_mode: true\\n", "ft.yaml")
        src = b"".join(b"def f%d(a, b):\\n    return a + b * %d\\n\\n" % (i, i) for i in range(250000))
        vm = [l for l in open("/proc/self/status") if l.startswith("VmSize")][0].split()[1]
        resource.setrlimit(resource.RLIMIT_AS, (int(vm) * 1024 + (150 << 20), resource.RLIM_INFINITY))
        try:
            r.rewrite("big", False, "/nowhere/big.py", src)
            err = None
        except ncrewrite.EngineError as e:
            err = str(e)
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        again = r.rewrite("small", False, "/nowhere/small.py", b"def g():\\n    return 1\\n")[0].decode()
        print(json.dumps({"err": err, "again": again}))
        ''', env, work, name="oom")
    if out is not None:
        check(out["err"] and out["err"].startswith("ncrewrite engine: out of memory"), "engine OOM: %s" % out["err"])
        check('__ncrt__.range("small.g")' in out["again"], "after an engine OOM: %s" % out["again"])


def under_ncrun(work, env, rules, build, tmp):
    ncrun, nctrace = os.path.join(build, "bin", "ncrun"), os.path.join(build, "bin", "nctrace")
    if not (os.access(ncrun, os.X_OK) and os.access(nctrace, os.X_OK)):
        NOTES.append("ncrun: %s or %s not built: the trace check was left out" % (ncrun, nctrace))
        return
    cache = open(os.path.join(build, "CMakeCache.txt")).read() if os.path.isfile(
        os.path.join(build, "CMakeCache.txt")) else ""
    if re.search(r"^NCREWRITE_(SANITIZE|TSAN):BOOL=ON", cache, re.M):
        NOTES.append("ncrun: a sanitizer build (libncrt would need its runtime preloaded into python): left out")
        return
    prog = os.path.join(work, "traced.py")
    with open(prog, "w") as f:
        f.write("import sys\nimport ncrewrite\nncrewrite.enable_rewrites(sys.argv[1])\nimport demo.mod\n"
                "for i in range(3):\n    demo.mod.work(i - 1)\n")
    run_dir = os.path.join(tmp, "run")
    p = subprocess.run([ncrun, "-q", "--run-dir", run_dir, "-n", "traced", "--", PY, prog, rules], env=env, cwd=work,
                       capture_output=True, text=True)
    if not check(p.returncode == 0, "ncrun: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr)):
        return
    traces = glob.glob(os.path.join(run_dir, "traced-rank0.pt.trace.json.gz"))
    if not check(len(traces) == 1, "ncrun: no trace in %s" % os.listdir(run_dir)):
        return
    s = subprocess.run([nctrace, "summary", "--format", "json", traces[0]], capture_output=True, text=True)
    if not check(s.returncode == 0, "nctrace summary: %s" % s.stderr):
        return
    ops = {o["name"]: o["count"] for o in json.loads(s.stdout)["structured"]["operations"]}
    check(ops.get("work") == 3, "trace ranges %s, want work x3" % ops)


if __name__ == "__main__":
    main()
