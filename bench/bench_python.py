#!/usr/bin/env python3
"""Python rewriting benchmark (issue 2): instrument CPython's standard library
in full-trace mode and print, side by side in one run, ncrewrite, tree-sitter
parse-only of the same files, and an ast.parse + NodeTransformer + ast.unparse
script doing the same instrumentation. Each figure is the median of N runs;
ratios and the issue's targets are printed at the end.

    bench/bench_python.py [--build build] [--runs 3] [--lib /usr/lib/python3.11]
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


def timed(cmd):
    """Run cmd; return (wall seconds, peak RSS in MiB, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    out = p.stdout.read().decode()
    err = p.stderr.read().decode()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("benchmark command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), err[-2000:]))
    return wall, ru.ru_maxrss / 1024.0, out


def median_of(n, setup, cmd):
    walls, rss = [], []
    for _ in range(n):
        setup()
        w, r, _ = timed(cmd)
        walls.append(w)
        rss.append(r)
    return statistics.median(walls), max(rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lib", default="/usr/lib/python3.11")
    a = ap.parse_args()
    ncrewrite = os.path.join(a.build, "src/rewrite/ncrewrite")
    parse_only = os.path.join(a.build, "bench/parse_only")
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    tmp = tempfile.mkdtemp(prefix="ncbench-")
    try:
        # a stable copy of the library's .py files (no site/dist-packages, no test suite)
        src = os.path.join(tmp, "src")
        nbytes = nfiles = 0
        for base, dirs, files in os.walk(a.lib):
            rel = os.path.relpath(base, a.lib)
            dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "dist-packages", "__pycache__")
                             and not (rel == "." and d == "test"))
            for f in files:
                if f.endswith(".py"):
                    d = os.path.join(src, rel)
                    os.makedirs(d, exist_ok=True)
                    shutil.copy2(os.path.join(base, f), os.path.join(d, f))
                    nbytes += os.path.getsize(os.path.join(base, f))
                    nfiles += 1
        out = os.path.join(tmp, "out")
        fresh = lambda: shutil.rmtree(out, ignore_errors=True)
        mb = nbytes / 1e6
        print("corpus: %s (.py files only, no test suite): %d files, %.1f MB; %d CPUs; load %.2f"
              % (a.lib, nfiles, mb, os.cpu_count(), os.getloadavg()[0]))
        print("each figure: median of %d runs\n" % a.runs)
        rows = []
        rows.append(("tree-sitter parse-only (read+parse)",) + median_of(a.runs, fresh, [parse_only, src]))
        rows.append(("tree-sitter parse-only (read+parse+write)",) + median_of(a.runs, fresh, [parse_only, src, out]))
        rows.append(("ncrewrite --full-trace -j 1",) + median_of(a.runs, fresh, [ncrewrite, "--full-trace", "-q", "-j", "1", src, out]))
        rows.append(("ncrewrite --full-trace -j 2",) + median_of(a.runs, fresh, [ncrewrite, "--full-trace", "-q", "-j", "2", src, out]))
        rows.append(("ncrewrite --full-trace (default -j)",) + median_of(a.runs, fresh, [ncrewrite, "--full-trace", "-q", src, out]))
        fresh()
        timed([ncrewrite, "--full-trace", "-q", src, out])
        rows.append(("ncrewrite second run, unchanged tree",) + median_of(a.runs, lambda: None, [ncrewrite, "--full-trace", "-q", src, out]))
        rows.append(("ast.parse + NodeTransformer + ast.unparse",) + median_of(a.runs, fresh, [py, os.path.join(HERE, "ast_instrument.py"), src, out]))
        t = {name: (w, r) for name, w, r in rows}
        parse = t["tree-sitter parse-only (read+parse)"][0]
        parse_w = t["tree-sitter parse-only (read+parse+write)"][0]
        astw = t["ast.parse + NodeTransformer + ast.unparse"][0]
        print("%-44s %9s %8s %9s %10s %10s" % ("approach", "seconds", "MB/s", "peak MiB", "/parse", "ast/this"))
        for name, w, r in rows:
            print("%-44s %9.3f %8.2f %9.1f %10.2f %10.2f" % (name, w, mb / w, r, w / parse, astw / w))
        j1 = t["ncrewrite --full-trace -j 1"][0]
        j2 = t["ncrewrite --full-trace -j 2"][0]
        jd = t["ncrewrite --full-trace (default -j)"][0]
        second = t["ncrewrite second run, unchanged tree"][0]
        checks = [
            ("-j 1 <= 1.3x parse-only (read+parse)", j1 / parse, 1.3, "<="),
            ("-j 1 <= 1.3x parse-only (read+parse+write)", j1 / parse_w, 1.3, "<="),
            ("-j 1 >= 4.5x faster than the ast script", astw / j1, 4.5, ">="),
            ("-j 2 >= 1.7x faster than -j 1", j1 / j2, 1.7, ">="),
            ("default -j >= 8x faster than the ast script", astw / jd, 8.0, ">="),
            ("second run <= 10% of the first (default -j)", second / jd, 0.10, "<="),
        ]
        print()
        for name, v, target, op in checks:
            ok = v <= target if op == "<=" else v >= target
            print("%-48s %7.3f  target %s %.2f  %s" % (name, v, op, target, "PASS" if ok else "MISS"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
