#!/usr/bin/env python3
"""Import cost of the Python package's hook (issue #20), side by side:

  plain (.pyc)     `import pkg` of a 100-module package, bytecode cached (a user's normal start)
  plain (source)   the same with no .pyc (every module compiled from source)
  hook, cold       ncrewrite.enable_full_trace_mode(modules=["pkg"]) with an empty cache:
                   the C engine rewrites every module, the cache is written
  hook, warm       the same with the cache filled (what every later start costs)
  ast hook         the nCompass SDK's way: a meta-path finder that ast-parses,
                   transforms (the same wrapping, bench/ast_instrument.py) and
                   compiles each module on every import, nothing kept

Each figure is the median of --runs fresh interpreters (wall time of the
import alone, measured inside the process with perf_counter around
`import pkg`), printed with its ratio to plain (.pyc) and to plain (source).

    bench_import.py [--runs N] [--modules M] [--site DIR]

--site: a site directory where ncrewrite is installed (pip install
--target); default: build it now from the clone into a temporary one
(needs .deps/ from a cmake configure, Debian's pip, setuptools, wheel).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"

MODULE = '''\
"""Module {i} of a generated package: classes, methods, functions, a generator."""
import math


class Layer{i}:
    """A layer."""

    def __init__(self, n):
        self.n = n
        self.w = [math.sin(k) for k in range(n)]

    def forward(self, x):
        out = []
        for k, v in enumerate(x):
            out.append(v * self.w[k % self.n])
        return out

    def backward(self, g):
        return [v / (1 + abs(w)) for v, w in zip(g, self.w)]

    @property
    def size(self):
        return self.n


def helper_{i}_a(x, y=2):
    if x > y:
        return x - y
    return y - x


def helper_{i}_b(items):
    total = 0
    for it in items:
        total += helper_{i}_a(it)
    return total


def gen_{i}(n):
    for k in range(n):
        yield k * k


async def fetch_{i}(x):
    return x
'''

AST_HOOK = '''\
import importlib.abc, importlib.machinery, sys
sys.path.insert(0, {bench!r})
import ast_instrument


class Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        src = self.get_data(self.path)
        text = ast_instrument.instrument(src, self.path, fullname)
        return compile(text, self.path, "exec", dont_inherit=True)


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "pkg" and not name.startswith("pkg."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = Loader(name, spec.origin)
        return spec


sys.meta_path.insert(0, Finder())
'''

RUN = '''\
import sys, time
{setup}
t0 = time.perf_counter()
import pkg
t1 = time.perf_counter()
print("%.6f" % (t1 - t0))
'''


def make_package(root, n):
    pkg = os.path.join(root, "pkg")
    os.makedirs(pkg)
    imports = "".join("from . import mod%03d\n" % i for i in range(n - 1))
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write('"""A generated package of %d modules."""\n' % n + imports)
    for i in range(n - 1):
        with open(os.path.join(pkg, "mod%03d.py" % i), "w") as f:
            f.write(MODULE.format(i=i))


def build_site(tmp):
    site = os.path.join(tmp, "site")
    src = os.path.join(tmp, "pkgsrc")
    shutil.copytree(os.path.join(ROOT, "python"), src, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                                      "__pycache__"))
    env = dict(os.environ, NCREWRITE_SOURCE_DIR=ROOT)
    subprocess.run([PY, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--target", site, src], env=env, check=True)
    return site


def one(code, env, cwd):
    p = subprocess.run([PY, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bench_import: a run failed:\n" + p.stderr)
    return float(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--modules", type=int, default=100)
    ap.add_argument("--site", help="site directory with ncrewrite installed")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="nc-bench-import-")
    try:
        site = a.site or build_site(tmp)
        app = os.path.join(tmp, "app")
        make_package(app, a.modules)
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("NCRT_", "NVTX_", "NCREWRITE_")) and k != "PYTHONDONTWRITEBYTECODE"}
        base["PYTHONPATH"] = site + os.pathsep + app
        cache = os.path.join(tmp, "cache")
        hook = 'import ncrewrite\nncrewrite.enable_full_trace_mode(modules=["pkg"], cache_dir=%r)' % cache
        conds = [
            ("plain (.pyc)", "", {}, None),
            ("plain (source)", "", {"PYTHONDONTWRITEBYTECODE": "1"}, "nopyc"),
            ("hook, cold cache", hook, {"PYTHONDONTWRITEBYTECODE": "1"}, "cold"),
            ("hook, warm cache", hook, {"PYTHONDONTWRITEBYTECODE": "1"}, None),
            ("ast hook (nCompass-style)", AST_HOOK.format(bench=HERE), {"PYTHONDONTWRITEBYTECODE": "1"}, None),
        ]
        # warm-ups: .pyc written for plain; the cache filled for warm
        one(RUN.format(setup=""), base, tmp)
        one(RUN.format(setup=hook), dict(base, PYTHONDONTWRITEBYTECODE="1"), tmp)
        res = {}
        for name, setup, extra, mode in conds:
            env = dict(base, **extra)
            times = []
            for _ in range(a.runs):
                if mode == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                if mode == "nopyc":
                    shutil.rmtree(os.path.join(app, "pkg", "__pycache__"), ignore_errors=True)
                times.append(one(RUN.format(setup=setup), env, tmp))
            res[name] = statistics.median(times)
            if mode == "nopyc":  # put the .pyc back for the conditions after
                one(RUN.format(setup=""), base, tmp)
        p0, s0 = res["plain (.pyc)"], res["plain (source)"]
        print("import of a %d-module package (CPython %s), median of %d fresh interpreters"
              % (a.modules, subprocess.run([PY, "-c", "import sys; print(sys.version.split()[0])"],
                                           capture_output=True, text=True).stdout.strip(), a.runs))
        print("%-28s %10s %14s %16s" % ("", "ms", "x plain (.pyc)", "x plain (source)"))
        for name, _, _, _ in conds:
            print("%-28s %10.1f %14.2f %16.2f" % (name, res[name] * 1e3, res[name] / p0, res[name] / s0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
