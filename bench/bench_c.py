#!/usr/bin/env python3
"""C rewriting benchmark (issue 3): full-trace instrumentation of a real C
code base — the tree-sitter core library's own sources, fetched (pinned) at
build time into .deps/ — against tree-sitter parse-only of the same files,
side by side in one run, as ratios. Rounds interleave the approaches; the
best of N is reported with the median beside it.

    bench/bench_c.py [--build build] [--runs 7] [--corpus DIR]
"""
import argparse
import glob
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
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode not in (0, 1):  # 1: rules-level errors are not expected here, but output is still written
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr.decode()[-2000:]))
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--corpus", default=os.path.join(ROOT, ".deps/tree-sitter-0.25.0/package/vendor/tree-sitter/lib/src"))
    a = ap.parse_args()
    ncrewrite = os.path.join(a.build, "src/rewrite/ncrewrite")
    parse_only = os.path.join(a.build, "bench/parse_only")
    tmp = tempfile.mkdtemp(prefix="ncbench-c-")
    try:
        src = os.path.join(tmp, "src")
        os.makedirs(src)
        n = size = 0
        # copies .c/.h files, several times over, so the run is long enough to time
        files = sorted(glob.glob(os.path.join(a.corpus, "**/*.[ch]"), recursive=True))
        for rep in range(8):
            for f in files:
                rel = os.path.join("copy%d" % rep, os.path.relpath(f, a.corpus))
                os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
                shutil.copy(f, os.path.join(src, rel))
                n += 1
                size += os.path.getsize(f)
        out = os.path.join(tmp, "out")
        rules = os.path.join(tmp, "rules.yaml")
        open(rules, "w").write('full_trace_mode: true\ntargets:\n  "**.[ch]": {}\n')
        mb = size / 1e6
        print("corpus: tree-sitter core lib/src (*.c, *.h) x 8 = %d files, %.2f MB; load %.2f"
              % (n, mb, os.getloadavg()[0]))
        fresh = lambda: shutil.rmtree(out, ignore_errors=True)
        rows = [
            ("tree-sitter-c parse-only (read+parse)", [parse_only, "--c", src]),
            ("tree-sitter-c parse-only (read+parse+write)", [parse_only, "--c", src, out]),
            ("ncrewrite full trace -j 1", [ncrewrite, "-q", "--config", rules, "-j", "1", src, out]),
            ("ncrewrite full trace (default -j)", [ncrewrite, "-q", "--config", rules, src, out]),
        ]
        samples = {name: [] for name, _ in rows}
        for _ in range(a.runs):
            for name, cmd in rows:
                fresh()
                samples[name].append(timed(cmd))
        base = min(samples[rows[0][0]])
        print("%d interleaved rounds\n" % a.runs)
        print("%-46s %8s %9s %7s %10s" % ("approach", "best s", "median s", "MB/s", "/parse"))
        for name, _ in rows:
            b = min(samples[name])
            print("%-46s %8.3f %9.3f %7.2f %10.2f" % (name, b, statistics.median(samples[name]), mb / b, b / base))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
