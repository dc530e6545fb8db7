#!/usr/bin/env python3
"""Runtime benchmarks (issue 4), printed side by side as ratios.

  C      one NCRT_RANGE push/pop pair: no tool attached vs libncrt recording
         (throttle off) vs libncrt after the throttle stopped the name
  Python one `with` enter/exit: contextlib.nullcontext vs ncrt.range (the
         rewriter's contract line) vs torch.profiler.record_function, in one
         process, under libncrt (throttle off)
  Write  10 million ranges to .json.gz at exit: time and peak memory
  Torch  a torch.profiler region's trace on a torch without Kineto (issue
         32): the torch backend's writer per event, Python path against
         its C++ writer (ncrt_torch_events) on one profile, beside libncrt's
         own writer per range
  Exit   10 million ranges over 1000 names under the default throttle, then
         exit (issue 33): the program's exit (its last line to its end) and
         ncrun's total, this build against --baseline-ncrt side by side, in
         interleaved rounds, optionally beside --load busy loops

    bench_runtime.py --bin BUILD/bench/runtime --ncrt BUILD/ncrt [--quick]
"""
import argparse
import glob
import os
import shutil
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"

PY_BENCH = r'''
import contextlib, sys, timeit
_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
import ncrt
N = int(sys.argv[1])
def best(stmt, g, n=N):
    return min(timeit.repeat(stmt, globals=g, number=n, repeat=5)) / n * 1e9
g = dict(_ncrt_range=_ncrt_range, ncrt=ncrt, contextlib=contextlib)
empty = best("pass", g)
res = {}
res["contextlib.nullcontext"] = best("with contextlib.nullcontext():\n pass", g) - empty
res["ncrt.range (contract line)"] = best("with _ncrt_range('Attention.forward'):\n pass", g) - empty
res["ncrt.span"] = best("with ncrt.span('Attention.forward'):\n pass", g) - empty
try:
    import torch.profiler
    g["rf"] = torch.profiler.record_function
    res["torch.profiler.record_function"] = best("with rf('Attention.forward'):\n pass", g, max(N // 20, 1000)) - empty
    res["ncrt.torch_range"] = best("with ncrt.torch_range('Attention.forward'):\n pass", g, max(N // 20, 1000)) - empty
except ImportError:
    pass
for k, v in res.items():
    print("%s\t%.1f" % (k, v))
'''


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)


def ncrun(args, ncrt_dir, cmd, out):
    return [os.path.join(ncrt_dir, "ncrun"), "-q", "--run-dir", out] + args + ["--"] + cmd


def c_bench(a, tmp):
    exe = os.path.join(a.bin, "bench_pushpop")
    n_off, n_on = (20000000, 2000000) if not a.quick else (2000000, 200000)
    rows = []
    def best(cmd, reps=3):
        v = []
        for i in range(reps):
            out = run(cmd).stdout
            v.append(float(out.split("ns_per_pair")[1].split()[0]))
        return min(v)
    off = best([exe, str(n_off)])
    on = best(ncrun(["--throttle", "off"], a.ncrt, [exe, str(n_on)], os.path.join(tmp, "c1")))
    thr = best(ncrun([], a.ncrt, [exe, str(n_on)], os.path.join(tmp, "c2")))
    print("\n## C: one NCRT_RANGE push/pop pair (ns)")
    print("%-44s %10s %8s" % ("", "ns/pair", "ratio"))
    for name, v in (("no tool attached", off), ("libncrt recording (throttle off)", on),
                    ("libncrt, name throttled (default rule)", thr)):
        print("%-44s %10.2f %7.1fx" % (name, v, v / off if off > 0 else float("nan")))
    print("target: recording <= 30 ns -> %s" % ("met" if on <= 30 else "NOT met"))
    if a.baseline_ncrt:
        # the same program under another collector build (e.g. before a
        # change), interleaved with this one, as a ratio
        rows = []
        for label, ncrt in (("this", a.ncrt), ("baseline", a.baseline_ncrt)):
            on_ = best(ncrun(["--throttle", "off"], ncrt, [exe, str(n_on)], os.path.join(tmp, "b" + label)))
            thr_ = best(ncrun([], ncrt, [exe, str(n_on)], os.path.join(tmp, "t" + label)))
            rows.append((label, on_, thr_))
        (_, on_a, thr_a), (_, on_b, thr_b) = rows
        print("\n## C: this collector vs the baseline (%s), ns/pair" % a.baseline_ncrt)
        print("%-44s %10s %10s %8s" % ("", "this", "baseline", "ratio"))
        print("%-44s %10.2f %10.2f %7.2fx" % ("recording (throttle off)", on_a, on_b, on_a / on_b))
        print("%-44s %10.2f %10.2f %7.2fx" % ("name throttled (each's default rule)", thr_a, thr_b, thr_a / thr_b))


def py_bench(a, tmp):
    n = 200000 if not a.quick else 20000
    script = os.path.join(tmp, "pybench.py")
    with open(script, "w") as f:
        f.write(PY_BENCH)
    out = run(ncrun(["--throttle", "off"], a.ncrt, [PY, script, str(n)], os.path.join(tmp, "py"))).stdout
    res = dict((l.split("\t")[0], float(l.split("\t")[1])) for l in out.strip().splitlines())
    base = res["contextlib.nullcontext"]
    print("\n## Python: one `with` enter/exit (ns), collector on, one process")
    print("%-34s %10s %10s" % ("", "ns", "vs null"))
    for k, v in res.items():
        print("%-34s %10.1f %9.2fx" % (k, v, v / base))
    if "torch.profiler.record_function" in res:
        print("record_function / ncrt.range = %.1fx" % (res["torch.profiler.record_function"] /
                                                     res["ncrt.range (contract line)"]))


def write_bench(a, tmp):
    n = 10000000 if not a.quick else 1000000
    exe = os.path.join(a.bin, "bench_write10m")
    out = os.path.join(tmp, "w")
    cmd = ["/usr/bin/time", "-f", "maxrss_kb %M"] + ncrun(["--throttle", "off"], a.ncrt, [exe, str(n)], out)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    t_end = time.monotonic()
    rec = float(p.stdout.split("recorded_at")[1].split()[0])
    rss = int(p.stderr.split("maxrss_kb")[1].split()[0])
    f = glob.glob(os.path.join(out, "*.trace.json.gz"))[0]
    size = os.path.getsize(f)
    # CLOCK_MONOTONIC is shared by this process and the child
    print("\n## Trace writing: %d ranges -> .json.gz at exit" % n)
    print("recording (push/pop, incl. start-up): %.2f s" % (rec - t0))
    print("writing at exit (incl. process exit): %.2f s (%.0f ns/range)" % (t_end - rec, (t_end - rec) / n * 1e9))
    print("peak RSS of the process: %.0f MiB (%.1f bytes/range)" % (rss / 1024, rss * 1024 / n))
    print("trace file: %.1f MiB (%.1f bytes/range)" % (size / 2**20, size / n))


def cpu_of(cmd):
    """CPU seconds (user + system) of cmd and everything it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def read_cost(nctrace, path):
    """nctrace summary of path: CPU seconds and peak RSS (MiB), streamed."""
    p = subprocess.run(["/usr/bin/time", "-f", "cpu %U %S rss %M", nctrace, "summary", path], capture_output=True,
                       text=True, check=True)
    f = p.stderr.split("cpu ")[-1].split()
    return float(f[0]) + float(f[1]), int(f[3]) / 1024


def format_bench(a, tmp):
    """Everything a range costs under ncrun --throttle off, for each trace
    format: recording, spilling, converting, writing, the finalizer
    included (ncrun's CPU and its children's), the program's own loop
    taken out (the same binary with no collector). Interleaved rounds.
    Then what reading each trace back costs (nctrace summary)."""
    n = a.ranges or (10000000 if not a.quick else 1000000)
    exe = os.path.join(a.bin, "bench_write10m")
    nctrace = os.path.join(os.path.dirname(os.path.abspath(a.ncrt)), "bin", "nctrace")
    rows = {"no collector": [], "json": [], "perfetto": []}
    size, read = {}, {"json": [], "perfetto": []}
    for r in range(a.rounds):
        rows["no collector"].append(cpu_of([exe, str(n)]))
        for fmt in ("json", "perfetto"):
            out = os.path.join(tmp, "f-%s-%d" % (fmt, r))
            rows[fmt].append(cpu_of(ncrun(["--throttle", "off", "--trace-format", fmt, "--no-summary",
                                           "--disk-budget", "off"], a.ncrt, [exe, str(n)], out)))
            f = [x for x in glob.glob(os.path.join(out, "*")) if x.endswith((".json.gz", ".pftrace"))][0]
            size[fmt] = os.path.getsize(f)
            if os.path.exists(nctrace):
                read[fmt].append(read_cost(nctrace, f))
            shutil.rmtree(out)
    base = statistics.median(rows["no collector"])
    print("\n## Everything a range costs, by trace format: %d ranges, --throttle off, %d rounds" % (n, a.rounds))
    print("| | CPU s (median) | best | per range, loop taken out | bytes per range | ÷ json |")
    print("|---|---:|---:|---:|---:|---:|")
    per = {}
    for k, v in rows.items():
        med = statistics.median(v)
        per[k] = (med - base) / n * 1e6
        b = "%.1f" % (size[k] / n) if k in size else ""
        ratio = "%.2f×" % (per[k] / per["json"]) if k != "no collector" else ""
        print("| %s | %.2f | %.2f | %s | %s | %s |" % (
            k, med, min(v), "%.3f µs" % per[k] if k != "no collector" else "", b, ratio))
    if read["json"]:
        print("\nnctrace summary of the trace (streamed), median CPU s and peak RSS:")
        print("| format | CPU s | per event | peak RSS MiB | ÷ json |")
        print("|---|---:|---:|---:|---:|")
        cj = statistics.median(x[0] for x in read["json"])
        for fmt in ("json", "perfetto"):
            c = statistics.median(x[0] for x in read[fmt])
            m = max(x[1] for x in read[fmt])
            print("| %s | %.2f | %.3f µs | %.1f | %.2f× |" % (fmt, c, c / n * 1e6, m, c / cj))


TORCH_WRITE = r'''
import os, sys, time
sys.path.insert(0, sys.argv[1])
import torch
import _ncrt_torch_export as X
n_iter, rounds, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
x = torch.ones(8, 8)
p = torch.profiler.profile(record_shapes=True)
p.start()
X.skip_parse(p)
for i in range(n_iter):
    y = x @ x + x
p.stop()
n = len(p.profiler.kineto_results.events())
print("events", n, "fast_writer", X.fast_writer() is not None)
for r in range(rounds):
    for tag in ("python", "cxx"):
        opt = {"record_shapes": True, "with_stack": False, "mem": False, "rank": 0, "t0_ns": 0,
               "metadata": {}, "fast": tag == "cxx"}
        t0 = time.process_time()
        X.write_converted(p, os.path.join(out, tag + ".json.gz"), "w", 1, opt)
        print(tag, time.process_time() - t0)
'''


def torch_write_bench(a, tmp):
    tb = os.path.join(a.ncrt, "python", "torch_backend")
    if subprocess.run([PY, "-c", "import torch, sys; sys.exit(torch.autograd.kineto_available())"],
                      capture_output=True).returncode:
        print("\n## torch backend writer: skipped (no torch without Kineto for %s)" % PY)
        return
    n_iter = 20000 if not a.quick else 4000
    p = subprocess.run([PY, "-c", TORCH_WRITE, tb, str(n_iter), str(a.rounds), tmp], capture_output=True, text=True)
    if p.returncode:
        print("\n## torch backend writer: failed\n" + p.stderr[-2000:])
        return
    lines = [ln.split() for ln in p.stdout.splitlines()]
    n = int(lines[0][1])
    times = {"python": [], "cxx": []}
    for ln in lines[1:]:
        times[ln[0]].append(float(ln[1]))
    # libncrt's own writer, per range, for the baseline the issue names
    exe = os.path.join(a.bin, "bench_write10m")
    out = os.path.join(tmp, "w")
    m = 1000000
    t0 = time.monotonic()
    q = subprocess.run(["/usr/bin/time", "-f", "cpu_s %U %S"] + ncrun(["--throttle", "off"], a.ncrt, [exe, str(m)], out),
                       capture_output=True, text=True, check=True)
    t_end = time.monotonic()
    rec = float(q.stdout.split("recorded_at")[1].split()[0])
    ncrt_us = (t_end - rec) / m * 1e6
    print("\n## torch backend writer (torch %s without Kineto): %d events, CPU s, %d rounds (best, median)"
          % (subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                            text=True).stdout.strip(), n, a.rounds))
    print("| writer | best s | median s | us/event | / libncrt's writer |")
    print("|---|---:|---:|---:|---:|")
    for tag, label in (("python", "Python path (8 binding calls + a format per event)"),
                       ("cxx", "C++ writer (ncrt_torch_events)" if lines[0][3] == "True" else "C++ writer: NOT LOADED")):
        v = sorted(times[tag])
        us = v[0] / n * 1e6
        print("| %s | %.2f | %.2f | %.2f | %.2fx |" % (label, v[0], v[len(v) // 2], us, us / ncrt_us))
    print("| libncrt's writer at exit (%d ranges, wall) | | | %.2f | 1.00x |" % (m, ncrt_us))
    v1, v2 = sorted(times["python"]), sorted(times["cxx"])
    print("Python path / C++ writer: %.1fx (best), %.1fx (median)" % (v1[0] / v2[0], v1[len(v1) // 2] / v2[len(v2) // 2]))


WRAP = r'''
import subprocess, sys, time
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(p.stdout.strip())
print("child_end_ns", time.monotonic_ns())
sys.exit(p.returncode)
'''


def exit_bench(a, tmp):
    """The exit of a run that recorded faster than the flusher converts:
    from the program's last line (end_ns, printed as main returns) to the
    process's end (a wrapper under ncrun reaps it), and ncrun's total (the
    finalizer included: the trace is complete when ncrun returns)."""
    n = 10000000 if not a.quick else 2000000
    exe = os.path.abspath(os.path.join(a.bin, "bench_exit10m"))
    wrap = os.path.join(tmp, "wrap.py")
    with open(wrap, "w") as f:
        f.write(WRAP)
    builds = ([("old", a.baseline_ncrt)] if a.baseline_ncrt else []) + [("new", a.ncrt)]
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.load)]
    res = {k: [] for k, _ in builds}
    try:
        for r in range(a.rounds):
            for k, d in builds:
                out = os.path.join(tmp, "exit-%s-%d" % (k, r))
                t0 = time.monotonic()
                p = run(ncrun([], d, [PY, wrap, exe, str(n)], out))
                total = time.monotonic() - t0
                end = int(p.stdout.split("end_ns")[1].split()[0])
                child = int(p.stdout.split("child_end_ns")[1].split()[0])
                size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(out, "*.trace.json.gz")))
                res[k].append(((child - end) / 1e9, total, size))
                shutil.rmtree(out)
    finally:
        for q in load:
            q.kill()
    med = lambda v: sorted(v)[len(v) // 2]
    print("\n## Exit: %d ranges over 1000 names, default throttle, %d busy loop%s beside, median of %d"
          % (n, a.load, "" if a.load == 1 else "s", a.rounds))
    print("%-6s %28s %16s %12s" % ("build", "exit (last line -> end), s", "ncrun total, s", "trace, MiB"))
    for k, _ in builds:
        v = res[k]
        print("%-6s %28.2f %16.2f %12.1f" % (k, med([x[0] for x in v]), med([x[1] for x in v]),
                                            med([x[2] for x in v]) / 2**20))
    if len(builds) == 2:
        o, nw = med([x[0] for x in res["old"]]), med([x[0] for x in res["new"]])
        print("exit: new / old = %.3fx" % (nw / o))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ncrt", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--baseline-ncrt", help="another build's ncrt folder (libncrt.so, ncrun): C figures side by side")
    ap.add_argument("--only", choices=["c", "python", "write", "torch", "exit", "format"])
    ap.add_argument("--rounds", type=int, default=3, help="exit, format: interleaved rounds")
    ap.add_argument("--ranges", type=int, default=0, help="format: ranges per run (default 10^7)")
    ap.add_argument("--load", type=int, default=0, help="exit: busy loops beside it")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.only in (None, "c"):
            c_bench(a, tmp)
        if a.only in (None, "python"):
            py_bench(a, tmp)
        if a.only in (None, "write"):
            write_bench(a, tmp)
        if a.only in (None, "torch"):
            torch_write_bench(a, tmp)
        if a.only in (None, "exit"):
            exit_bench(a, tmp)
        if a.only in (None, "format"):
            format_bench(a, tmp)


if __name__ == "__main__":
    sys.exit(main())
