#!/usr/bin/env python3
"""The Python starter rules (rules/*.yaml) at work: the golden cases'
instrumented output (tests/golden/starter-*/expected) run with Debian's
torch under ncrun; the trace must hold the ranges the rules promise, with
the counts the program implies, nested as written, and the program's output
must not change.

    test_starter_run.py NCRUN_DIR GOLDEN_DIR
Exit 0 passed, 1 failed, 77 skipped (no torch).
"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)


def private_copy(case, tmp):
    """The case's input/ and expected/ trees copied under tmp: the programs
    run there, never in tests/golden, which the golden/starter-* tests read
    meanwhile (a __pycache__ written into expected/ would fail them)."""
    dst = os.path.join(tmp, os.path.basename(case))
    for sub in ("input", "expected"):
        shutil.copytree(os.path.join(case, sub), os.path.join(dst, sub), symlinks=True)
    return dst


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCRT_", "NVTX_")) and k != "PYTHONPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def under_ncrun(ncrun, tmp, name, cmd, cwd):
    env = clean_env()
    p = subprocess.run([ncrun, "-q", "--run-dir", os.path.join(tmp, name), "-n", name, "--"] + cmd, cwd=cwd,
                       env=env, capture_output=True, text=True)
    check(p.returncode == 0, "%s: exit %d\n%s" % (name, p.returncode, p.stderr))
    traces = glob.glob(os.path.join(tmp, name, name + "-rank0.pt.trace.json.gz"))
    if len(traces) != 1:
        FAILS.append("%s: no trace\n%s" % (name, p.stderr))
        return p.stdout, []
    with gzip.open(traces[0], "rt") as f:
        evs = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    return p.stdout, evs


def counts(evs):
    c = {}
    for e in evs:
        c[e["name"]] = c.get(e["name"], 0) + 1
    return c


def inside(inner, outers):
    return any(o["tid"] == inner["tid"] and o["ts"] <= inner["ts"] and
               inner["ts"] + inner["dur"] <= o["ts"] + o["dur"] for o in outers)


def pytorch_nn(ncrun, golden, tmp):
    case = private_copy(os.path.join(golden, "starter-pytorch-nn"), tmp)
    plain = subprocess.run([PY, "train.py"], cwd=os.path.join(case, "input"), capture_output=True, text=True,
                           env=clean_env())
    out, evs = under_ncrun(ncrun, tmp, "nn", [PY, "train.py"], os.path.join(case, "expected"))
    check(out == plain.stdout and out.count("loss") == 3, "instrumented output differs:\n%s---\n%s" % (out, plain.stdout))
    want = {"Net.forward": 3, "MLP.forward": 3, "train_step:zero_grad": 3, "train_step:backward": 3,
            "train_step:step": 3}
    check(counts(evs) == want, "pytorch-nn-modules: ranges %s, want %s" % (counts(evs), want))
    nets = [e for e in evs if e["name"] == "Net.forward"]
    check(all(inside(e, nets) for e in evs if e["name"] == "MLP.forward"), "MLP.forward is not inside Net.forward")


ATTN_DRIVER = """
import torch
from model.attention import Block
torch.manual_seed(0)
b = Block(8, 2)
x = torch.randn(2, 5, 8)
for _ in range(2):
    y = b(x)
print("out %.4f" % float(y.sum()))
"""


def attention(ncrun, golden, tmp):
    case = private_copy(os.path.join(golden, "starter-attention"), tmp)
    plain = subprocess.run([PY, "-c", ATTN_DRIVER], cwd=os.path.join(case, "input"), capture_output=True, text=True,
                           env=clean_env())
    out, evs = under_ncrun(ncrun, tmp, "attn", [PY, "-c", ATTN_DRIVER], os.path.join(case, "expected"))
    check(out == plain.stdout and out.startswith("out "), "instrumented output differs:\n%s---\n%s" % (out, plain.stdout))
    # two forwards: 4 projections, 2 matmuls and 1 softmax each
    want = {"attention.forward": 2, "attention.proj": 8, "attention.matmul": 4, "attention.softmax": 2}
    check(counts(evs) == want, "attention: ranges %s, want %s" % (counts(evs), want))
    fwd = [e for e in evs if e["name"] == "attention.forward"]
    check(all(inside(e, fwd) for e in evs if e["name"] != "attention.forward"),
          "attention.* ranges must nest inside attention.forward")


def main():
    ncrun = os.path.join(sys.argv[1], "ncrun")
    golden = sys.argv[2]
    if subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode:
        print("skipped: Debian's python3-torch is not installed")
        return 77
    with tempfile.TemporaryDirectory(prefix="ncstarter-") as tmp:
        pytorch_nn(ncrun, golden, tmp)
        attention(ncrun, golden, tmp)
    for f in FAILS:
        print("FAIL:", f)
    print("ok" if not FAILS else "FAILED")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
