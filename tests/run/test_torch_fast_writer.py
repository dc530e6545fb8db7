#!/usr/bin/env python3
"""The torch backend's C++ trace writer (ncrt_torch_events, issue 32 item
12) writes exactly what the Python path writes, and is used only where it
may be.

On one profile of Debian's torch 1.13 (no Kineto) with record_function
ranges (names with quotes, backslashes, a control character, non-ASCII and
an astral code point), operators with shapes, a backward pass (sequence
numbers), Python stacks and memory events, write_converted runs twice:
with the C++ writer and without it. The two gunzipped traces must be equal
byte for byte, and hold what the profile had. Then the writer must refuse a
process whose libtorch_cpu is not the one it was linked against
(ncrt_torch_events.lib naming another library): the export falls back to
Python.

    test_torch_fast_writer.py TORCH_BACKEND_DIR     (exit 77: skipped)"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

PROG = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
import torch
import _ncrt_torch_export as X
from torch.profiler import profile, record_function
names = ['plain', 'q"uote\\back', 'ctl\x01\x7f', 'caf\u00e9 \u00fcber', 'astral \U0001F600']
x = torch.randn(16, 16, requires_grad=True)
prof = profile(record_shapes=True, with_stack=True, profile_memory=True)
prof.start()
X.skip_parse(prof)
for i in range(40):
    with record_function(names[i % len(names)]):
        y = (x @ x + x).relu().sum()
        y.backward()
prof.stop()
fast = X.fast_writer()
out = {"fast_writer": fast is not None}
for tag in ("fast", "python"):
    opt = {"record_shapes": True, "with_stack": True, "mem": True, "rank": 0, "t0_ns": 0, "metadata": {},
           "fast": tag == "fast"}
    X.write_converted(prof, os.path.join(sys.argv[2], tag + ".json.gz"), "w", 1, opt)
print(json.dumps(out))
'''


def run(py, backend_dir, out):
    p = subprocess.run([py, "-c", PROG, backend_dir, out], capture_output=True, text=True, timeout=300)
    if p.returncode:
        raise SystemExit("FAIL: the profile did not run:\n%s%s" % (p.stdout, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    backend_dir = sys.argv[1]
    py = os.environ.get("NC_PYTHON", "/usr/bin/python3")
    if subprocess.run([py, "-c", "import torch"], capture_output=True).returncode:
        print("SKIPPED: torch is not importable by %s (apt-get install python3-torch)" % py)
        return 77
    if subprocess.run([py, "-c", "import torch, sys; sys.exit(torch.autograd.kineto_available())"],
                      capture_output=True).returncode:
        print("SKIPPED: this torch has Kineto: it exports its own trace, the C++ writer is not used")
        return 77
    if not os.path.exists(os.path.join(backend_dir, "ncrt_torch_events.lib")):
        print("SKIPPED: the C++ writer was not built (apt-get install libtorch-dev pybind11-dev, then cmake again)")
        return 77
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        got = run(py, backend_dir, tmp)
        if not got["fast_writer"]:
            fails.append("fast_writer() is None in a process running the torch it was built for")
        a = gzip.open(os.path.join(tmp, "fast.json.gz")).read()
        b = gzip.open(os.path.join(tmp, "python.json.gz")).read()
        if a != b:
            at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            fails.append("the two traces differ at byte %d:\n  C++:    %r\n  Python: %r"
                         % (at, a[max(0, at - 120):at + 120], b[max(0, at - 120):at + 120]))
        doc = json.loads(a)
        evs = doc["traceEvents"]
        ann = {e["name"] for e in evs if e.get("cat") == "user_annotation"}
        want = {'plain', 'q"uote\\back', 'ctl\x01\x7f', 'caf\u00e9 \u00fcber', 'astral \U0001F600'}
        if not want <= ann:
            fails.append("record_function names missing: %s" % sorted(want - ann))
        ops = [e for e in evs if e.get("cat") == "cpu_op"]
        if len(ops) < 200:
            fails.append("only %d cpu_op events" % len(ops))
        if not any("Input Dims" in e["args"] for e in ops):
            fails.append("no Input Dims")
        if not any("Sequence number" in e["args"] for e in ops):
            fails.append("no Sequence number (the backward pass)")
        if not any("Call stack" in e.get("args", {}) for e in evs):
            fails.append("no Call stack")
        if not any(e["name"] == "[memory]" for e in evs):
            fails.append("no [memory] events")
        ts = [e["ts"] for e in evs if e.get("ph") != "M"]
        if ts != sorted(ts):
            fails.append("events not in time order")
        # another torch: the writer is refused, the export still writes (Python)
        other = os.path.join(tmp, "other")
        shutil.copytree(backend_dir, other)
        with open(os.path.join(other, "ncrt_torch_events.lib"), "w") as f:
            f.write("/nonexistent/libtorch_cpu.so.9\n")
        got = run(py, other, tmp)
        if got["fast_writer"]:
            fails.append("fast_writer() accepted a process whose libtorch_cpu is not the one it was linked against")
        fb = json.loads(gzip.open(os.path.join(tmp, "fast.json.gz")).read())
        if not {e["name"] for e in fb["traceEvents"] if e.get("cat") == "user_annotation"} >= want:
            fails.append("the fallback (Python) trace lacks the ranges")
    if fails:
        print("FAIL:\n  " + "\n  ".join(fails))
        return 1
    print("ok: C++ and Python writers agree byte for byte on %d events (%d cpu_op); refused for another torch"
          % (len(evs), len(ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
