#!/usr/bin/env python3
"""The streaming reader on inputs that stress its window: an event larger
than the 4 MiB window, a header value larger than it, pretty-printed and
compact JSON, and a few hundred thousand generated nested events (gzip),
checked against the plain-Python reference table."""
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree (tests share it)
import ranges_ref  # noqa: E402


def summary_ops(nctrace, path):
    p = subprocess.run([nctrace, "summary", path, "--format", "json", "--top", "100000000"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    return {o["name"]: (o["count"], round(o["inclusive_us"] * 1000), round(o["exclusive_us"] * 1000))
            for o in doc["structured"]["operations"]}


def gen_events(n, seed):
    rnd = random.Random(seed)
    ev = []
    for tid in (1, 2, 3):
        t = 0.0
        while len(ev) < n * tid // 3:
            dur = rnd.randint(5, 400)
            ev.append({"ph": "X", "cat": "cpu_op", "name": "op%d" % rnd.randint(0, 40), "pid": 7, "tid": tid,
                       "ts": round(t, 3), "dur": dur + 0.125, "args": {"External id": len(ev)}})
            # a few children inside
            c = t + 1
            for _ in range(rnd.randint(0, 3)):
                d = rnd.randint(1, max(1, dur // 4))
                if c + d > t + dur:
                    break
                ev.append({"ph": "X", "cat": "cpu_op", "name": "op%d" % rnd.randint(0, 40), "pid": 7,
                           "tid": tid, "ts": round(c, 3), "dur": d, "args": {}})
                c += d + 1
            t += dur + rnd.randint(0, 20)
    rnd.shuffle(ev)  # not in time order: the reader must sort
    return ev


def main():
    nctrace = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="nctrace-stream-")
    try:
        ev = gen_events(300000, 1)
        want = ranges_ref.range_table(ev)
        big = {"name": "huge_args", "ph": "X", "cat": "cpu_op", "pid": 7, "tid": 9, "ts": 0, "dur": 1,
               "args": {"blob": "x" * (6 << 20), "nested": [[1, 2, {"a": "\\u00e9"}]] * 1000}}
        want["huge_args"] = [1, 1000, 1000]
        doc = {"deviceProperties": [{"name": "d" * (5 << 20)}], "traceEvents": ev[:150000] + [big] + ev[150000:],
               "traceName": "after the events", "baseTimeNanoseconds": 5}
        compact = os.path.join(tmp, "c.json.gz")
        with gzip.open(compact, "wt", compresslevel=1) as f:
            json.dump(doc, f, separators=(",", ":"))
        pretty = os.path.join(tmp, "p.json")
        with open(pretty, "w") as f:
            json.dump(doc, f, indent=2)
        for path in (compact, pretty):
            got = summary_ops(nctrace, path)
            assert set(got) == set(want), set(got) ^ set(want)
            for k, v in want.items():
                assert got[k] == tuple(v), (path, k, got[k], v)
        print("ok: %d events, %d names, compact gzip and pretty plain agree with Python" % (len(ev) + 1, len(want)))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
