"""Shared helpers of the differential tests on torch, torchvision and numba
(tests/run/test_torch_jit.py, test_numba.py): run a driver three ways
(original packages, the shadow tree without ncrt, the shadow tree under
ncrun), read the pickled results and the trace, compare.

The drivers (vision_cases.py, torch_cases.py) print one line per case and
pickle {"info": {...}, "cases": {name: {"ok": bool, "value": ..., "error": str}}}
where values are plain Python (tensors as {"dtype", "shape", "data": nested
lists}), so this side needs no torch.
"""
import glob
import gzip
import json
import math
import os
import pickle
import shutil
import subprocess
import tempfile
import time

# The interpreter that has Debian's torch, torchvision and numba.
PY = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))

FAILS = []


def check(cond, msg):
    if cond:
        print("  ok:", msg.split("\n")[0])
    else:
        FAILS.append(msg)
        print("  FAIL:", msg)
    return cond


def have(modules):
    """'' when PY imports all of modules, else the error's last line."""
    p = subprocess.run([PY, "-c", "import " + ", ".join(modules)], capture_output=True, text=True)
    if p.returncode == 0:
        return ""
    return (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]


def clean_env():
    """The environment without PYTHONPATH and anything of a collector: no ncrt importable."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NCRT_", "NVTX_", "CUDA_INJECTION")) and k not in ("PYTHONPATH", "LD_PRELOAD")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"   # never write into the originals' __pycache__ (we may run as root)
    env["PYTHONHASHSEED"] = "0"
    env["OMP_NUM_THREADS"] = "1"           # same float results in every variant
    env["MKL_NUM_THREADS"] = "1"
    return env


def mkdtemp(tag):
    return tempfile.mkdtemp(prefix="nc-%s-" % tag)


def rmtree(path):
    if os.environ.get("NC_KEEP_TMP"):
        print("kept (NC_KEEP_TMP):", path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def ncrewrite_full(ncrewrite, src, out):
    t = time.time()
    p = subprocess.run([ncrewrite, "--full-trace", "-q", src, out], capture_output=True, text=True)
    ok = check(p.returncode == 0, "ncrewrite --full-trace -q %s %s: exit %d (%.1fs)%s" %
               (src, out, p.returncode, time.time() - t, ("\n" + p.stderr[-3000:]) if p.returncode else ""))
    return ok


def copy_tree(src, dst, ignore_pycache=True):
    """A real copy (ncrewrite does not follow symbolic links, and names ranges
    by the path relative to SRC: a copy under .../view/torch/nn gives torch.nn.* names)."""
    shutil.copytree(src, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__") if ignore_pycache else None)


def manifest_names(out):
    with open(os.path.join(out, ".ncrewrite", "manifest.json")) as f:
        m = json.load(f)
    names = set()
    per_file = {}
    for e in m.get("files", []):
        rs = [r["name"] for r in e.get("ranges", [])]
        per_file[e["path"]] = (e.get("action"), rs)
        names.update(rs)
    return names, per_file


def run_variant(label, cmd, env, result, cwd=None, timeout=900):
    """Run a driver; return (returncode, stdout, stderr, results or None)."""
    t = time.time()
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, so, se = -1, (e.stdout or b"").decode(errors="replace"), "timed out after %ds" % timeout
    dt = time.time() - t
    res = None
    if result and os.path.exists(result):
        with open(result, "rb") as f:
            res = pickle.load(f)
    print("[%s] exit %d in %.1fs" % (label, rc, dt))
    for line in so.splitlines():
        print("    " + line)
    if rc != 0 or res is None and result:
        print("    stderr (last 40 lines):")
        for line in se.splitlines()[-40:]:
            print("    | " + line)
    return rc, so, se, res, dt


def under_ncrun(ncrun, run_dir, name, shadow, argv, env, result, cwd=None):
    cmd = [ncrun, "-q", "--run-dir", run_dir, "-n", name]
    if shadow:
        cmd += ["--shadow", shadow]
    cmd += ["--"] + argv
    r = run_variant("shadow tree under ncrun", cmd, env, result, cwd=cwd)
    traces = sorted(glob.glob(os.path.join(run_dir, name + "-rank0.pt.trace.json.gz")))
    others = sorted(glob.glob(os.path.join(run_dir, "*.trace.json.gz")))
    evs = []
    if check(len(traces) == 1, "ncrun wrote %s-rank0.pt.trace.json.gz (traces: %s)" %
             (name, [os.path.basename(t) for t in others])):
        for t in others:
            with gzip.open(t, "rt") as f:
                evs += [e for e in json.load(f)["traceEvents"]
                        if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    return r, evs


def range_counts(evs):
    c = {}
    for e in evs:
        c[e["name"]] = c.get(e["name"], 0) + 1
    return c


def same_value(a, b, rtol=1e-5, atol=1e-6):
    """(exact, close, why): compare two plain values (tensors as dicts)."""
    if isinstance(a, dict) and "dtype" in a and "data" in a:
        if not (isinstance(b, dict) and b.get("dtype") == a["dtype"] and b.get("shape") == a["shape"]):
            return False, False, "tensor %s%s vs %s" % (a["dtype"], a["shape"],
                                                        (b.get("dtype"), b.get("shape")) if isinstance(b, dict) else type(b))
        fa, fb = list(_flat(a["data"])), list(_flat(b["data"]))
        if fa == fb:
            return True, True, ""
        worst = max((abs(x - y) for x, y in zip(fa, fb)), default=0.0)
        close = all((x == y) or (isinstance(x, float) and isinstance(y, float) and
                                 (math.isnan(x) and math.isnan(y) or abs(x - y) <= atol + rtol * abs(y)))
                    for x, y in zip(fa, fb))
        return False, close, "max abs difference %g over %d elements" % (worst, len(fa))
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return False, False, "keys %s vs %s" % (sorted(a), sorted(b))
        exact, close, why = True, True, ""
        for k in a:
            e, c, w = same_value(a[k], b[k], rtol, atol)
            exact, close = exact and e, close and c
            if not e and not why:
                why = "%s: %s" % (k, w)
        return exact, close, why
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False, False, "length %d vs %d" % (len(a), len(b))
        exact, close, why = True, True, ""
        for i, (x, y) in enumerate(zip(a, b)):
            e, c, w = same_value(x, y, rtol, atol)
            exact, close = exact and e, close and c
            if not e and not why:
                why = "[%d]: %s" % (i, w)
        return exact, close, why
    if a == b:
        return True, True, ""
    if isinstance(a, float) and isinstance(b, float) and abs(a - b) <= atol + rtol * abs(b):
        return False, True, "%r vs %r" % (a, b)
    return False, False, "%r vs %r" % (a, b)


def _flat(x):
    if isinstance(x, list):
        for y in x:
            yield from _flat(y)
    else:
        yield x


def first_lines(text, n=6):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return "\n".join("      " + l for l in lines[:n])


def error_text(text, n=9, tail=4):
    """A driver's error: the exception's first n lines (TorchScript puts the
    source location there), then the innermost tail lines of the traceback."""
    msg, _, tb = (text or "").partition("--- traceback ---")
    out = first_lines(msg, n)
    tbl = [l for l in tb.strip().splitlines() if l.strip() and not set(l.strip()) <= set("^~")]
    if tbl and len([l for l in msg.splitlines() if l.strip()]) < 3:  # a short message: say where it came from
        out += "\n      (traceback, innermost:)\n" + "\n".join("      " + l for l in tbl[-tail - 1:-1])
    return out


def compare_cases(want, got, label, expected_cases):
    """want/got: driver results; every expected case must have run in both, and agree."""
    if got is None:
        check(False, "%s: the driver wrote no results" % label)
        return
    for case in expected_cases:
        w = want["cases"].get(case)
        g = got["cases"].get(case)
        if w is None or not w["ok"]:
            check(False, "%s: %s: the ORIGINAL failed (test setup problem):\n%s" %
                  (label, case, error_text(w and w["error"])))
            continue
        if g is None:
            check(False, "%s: %s did not run" % (label, case))
            continue
        if not g["ok"]:
            check(False, "%s: %s raised:\n%s" % (label, case, error_text(g["error"])))
            continue
        exact, close, why = same_value(w["value"], g["value"])
        if exact:
            check(True, "%s: %s: same output as the original (exactly)" % (label, case))
        else:
            check(close, "%s: %s: output %s the original's (%s)" %
                  (label, case, "within rtol 1e-5/atol 1e-6 of" if close else "DIFFERS from", why))


def finish():
    print()
    if FAILS:
        print("%d check(s) failed:" % len(FAILS))
        for f in FAILS:
            print("FAIL: " + f.split("\n")[0])
        print("FAILED")
        return 1
    print("ok")
    return 0
