#!/usr/bin/env python3
"""The CUDA starter rules (rules/cuda-memcpy-launch.yaml) on a GPU: the
golden case's instrumented saxpy.cu (tests/golden/starter-cuda-memcpy-launch/
expected) built with nvcc and run under ncrun. The trace must hold the
ranges the rules promise (2 cudaMemcpy, 1 cudaMemset, 2 launch) and the GPU
work each range caused must be attributed to it.

    test_starter_cuda.py NCRUN_DIR GOLDEN_DIR
    test_starter_cuda.py --check-trace TRACE   only the trace checks, on a
        trace recorded elsewhere (a GPU machine without ncrun's build deps)
Exit 0 passed, 1 failed, 77 skipped (no nvcc or no GPU: the reason printed).
"""
import collections
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NVTX_INC = next((d for d in ("/usr/local/cuda/include", "/usr/local/cuda/targets/x86_64-linux/include")
                 if os.path.exists(os.path.join(d, "nvtx3"))), "/usr/local/cuda/include")


def gpu_reason():
    if not shutil.which("nvcc") and not os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "nvcc not found"
    smi = shutil.which("nvidia-smi")
    if not smi or subprocess.run([smi, "-L"], capture_output=True).returncode != 0:
        return "no NVIDIA GPU or driver (nvidia-smi -L failed)"
    return None


def check_trace(t):
    """What the rules promise, as a list of failures."""
    fails = []

    def check(cond, msg):
        if not cond:
            fails.append(msg)

    evs = [e for e in t["traceEvents"] if e.get("ph") == "X"]
    cpu = collections.Counter(e["name"] for e in evs if e.get("cat") == "user_annotation")
    check(cpu == {"cudaMemcpy": 2, "cudaMemset": 1, "launch": 2}, "CPU ranges %s" % dict(cpu))
    kernels = [e for e in evs if e.get("cat") == "kernel"]
    check(len(kernels) == 2 and all("saxpy" in e["name"] for e in kernels), "kernels %s" % [e["name"] for e in kernels])
    check(all(e["args"].get("range") == "launch" for e in kernels),
          "kernels attributed to %s" % [e["args"].get("range") for e in kernels])
    copies = [e for e in evs if e.get("cat") == "gpu_memcpy"]
    check(len(copies) == 2 and all(e["args"].get("range") == "cudaMemcpy" for e in copies),
          "memcpys %s" % [(e["name"], e["args"].get("range")) for e in copies])
    sets = [e for e in evs if e.get("cat") == "gpu_memset"]
    check(len(sets) == 1 and sets[0]["args"].get("range") == "cudaMemset",
          "memsets %s" % [(e["name"], e["args"].get("range")) for e in sets])
    return fails


def report(fails):
    for f in fails:
        print("FAIL:", f)
    print("ok" if not fails else "FAILED")
    return 1 if fails else 0


def main():
    if sys.argv[1] == "--check-trace":
        with gzip.open(sys.argv[2], "rt") as f:
            return report(check_trace(json.load(f)))
    ncrun_dir, golden = sys.argv[1], sys.argv[2]
    why = gpu_reason()
    if why:
        print("skipped: " + why)
        return 77
    case = os.path.join(golden, "starter-cuda-memcpy-launch")
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    fails = []

    def check(cond, msg):
        if not cond:
            fails.append(msg)

    with tempfile.TemporaryDirectory(prefix="ncstartercuda-") as tmp:
        exe = os.path.join(tmp, "saxpy")
        # from the case folder: the #line directives name input/src/saxpy.cu
        subprocess.run([nvcc, "-O2", "-I", os.path.join(ROOT, "src/runtime/include"), "-I", NVTX_INC,
                        "expected/src/saxpy.cu", os.path.join(HERE, "saxpy_main.cu"), "-o", exe],
                       cwd=case, check=True)
        p = subprocess.run([os.path.join(ncrun_dir, "ncrun"), "-q", "--run-dir", os.path.join(tmp, "run"),
                            "-n", "saxpy", "-a", "cpu,gpu,mem", "--", exe], capture_output=True, text=True)
        check(p.returncode == 0 and p.stdout == "rc=0 y[0]=3 y[n-1]=3\n", "run: exit %d, output %r\n%s" %
              (p.returncode, p.stdout, p.stderr))
        traces = glob.glob(os.path.join(tmp, "run", "saxpy-rank0.pt.trace.json.gz"))
        if len(traces) != 1:
            print("FAIL: no trace\n" + p.stderr)
            return 1
        with gzip.open(traces[0], "rt") as f:
            t = json.load(f)
    return report(fails + check_trace(t))


if __name__ == "__main__":
    sys.exit(main())
