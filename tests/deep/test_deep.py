"""ncrun's deep-dive backends (--ncu, --nsys) against fake ncu and nsys.

    python3 test_deep.py CASE BUILD_DIR

The fakes are small Python scripts written into a temporary directory: they
record their argv and environment, check what a real tool would refuse,
run the program the way the tool does (its stdout stays the program's) and
answer `--import ... --csv --page raw` with CSV recorded from ncu 2025.3 on
an H100 (tests/deep/data/). Stage 1 is either reused (--trace, a synthetic
GPU trace whose kernel names use the C++ runtime's spelling, so the join
with ncu's spelling is exercised) or run for real on a Python program with
ncrt ranges (CPU: no kernels, so ncu runs without a kernel filter).

Cases: ncu-join, ncu-nothing, ncu-perm, ncu-no-range, ncu-stage1, ncu-sets,
no-tool, slot-held, nsys, nsys-absent, summary-flag, recorded-h100. Exit 0 pass, 1 fail."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")

FAKE = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
tool = os.path.basename(sys.argv[0])
log = os.environ["FAKE_LOG"]
with open(log, "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "env": {k: v for k, v in os.environ.items()
        if k.endswith("INJECTION64_PATH") or k == "LD_PRELOAD" or k.startswith("NCRT_")}}) + "\n")
a = sys.argv[1:]
mode = os.environ.get("FAKE_MODE", "ok")
if a == ["--version"]:
    print("NVIDIA (R) Nsight fake\nCopyright (c) nobody\nVersion 2025.3.1.0 (build fake) (public-release)")
    sys.exit(0)
if tool == "ncu":
    if a == ["--list-sections"]:
        sys.stdout.write(open(os.environ["FAKE_SECTIONS"]).read()); sys.exit(0)
    if a[:1] == ["--import"]:
        assert a[2:] == ["--csv", "--page", "raw"], a
        assert os.path.exists(a[1]), a[1]
        sys.stdout.write(open(os.environ["FAKE_CSV"]).read()); sys.exit(0)
    # profile: options with a value, then the program
    takes = {"--nvtx-include", "--kernel-name-base", "-k", "--launch-count", "--filter-mode", "--set", "--section",
             "--export", "--log-file"}
    i = 0
    opts = {}
    while i < len(a) and a[i].startswith("-"):
        if a[i] in takes:
            opts.setdefault(a[i], []).append(a[i + 1]); i += 2
        elif a[i] in ("--nvtx", "--force-overwrite"):
            opts[a[i]] = True; i += 1
        else:
            print("==ERROR== unrecognised option " + a[i], file=sys.stderr); sys.exit(1)
    prog = a[i:]
    logf = open(opts["--log-file"][0], "w")
    logf.write("==PROF== Connected to process 1 (%s)\n" % prog[0])
    rc = subprocess.call(prog)
    if mode == "perm":
        logf.write("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                   "Performance Counters on the target device 0.\n")
        sys.exit(1)
    if mode == "nothing":
        logf.write("==PROF== Disconnected from process 1\n==WARNING== No kernels were profiled.\n")
        sys.exit(rc)
    open(opts["--export"][0] + ".ncu-rep", "w").write("fake report")
    logf.write("==PROF== Profiling \"scale\": 0%....50%....100% - 8 passes\n==PROF== Disconnected\n")
    sys.exit(rc)
if tool == "nsys":
    if a[:1] == ["profile"]:
        out = [x for x in a if x.startswith("--output=")][0][len("--output="):]
        prog = a[[i for i, x in enumerate(a) if x.startswith("--output=")][0] + 1:]
        rc = subprocess.call(prog)
        if mode == "nothing":
            print("No reports were generated"); sys.exit(rc)
        open(out + ".nsys-rep", "w").write("fake")
        sys.exit(rc)
    if a[:1] == ["stats"]:
        out = a[a.index("--output") + 1]
        open(out + "_cuda_gpu_kern_sum.csv", "w").write(
            'Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n'
            '90.0,54000,3,18000.0,18000.0,17000,19000,1000.0,"scale(float *, int, float)"\n'
            '10.0,6000,1,6000.0,6000.0,6000,6000,0.0,"other_kernel(int)"\n')
        sys.exit(0)
sys.exit(2)
'''


def synthetic_trace(path):
    """Range decode_step (3 times) launching scale(float*, int, float) and
    copy_kernel; range prefill launching other_kernel (must be left out)."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "prog"}}]
    corr = 1
    t = 0.0
    for step in range(3):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "decode_step", "pid": 1, "tid": 1,
                   "ts": t, "dur": 100.0, "args": {}})
        for k, (name, dur) in enumerate([("scale(float*, int, float)", 18.0), ("copy_kernel(int)", 2.0),
                                         ("add(float const*, int)", 1.0),
                                         ("void at::(anonymous namespace)::fill<float>(float*)", 0.5)]):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t + 10 + k * 10, "dur": 5.0, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": t + 20 + k * 30,
                       "dur": dur, "args": {"device": 0, "stream": 7, "correlation": corr}})
            corr += 1
        t += 200
    ev.append({"ph": "X", "cat": "user_annotation", "name": "prefill", "pid": 1, "tid": 1, "ts": t,
               "dur": 100.0, "args": {}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
               "ts": t + 10, "dur": 5.0, "args": {"correlation": corr}})
    ev.append({"ph": "X", "cat": "kernel", "name": "other_kernel(int)", "pid": 0, "tid": 7, "ts": t + 20,
               "dur": 50.0, "args": {"device": 0, "stream": 7, "correlation": corr}})
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": ev, "displayTimeUnit": "ms"}, f)


class Env:
    def __init__(self, build):
        self.build = build
        self.ncrun = os.path.join(build, "bin", "ncrun")
        self.tmp = tempfile.mkdtemp(prefix="nc-deep-")
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        for tool in ("ncu", "nsys"):
            p = os.path.join(self.bin, tool)
            with open(p, "w") as f:
                f.write(FAKE)
            os.chmod(p, 0o755)
        self.log = os.path.join(self.tmp, "argv.log")
        self.trace = os.path.join(self.tmp, "stage1.trace.json.gz")
        synthetic_trace(self.trace)
        self.env = dict(os.environ)
        for k in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "NCRT_NCU", "NCRT_NSYS"):
            self.env.pop(k, None)
        self.env.update(FAKE_LOG=self.log, FAKE_CSV=os.path.join(DATA, "ncu-raw-pipeline.csv"),
                        FAKE_SECTIONS=os.path.join(DATA, "ncu-list-sections.txt"),
                        PATH=self.bin + os.pathsep + self.env.get("PATH", ""), PYTHONDONTWRITEBYTECODE="1")
        self.fails = []

    def run(self, args, **extra):
        env = dict(self.env)
        env.update(extra)
        return subprocess.run([self.ncrun] + args, env=env, capture_output=True, text=True, timeout=300)

    def calls(self):
        if not os.path.exists(self.log):
            return []
        return [json.loads(l) for l in open(self.log)]

    def check(self, cond, what, detail=""):
        if not cond:
            self.fails.append(what + (": " + detail if detail else ""))

    def done(self, name):
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.fails:
            for f in self.fails:
                print("FAIL %s: %s" % (name, f))
            return 1
        print("ok %s" % name)
        return 0


def ncu_profile_call(e):
    return [c for c in e.calls() if "--nvtx" in c["argv"]]


def case_ncu_join(e):
    run = os.path.join(e.tmp, "run")
    r = e.run(["--ncu", "decode*", "--top", "1", "--trace", e.trace, "--run-dir", run, "--",
               "/bin/echo", "program output"])
    e.check(r.returncode == 0, "exit status 0", "%d\n%s" % (r.returncode, r.stderr))
    e.check(r.stdout == "program output\n", "the program's stdout is its own", repr(r.stdout))
    calls = ncu_profile_call(e)
    e.check(len(calls) == 1, "ncu profiled once", str(e.calls()))
    if calls:
        a = calls[0]["argv"]
        inc = a[a.index("--nvtx-include") + 1]
        e.check(inc == "regex:ncrt@^decode.*$/", "push/pop include expression of domain ncrt", inc)
        e.check(a[a.index("--kernel-name-base") + 1] == "demangled", "kernel filter on demangled names")
        k = a[a.index("-k") + 1]
        e.check(k.startswith("regex:"), "kernel filter is a regex", k)
        rx = re.compile(k[len("regex:"):])
        e.check(rx.match("scale(float *, int, float)") is not None, "filter matches ncu's spelling", k)
        e.check(rx.match("scale(float*, int, float)") is not None, "filter matches our spelling", k)
        e.check(rx.match("copy_kernel(int)") is None, "--top 1 leaves the second kernel out", k)
        e.check(rx.match("other_kernel(int)") is None, "a kernel outside the range is left out", k)
        e.check(a[a.index("--launch-count") + 1] == "5" and a[a.index("--filter-mode") + 1] == "per-launch-config",
                "bounded launch count per launch configuration (default 5)", str(a))
        e.check(a[a.index("--set") + 1] == "basic", "default set basic")
        e.check(a[a.index("--export") + 1] == os.path.join(os.path.realpath(run), "ncu", "report"),
                "report in the run directory", str(a))
        e.check(a[-2:] == ["/bin/echo", "program output"], "the program comes last", str(a))
        env = calls[0]["env"]
        e.check("NVTX_INJECTION64_PATH" not in env and "CUDA_INJECTION64_PATH" not in env,
                "our injection is not set under ncu", str(env))
    for f in ("ncu/kernels.tsv", "ncu/raw.csv", "ncu/sections.txt", "ncu/ncu.log", "summary.md", "env.json"):
        e.check(os.path.exists(os.path.join(run, f)), "run directory has " + f)
    tsv = open(os.path.join(run, "ncu/kernels.tsv")).read() if os.path.exists(os.path.join(run, "ncu/kernels.tsv")) else ""
    e.check(tsv.startswith("# pattern\tdecode*\n"), "kernels.tsv names the pattern", tsv[:80])
    e.check("scale(float*, int, float)\t3\t" in tsv, "kernels.tsv: scale, 3 launches", tsv)
    md = open(os.path.join(run, "summary.md")).read() if os.path.exists(os.path.join(run, "summary.md")) else ""
    e.check("Nsight Compute" in md, "summary.md has the Nsight Compute section", md[-600:])
    # the recorded CSV: 3 launches of scale, SM throughput 23.63, 23.72, 23.30 %: mean 23.55, shown 23.5
    e.check("| scale(float*, int, float) | 3 |" in md and "| 23.5 |" in md,
            "summary.md joins ncu's mean SM throughput to our kernel row", md[-1500:])
    envj = json.load(open(os.path.join(run, "env.json")))
    e.check(envj.get("backend") == "ncu", "env.json backend", str(envj.get("backend")))
    e.check("2025.3.1.0" in envj.get("tools", {}).get("ncu", ""), "env.json ncu version", str(envj.get("tools")))
    stages = [s["stage"] for s in envj.get("stages", [])]
    e.check(stages[:2] == ["kernels", "ncu"] and "summary" in stages, "env.json stages", str(stages))
    e.check(envj.get("stage1_trace") == os.path.realpath(e.trace), "env.json names the reused trace")


def case_ncu_nothing(e):
    r = e.run(["--ncu", "decode*", "--trace", e.trace, "--run-dir", os.path.join(e.tmp, "run"), "--", "/bin/true"],
              FAKE_MODE="nothing")
    e.check(r.returncode == 3, "exit status 3", "%d %s" % (r.returncode, r.stderr))
    e.check("captured nothing" in r.stderr and "try --top 0" in r.stderr, "says why and what to try", r.stderr)


def case_ncu_perm(e):
    r = e.run(["--ncu", "decode*", "--trace", e.trace, "--run-dir", os.path.join(e.tmp, "run"), "--", "/bin/true"],
              FAKE_MODE="perm")
    e.check(r.returncode == 3, "exit status 3", "%d %s" % (r.returncode, r.stderr))
    e.check("ERR_NVGPUCTRPERM" in r.stderr and "NVreg_RestrictProfilingToAdminUsers=0" in r.stderr,
            "names the error and the remedy", r.stderr)


def case_ncu_no_range(e):
    r = e.run(["--ncu", "attention*", "--trace", e.trace, "--run-dir", os.path.join(e.tmp, "run"), "--",
               "/bin/true"])
    e.check(r.returncode == 3, "exit status 3", "%d %s" % (r.returncode, r.stderr))
    e.check("no range matching 'attention*'" in r.stderr and "decode_step" in r.stderr and "prefill" in r.stderr,
            "says no range matched and lists the ranges seen", r.stderr)
    e.check(not ncu_profile_call(e), "ncu not run for nothing")


def case_ncu_stage1(e):
    """Stage 1 for real (CPU): a Python program with ncrt ranges; no kernels."""
    prog = os.path.join(e.tmp, "prog.py")
    with open(prog, "w") as f:
        f.write("import ncrt\nfor i in range(3):\n    with ncrt.range('decode'):\n        sum(range(1000))\n"
                "print('done')\n")
    run = os.path.join(e.tmp, "run")
    r = e.run(["--ncu", "decode", "--run-dir", run, "--", sys.executable, prog])
    e.check(r.returncode == 0, "exit status 0", "%d %s" % (r.returncode, r.stderr))
    e.check(r.stdout.count("done\n") == 2, "the program ran twice (stage 1, stage 2), its output its own",
            repr(r.stdout))
    e.check("no GPU kernel was recorded inside" in r.stderr, "says stage 1 saw no kernel", r.stderr)
    calls = ncu_profile_call(e)
    e.check(len(calls) == 1 and "-k" not in calls[0]["argv"], "ncu without a kernel filter", str(calls))
    if calls:
        e.check(calls[0]["env"].get("NVTX_INJECTION64_PATH") is None, "no injection of ours under ncu")
    traces = [f for f in os.listdir(run) if f.endswith(".trace.json.gz")]
    e.check(len(traces) == 1, "stage 1 trace in the run directory", str(os.listdir(run)))
    envj = json.load(open(os.path.join(run, "env.json")))
    stages = [s["stage"] for s in envj.get("stages", [])]
    e.check(stages[:3] == ["stage1", "kernels", "ncu"], "stages in order", str(stages))


def case_ncu_sets(e):
    r = e.run(["--ncu", "decode*", "--set", "SpeedOfLight,Occupancy", "--launch-count", "3", "--trace", e.trace,
               "--run-dir", os.path.join(e.tmp, "run"), "--", "/bin/true"])
    e.check(r.returncode == 0, "exit status 0", r.stderr)
    calls = ncu_profile_call(e)
    if calls:
        a = calls[0]["argv"]
        secs = [a[i + 1] for i, x in enumerate(a) if x == "--section"]
        e.check(secs == ["SpeedOfLight", "Occupancy"] and "--set" not in a, "sections given one by one", str(a))
        e.check(a[a.index("--launch-count") + 1] == "3", "--launch-count passed on")
        rx = re.compile(a[a.index("-k") + 1][len("regex:"):])
        for ncu_name in ("add(const float *, int)", "add(float const*, int)",
                         "void at::<unnamed>::fill<float>(float *)", "copy_kernel(int)"):
            e.check(rx.match(ncu_name) is not None, "the filter matches ncu's " + ncu_name, rx.pattern)
        e.check(rx.match("void at::native::fill<T1>(T1 *)") is not None,
                "template parameters in ncu's spelling (as declared)", rx.pattern)
        e.check(rx.match("void other_fill<float>(float *)") is None and rx.match("adder(int)") is None,
                "but not another function", rx.pattern)
    r = e.run(["--ncu", "decode*", "--top", "x", "--", "/bin/true"])
    e.check(r.returncode == 2 and "--top x" in r.stderr, "a bad --top is refused before running", r.stderr)


def case_no_tool(e):
    root = os.path.join(e.tmp, "runs")
    r = e.run(["--ncu", "decode*", "-o", root, "--", "/bin/true"], NCRT_NCU=os.path.join(e.tmp, "nope", "ncu"))
    e.check(r.returncode == 2 and "ncu is not installed here" in r.stderr, "one clear line", r.stderr)
    e.check(not os.path.exists(root), "no run directory made")


def case_slot_held(e):
    r = e.run(["--ncu", "decode*", "--trace", e.trace, "--", "/bin/true"], NVTX_INJECTION64_PATH="/opt/other/lib.so")
    e.check(r.returncode == 2, "refused", "%d %s" % (r.returncode, r.stderr))
    e.check(r.stderr.count("\n") == 1 and "another profiler holds the NVTX slot" in r.stderr, "in one line", r.stderr)
    e.check(not e.calls() or not ncu_profile_call(e), "ncu not run")


def case_nsys(e):
    run = os.path.join(e.tmp, "run")
    r = e.run(["--nsys", "decode*", "--trace", e.trace, "--run-dir", run, "--", "/bin/echo", "hi"])
    e.check(r.returncode == 0, "exit status 0", r.stderr)
    e.check(r.stdout == "hi\n", "program output kept", repr(r.stdout))
    prof = [c for c in e.calls() if c["argv"][:1] == ["profile"]]
    e.check(len(prof) == 1, "nsys profile ran once", str(e.calls()))
    if prof:
        a = prof[0]["argv"]
        e.check("--capture-range=nvtx" in a and "--nvtx-capture=decode_step@ncrt" in a,
                "capture gated on the one matching range of domain ncrt", str(a))
        e.check("--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0" in a, "unregistered strings allowed too")
    e.check("first of 1 matching 'decode*'" in r.stderr, "says which name the glob became", r.stderr)
    csv = os.path.join(run, "nsys", "stats_cuda_gpu_kern_sum.csv")
    e.check(os.path.exists(csv), "stats CSV in the run directory")
    md = open(os.path.join(run, "summary.md")).read() if os.path.exists(os.path.join(run, "summary.md")) else ""
    e.check("Nsight Systems" in md, "summary.md joins nsys's kernels", md[-800:])
    r = e.run(["--nsys", "decode_step", "--trace", e.trace, "--run-dir", run + "2", "--", "/bin/true"],
              FAKE_MODE="nothing")
    e.check(r.returncode == 3 and "nsys wrote no report" in r.stderr, "a capture that never opened is explained",
            "%d %s" % (r.returncode, r.stderr))


def case_nsys_absent(e):
    os.unlink(os.path.join(e.bin, "nsys"))
    env_path = e.bin + os.pathsep + "/usr/bin:/bin"
    r = e.run(["--nsys", "decode_step", "--trace", e.trace, "--", "/bin/true"], PATH=env_path)
    if os.path.exists("/usr/local/cuda/bin/nsys"):
        print("skipped: nsys is installed in /usr/local/cuda/bin")
        return
    e.check(r.returncode == 2 and "nsys is not installed here" in r.stderr, "skipped with a clear message",
            r.stderr)


def case_summary_flag(e):
    """--summary: the plain collector's run gets summary.md too (deep runs have it by default)."""
    prog = os.path.join(e.tmp, "prog.py")
    with open(prog, "w") as f:
        f.write("import ncrt\nwith ncrt.range('work'):\n    sum(range(1000))\n")
    run = os.path.join(e.tmp, "run")
    r = e.run(["--summary", "--run-dir", run, "--", sys.executable, prog])
    md = os.path.join(run, "summary.md")
    e.check(r.returncode == 0 and os.path.exists(md), "summary.md written", r.stderr)
    e.check(os.path.exists(md) and "| work |" in open(md).read(), "it summarises the run's trace")
    envj = json.load(open(os.path.join(run, "env.json")))
    e.check([s["stage"] for s in envj["stages"]] == ["ncrt", "summary"], "stages: ncrt, summary",
            str(envj["stages"]))
    run2 = os.path.join(e.tmp, "run2")
    e.run(["--run-dir", run2, "--", sys.executable, prog])
    e.check(not os.path.exists(os.path.join(run2, "summary.md")), "none without --summary")


def case_recorded_h100(e):
    """examples/torch-model under `ncrun --ncu 'Net.forward'` on an H100 (torch 2.11, ncu 2025.3): the
    stage-1 trace, kernels.tsv and ncu's raw CSV as recorded (tests/deep/data/h100-torch). The kernel
    filter built from the trace's names must match ncu's spelling of every profiled kernel, and the
    summary must join the kernels whose function name is unambiguous in the range."""
    rec = os.path.join(DATA, "h100-torch")
    csv_path = os.path.join(rec, "ncu", "raw.csv")
    e.env["FAKE_CSV"] = csv_path
    run = os.path.join(e.tmp, "run")
    r = e.run(["--ncu", "Net.forward", "--trace", os.path.join(rec, "train-rank0.trace.json.gz"),
               "--run-dir", run, "--", "/bin/true"])
    e.check(r.returncode == 0, "exit status 0", r.stderr)
    calls = ncu_profile_call(e)
    if calls:
        a = calls[0]["argv"]
        rx = re.compile(a[a.index("-k") + 1][len("regex:"):])
        import csv as csvmod
        import io
        rows = list(csvmod.reader(io.StringIO("".join(l for l in open(csv_path) if l.startswith('"')))))
        names = sorted(set(row[rows[0].index("Kernel Name")] for row in rows[2:]))
        e.check(len(names) == 6, "the recording has 6 kernels", str(names))
        for n in names:
            e.check(rx.match(n) is not None, "the filter matches ncu's " + n[:60], rx.pattern[:300])
    r = subprocess.run([os.path.join(e.build, "bin", "nctrace"), "summary", "--ncu", csv_path,
                        os.path.join(rec, "train-rank0.trace.json.gz")], capture_output=True, text=True)
    md = r.stdout
    e.check(r.returncode == 0, "summary exit 0", r.stderr)
    section = md[md.find("## Nsight Compute"):]
    section = section[:section.find("Occupancy and launch configuration")]
    # our counts are the trace's (the whole run), not the range's
    for stem, count in (("bn_fw_tr_1C11_singleread", 24), ("nchwToNhwcKernel", 64), ("elementwise_kernel<128", 32)):
        row = [l for l in section.splitlines() if stem in l and l.startswith("| void")]
        e.check(row and row[0].split(" | ")[1] == str(count), "joined: %s with our count %d" % (stem, count),
                str(row)[:300])
    vec = [l for l in section.splitlines() if "vectorized_elementwise_kernel<" in l and l.startswith("| void at::")]
    e.check(len(vec) == 3 and all(l.split(" | ")[1] == "-" for l in vec),
            "three instantiations of one function: ambiguous, not joined", str(vec)[:300])
    e.check("the kernels of `Net.forward`" in md, "the pattern from kernels.tsv")


CASES = {"summary-flag": case_summary_flag, "recorded-h100": case_recorded_h100, "ncu-join": case_ncu_join, "ncu-nothing": case_ncu_nothing, "ncu-perm": case_ncu_perm,
         "ncu-no-range": case_ncu_no_range, "ncu-stage1": case_ncu_stage1, "ncu-sets": case_ncu_sets,
         "no-tool": case_no_tool, "slot-held": case_slot_held, "nsys": case_nsys, "nsys-absent": case_nsys_absent}


def main():
    case, build = sys.argv[1], sys.argv[2]
    e = Env(build)
    CASES[case](e)
    sys.exit(e.done(case))


if __name__ == "__main__":
    main()
