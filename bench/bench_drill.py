#!/usr/bin/env python3
"""drill's time on a big trace (issue 30): a synthetic shadow tree of 20
modules holding NAMES functions, each a range (func_context_wrappings), and a
Chrome trace of EVENTS user-annotation ranges on 4 threads: top-level calls
of those functions, each holding a few nested calls of others (so
exclusive time has to be worked out; three names hold most of the time, so
drill has ranges over --min-share to split), every event naming the shadow
file as ncrt records it. Then `ncrewrite drill --top 3` is timed on a fresh copy
of the rules each round (drill writes them); the figure is the median of
the rounds, with the best beside it. Only drill's own time is measured:
the tree and the trace are made once, before.

    bench/bench_drill.py [--ncrewrite build/bin/ncrewrite] [--events 1000000] [--names 2000] [--runs 3]
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


MODULES = 20


def where(i, names):
    """Function i's module and first line: functions are dealt to modules in
    order, 6 lines each."""
    per = -(-names // MODULES)
    return i // per, 6 * (i % per) + 1


def make_tree(d, names):
    os.makedirs(os.path.join(d, "src/pkg"))
    rules = ["targets:"]
    for m in range(MODULES):
        rules += ["  pkg.m%d:" % m, "    func_context_wrappings:"]
        with open(os.path.join(d, "src/pkg/m%d.py" % m), "w") as f:
            for i in range(names):
                if where(i, names)[0] == m:
                    f.write("def f%d(x):\n    y = x * 2 + %d\n    z = [y * k for k in range(3)]\n    return sum(z)\n\n\n"
                            % (i, i))
                    rules.append("      f%d: {}" % i)
    with open(os.path.join(d, "rules.yaml"), "w") as f:
        f.write("\n".join(rules) + "\n")


def make_trace(path, shadow, events, names, seed=1):
    rnd = random.Random(seed)
    ev = ('{"ph":"X","cat":"user_annotation","name":"f%d","pid":1,"tid":%d,"ts":%d,"dur":%d,'
          '"args":{"depth":%d,"file":"%s","line":%d}}')
    def at(i):
        m, line = where(i, names)
        return "%s/pkg/m%d.py" % (shadow, m), line
    with open(path, "w", buffering=1 << 22) as f:
        f.write('{"schemaVersion":1,"traceEvents":[\n')
        n, first = 0, True
        ts = [0, 0, 0, 0]
        while n < events:
            tid = n % 4
            outer = rnd.randrange(names)
            kids = min(rnd.randrange(1, 6), events - n - 1)
            dur = 100 + 30 * kids + rnd.randrange(50)
            if rnd.randrange(50) == 0:  # three hot names hold most of the time, as in real runs
                outer, dur = rnd.randrange(3), dur + 20000
            parts = [ev % ((outer, tid, ts[tid], dur, 0) + at(outer))]
            t = ts[tid] + 10
            for _ in range(kids):
                k = rnd.randrange(names)
                parts.append(ev % ((k, tid, t, 20, 1) + at(k)))
                t += 25
            f.write(("" if first else ",\n") + ",\n".join(parts))
            first = False
            n += 1 + kids
            ts[tid] += dur + 5
        f.write("\n]}\n")
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncrewrite", default=os.path.join(ROOT, "build/bin/ncrewrite"))
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--names", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    nc = os.path.abspath(a.ncrewrite)
    with tempfile.TemporaryDirectory() as d:
        make_tree(d, a.names)
        subprocess.run([nc, "-q", "--config", os.path.join(d, "rules.yaml"), os.path.join(d, "src"),
                        os.path.join(d, "out")], check=True)
        trace = os.path.join(d, "t.json")
        n = make_trace(trace, os.path.join(d, "out"), a.events, a.names)
        print("trace: %d events, %d names, %.0f MB" % (n, a.names, os.path.getsize(trace) / 1e6))
        walls = []
        for _ in range(a.runs):
            shutil.copy(os.path.join(d, "rules.yaml"), os.path.join(d, "r.yaml"))
            t0 = time.monotonic()
            p = subprocess.run([nc, "drill", "--config", os.path.join(d, "r.yaml"), "--src", os.path.join(d, "src"),
                                "--trace", trace, "--top", "3"], capture_output=True, text=True)
            walls.append(time.monotonic() - t0)
            if p.returncode not in (0, 3):
                sys.stdout.write(p.stdout + p.stderr)
                return 1
        print("drill said: " + (p.stdout.strip().splitlines() or ["(nothing)"])[-1])
        print("ncrewrite drill --top 3: median %.2f s, best %.2f s over %d runs" %
              (statistics.median(walls), min(walls), a.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
