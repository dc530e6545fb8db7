#!/usr/bin/env python3
"""Python rewriting benchmark (issue 2): instrument CPython's standard library
in full-trace mode and print, side by side in one run, ncrewrite, tree-sitter
parse-only of the same files, and an ast.parse + NodeTransformer + ast.unparse
script doing the same instrumentation. Builds nothing: give it a build
directory holding src/rewrite/ncrewrite and bench/parse_only.

Rounds interleave the approaches, so a slow spell on this shared machine hits
all of them alike. The headline figure is the median of the rounds; the best
(least disturbed) run and CPU time stand beside it. Targets are judged on the
medians.

    bench/bench_python.py [--build build-bench] [--runs 3] [--lib /usr/lib/python3.11] [--verify]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# compiles every .py under a tree; prints "files failures" and the first failures
COMPILE_ALL = r"""
import os, sys, warnings
warnings.simplefilter("ignore")
n = bad = 0
for base, dirs, names in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    for name in names:
        if name.endswith(".py"):
            p = os.path.join(base, name)
            n += 1
            try:
                compile(open(p, "rb").read(), p, "exec", dont_inherit=True)
            except (SyntaxError, ValueError) as e:
                bad += 1
                if bad <= 3:
                    print("  ", p, e, file=sys.stderr)
print(n, bad)
"""


def run_timed(cmd):
    """Run cmd; return (wall seconds, CPU seconds, peak RSS in MiB), the last
    two from wait4: this child and any children it waited for."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode()
    p.stderr.close()
    if p.returncode != 0:
        sys.exit("benchmark command failed: %s\n%s" % (" ".join(cmd), err[-2000:]))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def copy_corpus(lib, src):
    """The library's .py files, without site/dist-packages, caches, the
    top-level test suite and lib2to3's test data (Python 2 files, deliberately
    not valid Python 3); returns (files, bytes)."""
    nbytes = nfiles = 0
    for base, dirs, files in os.walk(lib):
        rel = os.path.relpath(base, lib)
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "dist-packages", "__pycache__")
                         and not (rel == "." and d == "test")
                         and not (os.path.basename(base) == "tests" and d == "data"))
        for f in files:
            if f.endswith(".py"):
                d = os.path.join(src, rel)
                os.makedirs(d, exist_ok=True)
                shutil.copy2(os.path.join(base, f), os.path.join(d, f))
                nbytes += os.path.getsize(os.path.join(base, f))
                nfiles += 1
    return nfiles, nbytes


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lib", default="/usr/lib/python3.11")
    ap.add_argument("--verify", action="store_true",
                    help="also compile every output of ncrewrite and of the ast script (untimed)")
    a = ap.parse_args()
    ncrewrite = os.path.join(a.build, "src/rewrite/ncrewrite")
    parse_only = os.path.join(a.build, "bench/parse_only")
    for exe in (ncrewrite, parse_only):
        if not os.access(exe, os.X_OK):
            sys.exit("%s: not built (cmake --build %s --target ncrewrite parse_only)" % (exe, a.build))
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    ncpu = os.cpu_count()
    tmp = tempfile.mkdtemp(prefix="ncbench-")
    try:
        src = os.path.join(tmp, "src")
        nfiles, nbytes = copy_corpus(a.lib, src)
        out = os.path.join(tmp, "out")
        second = os.path.join(tmp, "second")
        fresh = lambda: shutil.rmtree(out, ignore_errors=True)
        mb = nbytes / 1e6
        print("corpus: %s, .py files only, without test/, */tests/data, site-packages, dist-packages: %d files, %.2f MB"
              % (a.lib, nfiles, mb))
        print("machine: %d CPUs; load average at start: %s; %s" % (ncpu, loadavg(), py))
        print("%d interleaved rounds; wall-clock seconds, median of the rounds (best beside)\n" % a.runs)

        # the unchanged tree for the second-run row: one first run, untimed
        run_timed([ncrewrite, "--full-trace", "-q", src, second])
        nc = [ncrewrite, "--full-trace", "-q"]
        approaches = [
            ("parse-only (read+parse)", fresh, [parse_only, src]),
            ("parse-only (read+parse+write)", fresh, [parse_only, src, out]),
            ("ncrewrite --full-trace -j 1", fresh, nc + ["-j", "1", src, out]),
            ("ncrewrite --full-trace -j 2", fresh, nc + ["-j", "2", src, out]),
            ("ncrewrite --full-trace (default -j %d)" % ncpu, fresh, nc + [src, out]),
            ("ncrewrite second run, unchanged tree", lambda: None, nc + [src, second]),
            ("ast.parse + NodeTransformer + unparse", fresh, [py, os.path.join(HERE, "ast_instrument.py"), src, out]),
        ]
        samples = {name: [] for name, _, _ in approaches}
        for _ in range(a.runs):
            for name, setup, cmd in approaches:
                setup()
                samples[name].append(run_timed(cmd))
        load_end = loadavg()

        t = {}
        for name, _, _ in approaches:
            s = samples[name]
            t[name] = (statistics.median(x[0] for x in s), min(x[0] for x in s),
                       statistics.median(x[1] for x in s), max(x[2] for x in s))
        parse, parse_w = t["parse-only (read+parse)"][0], t["parse-only (read+parse+write)"][0]
        astw = t["ast.parse + NodeTransformer + unparse"][0]
        print("%-40s %8s %7s %7s %7s %8s %7s %7s %8s" % ("approach", "median s", "best s", "CPU s", "MB/s",
                                                     "peak MiB", "/parse", "/parse+w", "ast/this"))
        for name, _, _ in approaches:
            w, best, cpu, rss = t[name]
            print("%-40s %8.3f %7.3f %7.3f %7.2f %8.1f %7.2f %7.2f %8.2f"
                  % (name, w, best, cpu, mb / w, rss, w / parse, w / parse_w, astw / w))
        print("\nload average at end: %s" % load_end)

        j1 = t["ncrewrite --full-trace -j 1"][0]
        j2 = t["ncrewrite --full-trace -j 2"][0]
        jd = t["ncrewrite --full-trace (default -j %d)" % ncpu][0]
        sec = t["ncrewrite second run, unchanged tree"][0]
        checks = [
            ("-j 1 <= 1.3x parse-only (read+parse)", j1 / parse, 1.3, "<="),
            ("-j 1 <= 1.3x parse-only (read+parse+write)", j1 / parse_w, 1.3, "<="),
            ("-j 1 >= 4.5x faster than the ast script", astw / j1, 4.5, ">="),
            ("-j 2 >= 1.7x faster than -j 1", j1 / j2, 1.7, ">="),
            ("default -j >= 8x faster than the ast script", astw / jd, 8.0, ">="),
            ("second run <= 10% of the first (default -j)", sec / jd, 0.10, "<="),
        ]
        print()
        for name, v, target, op in checks:
            ok = v <= target if op == "<=" else v >= target
            print("%-46s %7.3f  target %s %.2f  %s" % (name, v, op, target, "PASS" if ok else "MISS"))

        if a.verify:
            print("\nverify (untimed): every output compiles with %s" % py)
            for name, cmd in (("ncrewrite", nc + [src, out]),
                              ("ast script", [py, os.path.join(HERE, "ast_instrument.py"), src, out])):
                fresh()
                run_timed(cmd)
                n, bad = map(int, subprocess.run([py, "-c", COMPILE_ALL, out], check=True,
                                                 stdout=subprocess.PIPE, text=True).stdout.split())
                print("  %-10s %d files, %d do not compile" % (name, n, bad))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
