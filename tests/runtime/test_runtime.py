#!/usr/bin/env python3
"""Runtime tests: programs run under ncrun, their traces checked against
what the programs did (names, counts, nesting, threads, layout).

    test_runtime.py CASE NCRUN_DIR [NCREWRITE]

NCRUN_DIR holds ncrun, libncrt.so and python/ (the ncrt module). One CASE
per ctest test; exit 0 passed, 1 failed, 77 skipped (the reason printed).
"""
import collections
import functools
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
ROOT = os.path.dirname(os.path.dirname(HERE))
NVTX_INC = next((d for d in ("/usr/local/cuda/include", "/usr/local/cuda/targets/x86_64-linux/include")
                 if os.path.exists(os.path.join(d, "nvtx3"))), "/usr/local/cuda/include")
INC = ["-I", os.path.join(ROOT, "src/runtime/include"), "-I", NVTX_INC]
PY = os.environ.get("NCRT_TEST_PYTHON", "/usr/bin/python3")

SKIP = 77


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


class Ctx:
    def __init__(self, ncrun_dir, tmp, ncrewrite=None):
        self.ncrewrite = ncrewrite
        self.ncrun = os.path.join(ncrun_dir, "ncrun")
        self.lib = os.path.join(ncrun_dir, "libncrt.so")
        self.tmp = tmp
        self.runs = 0
        # the build's bin/ (ncrun lives in <build>/ncrt, nctrace in <build>/bin)
        self.nctrace = os.path.join(os.path.dirname(os.path.dirname(self.ncrun)), "bin", "nctrace")

    def cc(self, src, *extra, cxx=False, out=None):
        exe = os.path.join(self.tmp, out or os.path.basename(src).replace(".", "_"))
        cmd = (["g++", "-std=gnu++17"] if cxx else ["gcc", "-std=gnu11"]) + ["-O1"] + INC
        subprocess.run(cmd + [os.path.join(PROGS, src)] + list(extra) + ["-o", exe, "-lpthread"], check=True)
        return exe

    def nvcc(self, src, *extra):
        """Build a CUDA program of progs/ (named after it, without .cu)."""
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        exe = os.path.join(self.tmp, os.path.splitext(src)[0])
        subprocess.run([nvcc, "-O2", "-std=c++17"] + INC + [os.path.join(PROGS, src), "-o", exe] + list(extra),
                       check=True)
        return exe

    def run(self, cmd, opts=(), env=None, expect_rc=0, timeout=None):
        """Run cmd under ncrun in a fresh run directory; return (proc, dir)."""
        self.runs += 1
        d = os.path.join(self.tmp, "run%d" % self.runs)
        e = dict(os.environ)
        for k in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "WORLD_SIZE", "NCRT_OUTPUT_DIR"):
            e.pop(k, None)
        e.update(env or {})
        p = subprocess.run([self.ncrun, "--run-dir", d] + list(opts) + ["--"] + cmd, capture_output=True,
                           text=True, env=e, cwd=self.tmp, timeout=timeout)
        if expect_rc is not None and p.returncode != expect_rc:
            raise Fail("%s exited %d\nstdout: %s\nstderr: %s" % (cmd, p.returncode, p.stdout, p.stderr))
        return p, d


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    # one gzip member: Perfetto reads only the first
    check(data[:2] == b"\x1f\x8b", "%s is not gzip" % path)
    d = json.loads(gzip.decompress(data))
    import zlib
    z = zlib.decompressobj(16 + 15)
    z.decompress(data)
    check(z.unused_data == b"", "%s has more than one gzip member" % path)
    check_layout(d, path)
    return d


def check_layout(d, what):
    for k in ("schemaVersion", "baseTimeNanoseconds", "distributedInfo", "traceEvents", "displayTimeUnit",
              "deviceProperties"):
        check(k in d, "%s: no %s" % (what, k))
    check(set(d["distributedInfo"]) >= {"rank", "world_size"}, "%s: distributedInfo %s" % (what, d["distributedInfo"]))
    check(isinstance(d["baseTimeNanoseconds"], int) and d["baseTimeNanoseconds"] > 1e18, "baseTimeNanoseconds")
    cats = {"user_annotation", "gpu_user_annotation", "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime",
            "cuda_driver", "gpu_memory"}
    meta = set()
    for e in d["traceEvents"]:
        check("ph" in e and "pid" in e and "ts" in e, "%s: malformed %s" % (what, e))
        if e["ph"] == "X":
            # a range with nothing per name to say has no args (speedscope
            # keys a function by its name and args: docs/trace-format.md)
            check(e["cat"] in cats and e["dur"] >= 0 and "tid" in e and "name" in e
                  and ("args" in e or e["cat"] == "user_annotation"), "%s: malformed %s" % (what, e))
        if e["ph"] == "M":
            meta.add(e["name"])
    check({"process_name", "thread_name"} <= meta, "%s: metadata %s" % (what, meta))


def xs(d, cat="user_annotation"):
    """Push/pop ranges (and GPU events by category); start/end ranges are
    X events too, marked args["start/end"], and come from spans()."""
    return [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == cat
            and not e.get("args", {}).get("start/end")]


def counts(d, cat="user_annotation"):
    return dict(collections.Counter(e["name"] for e in xs(d, cat)))


def check_nesting(d):
    by_tid = collections.defaultdict(list)
    for e in xs(d):
        by_tid[(e["pid"], e["tid"])].append(e)
    for tid, evs in by_tid.items():
        # Ranges a few ns long can share their start and even their end with
        # the enclosing one (ts/dur have the clock's resolution): at a tie the
        # recorded depth orders them, outer first, and a range starting where
        # the top one ends is its child only if recorded deeper.
        evs.sort(key=lambda e: (e["ts"], -e["dur"], e["depth"]))
        stack = []
        for e in evs:
            while stack and (e["ts"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-9 or
                             (e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-9 and
                              e["depth"] <= stack[-1]["depth"])):
                stack.pop()
            check(not stack or e["ts"] + e["dur"] <= stack[-1]["ts"] + stack[-1]["dur"] + 1e-3,
                  "ranges overlap without nesting on %s: %s in %s" % (tid, e, stack[-1] if stack else None))
            check(e["depth"] == len(stack), "depth %s recorded, %d seen: %s" % (e["depth"],
                                                                                         len(stack), e))
            stack.append(e)


def traces(d):
    return sorted(glob.glob(os.path.join(d, "*.trace.json.gz")))


def one_trace(d, name):
    p = os.path.join(d, name)
    check(os.path.exists(p), "no trace %s; found %s" % (p, traces(d)))
    return load(p)


def check_no_overlap(d):
    """What viewers require of X events (Perfetto drops or misdraws the
    rest): on each (pid, tid) any two are disjoint or one holds the other."""
    by = collections.defaultdict(list)
    for e in d["traceEvents"]:
        if e["ph"] == "X":
            by[(e["pid"], e["tid"])].append(e)
    for key, evs in by.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-9:
                stack.pop()
            check(not stack or e["ts"] + e["dur"] <= stack[-1]["ts"] + stack[-1]["dur"] + 1e-3,
                  "X events overlap improperly on %s: %s and %s" % (key, stack[-1] if stack else None, e))
            stack.append(e)


def spans(d):
    """Start/end ranges: X events marked args["start/end"], never b/e pairs,
    each on a lane of the thread that started it (a thread of its own whose
    thread_name says "ncrt lane of" that thread), so that no X events
    overlap improperly on any thread."""
    check(not [e for e in d["traceEvents"] if e["ph"] in "be"], "b/e events in a Kineto-layout trace")
    s = [e for e in d["traceEvents"] if e["ph"] == "X" and e.get("args", {}).get("start/end")]
    check(len({x["range id"] for x in s}) == len(s), "a start/end range written twice")
    lane_of = {(e["pid"], e["tid"]): e["args"].get("ncrt lane of") for e in d["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
    for x in s:
        check(lane_of.get((x["pid"], x["tid"])) == x["args"].get("thread") is not None,
              "a start/end range not on a lane of its thread: %s" % x)
    check_no_overlap(d)
    return s


# ---------------------------------------------------------------- cases

def case_c_basic(c):
    exe = c.cc("basic.c")
    plain = subprocess.run([exe], capture_output=True, text=True)
    p, d = c.run([exe], expect_rc=3)
    check((p.stdout, p.returncode) == (plain.stdout, plain.returncode), "output or status changed")
    check("ncrun: trace: " in p.stderr and "basic_c-rank0.pt.trace.json.gz" in p.stderr, "ncrun did not say where")
    t = one_trace(d, "basic_c-rank0.pt.trace.json.gz")
    # TensorBoard's PyTorch profiler plugin lists the files its worker
    # pattern matches (torch_tb_profiler's consts.WORKER_PATTERN), no others
    tb = re.compile(r"^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$")
    m = tb.match(os.path.basename(traces(d)[0]))
    check(len(traces(d)) == 1 and m and m.group(1) == "basic_c-rank0", "TensorBoard would not list %s" % traces(d))
    check_nesting(t)
    want = {"main": 1, "loop.body": 5, "leaf": 5, "plain": 1, "with-category": 1, "wide": 1}
    check(counts(t) == want, "ranges %s, expected %s" % (counts(t), want))
    cat = [e for e in xs(t) if e["name"] == "with-category"][0]
    check(cat["args"].get("category") == "seven", "category name: %s" % cat)
    leaf = [e for e in xs(t) if e["name"] == "leaf"][0]
    check(leaf["args"].get("domain") == "ncrt", "domain")
    check((leaf["args"].get("file"), leaf["args"].get("line")) == ("basic.c", 9), "source location %s" % leaf)
    marks = [e for e in t["traceEvents"] if e["ph"] == "i"]
    check([m["name"] for m in marks] == ["here"], "marks %s" % marks)
    b = spans(t)
    check([x["name"] for x in b] == ["span"] and "end thread" not in b[0]["args"], "spans %s" % b)
    tn = [e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
    check(tn == ["main-thread spans", "main-thread"], "thread names (the span's lane, the thread) %s" % tn)
    env = json.load(open(os.path.join(d, "env.json")))
    for k in ("host", "command", "gpu", "env", "options"):
        check(k in env, "env.json lacks %s" % k)
    check(env["command"] == [exe], "env.json command %s" % env["command"])
    check(t["ncrt"]["cupti"].startswith("not started"), "cupti status %s" % t["ncrt"]["cupti"])


def case_cpp_scoped(c):
    exe = c.cc("scoped.cpp", cxx=True)
    p, d = c.run([exe])
    t = one_trace(d, "scoped_cpp-rank0.pt.trace.json.gz")
    check_nesting(t)
    want = {"main": 1, "work": 4, "registered": 4}
    check(counts(t) == want, "ranges %s, expected %s" % (counts(t), want))
    check({e["args"].get("domain") for e in xs(t) if e["name"] == "work"} == {"app"}, "domain app")


def case_no_tool(c):
    """Without ncrun the program runs as ever; with an unwritable output
    directory the collector says so once and changes nothing else."""
    exe = c.cc("basic.c")
    plain = subprocess.run([exe], capture_output=True, text=True)
    check(plain.returncode == 3 and plain.stdout == "sum 20\n", "plain run: %s" % plain)
    env = dict(os.environ, NVTX_INJECTION64_PATH=c.lib, NCRT_OUTPUT_DIR="/proc/no/such/dir")
    p = subprocess.run([exe], capture_output=True, text=True, env=env)
    check((p.returncode, p.stdout) == (3, plain.stdout), "output changed: %s" % p)
    lines = [l for l in p.stderr.splitlines() if l.startswith("ncrt:")]
    check(len(lines) == 1 and "cannot write" in lines[0], "stderr %r" % p.stderr)


def case_threads(c):
    exe = c.cc("threads.c")
    p, d = c.run([exe, "8", "100000"], opts=["--throttle", "off"])
    t = one_trace(d, "threads_c-rank0.pt.trace.json.gz")
    x = xs(t)
    tids = collections.Counter(e["tid"] for e in x)
    check(len(tids) == 8 and set(tids.values()) == {100000}, "threads %s" % tids)
    check(counts(t) == {"outer": 400000, "inner": 400000}, "names %s" % counts(t))
    # nesting per thread: every inner lies in an outer of its thread
    check_nesting(t)


def case_throttle(c):
    exe = c.cc("throttle.c")
    # The time limit is far above what "tiny" takes (nanoseconds) so that a
    # loaded machine, where a range can last a preemption (milliseconds),
    # still throttles it; "slow" never reaches the 1000 calls, so the call
    # count alone keeps it. (With the default 10 us, 1000 tiny calls stayed
    # under the limit only while no preemption of over 10 ms fell into them.)
    p, d = c.run([exe], opts=["--throttle", "1000:100000"])
    t = one_trace(d, "throttle_c-rank0.pt.trace.json.gz")
    n = counts(t)
    check(n.get("tiny") == 1000 and n.get("slow") == 300, "counts %s" % n)
    th = t["ncrt"]["throttled"]
    check([x["name"] for x in th] == ["tiny"] and th[0]["calls"] == 1000 and th[0]["avg_us"] < 100000,
          "throttled %s" % th)
    check(t["ncrt"]["throttle"] == {"calls": 1000, "avg_us": 100000,
                                    "rule": "calls, then an exclusive mean under avg_us (judged once)"},
          "throttle settings %s" % t["ncrt"]["throttle"])
    # throttled calls are still counted: the trace says how often it ran
    check(th[0]["total_calls"] == 5000 and th[0]["from_ts"] > 0 and th[0]["tid"] > 0, "throttled record %s" % th)
    # calls alone (the default rule): the same names, whatever they cost
    p, d = c.run([exe], opts=["--throttle", "1000"])
    t = one_trace(d, "throttle_c-rank0.pt.trace.json.gz")
    th = t["ncrt"]["throttled"]
    check(counts(t) == {"tiny": 1000, "slow": 300} and [x["name"] for x in th] == ["tiny"]
          and t["ncrt"]["throttle"] == {"calls": 1000, "avg_us": 0, "rule": "calls"}, "calls alone: %s" % th)
    # the default (100000 calls) throttles nothing here
    p, d = c.run([exe])
    t = one_trace(d, "throttle_c-rank0.pt.trace.json.gz")
    check(counts(t) == {"tiny": 5000, "slow": 300} and t["ncrt"]["throttled"] == [], "default throttle")
    # counts are process-wide: 8 threads x 20 000 calls of each name (160 000
    # in all) pass the default N = 100 000 although no thread reaches it alone
    # (the time limit lifted, as above: 8 threads preempted inside their
    # ranges on a loaded machine must not make the calls look slow)
    exe = c.cc("threads.c")
    lifted = ["--throttle", "100000:100000"]
    p, d = c.run([exe, "8", "40000"], opts=lifted)
    t = one_trace(d, "threads_c-rank0.pt.trace.json.gz")
    th = {x["name"]: x for x in t["ncrt"]["throttled"]}
    check(sorted(th) == ["inner", "outer"], "threads throttled %s" % t["ncrt"]["throttled"])
    for name, n in counts(t).items():
        # judged once the totals reach N; threads add theirs every N/16 calls
        check(100000 <= th[name]["calls"] <= 100000 + 8 * 6250 and th[name]["calls"] <= n <= th[name]["calls"] + 8 * 6250,
              "%s: %d recorded, throttled at %d" % (name, n, th[name]["calls"]))
    # threads that end hand over what they counted: 40 threads x 5 000 calls,
    # each under the N/16 batch, still add up to the 100 000
    p, d = c.run([exe, "40", "10000"], opts=lifted)
    t = one_trace(d, "threads_c-rank0.pt.trace.json.gz")
    th = {x["name"]: x for x in t["ncrt"]["throttled"]}
    check(sorted(th) == ["inner", "outer"] and all(x["calls"] >= 100000 for x in th.values()),
          "short-lived threads throttled %s" % t["ncrt"]["throttled"])


def case_disk_budget(c):
    """A disk budget for the run (issue 33: --throttle off filled 16 GB in
    4 minutes): two processes together stop recording once their records
    reach it; what was recorded before is all there, the traces say when
    recording stopped, nctrace says so, and nothing is left behind."""
    exe = c.cc("budget.c")
    p, d = c.run([exe], opts=["--throttle", "off", "--disk-budget", "2M"])
    check("disk budget was reached" in p.stderr, "no message on stderr: %s" % p.stderr)
    ts = traces(d)
    check(len(ts) == 2, "two traces expected: %s" % ts)
    total = 0
    for f in ts:
        t = load(f)
        b = t["ncrt"]["disk_budget"]
        check(b["bytes"] == 2 << 20, "budget %s" % b)
        n = sum(counts(t).values())
        total += n
        if "reached_ts" in b:
            # every range recorded ended before recording stopped (or was open then)
            check(all(e["ts"] <= b["reached_ts"] + 1 for e in xs(t)), "a range begun after the budget in %s" % f)
    # 24-byte records: 2 MiB is about 87 000 ranges; each process may finish
    # the chunk it was filling (up to 2 MiB more each)
    check(50000 < total < 400000, "ranges recorded by the run: %d" % total)
    check(any("reached_ts" in load(f)["ncrt"]["disk_budget"] for f in ts), "no trace says the budget was reached")
    check(not os.path.exists(os.path.join(d, ".ncrt-budget")) and not glob.glob(os.path.join(d, ".ncrt-*")),
          "files left in the run directory: %s" % os.listdir(d))
    nctrace = c.nctrace
    s = subprocess.run([nctrace, "summary", d], capture_output=True, text=True)
    check("the run's disk budget" in s.stdout, "summary note missing:\n%s" % s.stdout[-2000:])
    # off: no limit
    p, d = c.run([exe, "150000"], opts=["--throttle", "off", "--disk-budget", "off"])
    check(sum(sum(counts(load(f)).values()) for f in traces(d)) == 300000, "off: not every range recorded")
    p = subprocess.run([c.ncrun, "--disk-budget", "lots", "--", exe], capture_output=True, text=True)
    check(p.returncode == 2 and "--disk-budget lots: wants a size" in p.stderr, "bad size: %s" % p.stderr)


def recorded_ranges(t):
    """Every recorded push/pop range as (thread order, name, depth), in
    order: what the throttle let through, independent of timing."""
    tids = {}
    out = []
    for e in sorted(xs(t), key=lambda e: (e["ts"], -e["dur"])):
        out.append((tids.setdefault(e["tid"], len(tids)), e["name"], e["depth"]))
    return out


def case_throttle_load(c):
    """The throttle records the same ranges whatever the machine's load
    (issue: 1.58 / 1.22 / 1.50 M ranges in three runs of one program), and a
    hot recursive name is throttled like any other. Run once as it is and
    once beside two busy loops; the recorded ranges must be equal."""
    prog = os.path.join(PROGS, "throttle_load.py")
    py = PY
    opts = ["--throttle", "2000"]

    def one(tag):
        p, d = c.run([py, prog], opts=opts + ["--name", tag])
        return one_trace(d, "%s-rank0.pt.trace.json.gz" % tag)

    idle = one("idle")
    busy = [subprocess.Popen([py, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = one("loaded")
    finally:
        for b in busy:
            b.kill()
            b.wait()
    a, b = recorded_ranges(idle), recorded_ranges(loaded)
    check(a == b, "idle and loaded runs recorded different ranges: %d vs %d, counts %s vs %s"
          % (len(a), len(b), counts(idle), counts(loaded)))
    th = {x["name"]: x for x in idle["ncrt"]["throttled"]}
    # chain: 100 x 61 calls, leaf 5000, slow 10, main 1: chain and leaf pass 2000
    check(sorted(th) == ["chain", "leaf"], "throttled %s" % sorted(th))
    check(th["chain"]["total_calls"] == 6100 and th["leaf"]["total_calls"] == 5000,
          "total calls %s" % idle["ncrt"]["throttled"])
    check(th["chain"]["calls"] == 2000 and th["leaf"]["calls"] == 2000, "throttled at %s" % idle["ncrt"]["throttled"])
    n = counts(idle)
    # ranges opened before the decision still close recorded (a chain open
    # then is at most 61 deep)
    check(2000 <= n["chain"] <= 2061 and n["leaf"] == 2000 and n["slow"] == 10 and n["main"] == 1, "counts %s" % n)
    check_nesting(idle)
    # ncrt timed the calls it did not record (issue 40): every name's row
    # is of all its calls, measured (not scaled), and each call's time is
    # counted once: the exclusive times add up to main's inclusive time,
    # and the recursive chain's inclusive time is its outermost calls'
    # (it cannot exceed main's)
    for name in ("chain", "leaf"):
        for k in ("unrecorded_calls", "unrecorded_incl_us", "unrecorded_excl_us", "unrecorded_sum_us"):
            check(k in th[name], "throttled %s has no %s: %s" % (name, k, th[name]))
    check(th["leaf"]["unrecorded_calls"] == 3000, "leaf's unrecorded calls: %s" % th["leaf"])
    check(th["chain"]["unrecorded_calls"] + n["chain"] == 6100, "chain's calls: %s, %d recorded" % (th["chain"], n["chain"]))
    nctrace = c.nctrace
    s = subprocess.run([nctrace, "summary", "--format", "json", os.path.join(c.tmp, "run1")],
                       capture_output=True, text=True)
    check(s.returncode == 0, "summary: %s" % s.stderr)
    rows = {r["name"]: r for r in json.loads(s.stdout)["structured"]["operations"]}
    leaf, chain, main = rows["leaf"], rows["chain"], rows["main"]
    check(leaf.get("measured") and not leaf.get("estimated") and leaf["count"] == 5000, "leaf row %s" % leaf)
    check(chain.get("measured") and chain["count"] == 6100, "chain row %s" % chain)
    total_excl = sum(r["exclusive_us"] for r in rows.values())
    check(abs(total_excl - main["inclusive_us"]) <= 0.02 * main["inclusive_us"],
          "exclusive times add up to %.3f us, main ran %.3f us: %s" % (total_excl, main["inclusive_us"], rows))
    check(all(r["inclusive_us"] <= main["inclusive_us"] * 1.001 for r in rows.values()),
          "an inclusive time exceeds main's: %s" % rows)


def iters(t):
    return sorted(int(e["name"].split()[1]) for e in xs(t) if e["name"].startswith("iter "))


def profiler_steps(t):
    """The steps as torch.profiler writes them (HTA and TensorBoard look for
    these): {N: event} of the ProfilerStep#N user annotations."""
    return {int(e["name"][len("ProfilerStep#"):]): e for e in xs(t) if e["name"].startswith("ProfilerStep#")}


def inside(inner, outer):
    return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]


def case_schedule_range(c):
    exe = c.cc("steps.c")
    p, d = c.run([exe, "10"], opts=["--step", "train_step", "--schedule", "wait=1,warmup=1,active=2,repeat=2"])
    t1 = one_trace(d, "steps_c-cycle1-rank0.pt.trace.json.gz")
    t2 = one_trace(d, "steps_c-cycle2-rank0.pt.trace.json.gz")
    check(iters(t1) == [2, 3] and iters(t2) == [6, 7], "cycles hold %s and %s" % (iters(t1), iters(t2)))
    check(counts(t1).get("train_step") == 2, "step ranges %s" % counts(t1))
    # each --step range is a ProfilerStep#N holding it, on its thread
    for t, want in ((t1, [2, 3]), (t2, [6, 7])):
        st = profiler_steps(t)
        ts = sorted((e for e in xs(t) if e["name"] == "train_step"), key=lambda e: e["ts"])
        check(sorted(st) == want and all(inside(r, st[n]) and r["tid"] == st[n]["tid"] for r, n in zip(ts, want)),
              "ProfilerStep events %s around %s" % (st, ts))
    check(len(traces(d)) == 2, "traces %s" % traces(d))
    check("ncrt:" not in p.stderr, "unexpected message %r" % p.stderr)
    # the trace says what was asked and what the program did so far
    check(t1["ncrt"].get("schedule") == {"wait": 1, "warmup": 1, "active": 2, "repeat": 2} and
          t1["ncrt"].get("step") == "train_step" and t1["ncrt"].get("steps") == 4 and
          t2["ncrt"].get("steps") == 8, "ncrt %s / %s" % (t1["ncrt"], t2["ncrt"]))


def case_schedule_explicit(c):
    exe = c.cc("steps.c")
    p, d = c.run([exe, "10", "explicit"], opts=["--schedule", "2,1,3"])
    t = one_trace(d, "steps_c-rank0.pt.trace.json.gz")
    check(iters(t) == [3, 4, 5], "recorded %s" % iters(t))
    # ncrt_step() before iteration i > 0: ProfilerStep#k runs from one call to
    # the next and holds iteration k; the step running at exit is not written
    st = profiler_steps(t)
    it = {int(e["name"].split()[1]): e for e in xs(t) if e["name"].startswith("iter ")}
    check(sorted(st) == [3, 4, 5] and all(inside(it[k], st[k]) for k in st), "ProfilerStep events %s" % st)
    # without a schedule: ProfilerStep#0 from the start to the first call;
    # nctrace summary finds them with its default step glob
    p, d = c.run([exe, "4", "explicit"])
    t = one_trace(d, "steps_c-rank0.pt.trace.json.gz")
    st = profiler_steps(t)
    check(sorted(st) == [0, 1, 2] and all(e["args"].get("ncrt step") for e in st.values()), "unscheduled %s" % st)
    nctrace = c.nctrace
    if os.path.exists(nctrace):
        s = json.loads(subprocess.run([nctrace, "summary", "--format", "json", d], capture_output=True, check=True,
                                      text=True).stdout)["structured"]
        check([x["name"] for x in s["steps"]] == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"],
              "nctrace summary steps %s" % s["steps"])
    # Python: ncrt.step()
    p, d = c.run([PY, os.path.join(PROGS, "pysteps.py")], opts=["--schedule", "wait=1,warmup=1,active=2"])
    t = one_trace(d, "pysteps-rank0.pt.trace.json.gz")
    check(iters(t) == [2, 3], "python steps recorded %s" % iters(t))
    st = profiler_steps(t)
    it = {int(e["name"].split()[1]): e for e in xs(t) if e["name"].startswith("iter ")}
    check(sorted(st) == [2, 3] and all(inside(it[k], st[k]) for k in st), "python ProfilerStep events %s" % st)


def case_schedule_too_short(c):
    exe = c.cc("steps.c")
    p, d = c.run([exe, "3"], opts=["--step", "train_step", "--schedule", "wait=2,warmup=2,active=4"])
    check("ncrt: the run had 3 steps" in p.stderr and "needs 8" in p.stderr, "message %r" % p.stderr)
    check(p.stdout == "done\n", "output changed")


def case_gating(c):
    exe = c.cc("steps.c")
    p, d = c.run([exe, "10"], opts=["--capture-range", "capt*"])
    t = one_trace(d, "steps_c-rank0.pt.trace.json.gz")
    check(iters(t) == [3, 4], "gated recording holds %s" % iters(t))
    check(counts(t) == {"capture": 1, "train_step": 2, "iter 3": 1, "iter 4": 1}, "gated %s" % counts(t))
    check_nesting(t)
    p, d = c.run([exe, "10"], opts=["--capture-range", "no-such-range"])
    check(traces(d) == [] and "ncrt: nothing recorded: no range matching 'no-such-range'" in p.stderr,
          "a gate that never opens: %s %r" % (traces(d), p.stderr))


def case_rank_naming(c):
    exe = c.cc("basic.c")
    for var, val in (("RANK", "3"), ("SLURM_PROCID", "5"), ("OMPI_COMM_WORLD_RANK", "6"), ("PMI_RANK", "7")):
        p, d = c.run([exe], env={var: val, "WORLD_SIZE": "8"}, expect_rc=3)
        t = one_trace(d, "basic_c-rank%s.pt.trace.json.gz" % val)
        check(t["distributedInfo"]["rank"] == int(val) and t["distributedInfo"]["world_size"] == 8,
              "distributedInfo %s" % t["distributedInfo"])
    # a launcher starting ranks: one run directory, one trace per rank
    sh = "for r in 0 1 2 3; do RANK=$r WORLD_SIZE=4 %s & done; wait" % exe
    p, d = c.run(["sh", "-c", sh], opts=["--name", "job"])
    names = sorted(os.path.basename(x) for x in traces(d))
    check(names == ["job-rank%d.pt.trace.json.gz" % r for r in range(4)], "per-rank traces %s" % names)


def case_rank_checked(c):
    """A rank or world size that is not a whole number (RANK=3x, WORLD_SIZE=
    -2, one past INT_MAX) is ignored with one line naming it, never read as
    its leading digits or wrapped: the trace is rank 0 of 1."""
    exe = c.cc("basic.c")
    for var, val in (("RANK", "3x"), ("RANK", "2147483648"), ("WORLD_SIZE", "-2")):
        p, d = c.run([exe], env={var: val}, expect_rc=3)
        t = one_trace(d, "basic_c-rank0.pt.trace.json.gz")
        check(t["distributedInfo"]["rank"] == 0 and t["distributedInfo"]["world_size"] == 1,
              "%s=%s: distributedInfo %s" % (var, val, t["distributedInfo"]))
        msgs = [l for l in p.stderr.splitlines() if l.startswith("ncrt:")]
        check(len(msgs) == 1 and "%s=%s" % (var, val) in msgs[0] and "ignored" in msgs[0],
              "%s=%s: messages %s" % (var, val, msgs))


def case_long_output_dir(c):
    """NCRT_OUTPUT_DIR longer than libncrt holds (1023 bytes): one line says
    so and nothing is recorded (it was cut short silently, and the trace
    went to the directory the cut named); the program is unchanged."""
    exe = c.cc("basic.c")
    plain = subprocess.run([exe], capture_output=True, text=True)
    d = c.tmp
    while len(d) < 1100:
        d = os.path.join(d, "d" * 100)
    os.makedirs(d)
    e = dict(os.environ, NCRT_OUTPUT_DIR=d, NCRT_TRACE_NAME="long", NVTX_INJECTION64_PATH=c.lib)
    p = subprocess.run([exe], capture_output=True, text=True, env=e)
    check((p.stdout, p.returncode) == (plain.stdout, plain.returncode), "output or status changed")
    msgs = [l for l in p.stderr.splitlines() if l.startswith("ncrt:")]
    check(len(msgs) == 1 and "NCRT_OUTPUT_DIR" in msgs[0] and "nothing is recorded" in msgs[0], "messages %s" % msgs)
    made = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(c.tmp, "d" * 100)) for f in fs]
    check(not made, "written: %s" % made)


def case_fork(c):
    exe = c.cc("forks.c")
    p, d = c.run([exe])
    t = one_trace(d, "forks_c-rank0.pt.trace.json.gz")
    check(counts(t) == {"parent.before": 3, "parent.after": 2}, "parent %s" % counts(t))
    kids = [x for x in traces(d) if "-pid" in x]
    check(len(kids) == 1, "child traces %s" % traces(d))
    k = load(kids[0])
    check(counts(k) == {"child": 4}, "child %s" % counts(k))


def plain_status(rc):
    """subprocess's -SIG for a signal death, as ncrun reports it (128+SIG)."""
    return 128 - rc if rc < 0 else rc


def case_exit_paths(c):
    """Every way out that atexit misses still leaves a readable trace with
    the ranges open on every thread; the program's output and exit status
    are those it has without ncrun."""
    exe = c.cc("faults.c")
    want_rc = {"exit": 2, "sigterm": 128 + 15, "sigint": 128 + 2, "abort": 128 + 6, "_exit": 3, "_Exit": 4,
               "own-handler": 5}
    for mode, rc in want_rc.items():
        plain = subprocess.run([exe, mode], capture_output=True, text=True)
        check(plain_status(plain.returncode) == rc, "%s: plain run exited %d" % (mode, plain.returncode))
        p, d = c.run([exe, mode], expect_rc=rc)
        check(p.stdout == plain.stdout, "%s: output %r vs %r" % (mode, p.stdout, plain.stdout))
        t = one_trace(d, "faults_c-rank0.pt.trace.json.gz")
        check(counts(t) == {"main.done": 5, "worker.done": 3, "main.open": 1, "worker.open": 1},
              "%s: ranges %s" % (mode, counts(t)))
        opened = {e["name"]: e for e in xs(t) if e["args"].get("open at exit")}
        check(set(opened) == {"main.open", "worker.open"}, "%s: open at exit %s" % (mode, sorted(opened)))
        check(opened["main.open"]["tid"] != opened["worker.open"]["tid"], "%s: open ranges on one thread" % mode)
        check(not glob.glob(os.path.join(d, "*.tmp*")), "%s: temporary file left" % mode)
    # Python: os._exit and SIGTERM (Python leaves SIGTERM at its default)
    code = ("import ncrt, os, signal, sys\n"
            "with ncrt.range('py.done'):\n    pass\n"
            "ncrt.range('py.open').__enter__()\n"
            "print('py work', flush=True)\n"
            "os._exit(7) if sys.argv[1] == '_exit' else os.kill(os.getpid(), signal.SIGTERM)\n")
    for mode, rc in (("_exit", 7), ("sigterm", 128 + 15)):
        p, d = c.run([PY, "-c", code, mode], opts=["--name", "py"], expect_rc=rc)
        t = one_trace(d, "py-rank0.pt.trace.json.gz")
        check(p.stdout == "py work\n" and counts(t) == {"py.done": 1, "py.open": 1}, "python %s: %s" % (mode, counts(t)))
    # SIGKILL at once: what the flusher had written by then (maybe nothing:
    # it runs every 250 ms); either way a valid trace or ncrun's one line,
    # status unchanged, no spill file left (the crash cases test more)
    for opts, mode, rc in (([], "kill", 128 + 9), (["--no-preload"], "_exit", 3)):
        p, d = c.run([exe, mode], opts=opts, expect_rc=rc)
        check(p.stdout == "work done\n", "%s: output %r" % (mode, p.stdout))
        if traces(d):
            t = one_trace(d, "faults_c-rank0.pt.trace.json.gz")
            check(set(counts(t)) <= {"main.done", "worker.done", "main.open", "worker.open"}, "%s: %s" % (mode, counts(t)))
        else:
            check("no trace was written" in p.stderr, "%s: %s" % (mode, p.stderr))
        check(sorted(os.listdir(d)) in (["env.json"], ["env.json", "faults_c-rank0.pt.trace.json.gz"]),
              "%s: left %s" % (mode, os.listdir(d)))


def case_full_disk(c):
    """A full disk loses the trace, never the program: same output and
    status, one line saying why, no partial or temporary file."""
    mnt = os.path.join(c.tmp, "small")
    os.mkdir(mnt)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", mnt], capture_output=True, text=True)
    if r.returncode:
        print("SKIPPED: cannot mount a small tmpfs here (%s)" % r.stderr.strip())
        return SKIP
    try:
        exe = c.cc("throttle.c")
        plain = subprocess.run([exe], capture_output=True, text=True)
        e = dict(os.environ, NCRT_OUTPUT_DIR=mnt, NCRT_TRACE_NAME="full", NVTX_INJECTION64_PATH=c.lib,
                 NCRT_THROTTLE="off")
        p = subprocess.run([exe], capture_output=True, text=True, env=e)
        check((p.stdout, p.returncode) == (plain.stdout, plain.returncode), "output or status changed")
        check("No space left on device" in p.stderr and "trace of this process is lost" in p.stderr,
              "message: %r" % p.stderr)
        check(os.listdir(mnt) == [], "left in the full directory: %s" % os.listdir(mnt))
    finally:
        subprocess.run(["umount", mnt])


def case_full_disk_rules(c):
    """ncrun --rules on a run directory with no room for the rules' copy
    (a 32 KiB tmpfs, 64 KiB of rules): one line says the copy failed and
    why, and no truncated copy is left; the command runs all the same."""
    mnt = os.path.join(c.tmp, "small")
    os.mkdir(mnt)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", mnt], capture_output=True, text=True)
    if r.returncode:
        print("SKIPPED: cannot mount a small tmpfs here (%s)" % r.stderr.strip())
        return SKIP
    try:
        rules = os.path.join(c.tmp, "big.yaml")
        with open(rules, "w") as f:
            f.write("# padding\n" * 6554 + "targets: {}\n")
        d = os.path.join(mnt, "run")
        p = subprocess.run([c.ncrun, "--run-dir", d, "--rules", rules, "--", "true"], capture_output=True, text=True,
                           cwd=c.tmp)
        check(p.returncode == 0, "exit %d\nstderr: %s" % (p.returncode, p.stderr))
        check("cannot copy" in p.stderr and "No space left on device" in p.stderr, "message: %r" % p.stderr)
        left = os.path.join(d, "big.yaml")
        if os.path.exists(left):
            raise Fail("a truncated copy left: %d bytes of %d" % (os.path.getsize(left), os.path.getsize(rules)))
    finally:
        subprocess.run(["umount", mnt])


def case_valgrind(c):
    """The collector under valgrind's memcheck: no invalid read or write,
    no use of uninitialised memory, in the hot path, the writer, threads,
    fork, signals and _exit (leaks are not checked: interned names and
    retired stacks live until exit by design)."""
    vg = shutil.which("valgrind")
    if not vg:
        print("SKIPPED: valgrind not found (apt-get install valgrind)")
        return SKIP
    memcheck = [vg, "-q", "--error-exitcode=99", "--leak-check=no", "--trace-children=yes"]
    cases = [
        (c.cc("basic.c"), [], 3, "basic_c", {"main": 1, "loop.body": 5, "leaf": 5, "plain": 1,
                                             "with-category": 1, "wide": 1}),
        (c.cc("threads.c", out="threads"), ["4", "2000"], 0, "threads",
         {"outer": 4000, "inner": 4000}),  # n * m / 2 each, as in case_threads
        (c.cc("faults.c", out="faults"), ["sigterm"], 128 + 15, "faults",
         {"main.done": 5, "worker.done": 3, "main.open": 1, "worker.open": 1}),
        (c.cc("faults.c", out="faults"), ["_exit"], 3, "faults",
         {"main.done": 5, "worker.done": 3, "main.open": 1, "worker.open": 1}),
        (c.cc("forks.c", out="forks"), [], 0, "forks", {"parent.before": 3, "parent.after": 2}),
    ]
    for exe, args, rc, name, want in cases:
        p, d = c.run(memcheck + [exe] + args, opts=["--name", name, "--throttle", "off"], expect_rc=None)
        check(p.returncode == rc, "%s %s under valgrind exited %d (99: memcheck errors)\n%s" % (
            name, args, p.returncode, p.stderr[-3000:]))
        check("Invalid" not in p.stderr and "uninitialised" not in p.stderr, "memcheck: %s" % p.stderr[-3000:])
        t = one_trace(d, name + "-rank0.pt.trace.json.gz")
        check(counts(t) == want, "%s: ranges %s" % (name, counts(t)))


def case_fork_locks(c):
    """fork under valgrind's DRD: libncrt's locks are taken before the fork
    and given back in parent and child, never re-initialised in the child
    (undefined for one the child inherited locked: the forking thread held
    four of them). DRD's lock reports are what this checks; the trace is
    checked as in case_valgrind."""
    vg = shutil.which("valgrind")
    if not vg:
        print("SKIPPED: valgrind not found (apt-get install valgrind)")
        return SKIP
    if under_asan():
        print("SKIPPED: valgrind does not run AddressSanitizer's programs")
        return SKIP
    exe = c.cc("forks.c", out="forks")
    p, d = c.run([vg, "-q", "--tool=drd", "--trace-children=yes", exe], opts=["--name", "forks", "--throttle", "off"],
                 expect_rc=None)
    check(p.returncode == 0, "forks under DRD exited %d\n%s" % (p.returncode, p.stderr[-3000:]))
    bad = [l for l in p.stderr.splitlines()
           if re.search(r"Mutex reinitialization|Recursive locking|not locked|locked by another thread|"
                        r"destroy.*locked", l)]
    check(not bad, "DRD: %s\n%s" % (bad[:4], p.stderr[-3000:]))
    t = one_trace(d, "forks-rank0.pt.trace.json.gz")
    check(counts(t) == {"parent.before": 3, "parent.after": 2}, "ranges %s" % counts(t))


def case_ncrun_strdup(c):
    """ncrun with strdup out of memory for the traces' names (a test-only
    interposer, progs/failstrdup.c): it copies them with ncbase's checked
    copies, so the program's two traces (forks.c: its own and its child's)
    are listed and kept; an unchecked NULL copy was sorted with strcmp."""
    if under_asan():
        print("SKIPPED: the interposer would come before AddressSanitizer's runtime")
        return SKIP
    so = os.path.join(c.tmp, "failstrdup.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", os.path.join(PROGS, "failstrdup.c"), "-o", so], check=True)
    exe = c.cc("forks.c", out="forks")
    p, d = c.run([exe], opts=["--name", "forks"], expect_rc=None,
                 env={"LD_PRELOAD": so, "FAILSTRDUP": ".pt.trace.json.gz"})
    check(p.returncode == 0, "exit %d\nstderr: %s" % (p.returncode, p.stderr))
    listed = [l for l in p.stderr.splitlines() if l.startswith("ncrun: trace: ")]
    check(len(listed) == 2, "traces listed: %s\nstderr: %s" % (listed, p.stderr))
    t = one_trace(d, "forks-rank0.pt.trace.json.gz")
    check(counts(t) == {"parent.before": 3, "parent.after": 2}, "ranges %s" % counts(t))


def case_subprocess(c):
    p, d = c.run([PY, os.path.join(PROGS, "subproc.py")])
    t = one_trace(d, "subproc-rank0.pt.trace.json.gz")
    check(counts(t) == {"parent.work": 1}, "parent %s" % counts(t))
    kids = [x for x in traces(d) if "-pid" in x]
    check(len(kids) == 1 and counts(load(kids[0])) == {"child.work": 2}, "child traces %s" % traces(d))


def case_multilib(c):
    libs = []
    for n in ("liba", "libb"):
        so = os.path.join(c.tmp, n + ".so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-O1"] + INC + ["-DLIBNAME=" + n, '-DLIBLABEL="%s"' % n,
                        os.path.join(PROGS, "libpart.c"), "-o", so], check=True)
        libs.append(so)
    exe = c.cc("multilib.c", *libs, "-Wl,-rpath," + c.tmp)
    p, d = c.run([exe])
    t = one_trace(d, "multilib_c-rank0.pt.trace.json.gz")
    check(counts(t) == {"main": 1, "liba": 3, "libb": 3}, "ranges %s" % counts(t))
    check_nesting(t)


def case_python(c):
    prog = os.path.join(PROGS, "model.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(c.ncrun), "python"))
    plain = subprocess.run([PY, prog], capture_output=True, text=True, cwd=c.tmp, env=env)
    p, d = c.run([PY, prog])
    check(p.stdout == plain.stdout == "total 51\n", "output %r vs %r" % (p.stdout, plain.stdout))
    t = one_trace(d, "model-rank0.pt.trace.json.gz")
    check_nesting(t)
    want = {"main": 1, "train_step": 6, "Attention.forward": 6, "Block.run": 6, "helper": 6, "42": 1,
            "worker.item": 10}
    check(counts(t) == want, "ranges %s, expected %s" % (counts(t), want))
    byname = {e["name"]: e for e in xs(t)}
    check(byname["Attention.forward"]["args"].get("file") == prog and byname["Attention.forward"]["args"]["line"] == 11,
          "source location %s" % byname["Attention.forward"]["args"])
    tids = {e["tid"] for e in xs(t) if e["name"] == "worker.item"}
    check(len(tids) == 1 and tids != {e["tid"] for e in xs(t) if e["name"] == "main"}, "worker thread")
    s = spans(t)
    check([x["name"] for x in s] == ["handoff"] and s[0]["args"]["end thread"] in tids
          and s[0]["tid"] not in tids and s[0]["dur"] > 0, "span across threads %s" % s)
    tn = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    check(tn == {"MainThread", "py-worker", "MainThread spans"}, "thread names (a span's lane too) %s" % tn)


def case_python_async(c):
    prog = os.path.join(PROGS, "async_prog.py")
    p, d = c.run([PY, prog])
    check(p.stdout == "10 6\n", "output %r" % p.stdout)
    t = one_trace(d, "async_prog-rank0.pt.trace.json.gz")
    b = spans(t)
    n = collections.Counter(x["name"] for x in b)
    check(n == {"main": 1, "consume": 5, "fetch": 5, "gen": 1}, "spans %s" % n)
    check(all(x["dur"] >= 0 for x in b), "a span ends before it starts")
    # the consumers overlap in time: that is why they are spans, not push/pop
    cons = sorted((x["ts"], x["ts"] + x["dur"]) for x in b if x["name"] == "consume")
    check(any(cons[i + 1][0] < cons[i][1] for i in range(len(cons) - 1)), "consumers did not overlap")
    # ... so they needed lanes of their own, named after the thread
    lanes = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and "ncrt lane of" in e["args"]}
    check(len(lanes) >= 2 and "MainThread spans" in lanes, "lanes %s" % sorted(lanes))
    # nctrace puts them back on their thread: the summary's counts are the trace's
    nctrace = c.nctrace
    out = subprocess.run([nctrace, "summary", "--format", "json", os.path.join(d, "async_prog-rank0.pt.trace.json.gz")],
                         capture_output=True, text=True)
    check(out.returncode == 0, "summary failed: %s" % out.stderr)
    ops = {o["name"]: o["count"] for o in json.loads(out.stdout)["structured"]["operations"]}
    check(ops == dict(n), "summary counts %s, trace %s" % (ops, dict(n)))


def case_python_contract(c):
    """The rewriter's contract: four callables, one positional argument
    each, returning context managers; fast."""
    code = r'''
import ncrt, contextlib, timeit
for f in (ncrt.range, ncrt.span, ncrt.torch_range, ncrt.torch_span):
    with f("x"):
        pass
    with f(3.5):
        pass
    try:
        f("a", "b")
    except TypeError:
        pass
    else:
        raise SystemExit("accepts two arguments")
@ncrt.span("s")
def g():
    return 1
assert g() == 1 and g.__name__ == "g"
print("ok")
'''
    p, d = c.run([PY, "-c", code])
    check(p.stdout == "ok\n", "contract: %s %s" % (p.stdout, p.stderr))
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(c.ncrun), "python"))
    env.pop("NVTX_INJECTION64_PATH", None)
    q = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env)
    check(q.stdout == "ok\n", "without a collector: %s %s" % (q.stdout, q.stderr))


def case_python_instrumented(c):
    """progs/pyapp instrumented by ncrewrite with its rules.yaml, run under
    ncrun: the trace holds exactly the ranges the rules asked for."""
    if not c.ncrewrite:
        print("SKIPPED: no ncrewrite given (built with NCREWRITE_BUILD_REWRITER=OFF)")
        return SKIP
    src = os.path.join(PROGS, "pyapp")
    out = os.path.join(c.tmp, "shadow")
    r = subprocess.run([c.ncrewrite, "-q", "--config", os.path.join(src, "rules.yaml"), src, out],
                       capture_output=True, text=True)
    check(r.returncode == 0, "ncrewrite failed: %s" % r.stderr)
    plain = subprocess.run([PY, os.path.join(src, "app.py")], capture_output=True, text=True)
    p, d = c.run([PY, os.path.join(out, "app.py")], opts=["--rules", os.path.join(src, "rules.yaml")])
    check(p.stdout == plain.stdout == "total 35\n", "output %r vs %r" % (p.stdout, plain.stdout))
    t = one_trace(d, "app-rank0.pt.trace.json.gz")
    check_nesting(t)
    want = {"main": 1, "train_step": 4, "Model.forward": 4, "Model.loss": 4}
    check(counts(t) == want, "ranges %s, expected %s" % (counts(t), want))
    b = spans(t)
    n = collections.Counter(x["name"] for x in b)
    check(n == {"batches": 1, "fetch": 2}, "spans %s" % n)
    check(os.path.exists(os.path.join(d, "rules.yaml")), "rules not copied into the run directory")
    # source locations lead to the user's file, not the shadow copy: the
    # wrapped body's first line (the manifest's "lines"), where the shadow
    # copy has the inserted `with` (out_lines - 1)
    man = json.load(open(os.path.join(out, ".ncrewrite", "manifest.json")))
    rg = {r["name"]: r for f in man["files"] for r in f.get("ranges", [])}
    real = os.path.realpath(src)
    for name, want_line in (("train_step", 25), ("Model.forward", None), ("fetch", None)):
        ev = [e for e in t["traceEvents"] if e["ph"] == "X" and e["name"] == name][0]["args"]
        check(ev.get("file") == os.path.join(real, "app.py") and ev.get("line") == rg[name]["lines"][0]
              and want_line in (None, ev.get("line")), "source location of %s: %s" % (name, ev))


def case_torch_bridge(c):
    r = subprocess.run([PY, "-c", "import torch"], capture_output=True)
    if r.returncode:
        print("SKIPPED: torch is not importable by %s (apt-get install python3-torch)" % PY)
        return SKIP
    p, d = c.run([PY, os.path.join(PROGS, "torch_bridge.py")])
    check(p.stdout.strip() == "bridged 3 1", "record_function not seen by torch.profiler: %r %r" % (p.stdout,
                                                                                                 p.stderr))
    t = one_trace(d, "torch_bridge-rank0.pt.trace.json.gz")
    check(counts(t).get("bridged") == 3, "ncrt ranges %s" % counts(t))


def case_processes(c):
    """tests/project (a transformer LM with DataLoader workers), full trace,
    under ncrun: the workers are helper processes of rank 0, not ranks
    (issue: "rank 0 is in both ..." eight times, "Slow rank: rank 0"); every
    process's coverage adds up; a data-bound run says the main process waits
    on its workers."""
    r = subprocess.run([PY, "-c", "import torch"], capture_output=True)
    if r.returncode:
        print("SKIPPED: torch is not importable by %s (apt-get install python3-torch)" % PY)
        return SKIP
    if not c.ncrewrite:
        print("SKIPPED: no ncrewrite given")
        return SKIP
    out = os.path.join(c.tmp, "shadow")
    r = subprocess.run([c.ncrewrite, "-q", "--full-trace", os.path.join(ROOT, "tests", "project", "src"), out],
                       capture_output=True, text=True)
    check(r.returncode == 0, "ncrewrite: %s" % r.stderr)
    nctrace = c.nctrace

    def summary(d, *extra):
        s = subprocess.run([nctrace, "summary"] + list(extra) + [d], capture_output=True, text=True)
        check(s.returncode == 0, "summary: %s" % s.stderr)
        return s

    p, d = c.run([PY, os.path.join(out, "train.py")], opts=["--shadow", out, "--name", "train"],
                 env={"PYTHONHASHSEED": "0"})
    names = [os.path.basename(x) for x in traces(d)]
    workers = [x for x in names if x != "train-rank0.pt.trace.json.gz"]
    check("train-rank0.pt.trace.json.gz" in names and len(workers) == 2 and
          all(re.fullmatch(r"train-pid\d+\.pt\.trace\.json\.gz", x) for x in workers),
          "one file per process, no false rank: %s" % names)
    main = one_trace(d, "train-rank0.pt.trace.json.gz")
    pm = main["ncrt"]["process"]
    check(pm["is_rank"] and pm["role"] == "main" and pm["start"] == "ncrun", "main process %s" % pm)
    for w in workers:
        pw = one_trace(d, w)["ncrt"]["process"]
        check(not pw["is_rank"] and pw["role"] == "dataloader worker" and pw["start"] == "fork"
              and pw["ppid"] == pm["pid"] and pw["detail"].startswith("worker "), "worker process %s" % pw)
    s = summary(d)
    check("is in both" not in s.stderr and "Slow rank" not in s.stdout, "workers taken for ranks:\n%s%s"
          % (s.stderr, s.stdout))
    check("3 process(es) in 1 rank(s)" in s.stdout and "dataloader worker (worker 0 of 2)" in s.stdout,
          "processes section:\n%s" % s.stdout)
    js = json.loads(summary(d, "--format", "json").stdout)["structured"]
    for row in js["ranks"]:
        cov = row["coverage"]
        parts = cov["covered_us"] + cov["before_first_us"] + cov["gaps_us"] + cov["after_last_us"]
        check(abs(parts - cov["wall_us"]) <= 0.01 * cov["wall_us"] + 1, "coverage does not add up: %s" % cov)
        check(cov["start_known"] and cov["end_known"], "lifetime not recorded: %s" % cov)
    mrow = next(x for x in js["ranks"] if x["is_rank"])
    # start-up (interpreter, torch import) is before the first range, and
    # the collector's exit write is the profiler's, not the program's
    check(mrow["coverage"]["before_first_us"] > 0 and mrow["coverage"]["covered_share"] < 1
          and mrow["coverage"]["profiler_exit_us"] > 0, "main coverage %s" % mrow["coverage"])
    check(not any("waits on" in b["title"] for b in js["bottlenecks"]), "not data-bound: %s" % js["bottlenecks"])
    # a data-bound loop: a batch of 8 items waiting 40 ms each is 320 ms
    # per worker, 160 ms per batch from two, against a training step of
    # 5-45 ms (the latter under ASan): the margin holds under load, as a
    # wait is not slowed by a busy machine. The rule itself, at its
    # threshold, is tests/trace/cases/workers.
    p, d = c.run([PY, os.path.join(out, "train.py")], opts=["--shadow", out, "--name", "train"],
                 env={"SLOW_DATA": "40"})
    s = summary(d)
    check("Rank 0 waits on its dataloader workers" in s.stdout, "data-bound run not found:\n%s" % s.stdout)


def case_torchrun(c):
    r = subprocess.run([PY, "-c", "import torch.distributed.run"], capture_output=True)
    if r.returncode:
        print("SKIPPED: torch.distributed.run is not importable by %s (apt-get install python3-torch)" % PY)
        return SKIP
    cmd = [PY, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", os.path.join(PROGS, "dist.py")]
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(c.ncrun), "python"))
    plain = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if plain.returncode:
        last = (plain.stderr.strip().splitlines() or ["?"])[-1]
        print("SKIPPED: torchrun itself fails on this machine, without ncrun (%s)" % last)
        return SKIP
    p, d = c.run(cmd, opts=["--name", "dist"])
    names = sorted(os.path.basename(x) for x in traces(d))
    check(names == ["dist-rank0.pt.trace.json.gz", "dist-rank1.pt.trace.json.gz"], "traces %s" % {
        n: collections.Counter(e.get("cat") for e in load(os.path.join(d, n))["traceEvents"]) for n in names})
    for r in (0, 1):
        t = one_trace(d, "dist-rank%d.pt.trace.json.gz" % r)
        check(t["distributedInfo"]["rank"] == r and t["distributedInfo"]["world_size"] == 2, "distributedInfo")
        check(counts(t) == {"worker.step": 3}, "rank %d ranges %s" % (r, counts(t)))


def interleaves(text, parts):
    """True if text is the parts merged, each kept in order (as mpirun may
    forward ranks' output: a chunk of one, then of another)."""
    @functools.lru_cache(maxsize=None)
    def fits(pos):
        i = sum(pos)
        if i == len(text):
            return all(p == len(x) for p, x in zip(pos, parts))
        return any(p < len(x) and x[p] == text[i] and fits(pos[:k] + (p + 1,) + pos[k + 1:])
                   for k, (p, x) in enumerate(zip(pos, parts)))
    return len(text) == sum(map(len, parts)) and fits((0,) * len(parts))


def case_mpirun(c):
    """One trace per rank under Open MPI, both ways round: ncrun around
    mpirun, and mpirun around ncrun."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("SKIPPED: mpirun not found (apt-get install openmpi-bin)")
        return SKIP
    launch = [mpirun, "-np", "2", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    prog = [PY, os.path.join(PROGS, "dist.py")]
    # the ranks print "rank <RANK>": RANK unset here, and ncrun must not set it
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "NCRT_OUTPUT_DIR")}
    env["PYTHONPATH"] = os.path.join(os.path.dirname(c.ncrun), "python")
    plain = subprocess.run(launch + prog, capture_output=True, text=True, env=env)
    if plain.returncode:
        print("SKIPPED: mpirun itself fails here, without ncrun (%s)" % plain.stderr.strip()[-200:])
        return SKIP
    outs = {}
    for way in ("outer", "inner"):
        outs[way] = os.path.join(c.tmp, way + "-out")
        os.mkdir(outs[way])
    outer, d1 = c.run(launch + prog, opts=["--name", "mpi"], env={"DIST_OUT_DIR": outs["outer"]})
    d2 = os.path.join(c.tmp, "inner")
    inner = subprocess.run(launch + [c.ncrun, "--run-dir", d2, "--name", "mpi", "--"] + prog, capture_output=True,
                           text=True, env=dict(env, DIST_OUT_DIR=outs["inner"]))
    check(inner.returncode == 0, "mpirun around ncrun: %s" % inner.stderr)
    want = "rank None\n"
    for way, d, p in (("outer", d1, outer), ("inner", d2, inner)):
        # what each rank printed, unchanged by ncrun: every rank's own copy
        # (its file) is checked, and mpirun's forwarding of them (stdout)
        # must hold each rank's line whole and nothing else; the lines may
        # interleave there, as two processes' output through mpirun may
        got = {}
        for name in sorted(os.listdir(outs[way])):
            with open(os.path.join(outs[way], name)) as f:
                got[name] = f.read()
        check(got == {"rank0.out": want, "rank1.out": want},
              "%s: the ranks wrote %r, want %r each from rank0 and rank1 (stderr %r)" % (
                  way, got, want, p.stderr[-500:]))
        check(interleaves(p.stdout, tuple(got.values())),
              "%s: mpirun's output %r is not the ranks' lines %r (without ncrun: %r; stderr %r)" % (
                  way, p.stdout, list(got.values()), plain.stdout, p.stderr[-500:]))
        names = sorted(os.path.basename(x) for x in traces(d))
        check(names == ["mpi-rank0.pt.trace.json.gz", "mpi-rank1.pt.trace.json.gz"], "traces %s" % names)
        for r in (0, 1):
            t = one_trace(d, "mpi-rank%d.pt.trace.json.gz" % r)
            check(t["distributedInfo"]["rank"] == r and t["distributedInfo"]["world_size"] == 2,
                  "distributedInfo %s" % t["distributedInfo"])
            check(counts(t) == {"worker.step": 3}, "rank %d ranges %s" % (r, counts(t)))


def case_longjmp(c):
    """Ranges across longjmp, _longjmp, siglongjmp out of a signal handler
    and __longjmp_chk (_FORTIFY_SOURCE), at -O0 and -O2: the ranges of the
    frames a jump abandons are closed at the jump and marked, every other
    range closes where it should, nesting stays right."""
    rounds = 50
    for flags in (["-O0"], ["-O2"], ["-O2", "-D_FORTIFY_SOURCE=2"]):
        exe = c.cc("jumps.c", *flags, out="jumps" + "".join(flags).replace("=", "").replace("-", "_"))
        plain = subprocess.run([exe, str(rounds)], capture_output=True, text=True)
        p, d = c.run([exe, str(rounds)])
        check(p.stdout == plain.stdout == "rounds %d\n" % rounds, "%s: output %r" % (flags, p.stdout))
        t = one_trace(d, os.path.basename(exe) + "-rank0.pt.trace.json.gz")
        check_nesting(t)
        want = {"main": 1, "round": rounds, "f": rounds, "g": rounds, "h": rounds, "f.mid": rounds, "g2": rounds,
                "h2": rounds, "f.mid.after": rounds, "f.sig": rounds, "h3": rounds, "nested": rounds,
                "deep": rounds, "after": 1}
        check(counts(t) == want, "%s: ranges %s" % (flags, counts(t)))
        jumped = collections.Counter(e["name"] for e in xs(t) if e["args"].get("longjmp"))
        check(jumped == {"f": rounds, "g": rounds, "h": rounds, "g2": rounds, "h2": rounds, "h3": rounds,
                         "deep": rounds}, "%s: closed by a jump %s" % (flags, jumped))
        depth = {e["name"]: e["depth"] for e in xs(t)}
        check(depth["after"] == 1 and depth["round"] == 1 and depth["f.mid.after"] == 3 and depth["nested"] == 2,
              "%s: depths %s" % (flags, depth))
        check(not [e for e in xs(t) if e.get("args", {}).get("open at exit")], "%s: ranges left open" % flags)


# ---------------------------------------------------------------- GPU

def gpu_reason():
    if not shutil.which("nvcc") and not os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "nvcc not found"
    smi = shutil.which("nvidia-smi")
    if not smi or subprocess.run([smi, "-L"], capture_output=True).returncode != 0:
        return "no NVIDIA GPU or driver (nvidia-smi -L failed)"
    return None


def gpu_trace(c, opts=()):
    exe = c.nvcc("gpu.cu")
    p, d = c.run([exe], opts=["--activities", "cpu,gpu,mem"] + list(opts))
    check(p.stdout == "h[0]=0\n", "output %r" % p.stdout)
    t = one_trace(d, "gpu-rank0.pt.trace.json.gz")
    check(t["ncrt"]["cupti"].startswith("recording"), "CUPTI: %s" % t["ncrt"]["cupti"])
    return t


def case_gpu_kernels(c):
    r = gpu_reason()
    if r:
        print("SKIPPED: " + r)
        return SKIP
    t = gpu_trace(c)
    k = xs(t, "kernel")
    check(len(k) == 9, "kernels %d" % len(k))
    att = collections.Counter(e["args"].get("range") for e in k)
    check(att == {"step.compute": 6, "nested.inner": 3}, "kernel attribution %s" % att)
    launches = {e["args"]["correlation"] for e in xs(t, "cuda_runtime") if e["name"].startswith("cudaLaunchKernel")}
    check({e["args"]["correlation"] for e in k} <= launches, "kernels without their launch")
    flows = [e for e in t["traceEvents"] if e.get("cat") == "ac2g"]
    check(len(flows) >= 18, "ac2g flows %d" % len(flows))
    ann = counts(t, "gpu_user_annotation")
    check(ann.get("step.compute") == 3 and ann.get("nested.inner") == 3, "gpu_user_annotation %s" % ann)
    # deviceProperties (Kineto's fields) and the per-kernel occupancy figures
    dp = t["deviceProperties"]
    check(len(dp) >= 1 and dp[0]["numSms"] > 0 and dp[0]["warpSize"] == 32 and dp[0]["totalGlobalMem"] > 1 << 30
          and dp[0]["name"], "deviceProperties %s" % dp)
    sms = {d["id"]: d["numSms"] for d in dp}
    for e in k:
        a = e["args"]
        blocks = a["grid"][0] * a["grid"][1] * a["grid"][2]
        check(abs(a["blocks per SM"] - blocks / sms[a["device"]]) < 1e-3 * max(1, blocks / sms[a["device"]])
              and 0 < a["est. achieved occupancy %"] <= 100, "kernel occupancy args %s" % a)


def case_gpu_memcpy(c):
    r = gpu_reason()
    if r:
        print("SKIPPED: " + r)
        return SKIP
    t = gpu_trace(c)
    m = xs(t, "gpu_memcpy")
    kinds = collections.Counter(e["name"].split()[1] for e in m)
    check(kinds["HtoD"] == 3 and kinds["DtoH"] == 1, "memcpy %s" % kinds)
    check(all(e["args"]["bytes"] == 4 << 20 for e in m), "memcpy bytes")
    check(collections.Counter(e["args"].get("range") for e in m if "HtoD" in e["name"]) == {"step.copy": 3},
          "memcpy attribution")
    s = xs(t, "gpu_memset")
    check(len(s) == 3 and {e["args"].get("range") for e in s} == {"step.clear"}, "memset %s" % s)


def case_gpu_clock(c):
    """GPU work lies inside the CPU range that launched and synchronised it:
    both clocks are one."""
    r = gpu_reason()
    if r:
        print("SKIPPED: " + r)
        return SKIP
    t = gpu_trace(c)
    ranges = [e for e in xs(t) if e["name"] in ("step.compute", "step.clear")]
    work = xs(t, "kernel") + xs(t, "gpu_memset")
    slack = 5.0  # µs
    for w in work:
        owner = w["args"].get("range")
        if owner == "nested.inner":
            owner = "step.compute"
        inside = [r for r in ranges if r["name"] == owner and r["ts"] - slack <= w["ts"]
                  and w["ts"] + w["dur"] <= r["ts"] + r["dur"] + slack]
        check(inside, "%s at %.3f..%.3f lies in no %s range" % (w["name"], w["ts"], w["ts"] + w["dur"], owner))


def case_gpu_gated(c):
    """With a capture range, GPU work counts only when launched inside it."""
    r = gpu_reason()
    if r:
        print("SKIPPED: " + r)
        return SKIP
    t = gpu_trace(c, ["--capture-range", "step.compute"])
    check(counts(t) == {"step.compute": 3, "nested.inner": 3}, "ranges %s" % counts(t))
    check(len(xs(t, "kernel")) == 9 and not xs(t, "gpu_memcpy") and not xs(t, "gpu_memset"),
          "GPU work outside the gate: %d kernels, %d memcpy, %d memset" % (
              len(xs(t, "kernel")), len(xs(t, "gpu_memcpy")), len(xs(t, "gpu_memset"))))


def case_gpu_cupti_busy(c):
    """Exactly one CUPTI subscriber wins; if it is not libncrt, libncrt says
    so once and keeps the NVTX ranges; the program's output is unchanged."""
    r = gpu_reason()
    if r:
        print("SKIPPED: " + r)
        return SKIP
    exe = c.nvcc("busy.cu", "-ldl")
    p, d = c.run([exe])
    t = one_trace(d, "busy-rank0.pt.trace.json.gz")
    check(counts(t) == {"busy.work": 1}, "NVTX ranges %s" % counts(t))
    status = t["ncrt"]["cupti"]
    msgs = [l for l in p.stderr.splitlines() if l.startswith("ncrt:")]
    print("program: %s; libncrt: %s" % (p.stdout.strip(), status))
    if p.stdout.strip() == "app subscriber: yes":
        check(status.startswith("CUPTI is busy") and len(msgs) == 1 and "busy" in msgs[0],
              "status %r, messages %r" % (status, msgs))
        check(not xs(t, "kernel"), "kernels recorded without CUPTI?")
    else:
        check(status.startswith("recording") and len(xs(t, "kernel")) == 1, "status %r" % status)


def case_gpu_crash_kill(c):
    """A SIGKILLed CUDA program keeps its GPU work: the flusher moves the
    CUPTI records whose buffers are complete to the .gpu spill file about
    once a second, and ncrun's finalizer writes them with their ranges. The
    test waits for the snapshot to count the 9 kernels (no timing)."""
    r = gpu_reason()
    if r:
        print("SKIPPED: " + r)
        return SKIP
    import signal
    exe = c.nvcc("gpu_crash.cu")
    c.runs += 1
    d = os.path.join(c.tmp, "run%d" % c.runs)
    p = subprocess.Popen([c.ncrun, "--run-dir", d, "-a", "cpu,gpu,mem", "--", exe], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.tmp)
    pid = int(p.stdout.readline().split()[1])

    def ready(text):  # "gpu FROM END WORK KERNELS": all 9 kernels on disk
        g = [l.split() for l in text.splitlines() if l.startswith("gpu ")]
        return "\nopen " in text and g and int(g[0][4]) >= 9
    wait_snapshot(p, (d, pid, ".info"), ready, "the GPU work")
    os.kill(pid, signal.SIGKILL)
    out, err = p.communicate(timeout=120)
    check(p.returncode == 128 + 9, "ncrun exited %d\n%s" % (p.returncode, err))
    t = one_trace(d, "gpu_crash-rank0.pt.trace.json.gz")
    check("finalized" in t["ncrt"], "ncrt %s" % t["ncrt"])
    check("kept until" in t["ncrt"]["cupti"], "CUPTI status %r" % t["ncrt"]["cupti"])
    k = xs(t, "kernel")
    check(len(k) == 9, "kernels %d" % len(k))
    att = collections.Counter(e["args"].get("range") for e in k)
    check(att == {"step.compute": 6, "nested.inner": 3}, "kernel attribution %s" % att)
    check(len(xs(t, "gpu_memset")) == 3 and len(xs(t, "gpu_memcpy")) >= 3, "copies and memsets")
    dp = t["deviceProperties"]
    check(len(dp) >= 1 and dp[0]["numSms"] > 0, "deviceProperties %s" % dp)
    check(all(0 < e["args"]["est. achieved occupancy %"] <= 100 for e in k), "occupancy figures")
    opened = [e["name"] for e in xs(t) if e["args"].get("open at exit")]
    check(opened == ["late.open"], "open ranges %s" % opened)
    only_traces_left(d, "gpu crash")


def case_gpu_incremental(c):
    """GPU work attributed to its ranges in a trace converted while the
    program ran: the launching thread's ranges are read again at exit."""
    r = gpu_reason()
    if r:
        print("SKIPPED: " + r)
        return SKIP
    exe = c.nvcc("gpu_crash.cu")
    p, d = c.run([exe, "incremental"], opts=["-a", "cpu,gpu,mem", "--throttle", "off"])
    t = one_trace(d, "gpu_crash-rank0.pt.trace.json.gz")
    k = xs(t, "kernel")
    att = collections.Counter(e["args"].get("range") for e in k)
    check(att == {"step.compute": 12, "nested.inner": 6}, "kernel attribution %s" % att)
    check(counts(t)["warm"] == 100000, "warm ranges %s" % counts(t).get("warm"))
    ann = counts(t, "gpu_user_annotation")
    check(ann.get("step.compute") == 6 and ann.get("nested.inner") == 6, "gpu_user_annotation %s" % ann)


# ------------------------------------------- streaming, crashes, signals

def count_named(path, name):
    """Ranges called name in a .json.gz trace, counted while streaming (no
    need to load 10^7 events into Python), and the last MiB of its text (the
    ncrt object); also checks it is one gzip member."""
    import zlib
    pat = b'"name":"%s",' % name.encode() if name else b'{"ph":"X","cat":"user_annotation","name":' 
    z = zlib.decompressobj(16 + 15)
    found, tail, data = 0, b"", b""
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            data = tail + z.decompress(block)
            found += data.count(pat)
            tail = data[-len(pat):]
            found -= tail.count(pat)
    check(z.eof and z.unused_data == b"", "%s: not one complete gzip member" % path)
    return found + tail.count(pat), data


def spill_file(d, pid, suffix):
    """A process's spill file: .ncrt-h<HOSTID>-<PID><suffix> (rundir.h,
    hostid.h); the pattern's own text until it exists."""
    found = glob.glob(os.path.join(d, ".ncrt-h*-%d%s" % (pid, suffix)))
    return found[0] if found else os.path.join(d, ".ncrt-h*-%d%s" % (pid, suffix))


def wait_snapshot(p, info, ready, what):
    """info: (run dir, pid, ".info"). Poll the flusher's snapshot file until ready(text) (no timing
    assumption: the condition says the records are on disk); 120 s at most."""
    import time
    deadline = time.monotonic() + 120
    seen = ""
    while time.monotonic() < deadline:
        try:
            with open(spill_file(*info)) as f:
                seen = f.read()
            if ready(seen):
                return
        except (FileNotFoundError, IndexError, ValueError):
            pass
        time.sleep(0.02)
    p.kill()
    raise Fail("no snapshot with %s in 120 s; last:\n%s" % (what, seen))


def only_traces_left(d, what):
    """Nothing but env.json and traces: no spill file, no temporary file."""
    left = [f for f in os.listdir(d) if f != "env.json" and not f.endswith((".trace.json.gz", ".pftrace"))]
    check(not left, "%s: left in the run directory: %s" % (what, left))


def crash_run(c, how):
    """longrun crash under ncrun: wait until the flusher has written a
    snapshot holding the open range (so every closed range is on disk:
    no timing assumption), then SIGKILL it, or make it segfault."""
    import signal
    exe = c.cc("longrun.c", out="longrun")
    c.runs += 1
    d = os.path.join(c.tmp, "run%d" % c.runs)
    p = subprocess.Popen([c.ncrun, "--run-dir", d, "--", exe, "crash"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.tmp)
    pid = int(p.stdout.readline().split()[1])
    wait_snapshot(p, (d, pid, ".info"), lambda t: "\nopen " in t, "the open range")
    if how == "kill":
        os.kill(pid, signal.SIGKILL)
        out, err = p.communicate(timeout=120)
        want = 128 + 9
    else:
        out, err = p.communicate("go\n", timeout=120)
        want = 128 + 11
    check(p.returncode == want, "%s: ncrun exited %d\n%s" % (how, p.returncode, err))
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"done": 1000, "late.open": 1}, "%s: ranges %s" % (how, counts(t)))
    opened = [e["name"] for e in xs(t) if e["args"].get("open at exit")]
    check(opened == ["late.open"], "%s: open ranges %s" % (how, opened))
    check("finalized" in t["ncrt"], "%s: ncrt %s" % (how, t["ncrt"]))
    check("ncrt:" not in err, "%s: stderr %r" % (how, err))
    only_traces_left(d, how)


def case_crash_kill(c):
    """SIGKILL keeps every range closed before the flusher's last snapshot,
    the open one marked open; ncrun finalizes the spill files."""
    crash_run(c, "kill")


def case_crash_segv(c):
    crash_run(c, "segv")


def busy_loops(k=2):
    """k processes spinning beside the test (the machine loaded); the caller
    kills them."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]


def count_ranges(path):
    """X user_annotation events in a .json.gz trace, counted while
    streaming; and the last MiB of its text (the ncrt object)."""
    return count_named(path, None)


def case_crash_segv_load(c):
    """A program closes 2 000 000 ranges and dereferences NULL at once, with
    two busy loops beside it: libncrt's fault handler saves what is still in
    memory (1 965 028 were kept before: the last buffer was never spilled),
    so every range is in the trace ncrun finalizes, and the status is
    SIGSEGV's. With the program's own handler the handler decides: one
    installed first calls _exit(7) (libncrt's _exit saves), one installed
    later (as Python's faulthandler is) puts the previous action back and
    returns, and the fault comes again. No timing is assumed: the fault
    comes right after the last range."""
    exe = c.cc("crashload.c", out="crashload")
    n = 2000000
    load = busy_loops()
    try:
        for mode, rc, own in (("segv", 128 + 11, False), ("segv-exit", 7, True), ("segv-chain", 128 + 11, True)):
            p, d = c.run([exe, mode, str(n)], expect_rc=rc)
            check(("own handler" in p.stdout) == own, "%s: output %r" % (mode, p.stdout))
            found, end = count_ranges(os.path.join(d, "crashload-rank0.pt.trace.json.gz"))
            check(found == n, "%s: %d of %d ranges kept" % (mode, found, n))
            check("ncrt:" not in p.stderr, "%s: stderr %r" % (mode, p.stderr))
            only_traces_left(d, mode)
            print("%s: status %d, all %d ranges kept" % (mode, p.returncode, n))
    finally:
        for q in load:
            q.kill()
            q.wait()


def case_exit_10m(c):
    """10^7 ranges under the default throttle (1000 names, 10^4 calls
    each), recorded faster than the flusher converts: the exit hands the
    conversion over to ncrun's finalizer (the process ended in ~0.05 s, it
    took 3.8-100 s converting in the process), and once ncrun returns the
    trace holds every range once, in one gzip member, with the throttle's
    report and no spill file left. Counts, not times."""
    exe = c.cc("crashload.c", out="crashload")
    n = 10000000
    p, d = c.run([exe, "exit", str(n)])
    found, end = count_ranges(os.path.join(d, "crashload-rank0.pt.trace.json.gz"))
    # the loop's ranges, "hot" up to the throttle, span.done, span.open and
    # the four steps (ProfilerStep#0-3)
    check(found == n + 100000 + 2 + 4, "%d ranges, %d expected" % (found, n + 100006))
    check(b'"handed_over": ' in end, "the exit did not hand its conversion over")
    check(b'"dropped": 0,' in end and b'"total_calls": 150000' in end, "ncrt object %r" % end[-600:])
    check("ncrt:" not in p.stderr, "stderr %r" % p.stderr)
    only_traces_left(d, "exit-10m")
    print("%d ranges, the exit handed over %s records" % (
        found, end.split(b'"handed_over": ')[1].split(b",")[0].decode()))


def case_exit_handoff(c):
    """The trace of an exit handed over to the finalizer is the trace the
    process writes itself: the same events (ranges, marks, steps, start/end
    ranges ended and open, threads), the same locations and throttle report;
    the process waits until the flusher has converted part of it, so the
    finalizer goes on with that part (.body) rather than starting over.
    NCRT_HANDOFF=1 hands any exit over, off never; and a hand-over whose
    ncrun was SIGKILLed is finished by `ncrun --finalize`."""
    exe = c.cc("crashload.c", out="crashload")
    n = 400000
    got = {}
    for h in ("off", "1"):
        p, d = c.run([exe, "exit", str(n), "wait"], env={"NCRT_HANDOFF": h})
        t = one_trace(d, "crashload-rank0.pt.trace.json.gz")
        only_traces_left(d, "handoff " + h)
        got[h] = t
    a, b = got["off"], got["1"]
    check("handed_over" not in a["ncrt"], "off: handed over")
    total = n + 100000 + 2 + 4  # as in exit-10m
    check(0 < b["ncrt"]["handed_over"] < total, "handed over %s of %d records: .body not resumed" % (
        b["ncrt"].get("handed_over"), total))

    ea, eb = event_kinds(a), event_kinds(b)
    check(ea == eb, "events differ: %s / %s" % ((ea - eb).most_common(3), (eb - ea).most_common(3)))
    check(sum(v for (ph, nm, _, _), v in ea.items() if ph == "X" and nm.startswith("ProfilerStep#")) == 4,
          "steps %s" % [k for k in ea if k[1].startswith("ProfilerStep")])
    check(any('"file": "crashload.c"' in k[3] and k[1] == "f1" for k in ea), "no location for f1")
    for k in ("throttle", "disk_budget", "dropped", "cupti", "step", "steps", "clock"):
        check(a["ncrt"][k] == b["ncrt"][k], "ncrt.%s: %s / %s" % (k, a["ncrt"][k], b["ncrt"][k]))
    strip = lambda v: [(x["name"], x["calls"], x["total_calls"]) for x in v]
    check(strip(a["ncrt"]["throttled"]) == strip(b["ncrt"]["throttled"]) == [("hot", 100000, 150000)],
          "throttled %s / %s" % (a["ncrt"]["throttled"], b["ncrt"]["throttled"]))
    life = b["ncrt"]["lifetime"]
    check("died" not in life and "finalized" not in b["ncrt"] and life["exit"] <= life["written"], "lifetime %s" % life)
    # ncrun SIGKILLed as its command ends: `ncrun --finalize` finishes the hand-over
    import signal
    c.runs += 1
    d = os.path.join(c.tmp, "run%d" % c.runs)
    e = dict(os.environ, NCRT_HANDOFF="1")
    q = subprocess.Popen([c.ncrun, "--run-dir", d, "--", "/bin/sh", "-c", '"$0" exit 200000; kill -9 $PPID', exe],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e, cwd=c.tmp)
    q.communicate(timeout=120)
    check(q.returncode == -9, "ncrun exited %d" % q.returncode)
    check(any(f.endswith(".hand") for f in os.listdir(d)), "no hand-over left: %s" % os.listdir(d))
    subprocess.run([c.ncrun, "--finalize", d], check=True, capture_output=True)
    names = [f for f in os.listdir(d) if f.endswith(".trace.json.gz")]
    check(len(names) == 1, "traces after --finalize: %s" % os.listdir(d))
    t = one_trace(d, names[0])
    check(counts(t).get("hot") == 100000 and t["ncrt"].get("handed_over"), "after --finalize: %s" % counts(t))
    only_traces_left(d, "finalize")


def case_bounded_memory(c):
    """5*10^7 ranges: the process's RSS grows by less than 128 MiB while it
    records (it grew 1.15 GiB when everything was kept), every range is in
    the trace, and nothing but the trace is left."""
    import resource
    exe = c.cc("longrun.c", out="longrun")
    n = 50000000
    p, d = c.run([exe, "rss", str(n)], opts=["--throttle", "off"])
    growth = int(p.stdout.split("rss_growth_kb")[1].split()[0])
    check(growth < 128 * 1024, "RSS grew %d KiB over %d ranges" % (growth, n))
    rss_all = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    only_traces_left(d, "rss")
    found, _ = count_named(os.path.join(d, "longrun-rank0.pt.trace.json.gz"), "r")
    check(found == n, "%d ranges in the trace, %d recorded" % (found, n))
    print("rss growth %d KiB for %d ranges; max RSS of any child so far %d KiB" % (growth, n, rss_all))


def case_signal_ranges(c):
    """Ranges in a SIGALRM handler firing every 50 us: never a hang, never a
    corrupt or '(unnamed)' range; the main loop's ranges all there, nested;
    the handler's recorded or ignored, never more than it ran."""
    exe = c.cc("longrun.c", out="longrun")
    n = 300000
    p, d = c.run([exe, "sigalrm", str(n)], opts=["--throttle", "off"])
    calls = int(p.stdout.split("handler_calls")[1].split()[0])
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    k = counts(t)
    check(k.get("main.loop") == n and k.get("main.inner") == n, "main ranges %s" % k)
    check(set(k) <= {"main.loop", "main.inner", "in.handler"}, "names %s" % k)
    check(1 <= k.get("in.handler", 0) <= calls + 1, "handler ranges %d, handler ran %d" % (k.get("in.handler", 0), calls))
    check_nesting(t)
    only_traces_left(d, "sigalrm")


def case_term_exit(c):
    """A SIGTERM handler that calls _exit(3) while another thread mallocs:
    exits 3 every time (it hung in 1-2 of 3 runs when the interposed _exit
    wrote the trace with calloc), the ranges kept."""
    exe = c.cc("longrun.c", out="longrun")
    for i in range(10):
        p, d = c.run([exe, "term-exit"], expect_rc=3)
        t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
        check(counts(t) == {"before.term": 2000}, "run %d: %s" % (i, counts(t)))
        only_traces_left(d, "term-exit")


def case_term_in_claim(c):
    """SIGTERM while the flusher holds a claim on the main thread's records
    (claimed, block not yet reserved): the exit write on the main thread
    waits for that claim too, so all 5000 ranges are kept. It waited for
    other threads' claims only, taking its own chunk's as its own: a pool
    worker ended by SIGTERM under load lost the flusher's claim (200 of
    40 000 ranges, runtime/multiprocessing). The flusher's test hook
    (NCRT_TEST_TERM_IN_CLAIM) sends the signal inside the claim and holds it
    300 ms: deterministic."""
    exe = c.cc("longrun.c", out="longrun")
    p, d = c.run([exe, "wait-term"], expect_rc=143, env={"NCRT_TEST_TERM_IN_CLAIM": "1"})
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"claimed": 5000}, "ranges %s" % counts(t))
    only_traces_left(d, "term-in-claim")


def case_term_in_own_claim(c):
    """SIGTERM to a thread inside its own claim on its own records. A
    multiprocessing.Pool worker meets it: it calls os._exit as the pool's
    teardown sends SIGTERM, and the signal arrived while _exit's save held
    the claim. The handler's save then waited for that claim, on its own
    thread, which could not finish before the handler returned: after 10 s
    it gave up ("a thread still held records after 10 s") and the claim's
    records were lost (runtime/multiprocessing, under load). A signal inside
    a thread's own spill (a full buffer, the thread's end) lost that spill's
    records without a word. Signals now wait while a thread holds a claim.
    The test hook (NCRT_TEST_TERM_IN_CLAIM) sends SIGTERM to the thread
    inside the claim; no flusher (NCRT_FLUSH=0), so the claim is the
    thread's own: deterministic."""
    exe = c.cc("longrun.c", out="longrun")
    # _exit's save: done with signals held, so the process ends as _exit(0) said
    p, d = c.run([exe, "exit-term"], expect_rc=0, env={"NCRT_TEST_TERM_IN_CLAIM": "own-exit", "NCRT_FLUSH": "0"})
    noise = [l for l in p.stderr.splitlines() if not l.startswith("ncrun: ")]
    check(not noise, "exit-term: stderr %r" % noise)
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"claimed": 5000}, "exit-term: ranges %s" % counts(t))
    only_traces_left(d, "exit-term")
    # a thread's exit spill (500 ranges: its first buffer does not fill)
    p, d = c.run([exe, "thread-exit-term"], expect_rc=143,
                 env={"NCRT_TEST_TERM_IN_CLAIM": "own-spill", "NCRT_FLUSH": "0"})
    noise = [l for l in p.stderr.splitlines() if not l.startswith("ncrun: ")]
    check(not noise, "thread-exit-term: stderr %r" % noise)
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"claimed": 500}, "thread-exit-term: ranges %s" % counts(t))
    only_traces_left(d, "thread-exit-term")


def case_atexit_order(c):
    """The exit hook is registered when libncrt loads, so a range recorded
    by the program's own atexit handler is in the trace."""
    exe = c.cc("longrun.c", out="longrun")
    p, d = c.run([exe, "atexit"])
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"in.main": 1, "in.atexit": 1}, "ranges %s" % counts(t))




# ------------------------------------------- terminal ^C, ncrun's death

class Pty:
    """ncrun run on a new pty as its controlling terminal (its session and
    foreground process group, the command's too), as a shell runs it."""

    def __init__(self, argv, env):
        import pty
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.out = b""

    def read_until(self, text, what):
        """Read until text appears (None: until the pty closes); the
        deadline only bounds a failure."""
        import select
        import time
        deadline = time.monotonic() + 120
        while text is None or text.encode() not in self.out:
            left = deadline - time.monotonic()
            check(left > 0, "%s: no %r in 120 s; output %r" % (what, text, self.out.decode(errors="replace")))
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                continue
            try:
                b = os.read(self.fd, 4096)
            except OSError:  # EIO: every holder of the pty's slave side is gone
                b = b""
            if not b:
                check(text is None, "%s: pty closed before %r; output %r" % (what, text, self.out.decode(errors="replace")))
                return
            self.out += b

    def type(self, data):
        os.write(self.fd, data)

    def wait(self, what):
        self.read_until(None, what)  # to the end: the slave side closed
        _, st = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(st)


def signal_handled(pid, sig):
    """Has process pid (asleep in waitpid when not handling a signal) taken
    sig off its pending set and finished its handler? Polled on /proc: a
    condition, not a delay."""
    with open("/proc/%d/status" % pid) as f:
        st = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
    pending = int(st["SigPnd"], 16) | int(st["ShdPnd"], 16)
    return not pending & (1 << (sig - 1)) and st["State"].split()[0] in "SD"


def case_ctrl_c(c):
    """^C typed at the terminal, as a shell runs ncrun: the Python program's
    unhandled KeyboardInterrupt (CPython finalizes, then kills itself with
    SIGINT: atexit handlers never run) keeps the whole trace, the atexit
    range included; ncrun never sends a second SIGINT (the terminal sent
    the first to the command too): a program that catches the first and
    cleans up exits 0."""
    import signal
    import time
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    for k in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "WORLD_SIZE", "NCRT_OUTPUT_DIR"):
        env.pop(k, None)
    for mode in ("unhandled", "handled"):
        c.runs += 1
        d = os.path.join(c.tmp, "run%d" % c.runs)
        t = Pty([c.ncrun, "--run-dir", d, "--name", "ctrlc", "--", PY, os.path.join(PROGS, "ctrlc.py"), mode], env)
        t.read_until("ready", mode)
        t.type(b"\x03")
        if mode == "handled":
            t.read_until("interrupted", mode)
            # ncrun got the terminal's SIGINT with the program: wait until its
            # handler has run (and would have sent a second one), then go on
            deadline = time.monotonic() + 120
            while not signal_handled(t.pid, signal.SIGINT):
                check(time.monotonic() < deadline, "ncrun never handled its SIGINT")
                time.sleep(0.01)
            t.type(b"go\n")
        rc = t.wait(mode)
        out = t.out.decode(errors="replace")
        want = {"before": 20000, "waiting": 1, "in.atexit": 1}
        if mode == "unhandled":
            check(rc == 128 + signal.SIGINT, "%s: ncrun exited %d\n%s" % (mode, rc, out))
            check("KeyboardInterrupt" in out, "%s: output %r" % (mode, out))
        else:
            check(rc == 0 and "clean" in out, "%s: ncrun exited %d (130: a second SIGINT)\n%s" % (mode, rc, out))
            want["cleanup"] = 1
        tr = one_trace(d, "ctrlc-rank0.pt.trace.json.gz")
        check(counts(tr) == want, "%s: ranges %s, want %s" % (mode, counts(tr), want))
        check(not [e for e in xs(tr) if e.get("args", {}).get("open at exit")], "%s: open ranges" % mode)
        check("ncrt:" not in out, "%s: output %r" % (mode, out))
        only_traces_left(d, mode)



def case_ncrun_killed(c):
    """ncrun SIGKILLed (it can pass nothing on): its command dies with it
    (PR_SET_PDEATHSIG), not left running orphaned, and what it wrote up to
    its last snapshot becomes its trace with `ncrun --finalize RUNDIR`."""
    import signal
    import time
    exe = c.cc("longrun.c", out="longrun")
    c.runs += 1
    d = os.path.join(c.tmp, "run%d" % c.runs)
    p = subprocess.Popen([c.ncrun, "--run-dir", d, "--", exe, "crash"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.tmp)
    pid = int(p.stdout.readline().split()[1])
    pidfd = os.pidfd_open(pid)
    info = (d, pid, ".info")
    deadline = time.monotonic() + 120
    while True:  # the flusher's snapshot with the open range: every closed range is on disk
        try:
            with open(spill_file(*info)) as f:
                if "\nopen " in f.read():
                    break
        except FileNotFoundError:
            pass
        check(time.monotonic() < deadline, "no snapshot with the open range in 120 s")
        time.sleep(0.02)
    p.kill()  # stdin stays open: the command must not end for want of input
    p.wait(timeout=120)
    check(p.returncode == -signal.SIGKILL, "ncrun exited %d" % p.returncode)
    import select
    # the command's end (pidfd readable: it exited, zombie or reaped), or a
    # failure after 120 s; a command left running would only take the 120 s
    r, _, _ = select.select([pidfd], [], [], 120)
    os.close(pidfd)
    if not r:
        os.kill(pid, signal.SIGKILL)
    p.communicate(timeout=120)
    check(r, "the command (pid %d) still ran 120 s after ncrun was killed" % pid)
    f = subprocess.run([c.ncrun, "--finalize", d], capture_output=True, text=True)
    check(f.returncode == 0, "ncrun --finalize: %s" % f.stderr)
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"done": 1000, "late.open": 1}, "ranges %s" % counts(t))
    only_traces_left(d, "ncrun killed")



def case_multiprocessing(c):
    """multiprocessing workers, every start method, through a Pool(4)
    (terminated with SIGTERM at the end of its with block) and Process
    objects: every range of every worker in a trace (each worker's own),
    the parent's range once, nothing added to the program's stderr,
    nothing but traces left."""
    n = 40000
    for method in ("fork", "spawn", "forkserver"):
        p, d = c.run([PY, os.path.join(PROGS, "mpool.py"), method, str(n)], opts=["--name", "mp"],
                     env={"PYTHONDONTWRITEBYTECODE": "1"})
        check(p.stdout == "done\n", "%s: output %r" % (method, p.stdout))
        # libncrt's "a thread still held records after 10 s" counts as noise
        # too: a terminated worker's save waited for a claim of its own
        # (runtime/term-in-own-claim, reliability.md)
        noise = [l for l in p.stderr.splitlines() if not l.startswith("ncrun: ")]
        check(not noise, "%s: added to the program's stderr: %r" % (method, noise[:5]))
        total = collections.Counter()
        files = traces(d)
        for f in files:
            total.update(counts(load(f)))
        check(total == {"task": n, "proc": n, "parent": 1}, "%s: ranges %s in %d traces" % (method, total, len(files)))
        check(counts(one_trace(d, "mp-rank0.pt.trace.json.gz")) == {"parent": 1}, "%s: the parent's trace" % method)
        only_traces_left(d, method)



def case_many_names(c):
    """10^6 distinct names, then 64 threads alive at once recording one
    range each (throttle on, its default): the threads' state is bounded
    by the thread count, not by the largest name id (it was 24 B x the next
    power of two above the id per thread: +1.57 GB here); every range kept."""
    exe = c.cc("longrun.c", out="longrun")
    n, nt = 1000000, 64
    p, d = c.run([exe, "names", str(n), str(nt)])
    growth = int(p.stdout.split("threads_rss_growth_kb")[1].split()[0])
    # generous: 64 threads' stacks as touched, first chunks and throttle
    # tables (about 100 KiB each), malloc arenas
    check(growth < 128 * 1024, "64 threads grew RSS by %d KiB" % growth)
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    k = counts(t)
    check(len(k) == n and k["n%d" % (n - 1)] == nt + 1 and sum(k.values()) == n + nt, "%d names, %d ranges, last %s" % (
        len(k), sum(k.values()), k.get("n%d" % (n - 1))))
    only_traces_left(d, "names")
    print("threads' RSS growth %d KiB" % growth)



def case_ncrun_usage(c):
    """Bad option values stop ncrun with exit 2 and one line naming the
    option, the value and what is wrong, before the program starts."""
    marker = os.path.join(c.tmp, "started")
    cases = [
        (["--schedule", "wait=5,warmup=2,actve=10"],
         "ncrun: --schedule wait=5,warmup=2,actve=10: unknown key 'actve' (did you mean 'active'?) "
         "(keys: wait, warmup, active, repeat)"),
        (["--schedule", "wait=-1,warmup=x"], "ncrun: --schedule wait=-1,warmup=x: wait=-1 is not a whole number >= 0"),
        (["--schedule", "wait=1,warmup=1,active=0"],
         "ncrun: --schedule wait=1,warmup=1,active=0: active must be at least 1 (steps recorded per cycle)"),
        (["--schedule", "1,2"], "ncrun: --schedule 1,2: wants wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R]"),
        (["-a", "gpuu"], "ncrun: -a gpuu: unknown activity 'gpuu' (did you mean 'gpu'?) (cpu, gpu, mem)"),
        (["--throttle", "abc"], "ncrun: --throttle abc: wants CALLS or CALLS:US (e.g. 100000 or 100000:10) or off"),
        (["--gzip-level", "12"], "ncrun: --gzip-level 12: wants a zlib level from 0 to 9"),
        (["--shadow", "nodir"], "ncrun: --shadow nodir: No such file or directory"),
        (["--rules", "nofile.yaml"], "ncrun: --rules nofile.yaml: No such file or directory"),
    ]
    for opts, want in cases:
        p = subprocess.run([c.ncrun] + opts + ["--", "touch", marker], capture_output=True, text=True, cwd=c.tmp)
        check(p.returncode == 2 and p.stderr.splitlines()[:1] == [want],
              "%s: exit %d, stderr %r" % (opts, p.returncode, p.stderr))
        check(not os.path.exists(marker), "%s: the program ran" % opts)
    # a command that cannot run: its message, 127, and no run directory left
    d = os.path.join(c.tmp, "never")
    p = subprocess.run([c.ncrun, "--run-dir", d, "--", os.path.join(c.tmp, "no-such-program")], capture_output=True,
                       text=True, cwd=c.tmp)
    check(p.returncode == 127 and p.stderr == "ncrun: cannot run %s: No such file or directory\n" % os.path.join(
        c.tmp, "no-such-program") and not os.path.exists(d), "no such program: %d %r" % (p.returncode, p.stderr))
    p = subprocess.run([c.ncrun, "--"], capture_output=True, text=True, cwd=c.tmp)
    check(p.returncode == 2 and p.stderr.startswith("ncrun: no command given\nusage:"), "no command: %r" % p.stderr)
    p = subprocess.run([c.ncrun, "--version"], capture_output=True, text=True)
    check(p.returncode == 0 and re.match(r"ncrun \d+\.\d+\.\d+\n$", p.stdout), "--version: %r" % p.stdout)
    # good values still run
    p, d = c.run(["touch", marker], opts=["--schedule", "1,1,2", "-a", "cpu,mem", "--throttle", "50:2.5"])
    check(os.path.exists(marker), "the program did not run with good values")


def case_launcher_name(c):
    """A run under a launcher is named after the program it launches
    (solver-rank0, not mpirun-rank0): a stand-in mpirun that runs its
    command, and env, in front of the program."""
    exe = c.cc("longrun.c", out="solver")
    fake = os.path.join(c.tmp, "mpirun")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\nshift 2\nexec \"$@\"\n")
    os.chmod(fake, 0o755)
    # a launcher of its own with `--` before the program, a shell, and
    # `python -m torch.distributed.run` (a stand-in module: Debian's torch
    # 1.13 torchrun does not run on Python 3.11)
    dashes = os.path.join(c.tmp, "launch.py")
    with open(dashes, "w") as f:
        f.write("import os, sys\nk = sys.argv.index('--')\nos.execv(sys.argv[k + 1], sys.argv[k + 1:])\n")
    run = os.path.join(c.tmp, "torch", "distributed")
    os.makedirs(run)
    for f in ("torch/__init__.py", "torch/distributed/__init__.py"):
        open(os.path.join(c.tmp, f), "w").close()
    with open(os.path.join(run, "run.py"), "w") as f:
        f.write("import os, sys\nos.execv(sys.argv[2], sys.argv[2:])\n")
    for cmd in ([fake, "-np", "2", exe, "timed", "10"], ["env", "FOO=1", exe, "timed", "10"],
                [PY, dashes, "--nodes", "1", "--", exe, "timed", "10"], ["sh", "-c", "%s timed 10" % exe],
                ["sh", "-c", '"$0" timed 10', exe], ["sh", "-c", "exec %s timed 10" % exe],
                [PY, "-m", "torch.distributed.run", "--nproc_per_node=1", exe, "timed", "10"]):
        p, d = c.run(cmd)
        names = [os.path.basename(x) for x in traces(d)]
        if cmd[0] == "sh":  # a shell that does not exec its last command: the program is its subprocess
            names = [re.sub(r"-pid\d+", "-rank0", x) for x in names]
        check(os.path.basename(d).startswith("run") and names == ["solver-rank0.pt.trace.json.gz"],
              "%s: traces %s" % (cmd[:2], traces(d)))
        env = json.load(open(os.path.join(d, "env.json")))
        check(env["command"] == cmd, "env.json command %s" % env["command"])


def case_shadow_cwd(c):
    """ncrun --shadow run from inside the source tree: Python imports the
    originals (the script's or current directory comes first on sys.path);
    ncrun says so before the run, naming both copies. From elsewhere, it
    says nothing."""
    src, out = os.path.join(c.tmp, "src"), os.path.join(c.tmp, "out")
    for root, text in ((src, "orig"), (out, "inst")):
        os.makedirs(os.path.join(root, "pkg"))
        open(os.path.join(root, "pkg", "__init__.py"), "w").close()
        with open(os.path.join(root, "pkg", "mod.py"), "w") as f:
            f.write("print(%r)\n" % text)
        with open(os.path.join(root, "train.py"), "w") as f:
            f.write("import pkg.mod\n")
    want = ("ncrun: %s/pkg will be imported, not the instrumented %s/pkg: Python puts %s (%s) ahead of --shadow "
            "on sys.path, so nothing there is recorded; run from another directory, or run the shadow's copy of the "
            "script")
    for cmd, why in (([PY, "-m", "pkg.mod"], "the current directory"), ([PY, "train.py"], "the script's directory")):
        p = subprocess.run([c.ncrun, "--run-dir", os.path.join(c.tmp, "r%d" % len(why)), "--shadow", out, "--"] + cmd,
                           capture_output=True, text=True, cwd=src)
        check(p.stdout == "orig\n" and (want % (src, out, src, why)) in p.stderr.splitlines(),
              "%s: stdout %r, stderr %r" % (cmd, p.stdout, p.stderr))
    p = subprocess.run([c.ncrun, "--run-dir", os.path.join(c.tmp, "r0"), "--shadow", out, "--", PY, "-m", "pkg.mod"],
                       capture_output=True, text=True, cwd=c.tmp)
    check(p.stdout == "inst\n" and "will be imported" not in p.stderr, "from elsewhere: %r %r" % (p.stdout, p.stderr))


def under_asan():
    """The sanitizer stage preloads the ASan runtime into the programs."""
    return "libasan" in os.environ.get("LD_PRELOAD", "")


def case_many_threads(c):
    """20 000 short-lived threads one after another, each recording one
    range: an ended thread's state goes to the next thread (it was 12.5 KB
    left per thread), every range is kept."""
    exe = c.cc("longrun.c", out="longrun")
    n = 20000
    p, d = c.run([exe, "threads", str(n)])
    growth = int(p.stdout.split("threads_rss_growth_kb")[1].split()[0])
    # under ASan each thread's fake stack and quarantine add ~5 KiB that no
    # collector controls: the counts are checked there, the memory here only
    if not under_asan():
        check(growth < 8 * 1024, "%d threads grew RSS by %d KiB" % (n, growth))
    else:
        print("RSS not checked under AddressSanitizer (its own per-thread memory)")
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"t.one": n} and t["ncrt"]["dropped"] == 0, "ranges %s, dropped %s" % (
        counts(t), t["ncrt"]["dropped"]))
    only_traces_left(d, "threads")
    print("RSS growth over %d threads: %d KiB" % (n, growth))


def case_incremental(c):
    """The flusher converts records into the trace while the program runs
    (the exit adds only the rest): the program waits until some of its
    trace's body is on disk, records as much again and ends; the trace
    holds every range, mark and thread once, nested right, with the
    top-level members Kineto's readers expect."""
    exe = c.cc("longrun.c", out="longrun")
    p, d = c.run([exe, "incremental"], opts=["--throttle", "off"])
    check("converted_while_running" in p.stdout, "output %r" % p.stdout)
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"outer": 200000, "inner": 200000, "t.one": 1}, "ranges %s" % counts(t))
    check_nesting(t)
    depth = collections.Counter((e["name"], e["depth"]) for e in xs(t))
    check(depth == {("outer", 0): 200000, ("inner", 1): 200000, ("t.one", 0): 1}, "depths %s" % depth)
    marks = [e["name"] for e in t["traceEvents"] if e["ph"] == "i"]
    check(marks == ["between"], "marks %s" % marks)
    for k in ("schemaVersion", "deviceProperties", "distributedInfo", "displayTimeUnit", "baseTimeNanoseconds",
              "traceName", "ncrt"):
        check(k in t, "no %s in the trace" % k)
    meta = collections.Counter(e["name"] for e in t["traceEvents"] if e["ph"] == "M")
    check(meta["process_name"] == 1 and meta["thread_name"] >= 2, "metadata %s" % meta)
    check(t["ncrt"]["dropped"] == 0, "dropped %s" % t["ncrt"]["dropped"])
    only_traces_left(d, "incremental")


def case_oom_rlimit(c):
    """A program that exits with its address space full (RLIMIT_AS): the
    exit write cannot get memory, says so in one line, and leaves its spill
    files for ncrun, which writes the trace; every range is kept."""
    import resource
    if under_asan():
        print("SKIPPED: AddressSanitizer reserves terabytes of shadow address space, which RLIMIT_AS forbids")
        return SKIP
    exe = c.cc("longrun.c", out="longrun")
    limit = 768 << 20

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    c.runs += 1
    d = os.path.join(c.tmp, "run%d" % c.runs)
    # ncrun itself runs under the limit too: it needs little memory
    p = subprocess.run([c.ncrun, "--run-dir", d, "--", exe, "oom"], capture_output=True, text=True, cwd=c.tmp,
                       preexec_fn=cap)
    check(p.returncode == 0, "exit %d\n%s" % (p.returncode, p.stderr))
    blocks = int(p.stdout.split("blocks")[1].split()[0])
    check(blocks > 100, "only %d blocks before malloc failed" % blocks)
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    check(counts(t) == {"before": 100000, "alloc": blocks + 1}, "ranges %s (blocks %d)" % (counts(t), blocks))
    msgs = [l for l in p.stderr.splitlines() if l.startswith("ncrt:")]
    check(len(msgs) <= 1, "more than one line from libncrt: %s" % msgs)
    only_traces_left(d, "oom")
    print("exit with a full address space after %d MiB: %s" % (blocks, msgs[0] if msgs else "written at exit"))


def case_oom_open_frames(c):
    """A process out of memory at exit (every malloc, calloc and realloc
    fails) with 20 ranges open on each of two threads: the collector's list
    of open frames cannot grow past nothing, and the host program still
    exits with its own status (it used to crash writing the second thread's
    frames through NULL)."""
    if under_asan():
        print("SKIPPED: the program replaces malloc, which AddressSanitizer owns")
        return SKIP
    exe = c.cc("failalloc.c", out="failalloc")
    p, d = c.run([exe], expect_rc=None)
    check(p.returncode == 3, "exit %d, want the program's 3\nstderr: %s" % (p.returncode, p.stderr))
    check(p.stdout.strip() == "armed", "stdout %r" % p.stdout)
    msgs = [l for l in p.stderr.splitlines() if l.startswith("ncrt:")]
    check(len(msgs) <= 1, "more than one line from libncrt: %s" % msgs)


def case_oom_each(c):
    """Allocation-failure injection, as Lua's ltests and SQLite do it: for
    each N, the Nth allocation libncrt (or its zlib) asks for fails, and
    only that one (progs/failalloc.c: names, a domain, a category, marks,
    two threads, ranges open at exit), until N passes the last one. Every
    run exits with the program's own status, says at most two lines, and
    any trace written is whole."""
    if under_asan():
        print("SKIPPED: the program replaces malloc, which AddressSanitizer owns")
        return SKIP
    exe = c.cc("failalloc.c", out="failalloc")
    n = 0
    while True:
        n += 1
        check(n < 2000, "more than 2000 allocations: the count never ended")
        p, d = c.run([exe, "nth", str(n)], expect_rc=None)
        injected = "failalloc: failed allocation %d" % n in p.stderr
        check(p.returncode == 3, "allocation %d failing: exit %d, want the program's 3\nstderr: %s" % (
            n, p.returncode, p.stderr[-2000:]))
        msgs = [l for l in p.stderr.splitlines() if l.startswith("ncrt:")]
        check(len(msgs) <= 2, "allocation %d failing: more than two lines from libncrt: %s" % (n, msgs))
        for f in traces(d):
            load(f)
        if not injected:
            break
    print("%d allocations of libncrt's failed one at a time" % (n - 1))


def case_oom_domain(c):
    """A domain created while every allocation fails (its name cannot be
    copied) is the default domain; the next domain created, and the ranges
    after, are recorded as usual (the lost copy was a NULL name that the
    next creation compared)."""
    if under_asan():
        print("SKIPPED: the program replaces malloc, which AddressSanitizer owns")
        return SKIP
    exe = c.cc("failalloc.c", out="failalloc")
    p, d = c.run([exe, "domain"], expect_rc=None)
    check(p.returncode == 0, "exit %d\nstderr: %s" % (p.returncode, p.stderr))
    t = one_trace(d, "failalloc-rank0.pt.trace.json.gz")
    check(counts(t) == {"before": 1, "in.kept": 1, "after": 1}, "ranges %s" % counts(t))


def case_term_at_fork(c):
    """A SIGTERM that reaches ncrun after its handler is installed but
    before the command's fork returns (the test hook NCRUN_TEST_TERM_AT_FORK
    raises it there) is passed on once the command exists: the command
    (sleep 120) dies of it and ncrun exits 143. It used to be dropped, and
    the command ran on (here: past the 60 s the test waits)."""
    try:
        p, d = c.run(["sleep", "120"], expect_rc=None, env={"NCRUN_TEST_TERM_AT_FORK": "1"}, timeout=60)
    except subprocess.TimeoutExpired:
        raise Fail("the SIGTERM was dropped: the command ran on")
    check(p.returncode == 143, "exit %d, want 143\nstderr: %s" % (p.returncode, p.stderr))


def case_term_mid_write(c):
    """SIGTERM while the process writes its trace at exit: it dies at once
    with its own status (143 through ncrun), and ncrun makes the trace from
    the spill files (nothing was lost: the records were on disk), leaving no
    temporary file. The signal is sent as soon as the program says main
    returned (its exit write follows); if the process was gone by then, the
    test runs again, longer."""
    import signal
    exe = c.cc("longrun.c", out="longrun")
    n = 5000000
    for attempt in range(4):
        c.runs += 1
        d = os.path.join(c.tmp, "run%d" % c.runs)
        # the exit converts in the process (NCRT_HANDOFF=off): a hand-over
        # would end it before the signal comes
        p = subprocess.Popen([c.ncrun, "--run-dir", d, "--throttle", "off", "--", exe, "timed", str(n)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=c.tmp,
                             env=dict(os.environ, NCRT_HANDOFF="off"))
        p.stdout.readline()  # "end_ns": main has returned
        pids = [f[:-5].rsplit("-", 1)[1] for f in os.listdir(d) if f.startswith(".ncrt-h") and f.endswith(".info")]
        sent = False
        if pids:
            try:
                os.kill(int(pids[0]), signal.SIGTERM)
                sent = True
            except ProcessLookupError:
                pass
        out, err = p.communicate(timeout=300)
        if not sent or p.returncode == 0:
            n *= 2  # the write ended before the signal came: longer
            continue
        check(p.returncode == 128 + 15, "ncrun exited %d\n%s" % (p.returncode, err))
        t = [f for f in os.listdir(d) if f.endswith(".trace.json.gz")]
        check(t == ["longrun-rank0.pt.trace.json.gz"], "traces %s" % t)
        found, end = count_named(os.path.join(d, t[0]), "r")
        check(found == n, "%d of %d ranges" % (found, n))
        check(b'"finalized"' in end, "not written by the finalizer")
        only_traces_left(d, "term mid-write")
        print("SIGTERM during the exit write of %d ranges: all kept (finalized by ncrun)" % n)
        return
    raise Fail("the exit write was never seen in 4 runs")


def case_handler_new_names(c):
    """A SIGALRM handler every 50 us records a never-seen name while its
    thread interns names of its own and mallocs: never a deadlock (on the
    name lock, or in malloc: interning allocates with mmap), never an
    '(unnamed)' range; the main loop's ranges all there, the handler's
    recorded or ignored, each at most once."""
    exe = c.cc("longrun.c", out="longrun")
    n = 200000
    c.runs += 1
    d = os.path.join(c.tmp, "run%d" % c.runs)
    try:  # the timeout only bounds a hang
        p = subprocess.run([c.ncrun, "--run-dir", d, "--throttle", "off", "--", exe, "new-names", str(n)],
                           capture_output=True, text=True, cwd=c.tmp, timeout=280)
    except subprocess.TimeoutExpired:
        raise Fail("hung (a deadlock) with a handler interning names")
    check(p.returncode == 0, "exited %d: %s" % (p.returncode, p.stderr))
    calls = int(p.stdout.split("handler_calls")[1].split()[0])
    t = one_trace(d, "longrun-rank0.pt.trace.json.gz")
    k = counts(t)
    main = {x for x in k if x.startswith("m")}
    hand = {x: v for x, v in k.items() if x.startswith("h")}
    check(len(main) == n and all(k[x] == 1 for x in main), "main ranges: %d names" % len(main))
    check(set(k) == main | set(hand), "other names %s" % sorted(set(k) - main - set(hand))[:5])
    check(all(v == 1 and int(x[1:]) < calls for x, v in hand.items()), "handler ranges")
    only_traces_left(d, "new-names")
    print("handler ran %d times, %d of its ranges recorded" % (calls, len(hand)))


def pftrace_json(c, path):
    """A .pftrace as the JSON it stands for (`nctrace convert`), as bytes."""
    out = path + ".json"
    r = subprocess.run([c.nctrace, "convert", path, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, "nctrace convert %s: %s" % (path, r.stderr))
    with open(out, "rb") as f:
        data = f.read()
    os.unlink(out)
    return data


def protoc_decode(path):
    """The trace decoded by protoc (an independent decoder) against the
    subset docs/perfetto_subset.proto lists: its text; a field the subset
    does not name (printed by number) fails."""
    proto = os.path.join(ROOT, "docs", "perfetto_subset.proto")
    with open(path, "rb") as f:
        r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", os.path.dirname(proto), proto],
                           stdin=f, capture_output=True)
    check(r.returncode == 0, "protoc --decode %s: %s" % (path, r.stderr.decode()[:400]))
    text = r.stdout.decode()
    unknown = re.findall(r"^ *[0-9]+: .*$", text, re.M)
    check(not unknown, "%s: fields outside docs/perfetto_subset.proto: %s" % (path, unknown[:5]))
    return text


def event_kinds(t):
    """What a trace holds, times aside: (ph, name, depth, args) counted, the
    pid replaced (two runs), range ids left out."""
    pid = str(t["ncrt"]["process"]["pid"])
    k = collections.Counter()
    for e in t["traceEvents"]:
        args = json.dumps({x: y for x, y in e.get("args", {}).items() if x not in ("range id",)},
                          sort_keys=True).replace(pid, "PID")
        k[(e["ph"], e["name"], e.get("depth"), args)] += 1
    return k


def case_perfetto(c):
    """--trace-format perfetto (issue 33, item 3): the trace is Perfetto's
    protobuf. (1) The same spill set written by the finalizer in both
    formats: the .pftrace read back (`nctrace convert`) is the JSON trace,
    byte for byte. (2) protoc decodes every .pftrace against the subset the
    docs list, with no other field, and its slices are the ranges. (3) A
    live run whose exit is handed over with part converted (.body resumed
    by the finalizer) holds the same events as the JSON format's run. (4)
    nctrace summary, report, diff, filter, merge and kernels read it."""
    if not shutil.which("protoc"):
        print("skipped: no protoc (Debian's protobuf-compiler) to decode the traces with")
        return SKIP
    exe = c.cc("crashload.c", out="crashload")
    # (1) one spill set, left by an exit handed over with nothing converted
    # (ncrun killed as its command ends), finalized twice
    import signal
    c.runs += 1
    d = os.path.join(c.tmp, "run%d" % c.runs)
    e = dict(os.environ, NCRT_HANDOFF="1", NCRT_INCREMENTAL="off")
    q = subprocess.Popen([c.ncrun, "--run-dir", d, "--", "/bin/sh", "-c", '"$0" exit 60000; kill -9 $PPID', exe],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e, cwd=c.tmp)
    q.communicate(timeout=120)
    check(q.returncode == -signal.SIGKILL, "ncrun exited %d" % q.returncode)
    d2 = d + "-pf"
    shutil.copytree(d, d2)
    infos = glob.glob(os.path.join(d2, ".ncrt-*.info"))
    check(len(infos) == 1, "spill sets: %s" % os.listdir(d2))
    with open(infos[0]) as f:
        info = f.read()
    check("\nformat 0\n" in info, "the snapshot names no format: %r" % info[:300])
    with open(infos[0], "w") as f:
        f.write(info.replace("\nformat 0\n", "\nformat 1\n"))
    for x in (d, d2):
        r = subprocess.run([c.ncrun, "--finalize", x], capture_output=True, text=True)
        check(r.returncode == 0, "ncrun --finalize %s: %s" % (x, r.stderr))
    js = glob.glob(os.path.join(d, "*.pt.trace.json.gz"))
    pf = glob.glob(os.path.join(d2, "*.pftrace"))
    check(len(js) == 1 and len(pf) == 1, "traces: %s / %s" % (os.listdir(d), os.listdir(d2)))
    with open(js[0], "rb") as f:
        want = gzip.decompress(f.read())
    got = pftrace_json(c, pf[0])
    if got != want:
        at = next(i for i in range(min(len(got), len(want))) if got[i] != want[i]) if got[:len(want)] != want[:len(got)] else min(len(got), len(want))
        raise Fail("the .pftrace reads back as other JSON at byte %d:\n json: %r\n  pf: %r" % (
            at, want[max(0, at - 80):at + 80], got[max(0, at - 80):at + 80]))
    t = json.loads(want)
    ranges = len([x for x in t["traceEvents"] if x["ph"] == "X" and x["cat"] == "user_annotation"
                  and "open at exit" not in x.get("args", {}) and not x.get("args", {}).get("start/end")
                  and not x["name"].startswith("ProfilerStep#")])  # steps: in the tail's JSON
    text = protoc_decode(pf[0])
    begins, ends = text.count("type: TYPE_SLICE_BEGIN"), text.count("type: TYPE_SLICE_END")
    check(begins == ends == ranges > 60000, "slices %d/%d, ranges %d" % (begins, ends, ranges))
    check(os.path.getsize(pf[0]) < 48 * ranges, "%d bytes for %d ranges" % (os.path.getsize(pf[0]), ranges))
    # nctrace reads a .pftrace's ranges without their JSON text (pbread's
    # direct events): the same figures as from the JSON, streamed or not,
    # and the same report (its hover's args come from each name's args)
    for how, env in (("streamed", {}), ("in memory", {"NCTRACE_STREAM": "0"})):
        outs = []
        for path in (js[0], pf[0]):
            r = subprocess.run([c.nctrace, "summary", "--format", "json", "--top", "0", path], capture_output=True,
                               text=True, env=dict(os.environ, **env))
            check(r.returncode == 0, "summary %s: %s" % (path, r.stderr))
            outs.append(r.stdout.replace(path, "TRACE").replace(os.path.basename(path), "TRACE"))
        check(outs[0] == outs[1], "summary %s: the .pftrace's differs from the JSON's" % how)
    pages = []
    for path in (js[0], pf[0]):
        page = os.path.join(c.tmp, "page.html")
        r = subprocess.run([c.nctrace, "report", path, "-o", page], capture_output=True, text=True)
        check(r.returncode == 0, "report %s: %s" % (path, r.stderr))
        with open(page) as f:
            pages.append(f.read().replace(path, "TRACE").replace(os.path.basename(path), "TRACE")
                         .replace(d2, "DIR").replace(d, "DIR"))
    check(pages[0] == pages[1], "report: the .pftrace's page differs from the JSON's")
    only_traces_left(d2, "finalize, perfetto")
    # (3) a live run in both formats, the exit handed over with a .body
    got = {}
    for fmt in ("json", "perfetto"):
        p, rd = c.run([exe, "exit", "400000", "wait"], opts=["--trace-format", fmt], env={"NCRT_HANDOFF": "1"})
        names = [f for f in os.listdir(rd) if f != "env.json" and not f.endswith(".md")]
        check(len(names) == 1, "%s: %s" % (fmt, os.listdir(rd)))
        path = os.path.join(rd, names[0])
        if fmt == "json":
            got[fmt] = load(path)
        else:
            check(path.endswith("crashload-rank0.pftrace"), "trace %s" % path)
            got[fmt] = json.loads(pftrace_json(c, path))
            check_layout(got[fmt], path)
            protoc_decode(path)
            live = path
    a, b = got["json"], got["perfetto"]
    check(0 < b["ncrt"].get("handed_over", 0), "perfetto: not handed over (%s)" % b["ncrt"].get("handed_over"))
    ea, eb = event_kinds(a), event_kinds(b)
    check(ea == eb, "events differ: %s / %s" % ((ea - eb).most_common(3), (eb - ea).most_common(3)))
    # eight threads: every range on its thread, nested, protoc's slices per thread
    exe_t = c.cc("threads.c")
    p, rd = c.run([exe_t, "8", "20000"], opts=["--throttle", "off", "--trace-format", "perfetto"])
    path = os.path.join(rd, "threads_c-rank0.pftrace")
    tt = json.loads(pftrace_json(c, path))
    check_layout(tt, path)
    tids = collections.Counter(e["tid"] for e in xs(tt))
    check(len(tids) == 8 and set(tids.values()) == {20000}, "threads %s" % tids)
    check(counts(tt) == {"outer": 80000, "inner": 80000}, "names %s" % counts(tt))
    check_nesting(tt)
    seqs = collections.Counter(re.findall(r"trusted_packet_sequence_id: ([0-9]+)\n  track_event \{\n    type: TYPE_SLICE_BEGIN",
                                          protoc_decode(path)))
    check(len(seqs) == 8 and set(seqs.values()) == {20000}, "slices per sequence %s" % seqs)
    # (4) the commands read it
    out = lambda *x: os.path.join(c.tmp, *x)
    for cmd in (["summary", live, "--top", "0"], ["summary", os.path.dirname(live), "--top", "0"], ["report", live, "-o", out("r.html")],
                ["diff", js[0], pf[0]], ["filter", live, "-o", out("f.json")],
                ["merge", live, js[0], "-o", out("m.json.gz")], ["kernels", live]):
        r = subprocess.run([c.nctrace] + cmd, capture_output=True, text=True)
        check(r.returncode == 0 and "error" not in r.stderr, "nctrace %s: %s" % (cmd[0], r.stderr[-400:]))
        if cmd[0] == "summary":
            # all 150000 calls, measured (100000 recorded, the rest timed)
            row = [l for l in r.stdout.splitlines() if l.startswith("| hot |")]
            check(row and row[0].startswith("| hot | user_annotation | 150000 |"), "summary's hot row: %s" % row)
    with open(out("f.json")) as f:
        kept = counts(json.load(f))
    check(kept.get("hot") == 100000, "filter kept %s" % kept)
    with gzip.open(out("m.json.gz")) as f:
        merged = json.load(f)
    check(sum(1 for x in merged["traceEvents"] if x.get("name") == "hot") == 100000 + counts(t).get("hot", 0),
          "merge")
    # a truncated file is an error at its place, not a crash
    with open(live, "rb") as f:
        data = f.read()
    cut = out("cut.pftrace")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    r = subprocess.run([c.nctrace, "summary", cut], capture_output=True, text=True)
    check(r.returncode == 1 and "cut.pftrace: byte" in r.stderr and "truncated" in r.stderr,
          "truncated: rc %d %s" % (r.returncode, r.stderr))


def case_small_static(c):
    """Issue 40: a small C program whose slow function is a small static
    function (progs/small_static.c: process_item -> transform_slow -> spin).
    The full trace used to leave all three out as "the compiler inlines it",
    so the trace showed only main. Now each has a range; under ncrun with a
    throttle low enough to stop recording all of them, the summary puts spin
    first by exclusive time with all its calls, the exclusive times add up
    to main's inclusive time (every call counted once), the report page has
    spin, and the calls without a range (atoi, printf) are named."""
    if not c.ncrewrite:
        print("SKIPPED: no ncrewrite given")
        return SKIP
    src = os.path.join(c.tmp, "src")
    os.makedirs(src)
    shutil.copy(os.path.join(PROGS, "small_static.c"), src)
    out = os.path.join(c.tmp, "shadow")
    r = subprocess.run([c.ncrewrite, "-q", "--full-trace", "--explain", src, out], capture_output=True, text=True)
    check(r.returncode == 0, "ncrewrite: %s" % r.stderr)
    for fn in ("spin", "rare", "transform_slow", "transform_fast", "process_item", "main"):
        check("%s: full-trace range '%s'" % (fn, fn) in r.stdout, "no range for %s:\n%s" % (fn, r.stdout))
    exe = os.path.join(c.tmp, "small_static")
    subprocess.run(["gcc", "-O2"] + INC + [os.path.join(out, "small_static.c"), "-o", exe, "-ldl"], check=True)
    p, d = c.run([exe], opts=["--throttle", "500", "--shadow", out, "--name", "small"])
    s = subprocess.run([c.nctrace, "summary", "--format", "json", d], capture_output=True, text=True)
    check(s.returncode == 0, "summary: %s" % s.stderr)
    st = json.loads(s.stdout)["structured"]
    rows = {x["name"]: x for x in st["operations"]}
    check(rows["spin"]["count"] == 6300 and rows["process_item"]["count"] == 3000 and rows["rare"]["count"] == 300
          and not rows["rare"].get("throttled"), "counts: %s" % rows)
    top = max(rows.values(), key=lambda x: x["exclusive_us"])
    check(top["name"] == "spin", "spin is not first by exclusive time: %s" % rows)
    total = sum(x["exclusive_us"] for x in rows.values())
    check(abs(total - rows["main"]["inclusive_us"]) <= 0.02 * rows["main"]["inclusive_us"],
          "exclusive times add up to %.3f us, main ran %.3f us" % (total, rows["main"]["inclusive_us"]))
    un = {x["name"]: x["calls"] for x in st.get("unranged_calls", [])}
    check(un.get("main") == ["atoi", "printf"], "calls without a range: %s" % st.get("unranged_calls"))
    md = subprocess.run([c.nctrace, "summary", d], capture_output=True, text=True).stdout
    check("### What the trace cannot see" in md and "| main |" in md.split("cannot see", 1)[1], "summary md:\n%s" % md)
    html = os.path.join(c.tmp, "r.html")
    r = subprocess.run([c.nctrace, "report", d, "-o", html], capture_output=True, text=True)
    check(r.returncode == 0, "report: %s" % r.stderr)
    page = open(html, encoding="utf-8").read()
    check("spin" in page and "What the trace cannot see" in page, "the report lacks spin or the unseen calls")


CASES = {name[5:].replace("_", "-"): fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in CASES:
        print("usage: test_runtime.py CASE NCRUN_DIR [NCREWRITE]\ncases: " + " ".join(sorted(CASES)))
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rc = CASES[sys.argv[1]](Ctx(sys.argv[2], tmp, sys.argv[3] if len(sys.argv) > 3 else None))
        except Fail as e:
            print("FAILED: %s" % e)
            return 1
    if rc == SKIP:
        return SKIP
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
