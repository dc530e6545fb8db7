#!/usr/bin/env python3
"""nctrace benchmark: `nctrace summary` on a generated 1 GB Kineto-layout
trace, side by side in one run with a plain-Python json.load computation of
the same per-range table (baseline.py). Both tables are checked equal.
Rounds are interleaved; best and median wall time, CPU time and peak RSS
(from wait4) are printed as a Markdown table.

The trace is generated under /tmp (never in the repository) and deleted at
the end unless --keep.

usage: bench_trace.py --build BUILD_DIR [--size-mb 1000] [--rounds 3]
                      [--python-rounds 2] [--gzip] [--keep]"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(cmd, stdout_path):
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("failed (%d): %s" % (p.returncode, " ".join(cmd)))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0  # MiB


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--size-mb", type=float, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python-rounds", type=int, default=2)
    ap.add_argument("--gzip", action="store_true", help="also time nctrace on a gzip copy")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--dir", default="/tmp/nctrace-bench")
    a = ap.parse_args()
    nctrace = os.path.join(a.build, "src", "trace", "nctrace")
    os.makedirs(a.dir, exist_ok=True)
    trace = os.path.join(a.dir, "trace-%dmb.json" % a.size_mb)
    if not os.path.exists(trace):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_trace.py"), trace, str(a.size_mb)], check=True)
    size = os.path.getsize(trace)
    events = None
    runs = {}
    out_n, out_p = os.path.join(a.dir, "nctrace.json"), os.path.join(a.dir, "python.json")
    approaches = [("nctrace summary (plain .json)", [nctrace, "summary", trace, "--format", "json", "--top",
                                                     "1000000000"], out_n, a.rounds),
                  ("python json.load + per-range table", [sys.executable, os.path.join(HERE, "baseline.py"),
                                                          trace], out_p, a.python_rounds)]
    if a.gzip:
        gz = trace + ".gz"
        if not os.path.exists(gz):
            with open(gz, "wb") as f:
                subprocess.run(["gzip", "-1", "-c", trace], stdout=f, check=True)
        approaches.insert(1, ("nctrace summary (gzip -1 .json.gz, %.0f MB)" % (os.path.getsize(gz) / 1e6),
                              [nctrace, "summary", gz, "--format", "json", "--top", "1000000000"],
                              os.path.join(a.dir, "nctrace-gz.json"), a.rounds))
    for r in range(max(x[3] for x in approaches)):
        for name, cmd, out, rounds in approaches:
            if r < rounds:
                runs.setdefault(name, []).append(measure(cmd, out))
                print("round %d: %-45s %.2f s" % (r + 1, name, runs[name][-1][0]), file=sys.stderr)
    # same table?
    doc = json.load(open(out_n))
    got = {o["name"]: [o["count"], round(o["inclusive_us"] * 1000), round(o["exclusive_us"] * 1000)]
           for o in doc["structured"]["operations"]}
    want = json.load(open(out_p))
    if got != want:
        bad = [k for k in set(got) | set(want) if got.get(k) != want.get(k)][:5]
        sys.exit("tables differ: %s" % [(k, got.get(k), want.get(k)) for k in bad])
    events = sum(r["events"] for r in doc["structured"]["ranks"])
    base = statistics.median(x[0] for x in runs[approaches[-1][0]])
    print("\nTrace: %s, %.0f MB (%d bytes), %d events, %d range names; tables identical.\n"
          % (trace, size / 1e6, size, events, len(got)))
    print("| approach | best s | median s | CPU s | MB/s | peak RSS MiB | peak / file size | python ÷ this (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, _, _, _ in approaches:
        rs = runs[name]
        best = min(x[0] for x in rs)
        med = statistics.median(x[0] for x in rs)
        cpu = statistics.median(x[1] for x in rs)
        rss = max(x[2] for x in rs)
        print("| %s | %.2f | %.2f | %.2f | %.0f | %.0f | %.2f | %.1f |" % (
            name, best, med, cpu, size / 1e6 / med, rss, rss * 1048576 / size, base / med))
    if not a.keep:
        shutil.rmtree(a.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
