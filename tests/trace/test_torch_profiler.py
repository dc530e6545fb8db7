#!/usr/bin/env python3
"""A real trace: record a small model with Debian's python3-torch profiler
(1.13, CPU, legacy export layout), then check nctrace's figures against a
plain-Python computation of the same table, on .json and .json.gz, and run
filter and report on it. Skips (77) without torch."""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree (tests share it)
import ranges_ref  # noqa: E402

RECORD = r'''
import sys, torch, torch.nn as nn
from torch.profiler import profile, record_function, ProfilerActivity
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(4):
        with record_function("forward"):
            loss = nn.functional.cross_entropy(model(x), y)
        with record_function("backward"):
            opt.zero_grad()
            loss.backward()
        with record_function("optimizer"):
            opt.step()
        prof.step()
prof.export_chrome_trace(sys.argv[1])
'''


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        print("FAILED:", " ".join(cmd), "\n", p.stdout, p.stderr)
        sys.exit(1)
    return p


def main():
    nctrace = sys.argv[1]
    try:
        import torch  # noqa: F401
    except Exception as e:
        print("skipped: torch is not importable in %s (%s)" % (sys.executable, e))
        return 77
    tmp = tempfile.mkdtemp(prefix="nctrace-torch-")
    try:
        trace = os.path.join(tmp, "model.json")
        run([sys.executable, "-c", RECORD, trace])
        with open(trace, "rb") as f, gzip.open(trace + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        events = ranges_ref.load(trace)
        want = ranges_ref.range_table(events)
        assert len(want) > 10, "the recorded trace is suspiciously small"
        for path in (trace, trace + ".gz"):
            out = run([nctrace, "summary", path, "--format", "json", "--top", "1000000"]).stdout
            doc = json.loads(out)
            ops = {o["name"]: o for o in doc["structured"]["operations"]}
            assert set(ops) == set(want), "names differ: %s" % (set(ops) ^ set(want))
            for name, (count, incl, excl) in want.items():
                o = ops[name]
                got = (o["count"], round(o["inclusive_us"] * 1000), round(o["exclusive_us"] * 1000))
                assert got == (count, incl, excl), "%s: nctrace %s, python %s" % (name, got, (count, incl, excl))
            assert "legacy layout" in doc["markdown"]
            # torch 1.13 without Kineto records no ProfilerStep#N ranges:
            # name the step range instead
            out = run([nctrace, "summary", path, "--format", "json", "--step", "forward"]).stdout
            steps = json.loads(out)["structured"]["steps"]
            fwd = sorted(ranges_ref.ns(e["dur"]) for e in events if e["name"] == "forward")
            assert sorted(round(s["duration_us"] * 1000) for s in steps) == fwd, (steps, fwd)
        # filter: the legacy layout has no categories, so every event is an
        # annotation; --name keeps the three record_function ranges
        out = os.path.join(tmp, "f.json.gz")
        run([nctrace, "filter", trace, "-o", out, "--name", "forward"])
        kept = ranges_ref.load(out)
        assert len(kept) == sum(1 for e in events if e["name"] == "forward") == 4, len(kept)
        run([nctrace, "filter", trace, "-o", out, "--name", "backward", "--include-direct-children"])
        kept = ranges_ref.load(out)
        assert any(e["name"] != "backward" for e in kept) and all(
            e["name"] != "forward" for e in kept), "direct children of backward expected"
        html = os.path.join(tmp, "r.html")
        run([nctrace, "report", trace, "-o", html])
        page = open(html).read()
        # the pictures are drawn in the browser from the embedded data (test_report_chromium)
        assert 'id="nc-data"' in page and "aten::linear" in page
        print("ok: %d range names, %d events match the Python reference" % (len(want), len(events)))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
