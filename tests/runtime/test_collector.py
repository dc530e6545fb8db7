#!/usr/bin/env python3
"""Runtime test (CPU only): programs instrumented by ncrewrite, run with
libncrt as the NVTX injection, write a Kineto-layout trace whose ranges,
counts, nesting, threads and rank naming match what the programs did.

    test_collector.py NCREWRITE LIBNCRT
"""
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INC = ["-I", os.path.join(ROOT, "src/runtime/include"), "-I", "/usr/local/cuda/include"]
PROG = os.path.join(ROOT, "tests/c/prog")

# the counts worked out by hand for tests/c/prog, kept in one place by the
# rewriter's own test (tests/c/test_c_programs.py)
sys.path.insert(0, os.path.join(ROOT, "tests/c"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from test_c_programs import EXPECTED as _C_EXPECTED  # noqa: E402
EXPECTED = {k: v for k, v in _C_EXPECTED.items() if k in ("calc.c", "shapes.cpp")}


def load(path):
    with gzip.open(path) as f:
        return json.load(f)


def check_layout(d, failures, what):
    for k in ("schemaVersion", "baseTimeNanoseconds", "distributedInfo", "traceEvents", "displayTimeUnit"):
        if k not in d:
            failures.append("%s: no %s" % (what, k))
    for e in d.get("traceEvents", []):
        if e["ph"] == "X" and not (e["cat"] == "user_annotation" and e["dur"] >= 0 and "tid" in e and "pid" in e):
            failures.append("%s: malformed event %s" % (what, e))
            break


def check_nesting(d, failures, what):
    by_tid = collections.defaultdict(list)
    for e in d["traceEvents"]:
        if e["ph"] == "X":
            by_tid[e["tid"]].append(e)
    for tid, evs in by_tid.items():
        # Ranges a few ns long can share their start and even their end with
        # the enclosing one (ts/dur have the clock's resolution): at a tie the
        # recorded depth orders them, outer first, and a range starting where
        # the top one ends is its child only if recorded deeper.
        evs.sort(key=lambda e: (e["ts"], -e["dur"], e["depth"]))
        stack = []
        for e in evs:
            while stack and (e["ts"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-9 or
                             (e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-9 and
                              e["depth"] <= stack[-1]["depth"])):
                stack.pop()
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-6:
                failures.append("%s: ranges overlap without nesting on thread %s" % (what, tid))
                return
            if e["depth"] != len(stack):
                failures.append("%s: depth %s recorded, %d seen" % (what, e["depth"], len(stack)))
                return
            stack.append(e)


def main():
    ncrewrite, lib = sys.argv[1:3]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        r = subprocess.run([ncrewrite, "-q", "--config", os.path.join(PROG, "rules.yaml"), PROG, out],
                           capture_output=True, text=True)
        if r.returncode:
            print(r.stderr)
            return 1
        for name, want in EXPECTED.items():
            cc = ["gcc", "-std=gnu11"] if name.endswith(".c") else ["g++", "-std=gnu++17"]
            exe = os.path.join(tmp, name.replace(".", "_"))
            subprocess.run(cc + INC + [os.path.join(out, name), "-o", exe], check=True)
            orig = subprocess.run([exe], capture_output=True, text=True)
            env = dict(os.environ, NVTX_INJECTION64_PATH=lib, NCRT_OUTPUT_DIR=tmp, NCRT_TRACE_NAME=name, RANK="2",
                       WORLD_SIZE="4")
            got = subprocess.run([exe], capture_output=True, text=True, env=env)
            if (got.returncode, got.stdout, got.stderr) != (orig.returncode, orig.stdout, orig.stderr):
                failures.append("%s: the collector changed the program's output or status" % name)
            path = os.path.join(tmp, "%s-rank2.pt.trace.json.gz" % name)
            if not os.path.exists(path):
                failures.append("%s: no trace %s" % (name, path))
                continue
            d = load(path)
            check_layout(d, failures, name)
            check_nesting(d, failures, name)
            if d["distributedInfo"] != {"backend": "", "rank": 2, "world_size": 4}:
                failures.append("%s: distributedInfo %s" % (name, d["distributedInfo"]))
            seen = collections.Counter(e["name"] for e in d["traceEvents"] if e["ph"] == "X")
            if dict(seen) != want:
                failures.append("%s: ranges %s, expected %s" % (name, dict(seen), want))
        # threads: 8 x 10000 x 2 ranges, each thread its own tid, nesting kept
        exe = os.path.join(tmp, "threads")
        subprocess.run(["gcc", "-O1"] + INC + [os.path.join(HERE, "threads.c"), "-o", exe, "-lpthread"], check=True)
        env = dict(os.environ, NVTX_INJECTION64_PATH=lib, NCRT_OUTPUT_DIR=tmp, NCRT_TRACE_NAME="threads")
        subprocess.run([exe], check=True, capture_output=True, env=env)
        d = load(os.path.join(tmp, "threads-rank0.pt.trace.json.gz"))
        check_nesting(d, failures, "threads")
        x = [e for e in d["traceEvents"] if e["ph"] == "X"]
        tids = collections.Counter(e["tid"] for e in x)
        names = collections.Counter(e["name"] for e in x)
        if len(tids) != 8 or set(tids.values()) != {20000} or names != {"outer": 80000, "inner": 80000}:
            failures.append("threads: %d threads %s, names %s" % (len(tids), set(tids.values()), dict(names)))
    if failures:
        print("\n".join(failures))
        print("FAILED")
        return 1
    print("ok: traces in Kineto layout with the expected ranges, nesting, threads and rank")
    return 0


if __name__ == "__main__":
    sys.exit(main())
