#!/usr/bin/env python3
"""`ncrun --backend torch` (docs/runtime.md, "Torch backend"): the startup
hook src/runtime/python/torch_backend/sitecustomize.py, under Debian's
python3-torch 1.13 (CPU, no Kineto: the hook writes Kineto's layout itself).

    test_torch_backend.py NCRUN_DIR [VERSION=PYTHON,...]

NCRUN_DIR is build/ncrt (ncrun, python/ with the ncrt builds and
python/torch_backend/). Each case runs twice when ncrun has the backend:
"direct" sets the environment ncrun would set (NCRT_BACKEND, NCRT_OUTPUT_DIR,
NCRT_TRACE_NAME, NCRT_TORCH=1, NCRT_SCHEDULE, NCRT_STEP, NCRT_RECORD_SHAPES,
NCRT_WITH_STACK, PYTHONPATH) and runs the program; "ncrun" runs it through
`ncrun --backend torch`. Every run is compared with the program run plainly:
same stdout, same exit status.

- steps: a small model, 6 steps by ncrt.step(), schedule
  wait=1,warmup=1,active=2,repeat=1, --record-shapes: one
  <name>-rank0.<ms>.pt.trace.json.gz, aten:: cpu_op events with "Input Dims",
  our ranges as user_annotation (2 of each: the active steps), exactly 2
  ProfilerStep#N annotations, nothing else left in the run directory.
- step-range / step-decorator: no ncrt.step(); --step 'train_*' names the
  range (a `with` block / an @ncrt.range decorator) that begins each step:
  the same 2 ProfilerStep#N, 2 train_step ranges.
- whole-run: no schedule, --with-stack: all 6 of each range.
- own-profiler: the program runs its own torch.profiler.profile: it works
  (torch allows one per thread: ours steps aside, saying so).
- sigterm: the program SIGTERMs itself: it dies of SIGTERM as before, and
  the trace is written.
- no-torch: a program that uses ncrt but never imports torch does not import
  it (NCRT_TORCH=1 would have made ncrt.range import it), loads no module but
  the hook's own, writes nothing and prints nothing on stderr; on every
  other interpreter given (pyenv's 3.9-3.13 here, no torch there) too, and
  `import torch` failing there fails as before.
- sitecustomize: a user's sitecustomize further on PYTHONPATH still runs (and
  its error is reported by site.py as before); Debian's own one too.
- gpu, fork-cuda (only where torch sees a GPU): kernels in the trace beside
  our ranges; a program that forks after importing torch runs to its end
  (its child cannot use CUDA: a documented limit, reported).
- bad-env (direct only): a malformed NCRT_SCHEDULE gives one
  "ncrun (torch backend):" line and the program runs unprofiled.

Exit 77 (skipped) when /usr/bin/python3 (NC_PYTHON) cannot import torch.
"""
import collections
import glob
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

PREFIX = "ncrun (torch backend):"

TRAIN = r'''
import os, sys
import ncrt
import torch
torch.manual_seed(0)
torch.set_num_threads(1)
mode = sys.argv[1]
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(4, 8)

def body():
    with ncrt.range("forward"):
        loss = m(x).pow(2).mean()
    with ncrt.range("backward"):
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss

@ncrt.range("train_step")
def decorated():
    return body()

for i in range(6):
    if mode == "range":
        with ncrt.range("train_step"):
            loss = body()
    elif mode == "decorator":
        loss = decorated()
    else:
        loss = body()
    if mode == "step":
        ncrt.step()
    print("step %d loss %.6f" % (i, loss.item()))
print("decorated:", decorated.__name__)
sys.exit(3)
'''

OWN_PROFILER = r'''
import torch, ncrt
ncrt.step()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as p:
    with torch.profiler.record_function("mine"):
        torch.ones(3) + 1
print("own profiler saw 'mine':", sum(1 for e in p.events() if e.name == "mine"))
'''

SIGTERM = r'''
import os, signal, sys
import ncrt, torch
for i in range(3):
    with ncrt.range("work"):
        torch.ones(8) * 2
    ncrt.step()
print("before the signal", flush=True)
os.kill(os.getpid(), signal.SIGTERM)
for i in range(1000):  # the handler runs at the next bytecode
    pass
print("not reached")
'''

NO_TORCH = r'''
import sys
import ncrt
with ncrt.range("x"):
    pass
with ncrt.torch_range("y"):
    pass
ncrt.step()
print("torch imported:", "torch" in sys.modules)
with open(sys.argv[1], "w") as f:
    f.write("\n".join(sorted(sys.modules)))
'''

MAYBE_TORCH = r'''
try:
    import torch
    print("torch", torch.__version__)
except ImportError as e:
    print("ImportError:", e, e.name)
'''

GPU = r'''
import sys
import ncrt, torch
torch.manual_seed(0)
m = torch.nn.Linear(256, 256).cuda()
x = torch.randn(64, 256, device="cuda")
for i in range(6):
    with ncrt.range("gpu_step"):
        y = m(x).relu().sum()
    torch.cuda.synchronize()
    ncrt.step()
print("sum %.3f" % y.item())
'''

FORK_CUDA = r'''
import os
import ncrt, torch
pid = os.fork()
if pid == 0:
    try:
        print("child: cuda", (torch.ones(4, device="cuda") * 2).sum().item(), flush=True)
        os._exit(0)
    except Exception as e:
        print("child: cuda failed:", type(e).__name__, str(e).splitlines()[0], flush=True)
        os._exit(1)
_, st = os.waitpid(pid, 0)
print("parent: child status", st >> 8)
'''

SITE = r'''
import os, sys
print("sitecustomize:", getattr(sys.modules.get("sitecustomize"), "__file__", None))
print("user mark:", os.environ.get("USER_SITECUSTOMIZE"))
'''

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)
    return cond


class Env:
    def __init__(self, ncrt_dir, tmp):
        self.ncrun = os.path.join(ncrt_dir, "ncrun")
        self.torch_versions = {}  # interpreter -> its torch's version ('' without torch)
        self.pydir = os.path.realpath(os.path.join(ncrt_dir, "python"))
        self.hook = os.path.join(self.pydir, "torch_backend")
        self.tmp = tmp
        self.n = 0
        self.base = {k: v for k, v in os.environ.items()
                     if not k.startswith(("NCRT_", "NVTX_", "CUDA_INJECTION")) and k not in ("PYTHONPATH", "LD_PRELOAD")}
        self.base["PYTHONDONTWRITEBYTECODE"] = "1"

    def script(self, name, text):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def plain(self, py, prog, args=(), pythonpath=(), extra_env=None):
        """The program without the hook (ncrt importable, no collector)."""
        env = dict(self.base, PYTHONPATH=":".join([self.pydir] + list(pythonpath)))
        env.update(extra_env or {})
        return subprocess.run([py, prog] + list(args), env=env, capture_output=True, text=True, timeout=300)

    def hooked(self, how, py, prog, args=(), name="prog", schedule=None, step=None, shapes=False, stack=False,
               activities=None, pythonpath=(), extra_env=None):
        """The program under the torch backend, "direct" or through "ncrun";
        returns (CompletedProcess, run directory)."""
        self.n += 1
        run_dir = os.path.join(self.tmp, "run%d-%s-%s" % (self.n, how, name))
        env = dict(self.base)
        env.update(extra_env or {})
        if how == "direct":
            os.makedirs(run_dir)
            env.update(NCRT_BACKEND="torch", NCRT_OUTPUT_DIR=run_dir, NCRT_TRACE_NAME=name, NCRT_TORCH="1",
                       PYTHONPATH=":".join([self.hook, self.pydir] + list(pythonpath)))
            if schedule:
                env["NCRT_SCHEDULE"] = schedule
            if step:
                env["NCRT_STEP"] = step
            if shapes:
                env["NCRT_RECORD_SHAPES"] = "1"
            if stack:
                env["NCRT_WITH_STACK"] = "1"
            if activities:
                env["NCRT_ACTIVITIES"] = activities
            cmd = [py, prog] + list(args)
        else:
            if pythonpath:
                env["PYTHONPATH"] = ":".join(pythonpath)
            cmd = [self.ncrun, "--backend", "torch", "--run-dir", run_dir, "-n", name]
            if schedule:
                cmd += ["--schedule", schedule]
            if step:
                cmd += ["--step", step]
            if shapes:
                cmd.append("--record-shapes")
            if stack:
                cmd.append("--with-stack")
            if activities:
                cmd += ["-a", activities]
            cmd += ["--", py, prog] + list(args)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        if how == "ncrun" and os.path.exists(os.path.join(run_dir, "env.json")):
            # provenance: the backend and the torch the program imports
            with open(os.path.join(run_dir, "env.json")) as f:
                envj = json.load(f)
            if envj.get("backend") != "torch":
                raise AssertionError("env.json backend: %r" % envj.get("backend"))
            if py not in self.torch_versions:
                self.torch_versions[py] = subprocess.run(
                    [py, "-I", "-c", "import importlib.util as u\nif u.find_spec('torch'):\n"
                     "  import torch; print(torch.__version__)"],
                    capture_output=True, text=True, timeout=300).stdout.strip()
            probe = self.torch_versions[py]
            got = envj.get("tools", {}).get("torch", "")
            if probe and not got.startswith(probe + " "):
                raise AssertionError("env.json tools.torch %r, the program's torch is %r" % (got, probe))
        return p, run_dir


def status(p, how):
    """ncrun exits 128+N for a command killed by signal N."""
    if how == "ncrun" and p.returncode > 128:
        return -(p.returncode - 128)
    return p.returncode


def hook_lines(p):
    return [line for line in p.stderr.splitlines() if line.startswith(PREFIX)]


def traces(run_dir, name):
    return sorted(glob.glob(os.path.join(run_dir, "%s-rank0.*.pt.trace.json.gz" % name)))


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def annotations(doc):
    return collections.Counter(e["name"] for e in doc["traceEvents"] if e.get("cat") == "user_annotation")


def leftovers(run_dir):
    """Files other than torch.profiler's traces (<worker>.<ms>.pt.trace.json.gz)
    and ncrun's env.json: an ncrt trace (<name>-rank<R>.pt.trace.json.gz,
    no <ms>) is one."""
    return sorted(f for f in os.listdir(run_dir)
                  if not re.search(r"\.\d+\.pt\.trace\.json\.gz$", f) and f != "env.json")


def same_run(tag, base, p, how):
    check(p.stdout == base.stdout, "%s: stdout differs from the plain run:\n--- plain\n%s--- hooked\n%s\nstderr:\n%s"
          % (tag, base.stdout, p.stdout, p.stderr))
    check(status(p, how) == base.returncode, "%s: status %s, plain run %s; stderr:\n%s"
          % (tag, p.returncode, base.returncode, p.stderr))


def one_trace(tag, run_dir, name, p):
    t = traces(run_dir, name)
    if not check(len(t) == 1, "%s: one %s-rank0.*.pt.trace.json.gz expected in %s, found %s; stderr:\n%s"
                 % (tag, name, run_dir, os.listdir(run_dir), p.stderr)):
        return None
    check(not leftovers(run_dir), "%s: left in the run directory: %s" % (tag, leftovers(run_dir)))
    return load(t[0])


def case_steps(E, how, py):
    prog = E.script("train.py", TRAIN)
    base = E.plain(py, prog, ["step"])
    p, rd = E.hooked(how, py, prog, ["step"], name="train", schedule="wait=1,warmup=1,active=2,repeat=1",
                     shapes=True)
    tag = "steps/" + how
    same_run(tag, base, p, how)
    check(not hook_lines(p), "%s: the hook said something: %s" % (tag, hook_lines(p)))
    doc = one_trace(tag, rd, "train", p)
    if doc is None:
        return
    ann = annotations(doc)
    steps = {n: c for n, c in ann.items() if n.startswith("ProfilerStep#")}
    check(sum(steps.values()) == 2, "%s: 2 ProfilerStep#N expected (active=2), got %s" % (tag, steps))
    check(ann["forward"] == 2 and ann["backward"] == 2,
          "%s: forward and backward twice each (the active steps) as user_annotation, got %s" % (tag, dict(ann)))
    ops = [e for e in doc["traceEvents"] if e.get("cat") == "cpu_op" and e["name"].startswith("aten::")]
    check(len(ops) > 20, "%s: aten:: cpu_op events expected, got %d" % (tag, len(ops)))
    dims = [e for e in ops if e.get("args", {}).get("Input Dims")]
    check(any([4, 8] in e["args"]["Input Dims"] for e in dims),
          "%s: record_shapes: an op with Input Dims [4, 8] expected; e.g. %s" % (tag, dims[:2]))
    check(doc.get("baseTimeNanoseconds", 0) > 10 ** 18, "%s: baseTimeNanoseconds missing" % tag)
    print("ok: %s (%d events, %s)" % (tag, len(doc["traceEvents"]), sorted(steps)))


def case_step_range(E, how, py, mode):
    prog = E.script("train.py", TRAIN)
    base = E.plain(py, prog, [mode])
    p, rd = E.hooked(how, py, prog, [mode], name="train", schedule="1,1,2,1", step="train_*")
    tag = "step-%s/%s" % (mode, how)
    same_run(tag, base, p, how)
    check(not hook_lines(p), "%s: the hook said something: %s" % (tag, hook_lines(p)))
    doc = one_trace(tag, rd, "train", p)
    if doc is None:
        return
    ann = annotations(doc)
    steps = {n: c for n, c in ann.items() if n.startswith("ProfilerStep#")}
    check(sum(steps.values()) == 2, "%s: 2 ProfilerStep#N expected, got %s" % (tag, steps))
    check(ann["train_step"] == 2 and ann["forward"] == 2,
          "%s: train_step and forward twice each expected, got %s" % (tag, dict(ann)))
    print("ok: %s (%s)" % (tag, dict(ann)))


def case_whole_run(E, how, py):
    prog = E.script("train.py", TRAIN)
    base = E.plain(py, prog, ["step"])
    p, rd = E.hooked(how, py, prog, ["step"], name="whole", stack=True)
    tag = "whole-run/" + how
    same_run(tag, base, p, how)
    doc = one_trace(tag, rd, "whole", p)
    if doc is None:
        return
    ann = annotations(doc)
    check(ann["forward"] == 6 and ann["backward"] == 6, "%s: 6 of each range expected, got %s" % (tag, dict(ann)))
    if "converted" in str(doc.get("ncrt", {}).get("layout", "")):
        check(any("Call stack" in e.get("args", {}) for e in doc["traceEvents"]),
              "%s: with_stack: no Call stack in the converted trace" % tag)
    print("ok: %s" % tag)


def case_own_profiler(E, how, py):
    prog = E.script("own.py", OWN_PROFILER)
    base = E.plain(py, prog)
    p, rd = E.hooked(how, py, prog, name="own")
    tag = "own-profiler/" + how
    same_run(tag, base, p, how)
    check(any("starts its own torch profiler" in line for line in hook_lines(p)),
          "%s: the hook should say it steps aside; stderr:\n%s" % (tag, p.stderr))
    print("ok: %s" % tag)


def case_sigterm(E, how, py):
    prog = E.script("term.py", SIGTERM)
    base = E.plain(py, prog)
    check(base.returncode == -signal.SIGTERM, "sigterm: the plain run should die of SIGTERM: %s" % base.returncode)
    p, rd = E.hooked(how, py, prog, name="term")
    tag = "sigterm/" + how
    same_run(tag, base, p, how)
    doc = one_trace(tag, rd, "term", p)
    if doc is not None:
        check(annotations(doc)["work"] == 3, "%s: 3 'work' ranges expected, got %s" % (tag, dict(annotations(doc))))
        print("ok: %s" % tag)


def case_no_torch(E, how, py, label):
    prog = E.script("notorch.py", NO_TORCH)
    mods_plain = os.path.join(E.tmp, "mods-plain-%d" % E.n)
    mods_hooked = os.path.join(E.tmp, "mods-hooked-%d" % E.n)
    base = E.plain(py, prog, [mods_plain])
    p, rd = E.hooked(how, py, prog, [mods_hooked], name="notorch", schedule="1,1,2,1", step="x")
    tag = "no-torch/%s/%s" % (how, label)
    same_run(tag, base, p, how)
    check("torch imported: False" in p.stdout, "%s: torch was imported: %s" % (tag, p.stdout))
    check(not hook_lines(p), "%s: the hook said something: %s" % (tag, hook_lines(p)))
    if how == "direct":
        check(p.stderr == "", "%s: stderr should be empty:\n%s" % (tag, p.stderr))
    check(not glob.glob(os.path.join(rd, "*.gz")), "%s: a trace was written: %s" % (tag, os.listdir(rd)))
    try:
        extra = set(open(mods_hooked).read().split()) - set(open(mods_plain).read().split())
        check(extra <= {"_ncrt_torch_backend"}, "%s: modules the hook added: %s" % (tag, sorted(extra)))
    except OSError as e:
        check(False, "%s: %s" % (tag, e))
    prog2 = E.script("maybe.py", MAYBE_TORCH)
    base2 = E.plain(py, prog2)
    p2, _ = E.hooked(how, py, prog2, name="maybe")
    if "ImportError" in base2.stdout:  # no torch for this interpreter: it fails as before
        same_run(tag + "/import-torch", base2, p2, how)
        if how == "direct":
            check(p2.stderr == base2.stderr, "%s/import-torch: stderr differs: %r" % (tag, p2.stderr))
    print("ok: %s" % tag)


def case_sitecustomize(E, how, py):
    prog = E.script("site_prog.py", SITE)
    tag = "sitecustomize/" + how
    # the distribution's own (Debian: /usr/lib/python3.11/sitecustomize.py), or none
    base = E.plain(py, prog)
    p, _ = E.hooked(how, py, prog, name="site")
    same_run(tag + "/distro", base, p, how)
    # a user's, further on PYTHONPATH; then one that fails
    user = os.path.join(E.tmp, "usersite")
    os.makedirs(user, exist_ok=True)
    with open(os.path.join(user, "sitecustomize.py"), "w") as f:
        f.write("import os\nos.environ['USER_SITECUSTOMIZE'] = 'ran as ' + __name__\nprint('user sitecustomize')\n")
    base = E.plain(py, prog, pythonpath=[user])
    check("ran as sitecustomize" in base.stdout and user in base.stdout, "%s: the plain run did not use the "
          "user's sitecustomize:\n%s" % (tag, base.stdout))
    p, _ = E.hooked(how, py, prog, name="site", pythonpath=[user])
    same_run(tag + "/user", base, p, how)
    with open(os.path.join(user, "sitecustomize.py"), "w") as f:
        f.write("print('user sitecustomize, failing')\nraise RuntimeError('boom')\n")
    base = E.plain(py, prog, pythonpath=[user])
    p, _ = E.hooked(how, py, prog, name="site", pythonpath=[user])
    same_run(tag + "/failing", base, p, how)
    check("Error in sitecustomize" in p.stderr and "RuntimeError: boom" in p.stderr,
          "%s/failing: site.py's message expected:\n%s" % (tag, p.stderr))
    print("ok: %s" % tag)


def case_gpu(E, how, py):
    """CUDA: kernels in the trace beside our ranges; a program that forks
    after importing torch and uses CUDA in the child."""
    prog = E.script("gpu.py", GPU)
    base = E.plain(py, prog)
    p, rd = E.hooked(how, py, prog, name="gpu", schedule="1,1,2,1")
    tag = "gpu/" + how
    same_run(tag, base, p, how)
    doc = one_trace(tag, rd, "gpu", p)
    if doc is not None:
        cats = collections.Counter(e.get("cat") for e in doc["traceEvents"])
        check(cats["kernel"] > 0, "%s: kernel events expected, categories %s" % (tag, dict(cats)))
        check(annotations(doc)["gpu_step"] == 2, "%s: 2 gpu_step ranges expected: %s" % (tag, dict(annotations(doc))))
        print("ok: %s (%s)" % (tag, dict(cats)))
    # A known limit (docs/runtime.md): starting torch.profiler, even for the
    # CPU alone, initialises the CUDA driver (torch.cuda.is_available() does
    # too), so a child forked after `import torch` cannot use CUDA. Checked
    # here so that a torch that stops doing so is noticed: the program must
    # still run to its end with its status.
    prog = E.script("fork_cuda.py", FORK_CUDA)
    base = E.plain(py, prog)
    p, rd = E.hooked(how, py, prog, name="forkcuda")
    tag = "fork-cuda/" + how
    check("child: cuda 8.0" in base.stdout, "%s: the plain run's child should use CUDA:\n%s" % (tag, base.stdout))
    check(status(p, how) == base.returncode, "%s: status %s, plain %s" % (tag, p.returncode, base.returncode))
    if p.stdout == base.stdout:
        print("ok: %s: the forked child uses CUDA as in the plain run" % tag)
    else:
        check("Cannot re-initialize CUDA in forked subprocess" in p.stdout, "%s: unexpected:\n%s" % (tag, p.stdout))
        print("ok: %s: as documented, the forked child cannot use CUDA (%s)" % (tag, p.stdout.splitlines()[0]))


def case_bad_env(E, py):
    prog = E.script("train.py", TRAIN)
    base = E.plain(py, prog, ["step"])
    p, rd = E.hooked("direct", py, prog, ["step"], name="bad", schedule="wait=1,actve=2")
    tag = "bad-env/direct"
    same_run(tag, base, p, "direct")
    lines = hook_lines(p)
    check(len(lines) == 1 and "actve" in lines[0] and "unprofiled" in lines[0],
          "%s: one line naming the key expected, got %s" % (tag, p.stderr))
    check(not os.listdir(rd), "%s: nothing should be written: %s" % (tag, os.listdir(rd)))
    print("ok: %s" % tag)


def ncrun_has_backend(E):
    try:
        h = subprocess.run([E.ncrun, "--help"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return False
    return "--backend" in h and "torch" in h


def main():
    ncrt_dir = os.path.abspath(sys.argv[1])
    pythons = [x.split("=", 1) for x in (sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] else [])]
    py = sys.executable
    try:
        import torch
    except Exception as e:
        print("skipped: torch is not importable in %s (%s)" % (py, e))
        return 77
    tmp = tempfile.mkdtemp(prefix="nc-torch-backend-")
    E = Env(ncrt_dir, tmp)
    if not check(os.path.isfile(os.path.join(E.hook, "sitecustomize.py")), "no %s/sitecustomize.py" % E.hook):
        return 1
    hows = ["direct"]
    if ncrun_has_backend(E):
        hows.append("ncrun")
    else:
        print("note: %s has no --backend torch yet: the hook is driven by hand only" % E.ncrun)
    try:
        for how in hows:
            case_steps(E, how, py)
            case_step_range(E, how, py, "range")
            case_step_range(E, how, py, "decorator")
            case_whole_run(E, how, py)
            case_own_profiler(E, how, py)
            case_sigterm(E, how, py)
            case_no_torch(E, how, py, "python%d.%d" % sys.version_info[:2])
            case_sitecustomize(E, how, py)
            if torch.cuda.is_available():
                case_gpu(E, how, py)
        if not torch.cuda.is_available():
            print("note: no CUDA here: the gpu and fork-cuda cases are not run")
        case_bad_env(E, py)
        seen = {os.path.realpath(py)}
        for ver, other in pythons:
            if os.path.realpath(other) in seen or not os.access(other, os.X_OK):
                continue
            seen.add(os.path.realpath(other))
            for how in hows:
                case_no_torch(E, how, other, "python" + ver)
                case_sitecustomize(E, how, other)
    finally:
        if failures:
            print("(kept %s)" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all passed (%s)" % ", ".join(hows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
