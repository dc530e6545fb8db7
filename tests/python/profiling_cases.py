"""The package's profiling side (issue #20), run by test_python.py once the
package is installed: each case is a fresh interpreter whose last stdout
line is JSON, checked here.

  - the seeds' ProfilingSession example (nCompass's advanced-usage workflow
    with its import lines changed) under every CPython found: trace, summary
    (cached, mean_us), feedback (the engine adds the range; an invalid one
    raises RulesError with its diagnostic; the automatic drill adds one
    inside the costliest range), targeted markers (the new range
    is in the second trace), filter_trace, save/load_config, reset,
    load_trace_summary, the iteration history;
  - ProfilerContext with the ncrt backend under every CPython: the trace is
    on disk when the region ends (the process still running), per rank
    (RANK), with a schedule (one file per cycle, the active steps only),
    @profile_function; nothing recorded outside the regions;
  - the torch backend (Debian's torch 1.13, CPU): aten ops with shapes,
    memory events and our ranges as user_annotation in the same trace;
    enable_rewrites in DataLoader workers (spawn);
  - the argparse helper (cache-dit's flags) and its errors;
  - the YAML `profiling:` loader: defaults, the epochs check and bad keys or
    values, each at file:line:col;
  - nCompass's saved config with "start_line_content": null.
"""
import glob
import gzip
import json
import os

MODEL = '''\
class Attention:
    def forward(self, x):
        s = 0
        for i in range(x):
            s += i * i
        t = sum(range(x))
        return s + t


def run(n):
    a = Attention()
    out = 0
    for _ in range(3):
        out += a.forward(n)
    return out
'''

SESSION = '''\
import json, os, sys
from ncrewrite.trace import ProfilingSession      # was: from ncompass.trace import ProfilingSession
import ncrewrite

session = ProfilingSession(
    trace_output_dir="./traces",
    cache_dir="./cache",
    session_name="my_model_optimization",
    config={"targets": {"demo_model.model": {"class_func_context_wrappings": {"Attention": {"forward": {
        "context_class": "ncompass.trace.profile.torch.TorchRecordContext",
        "context_values": ["attention.forward"]}}}}}},
)
session.apply_targeted_markers()
import demo_model.model as model


def run_inference():
    model.run(3000)


def ops(summary):
    return {o["name"]: o for o in summary["structured"]["operations"]}


trace_path = session.run_profile(run_inference, trace_name_suffix="initial")
summary = session.get_trace_summary(trace_path)
again = session.get_trace_summary(trace_path)
try:
    session.submit_feedback(feedback_text="bad", target_module="demo_model.model", start_line=400, end_line=401)
    bad = None
except ncrewrite.RulesError as e:
    bad = str(e)
cfg = session.submit_feedback(
    feedback_text="Why does the attention layer take 80% of inference time?",
    target_module="demo_model.model",
    start_line=4,
    end_line=5,
)
session.apply_targeted_markers()
trace_path2 = session.run_profile(run_inference, trace_name_suffix="targeted_attention")
summary2 = session.get_trace_summary(trace_path2, feedback_context={
    "feedback_text": "attention performance", "target_module": "demo_model.model"})
filtered = session.filter_trace(trace_path=trace_path2, include_cuda_kernels=True, include_direct_children=False,
                                min_duration_us=0.0)
session.save_config(name="attention_focused")
history = session.get_iteration_history()
session.reset()
after_reset = session.config
session.load_config(name="attention_focused")
loaded = session.apply_targeted_markers()
cached = session.load_trace_summary(trace_name_filter="initial")
print(json.dumps({
    "trace": trace_path, "trace2": trace_path2, "ops1": {k: v["count"] for k, v in ops(summary).items()},
    "ops2": {k: v["count"] for k, v in ops(summary2).items()},
    "mean_us": "mean_us" in next(iter(ops(summary).values()), {}), "same": summary == again,
    "md": summary["markdown"].splitlines()[0], "keys": sorted(summary["structured"]),
    "fc": summary2.get("feedback_context"), "bad": bad, "cfg": cfg, "filtered": os.path.isfile(filtered),
    "filtered_name": os.path.basename(filtered), "history": [(h["name"], len(h["feedback"])) for h in history],
    "reset": after_reset, "loaded": loaded == cfg, "cached": cached == summary,
    "summary_files": sorted(f for f in os.listdir("traces") if f.startswith("summary_")),
}))
'''

PROFILER = '''\
import json, os, sys, time
import ncrewrite
from ncrewrite.profiler import ProfilerContext, profile_function
import ncrt

out = sys.argv[1]
with ncrt.range("outside.before"):
    pass
with ProfilerContext(output_dir=out, profile_name="ctx", backend="ncrt") as prof:
    for i in range(4):
        with ncrt.range("ctx.work"):
            time.sleep(0.001)
    from ncrewrite.trace.profile.nvtx import NvtxContext
    with NvtxContext(name="nv.ctx"):
        pass
written_at_end = [os.path.basename(p) for p in prof.trace_paths if os.path.isfile(p)]
with ncrt.range("outside.after"):
    pass
sched = ProfilerContext(output_dir=out, profile_name="sched", backend="ncrt", schedule=(1, 1, 2, 2))
with sched:
    for i in range(10):
        with ncrt.range("step%d" % i):
            pass
        sched.step()


@profile_function(output_dir=out, backend="ncrt")
def decorated():
    with ncrt.range("deco.inner"):
        return 7


r = decorated()
print(json.dumps({"mode": ncrewrite.recording(), "at_end": written_at_end, "trace_path": str(prof.trace_path),
                  "sched": [os.path.basename(p) for p in sched.trace_paths], "deco": r}))
'''

TORCH = '''\
import json, os, sys
import ncrewrite
import torch
from ncrewrite.profiler import ProfilerContext
import ncrt

out = sys.argv[1]
conv = torch.nn.Conv2d(3, 8, 3)
x = torch.randn(2, 3, 16, 16)
with ProfilerContext(output_dir=out, profile_name="tp", backend="torch", activities=["CPU", "MEM"],
                     record_shapes=True) as prof:
    from ncrewrite.trace.profile.torch import TorchRecordContext
    with ncrt.range("my.region"):
        with TorchRecordContext(name="trc"):
            y = conv(x).relu().sum()
        y.backward()
print(json.dumps({"paths": [str(p) for p in prof.trace_paths], "used": prof.used_backend}))
'''

LOADER_DS = '''\
import torch
from torch.utils.data import Dataset


class Squares(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        import sys
        return torch.tensor([i * i, int("__ncrt__" in vars(sys.modules[__name__]))])
'''

LOADER = '''\
import json, sys
import ncrewrite
ncrewrite.enable_rewrites({"targets": {"demo_model.ds": {"class_func_context_wrappings": {
    "Squares": {"__getitem__": {}}}}}})
import torch
from torch.utils.data import DataLoader
from demo_model.ds import Squares

if __name__ == "__main__":
    dl = DataLoader(Squares(), batch_size=2, num_workers=2, multiprocessing_context="spawn")
    rows = [b.tolist() for b in dl]
    print(json.dumps({"rows": rows}))
'''

ARGS = '''\
import argparse, json, sys
import ncrewrite
from ncrewrite.profiler import add_profiler_args, create_profiler_from_args
import ncrt

p = argparse.ArgumentParser()
add_profiler_args(p)
args = p.parse_args(sys.argv[1:])
prof = create_profiler_from_args(args, profile_name=None)
with prof:
    with ncrt.range("args.work"):
        pass
print(json.dumps({"enabled": prof.enabled, "name": prof.profile_name, "dir": prof.output_dir,
                  "acts": prof.activities, "stack": prof.with_stack, "shapes": prof.record_shapes,
                  "schedule": repr(prof.schedule), "paths": [str(x) for x in prof.trace_paths]}))
'''

YAML_OK = '''\
training:
  epochs: 11
profiling:
  wait: 3
  warmup: 1
  active: 3
  repeat: 1
  record_shapes: true
  profile_memory: true
  with_stack: false
'''

NULL_CONFIG = '''\
import json
import ncrewrite
cfg = ncrewrite.RewriteConfig(targets={"demo_model.model": {"func_line_range_wrappings": [
    {"start_line": 4, "end_line": 5, "start_line_content": None, "context_class": None}]}})
warnings = cfg.validate()
hook = ncrewrite.enable_rewrites(cfg)
import demo_model.model as m
print(json.dumps({"warnings": warnings, "instrumented": "__ncrt__" in vars(m), "value": m.run(10)}))
'''


SEEDS_MOD = '''\
"""The seeds' module: its first line is its docstring."""
import math


def attention(n):
    s = 0
    for i in range(n):
        s += math.sqrt(i)
    return s


class Model:
    def __init__(self):
        self.n = 200

    def forward(self):
        t = attention(self.n)
        return t
'''

# Seed 001's and 000's examples as their users wrote them, imports changed
# (issue 32, one check per item that needs no torch).
SEEDS = '''\
import json, os, sys, warnings
from ncrewrite.trace import ProfilingSession, enable_rewrites, disable_rewrites  # was: ncompass.trace
from ncrewrite.trace.core import RewriteConfig                                   # was: ncompass.trace.core
from ncrewrite import RulesError
import ncrt

res = {}
# 001, Basic Profiling: a function that does nothing still gets its trace
session = ProfilingSession(trace_output_dir="./traces")

def my_inference():
    # Your code here
    pass

trace_path = session.run_profile(my_inference)
summary = session.get_trace_summary(trace_path)
res["basic"] = [os.path.basename(trace_path), os.path.isfile(trace_path), summary["markdown"].splitlines()[0]]
# two runs, the first recording a range and the second nothing: each its own file
def ranged():
    with ncrt.range("only.first"):
        pass
p1 = session.run_profile(ranged)
p2 = session.run_profile(my_inference)
res["two"] = [os.path.basename(p1), os.path.basename(p2)]
# feedback that would wrap the module's docstring: refused, the rules unchanged
import seedmod
model = seedmod.Model()   # made before the feedback (item 5)
before = json.dumps(session.config, sort_keys=True)
try:
    session.submit_feedback("why", "seedmod", 1, 2)
    res["doc"] = "accepted"
except RulesError as e:
    res["doc"] = str(e)
res["doc_unchanged"] = json.dumps(session.config, sort_keys=True) == before
# bad lines in Python's words
for args in ((20, 10), (0, 3), ("5", 6)):
    try:
        session.submit_feedback("x", "seedmod", *args)
        res.setdefault("bad", []).append("accepted")
    except (TypeError, ValueError) as e:
        res.setdefault("bad", []).append("%s: %s" % (type(e).__name__, e))
try:
    session.submit_feedback("x", "seedmod", 7, 7)   # the for loop's header alone: splits the loop
    res["split"] = "accepted"
except RulesError as e:
    res["split"] = str(e)
# a whole function selected (def to return): its run time, each call
session.submit_feedback("attention is slow", "seedmod", 5, 9)
session.apply_targeted_markers()
res["updated"] = sorted(session.updated)
p3 = session.run_profile(lambda: [model.forward() for _ in range(3)])
ops = {o["name"]: o["count"] for o in session.get_trace_summary(p3)["structured"]["operations"]}
res["whole"] = ops
import gzip
with gzip.open(p3, "rt") as fh:
    ev = [e for e in json.load(fh)["traceEvents"] if e.get("name") == "seedmod:L6-9" and e.get("ph") == "X"]
res["where"] = [ev[0]["args"].get("file"), ev[0]["args"].get("line")] if ev else None
# filter_trace twice, different settings: two files
f1 = session.filter_trace(p3)
f2 = session.filter_trace(p3, min_duration_us=5)
res["filters"] = [os.path.basename(f1), os.path.basename(f2)]
# 001's signatures: enable_rewrites' Optional config, RewriteConfig's attributes
cfg = RewriteConfig(targets={"seedmod": {"func_line_range_wrappings": []}}, ai_analysis_targets=["seedmod"],
                    full_trace_mode=False)
res["attrs"] = [sorted(cfg.targets), cfg.ai_analysis_targets, cfg.full_trace_mode]
disable_rewrites()
enable_rewrites(cfg)
disable_rewrites()
res["again"] = type(enable_rewrites()).__name__   # the last config, again
print(json.dumps(res))
'''

FULLTRACE_WARN = '''\
import json, warnings
warnings.simplefilter("error")
import ncrewrite
ncrewrite.enable_full_trace_mode()   # Debian's sitecustomize is the standard library's
print(json.dumps({"ok": True}))
'''


def seeds_case(t, exe, ver, d, env):
    with open(os.path.join(d, "seedmod.py"), "w") as f:
        f.write(SEEDS_MOD)
    out, p = t.py(SEEDS, dict(env, PYTHONPATH=os.pathsep.join(x for x in (d, env.get("PYTHONPATH")) if x)), d,
                  exe=exe, name="seeds")
    if out is None:
        return
    what = "seeds (%s)" % ver
    t.check(out["basic"] == ["session_iter1-rank0.pt.trace.json.gz", True, "# Trace summary"],
            "%s: 001's Basic Profiling %s" % (what, out["basic"]))
    t.check(out["two"] == ["session_iter2-rank0.pt.trace.json.gz", "session_iter3-rank0.pt.trace.json.gz"],
            "%s: each run its own trace %s" % (what, out["two"]))
    t.check("seedmod.py:1:1: error:" in out["doc"] and "include a docstring" in out["doc"] and out["doc_unchanged"],
            "%s: feedback over the docstring %r" % (what, out["doc"]))
    t.check(out["bad"] == ["ValueError: submit_feedback: start_line 20 is after end_line 10 in seedmod (%s)"
                           % os.path.join(d, "seedmod.py"),
                           "ValueError: submit_feedback: start_line must be 1 or more (lines count from 1), not 0",
                           "TypeError: submit_feedback: start_line must be a line number (int), not '5'"],
            "%s: bad lines %s" % (what, out["bad"]))
    t.check("start_line=7, end_line=8, or snap=True" in out["split"] and "--" not in out["split"],
            "%s: split statement in Python's words %r" % (what, out["split"]))
    t.check(out["whole"].get("seedmod:L6-9") == 3, "%s: whole function times each call %s" % (what, out["whole"]))
    # the import hook's ranges are located in the user's file at the wrapped
    # code's first line (issue 31: it was the inserted `with`'s line)
    t.check(out["where"] == [os.path.join(d, "seedmod.py"), 6], "%s: args.file/line %s" % (what, out["where"]))
    t.check("seedmod.attention" in out["updated"], "%s: updated in place %s" % (what, out["updated"]))
    t.check(out["filters"][0] != out["filters"][1] and out["filters"][1].endswith(".filtered-min5us.trace.json.gz"),
            "%s: filter names %s" % (what, out["filters"]))
    t.check(out["attrs"] == [["seedmod"], ["seedmod"], False] and out["again"] == "Hook",
            "%s: 001's signatures %s" % (what, out))
    if exe == t.PY:
        out, p = t.py(FULLTRACE_WARN, env, d, exe=exe, name="fulltracewarn")
        t.check(out is not None and out.get("ok"), "%s: enable_full_trace_mode warned on Debian: %s" % (what, p.stderr))


# Seed 000's "Custom Integration" with the default backend (torch imported:
# torch.profiler), and ranks from torch.distributed (mp.spawn, no RANK).
TORCH_SEEDS = """\
import json, os, sys, tempfile
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from ncrewrite.trace import ProfilingSession       # was: from ncompass.trace import ProfilingSession
from ncrewrite.profiler import ProfilerContext


def my_inference():
    return (torch.ones(16, 16) @ torch.ones(16, 16)).sum().item()


def worker(rank, init, backend, out):
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=2)
    import ncrt
    with ProfilerContext(output_dir=out, profile_name="dist-" + backend, backend=backend):
        with ncrt.range("work"):
            my_inference()
    dist.destroy_process_group()


if __name__ == "__main__":
    res = {}
    session = ProfilingSession(trace_output_dir="./traces")

    def run_with_custom_profiler():
        profiler = torch.profiler.profile()
        profiler.start()
        my_inference()
        profiler.stop()
        profiler.export_chrome_trace("./traces/custom.pt.trace.json")  # Save to trace_output_dir

    trace_path = session.run_profile(run_with_custom_profiler)
    res["custom"] = os.path.basename(trace_path)
    res["after"] = os.path.basename(session.run_profile(my_inference))
    for backend in ("ncrt", "torch"):
        init = "file://" + os.path.join(tempfile.mkdtemp(), "init")
        mp.spawn(worker, args=(init, backend, os.path.abspath("dist")), nprocs=2)
    res["dist"] = sorted(os.listdir("dist"))
    print(json.dumps(res))
"""


def torch_seeds_case(t, d, env):
    out, p = t.py(TORCH_SEEDS, env, d, name="torchseeds")
    if out is None:
        return
    t.check(out["custom"] == "custom.pt.trace.json" and out["after"].startswith("session_iter2-rank0"),
            "seed 000's Custom Integration: run_profile gave %s, then %s" % (out["custom"], out["after"]))
    want = ["dist-ncrt-rank0.pt.trace.json.gz", "dist-ncrt-rank1.pt.trace.json.gz",
            "dist-torch-rank0.pt.trace.json.gz", "dist-torch-rank1.pt.trace.json.gz"]
    t.check(out["dist"] == want, "ranks from torch.distributed: %s, want %s" % (out["dist"], want))


def names_in(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    out = {}
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "X":
            out.setdefault(e["name"], []).append(e)
    return out, doc


def run(t, usersite, work, env, tmp):
    pkg = os.path.join(usersite, "demo_model")
    os.makedirs(pkg, exist_ok=True)
    for name, text in (("__init__.py", ""), ("model.py", MODEL), ("ds.py", LOADER_DS)):
        with open(os.path.join(pkg, name), "w") as f:
            f.write(text)
    others = {v: e for v, e in t.interpreters().items() if os.path.realpath(e) != os.path.realpath(t.PY)}
    penv = dict(env, PYTHONPATH=usersite)
    for ver, exe in [("debian", t.PY)] + sorted(others.items()):
        d = os.path.join(tmp, "prof-%s" % ver)
        os.makedirs(d)
        session_case(t, exe, ver, d, env if exe == t.PY else penv)
        profiler_case(t, exe, ver, d, env if exe == t.PY else penv)
        sd = os.path.join(tmp, "seeds-%s" % ver)
        os.makedirs(sd)
        seeds_case(t, exe, ver, sd, env if exe == t.PY else penv)
    d = os.path.join(tmp, "prof-torch")
    os.makedirs(d)
    torch_case(t, d, env)
    if t.subprocess.run([t.PY, "-c", "import torch"], capture_output=True).returncode == 0:
        sd = os.path.join(tmp, "torch-seeds")
        os.makedirs(sd)
        torch_seeds_case(t, sd, env)
    loader_case(t, d, env)
    if os.path.isfile(os.path.join(usersite, "ncrewrite", "libncrt.so")):
        gpu_case(t, d, env)
    args_case(t, d, env)
    yaml_case(t, d, env)
    out, _ = t.py(NULL_CONFIG, env, d, name="nullcfg")
    if out is not None:
        t.check(out["instrumented"] and out["value"] == 3 * (sum(i * i for i in range(10)) + sum(range(10))),
                "nCompass config with null values: %s" % out)


def session_case(t, exe, ver, d, env):
    out, p = t.py(SESSION, env, d, exe=exe, name="session")
    if out is None:
        return
    what = "ProfilingSession (%s)" % ver
    t.check(out["ops1"].get("attention.forward") == 3, "%s: first trace ops %s" % (what, out["ops1"]))
    line = [n for n in out["ops2"] if n.endswith(":L4-5")]
    t.check(out["ops2"].get("attention.forward") == 3 and len(line) == 1 and out["ops2"][line[0]] == 3,
            "%s: targeted trace ops %s (want attention.forward x3 and the L4-5 range x3)" % (what, out["ops2"]))
    t.check(not any(n.endswith(":L4-5") for n in out["ops1"]), "%s: L4-5 already in the first trace" % what)
    t.check(out["mean_us"] and out["same"] and out["md"] == "# Trace summary"
            and {"operations", "bottlenecks", "recommendations"} <= set(out["keys"]),
            "%s: summary %s" % (what, {k: out[k] for k in ("mean_us", "same", "md", "keys")}))
    t.check(out["bad"] and "error" in out["bad"] and "400" in out["bad"], "%s: bad feedback: %r" % (what, out["bad"]))
    rng = out["cfg"]["targets"]["demo_model.model"].get("func_line_range_wrappings", [])
    t.check(len(rng) >= 1 and rng[0]["start_line"] == 4 and rng[0]["end_line"] == 5
            and rng[0].get("reasoning", "").startswith("Why does the attention"),
            "%s: config after feedback %s" % (what, out["cfg"]))
    # the automatic drill, through the manifest the session writes from the hook's records
    t.check(any(r.get("reasoning", "").startswith("drill: 'attention.forward'") and r["start_line"] == 6
                for r in rng[1:]), "%s: no drill range inside attention.forward: %s" % (what, rng))
    t.check(out["fc"] == {"feedback_text": "attention performance", "target_module": "demo_model.model"},
            "%s: feedback_context %s" % (what, out["fc"]))
    t.check(out["filtered"] and out["filtered_name"].endswith(".filtered.trace.json.gz"),
            "%s: filter_trace %s" % (what, out["filtered_name"]))
    t.check(out["history"] == [["my_model_optimization_initial", 0], ["my_model_optimization_targeted_attention", 1]],
            "%s: history %s" % (what, out["history"]))
    t.check("func_line_range_wrappings" not in json.dumps(out["reset"]) and out["loaded"] and out["cached"],
            "%s: reset/load_config/load_trace_summary: %s" % (what, {k: out[k] for k in ("reset", "loaded",
                                                                                          "cached")}))
    t.check(len(out["summary_files"]) == 4, "%s: summary files %s" % (what, out["summary_files"]))


def profiler_case(t, exe, ver, d, env):
    out_dir = os.path.join(d, "out")
    out, p = t.py(PROFILER, dict(env, RANK="3"), d, exe=exe, args=[out_dir], name="profiler")
    if out is None:
        return
    what = "ProfilerContext ncrt (%s)" % ver
    t.check(out["mode"] == "in-process" and out["at_end"] == ["ctx-rank3.pt.trace.json.gz"],
            "%s: trace at region end %s (mode %s)" % (what, out["at_end"], out["mode"]))
    ctx = os.path.join(out_dir, "ctx-rank3.pt.trace.json.gz")
    if t.check(os.path.isfile(ctx), "%s: %s missing" % (what, ctx)):
        names, doc = names_in(ctx)
        t.check(len(names.get("ctx.work", [])) == 4 and not any(n.startswith("outside") for n in names)
                and len(names.get("nv.ctx", [])) == 1,
                "%s: ranges in ctx trace %s" % (what, {k: len(v) for k, v in names.items()}))
    want = ["sched-cycle1-rank3.pt.trace.json.gz", "sched-cycle2-rank3.pt.trace.json.gz"]
    t.check(out["sched"] == want, "%s: schedule files %s, want %s" % (what, out["sched"], want))
    for f, steps in zip(want, (["step2", "step3"], ["step6", "step7"])):
        path = os.path.join(out_dir, f)
        if os.path.isfile(path):
            names, _ = names_in(path)
            got = sorted(n for n in names if n.startswith("step"))
            t.check(got == steps, "%s: %s has %s, want %s" % (what, f, got, steps))
    deco = os.path.join(out_dir, "decorated-rank3.pt.trace.json.gz")
    if t.check(out["deco"] == 7 and os.path.isfile(deco), "%s: @profile_function wrote no %s" % (what, deco)):
        names, _ = names_in(deco)
        t.check("deco.inner" in names, "%s: decorated trace %s" % (what, sorted(names)))
    left = glob.glob(os.path.join(d, "**", ".ncrt-*"), recursive=True)
    t.check(not left, "%s: spill files left %s" % (what, left))


def torch_case(t, d, env):
    p = t.subprocess.run([t.PY, "-c", "import torch"], capture_output=True)
    if p.returncode != 0:
        t.NOTES.append("torch backend: Debian's python3-torch is not installed: the torch cases were left out")
        return
    out_dir = os.path.join(d, "torch")
    out, _ = t.py(TORCH, env, d, args=[out_dir], name="torchprof")
    if out is None:
        return
    if not t.check(len(out["paths"]) == 1 and out["paths"][0].endswith(".pt.trace.json.gz")
                   and os.path.basename(out["paths"][0]).startswith("tp-rank0."), "torch backend files %s" % out):
        return
    names, doc = names_in(out["paths"][0])
    conv = [e for n, es in names.items() if n.startswith("aten::conv") for e in es]
    t.check(conv and any(e.get("args", {}).get("Input Dims") for e in conv),
            "torch backend: no aten::conv* with Input Dims (ops: %s)" % sorted(names)[:20])
    for n in ("my.region", "trc"):  # ncrt.range, nCompass's TorchRecordContext
        region = names.get(n, [])
        t.check(region and region[0].get("cat") == "user_annotation",
                "torch backend: our range %s is not a user_annotation: %s" % (n, region[:1]))
    mem = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    t.check(mem, "torch backend: no [memory] events with profile_memory")
    t.check(any(n.startswith("aten::convolution_backward") or "backward" in n.lower() for n in names),
            "torch backend: no backward ops (%s)" % sorted(names)[:30])


GPU = '''\
import json, sys
import ncrewrite
import torch
from ncrewrite.profiler import ProfilerContext
import ncrt

if not torch.cuda.is_available():
    print(json.dumps({"skip": "no CUDA device"}))
    sys.exit(0)
x = torch.randn(1024, 1024, device="cuda")
torch.cuda.synchronize()
with ProfilerContext(output_dir=sys.argv[1], profile_name="gpu", backend="ncrt", activities=["CPU", "GPU"]) as p:
    with ncrt.range("gpu.matmul"):
        y = x @ x
        torch.cuda.synchronize()
print(json.dumps({"paths": [str(q) for q in p.trace_paths]}))
'''


def gpu_case(t, d, env):
    """CUPTI attached in-process after CUDA was initialised (the GPU machine
    only; here it says why it is skipped)."""
    if t.subprocess.run([t.PY, "-c", "import torch"], capture_output=True).returncode != 0:
        t.NOTES.append("in-process CUPTI: skipped: no torch for %s" % t.PY)
        return
    out, _ = t.py(GPU, env, d, args=[os.path.join(d, "gpu")], name="gpu")
    if out is None:
        return
    if "skip" in out:
        t.NOTES.append("in-process CUPTI (ncrt backend on a GPU): skipped: %s" % out["skip"])
        return
    if t.check(len(out["paths"]) == 1, "in-process CUPTI: files %s" % out["paths"]):
        names, doc = names_in(out["paths"][0])
        kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
        t.check(kernels and "gpu.matmul" in names, "in-process CUPTI: %d kernels, ranges %s" % (len(kernels),
                                                                                                sorted(names)[:10]))


def loader_case(t, d, env):
    p = t.subprocess.run([t.PY, "-c", "import torch"], capture_output=True)
    if p.returncode != 0:
        return
    out, _ = t.py(LOADER, env, d, name="loader")
    if out is not None:
        t.check(out["rows"] == [[[0, 1], [1, 1]], [[4, 1], [9, 1]]],
                "DataLoader spawn workers: items %s (second column 1: the worker's module is instrumented)"
                % out["rows"])


def args_case(t, d, env):
    out_dir = os.path.join(d, "args")
    out, _ = t.py(ARGS, env, d, args=["--profile", "--profile-name", "flux", "--profile-dir", out_dir,
                                      "--profile-activities", "CPU", "MEM", "--profile-with-stack",
                                      "--profile-record-shapes=False", "--profile-backend", "ncrt"], name="args")
    if out is not None:
        t.check(out["enabled"] and out["name"] == "flux" and out["dir"] == out_dir and out["acts"] == ["CPU", "MEM"]
                and out["stack"] is True and out["shapes"] is False and out["schedule"] == "None"
                and out["paths"] == [os.path.join(out_dir, "flux-rank0.pt.trace.json.gz")],
                "argparse helper: %s" % out)
    out, _ = t.py(ARGS, env, d, args=["--profile-wait", "2", "--profile-active", "1"], name="args2")
    if out is not None:
        t.check(not out["enabled"] and out["paths"] == []
                and out["schedule"] == "Schedule(wait=2, warmup=1, active=1, repeat=1)", "argparse defaults: %s" % out)
    p = t.subprocess.run([t.PY, os.path.join(d, "args.py"), "--profile-wait", "-1"], env=env, cwd=d,
                         capture_output=True, text=True)
    t.check(p.returncode == 2 and "argument --profile-wait: want a number >= 0, not -1" in p.stderr,
            "argparse error: rc %d %s" % (p.returncode, p.stderr))


def yaml_case(t, d, env):
    cases = {
        "ok.yaml": YAML_OK,
        "short.yaml": YAML_OK.replace("epochs: 11", "epochs: 10"),
        "typo.yaml": YAML_OK.replace("warmup: 1", "warmpu: 1"),
        "neg.yaml": YAML_OK.replace("wait: 3", "wait: -1"),
    }
    for n, text in cases.items():
        with open(os.path.join(d, n), "w") as f:
            f.write(text)
    out, _ = t.py('''\
        import json
        from ncrewrite.profiler import load_profiling_config, ConfigError
        res = {}
        for n in ("ok.yaml", "short.yaml", "typo.yaml", "neg.yaml"):
            try:
                v = load_profiling_config(n)
                res[n] = {k: (repr(x) if k == "schedule" else x) for k, x in v.items()}
            except ConfigError as e:
                res[n] = "ERR " + str(e)
        try:
            load_profiling_config("ok.yaml", epochs=5)
            res["given"] = None
        except ConfigError as e:
            res["given"] = str(e)
        print(json.dumps(res))
        ''', env, d, name="yamlcfg")
    if out is None:
        return
    t.check(out["ok.yaml"] == {"record_shapes": True, "profile_memory": True, "with_stack": False,
                               "schedule": "Schedule(wait=0, warmup=1, active=3, repeat=2, skip_first=3)"},
            "profiling: loader: %s" % out["ok.yaml"])
    t.check(out["short.yaml"].startswith("ERR short.yaml:2:11: error: 10 epochs are fewer than the schedule needs")
            and "= 11" in out["short.yaml"] and "^" in out["short.yaml"], "epochs check: %s" % out["short.yaml"])
    t.check(out["typo.yaml"].startswith("ERR typo.yaml:5:3: error: unknown key 'warmpu'")
            and "did you mean 'warmup'" in out["typo.yaml"], "unknown key: %s" % out["typo.yaml"])
    t.check(out["neg.yaml"].startswith("ERR neg.yaml:4:9: error: profiling.wait should be a whole number >= 0"),
            "negative wait: %s" % out["neg.yaml"])
    t.check(out["given"] and "5 epochs are fewer" in out["given"] and "epochs=5 given" in out["given"],
            "epochs given: %s" % out["given"])
    # seed 004: "with repeat=1, the cycle runs twice": wait 3 epochs once,
    # then warmup 1 + active 3, twice: epochs 4-6 and 8-10 (of 0-10) recorded
    out, _ = t.py('''\
        import gzip, json, os
        from ncrewrite.profiler import load_profiling_config, ProfilerContext   # first: then ncrt records
        import ncrt
        kw = load_profiling_config("ok.yaml")
        kw.pop("record_shapes", None), kw.pop("profile_memory", None), kw.pop("with_stack", None)
        with ProfilerContext(output_dir="epochs", profile_name="train", backend="ncrt", **kw) as prof:
            for epoch in range(11):
                with ncrt.range("epoch %d" % epoch):
                    pass
                prof.step()
        got = []
        for f in prof.trace_paths:
            with gzip.open(f, "rt") as fh:
                got.append(sorted(int(e["name"].split()[1]) for e in json.load(fh)["traceEvents"]
                                  if e.get("ph") == "X" and e["name"].startswith("epoch ")))
        print(json.dumps({"files": [os.path.basename(f) for f in prof.trace_paths], "epochs": got}))
        ''', env, d, name="yamlepochs")
    if out is not None:
        t.check(out["epochs"] == [[4, 5, 6], [8, 9, 10]], "profiling: repeat=1 runs the cycle twice: %s" % out)
