#!/usr/bin/env python3
"""Differential tests for the compilers that need torch 2 or a GPU:
torch.compile (dynamo) and Triton. Each instruments a small program of its
own in full trace, runs the original and the shadow tree in fresh
interpreters, and compares.

    test_gpu_compilers.py NCREWRITE torch-compile|triton [NCRT_PYTHON_DIR]

torch-compile: a model whose forward calls helpers of the same file, one
function compiled with fullgraph=True. For the original and the shadow tree:
torch._dynamo.explain's graph and graph-break counts (printed side by side:
the markers must add no break), torch.compile(fullgraph=True) must succeed,
and outputs must equal eager ones. Needs torch >= 2 (CPU is enough: the
"eager" and "aot_eager" backends; inductor too when a GPU is there).

triton: a @triton.autotune/@triton.jit kernel launched from a Python
function of the same file: the kernel gets no marker, the launcher gets its
range, and the results equal the original's. Needs triton and a CUDA GPU.

With NCRT_PYTHON_DIR (the ncrt module's folder) the shadow tree runs with
the real module too, not only with the no-op fallback. Exit 77 (skipped,
with the reason) where torch 2, triton or a GPU is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

MODEL = '''
import torch
from torch import nn


def scale(x):
    y = x * 2
    return y


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        h = scale(h)
        return torch.relu(h) + 1


def step(m, x):
    return m(x).sum()
'''

COMPILE_PROBE = '''
import json, sys, torch, torch._dynamo
import model
torch.manual_seed(0)
m = model.Block().eval()
x = torch.randn(4, 8)
out = {"eager": model.step(m, x).item()}
ex = torch._dynamo.explain(model.step)(m, x)
out["graphs"] = ex.graph_count
out["breaks"] = ex.graph_break_count
out["reasons"] = [str(r.reason) for r in ex.break_reasons][:5]
for backend in ["eager", "aot_eager"] + (["inductor"] if torch.cuda.is_available() else []):
    torch._dynamo.reset()
    try:
        f = torch.compile(model.step, backend=backend, fullgraph=True)
        out[backend] = f(m, x).item()
    except Exception as e:
        out[backend] = "error: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
out["marker_file"] = model.__file__
print(json.dumps(out))
'''

KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    add_kernel[grid](x, y, out, n)
    return out
'''

TRITON_PROBE = '''
import json, torch
import kern
torch.manual_seed(0)
x = torch.randn(1000, device="cuda")
y = torch.randn(1000, device="cuda")
r = kern.add(x, y)
print(json.dumps({"sum": r.sum().item(), "ok": bool(torch.allclose(r, x + y)), "file": kern.__file__}))
'''


def skip(why):
    print("skipped: " + why)
    sys.exit(77)


def run_probe(path, probe, env_extra):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        return None, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def instrument(ncrewrite, src, out):
    p = subprocess.run([ncrewrite, "--full-trace", "-q", "--explain", src, out], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr)
        sys.exit("ncrewrite failed")
    return p.stdout


def main():
    ncrewrite, case = sys.argv[1], sys.argv[2]
    ncrt_dir = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        import torch
    except ImportError:
        skip("torch is not importable by %s" % sys.executable)
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "src"), os.path.join(tmp, "out")
        os.makedirs(src)
        if case == "torch-compile":
            if not hasattr(torch, "compile"):
                skip("torch %s has no torch.compile (needs torch >= 2.0; runs on the GPU machine's torch)"
                     % torch.__version__)
            with open(os.path.join(src, "model.py"), "w") as f:
                f.write(MODEL)
            explain = instrument(ncrewrite, src, out)
            text = open(os.path.join(out, "model.py")).read()
            if "__ncrt_t__.compiler.is_compiling()" not in text:
                fails.append("the shadow model.py has no dynamo-safe marker:\n" + text[:800])
            variants = [("original", [src], {}), ("shadow, no ncrt", [out], {})]
            if ncrt_dir:
                variants.append(("shadow, ncrt", [out, ncrt_dir], {}))
            results = {}
            for name, path, env in variants:
                res, err = run_probe(path, COMPILE_PROBE, env)
                if res is None:
                    fails.append("%s: the probe failed:\n%s" % (name, err))
                    continue
                results[name] = res
            if "original" in results:
                base = results["original"]
                print("%-18s %8s %8s  %s" % ("", "graphs", "breaks", "fullgraph backends"))
                for name, r in results.items():
                    bk = ", ".join("%s=%s" % (b, "ok" if isinstance(r.get(b), float) else r.get(b))
                                   for b in ("eager", "aot_eager", "inductor") if b in r)
                    print("%-18s %8s %8s  %s" % (name, r["graphs"], r["breaks"], bk))
                for name, r in results.items():
                    if name == "original":
                        continue
                    if not r["marker_file"].startswith(out):
                        fails.append("%s imported %s, not the shadow tree" % (name, r["marker_file"]))
                    if r["breaks"] != base["breaks"] or r["graphs"] != base["graphs"]:
                        fails.append("%s: %d graphs / %d breaks, the original %d / %d: %s" %
                                     (name, r["graphs"], r["breaks"], base["graphs"], base["breaks"], r["reasons"]))
                    for b in ("eager", "aot_eager", "inductor"):
                        if b in base and r.get(b) != base.get(b):
                            fails.append("%s: fullgraph %s gave %r, the original %r" % (name, b, r.get(b), base.get(b)))
                    if abs(r["eager"] - base["eager"]) > 1e-6:
                        fails.append("%s: eager result %r, the original %r" % (name, r["eager"], base["eager"]))
        elif case == "triton":
            try:
                import triton  # noqa: F401
            except ImportError:
                skip("triton is not importable by %s" % sys.executable)
            if not torch.cuda.is_available():
                skip("no CUDA GPU here (Triton kernels need one)")
            with open(os.path.join(src, "kern.py"), "w") as f:
                f.write(KERNEL)
            explain = instrument(ncrewrite, src, out)
            print(explain)
            if "skipped add_kernel: compiled by Triton (@triton.autotune)" not in explain:
                fails.append("--explain does not say the kernel was skipped:\n" + explain)
            text = open(os.path.join(out, "kern.py")).read()
            kernel_part = text[text.index("def add_kernel"):text.index("def add(")]
            if "__ncrt" in kernel_part or "__ncrt" not in text[text.index("def add("):]:
                fails.append("markers in the wrong place:\n" + text)
            base, err = run_probe([src], TRITON_PROBE, {})
            if base is None:
                fails.append("the original failed:\n" + err)
            variants = [("shadow, no ncrt", [out])] + ([("shadow, ncrt", [out, ncrt_dir])] if ncrt_dir else [])
            for name, path in variants:
                r, err = run_probe(path, TRITON_PROBE, {})
                if r is None:
                    fails.append("%s failed:\n%s" % (name, err))
                elif base and (not r["ok"] or abs(r["sum"] - base["sum"]) > 1e-4 or not r["file"].startswith(out)):
                    fails.append("%s: %r, the original %r" % (name, r, base))
                else:
                    print("%s: same result as the original (%r)" % (name, r["sum"]))
        else:
            sys.exit("unknown case " + case)
    for f in fails:
        print("FAIL: " + f)
    print("%s: %s" % (case, "FAILED" if fails else "ok"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
