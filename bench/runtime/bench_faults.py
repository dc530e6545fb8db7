#!/usr/bin/env python3
"""The collector on a whole job (issue 16), printed side by side with the
figures issue 16 measured before streaming (records kept in memory until
exit: 24 bytes per range, everything lost on a crash), as ratios.

  RSS     the program's peak-RSS growth while it records N ranges under
          ncrun (throttle off), for N = 10^6, 10^7, 5*10^7, vs 24 B x N
  exit    the time from the program's last range (main returns) to the end
          of ncrun, vs the run length: what the exit write costs; for a
          burst (all ranges at once) and for a job recording 10^6 ranges/s
          for 2, 10 and 40 s, with the records converted while it runs vs
          all at exit (NCRT_INCREMENTAL=off, the design before)
  faults  ranges kept in the trace per way of dying: SIGKILL, SIGSEGV,
          SIGTERM during the exit write, exit with the address space full
          (RLIMIT_AS), _exit(3) in a SIGTERM handler, vs what was recorded
          (the issue's "before": 0 kept on each)
  pair    ns per C push/pop pair: no tool vs libncrt recording (thread CPU
          time, best of 3)

    bench_faults.py --ncrt BUILD/ncrt [--quick]

The programs are tests/runtime/progs/longrun.c and bench/runtime/pushpop.c,
built here with gcc -O1 / -O2.
"""
import argparse
import gzip
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NVTX = next((d for d in ("/usr/local/cuda/include", "/usr/local/cuda/targets/x86_64-linux/include")
             if os.path.exists(os.path.join(d, "nvtx3"))), "/usr/include")
INC = ["-I", os.path.join(ROOT, "src/runtime/include"), "-I", NVTX]


def build(tmp):
    lr = os.path.join(tmp, "longrun")
    pp = os.path.join(tmp, "pushpop")
    subprocess.run(["gcc", "-std=gnu11", "-O1"] + INC + [os.path.join(ROOT, "tests/runtime/progs/longrun.c"),
                    "-o", lr, "-lpthread"], check=True)
    subprocess.run(["gcc", "-O2"] + INC + [os.path.join(ROOT, "bench/runtime/pushpop.c"), "-o", pp, "-ldl"],
                   check=True)
    return lr, pp


def count_in(path, name):
    """Ranges called name in a .json.gz trace, streamed."""
    pat = b'"name":"%s",' % name.encode()
    z = zlib.decompressobj(16 + 15)
    found, tail = 0, b""
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            data = tail + z.decompress(block)
            found += data.count(pat)
            tail = data[-len(pat):]
            found -= tail.count(pat)
    return found + tail.count(pat)


def ncrun(a, d, args, cmd, **kw):
    return subprocess.Popen([os.path.join(a.ncrt, "ncrun"), "-q", "--run-dir", d] + args + ["--"] + cmd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def trace_of(d):
    t = [f for f in os.listdir(d) if f.endswith(".trace.json.gz")]
    return os.path.join(d, t[0]) if len(t) == 1 else None


def rss_and_exit(a, lr, tmp):
    sizes = [10**6, 10**7, 5 * 10**7] if not a.quick else [10**5, 10**6]
    print("\n## RSS and exit time vs run length (ranges of one name, throttle off)")
    print("%12s %14s %16s %8s %12s %14s %12s" % ("ranges", "RSS growth", "kept in memory", "ratio",
                                                  "exit (s)", "exit ns/range", "trace MiB"))
    for n in sizes:
        d = os.path.join(tmp, "rss%d" % n)
        p = ncrun(a, d, ["--throttle", "off"], [lr, "rss", str(n)])
        out, err = p.communicate()
        growth_kb = int(out.split("rss_growth_kb")[1].split()[0])
        d2 = os.path.join(tmp, "exit%d" % n)
        p = ncrun(a, d2, ["--throttle", "off"], [lr, "timed", str(n)])
        line = p.stdout.readline()
        p.communicate()
        t_end = time.monotonic_ns()  # CLOCK_MONOTONIC, as the program's end_ns
        exit_s = (t_end - int(line.split()[1])) / 1e9
        tr = trace_of(d2)
        kept = count_in(tr, "r")
        old_kb = 24 * n / 1024
        print("%12d %11.1f MiB %12.1f MiB %7.3fx %12.2f %14.1f %12.1f%s" % (
            n, growth_kb / 1024, old_kb / 1024, growth_kb / old_kb, exit_s, exit_s / n * 1e9,
            os.path.getsize(tr) / 2**20, "" if kept == n else "  (only %d kept!)" % kept))


def exit_paced(a, lr, tmp):
    """A job recording 10^6 ranges/s for S seconds: the exit's cost with the
    records converted while it runs vs everything at exit (as before:
    NCRT_INCREMENTAL=off)."""
    runs = [(2, 2 * 10**6), (10, 10**7), (40, 4 * 10**7)] if not a.quick else [(1, 10**6), (3, 3 * 10**6)]
    print("\n## Exit time of a job recording 10^6 ranges/s (throttle off)")
    print("%8s %12s %18s %18s %8s" % ("run (s)", "ranges", "exit, converted", "exit, all at exit", "ratio"))
    for secs, n in runs:
        res = []
        for inc in ("on", "off"):
            d = os.path.join(tmp, "paced-%s-%d" % (inc, n))
            env = dict(os.environ, NCRT_INCREMENTAL=inc)
            p = ncrun(a, d, ["--throttle", "off"], [lr, "paced", str(n), str(secs)], env=env)
            line = p.stdout.readline()
            p.communicate()
            res.append((time.monotonic_ns() - int(line.split()[1])) / 1e9)
            kept = count_in(trace_of(d), "r")
            if kept != n:
                print("  (%s: only %d of %d kept!)" % (inc, kept, n))
        print("%8d %12d %16.2f s %16.2f s %7.3fx" % (secs, n, res[0], res[1], res[0] / res[1]))


def fault(a, lr, tmp, how):
    d = os.path.join(tmp, "fault-" + how)
    if how in ("SIGKILL", "SIGSEGV"):
        p = ncrun(a, d, [], [lr, "crash"], stdin=subprocess.PIPE)
        pid = int(p.stdout.readline().split()[1])
        info = os.path.join(d, ".ncrt-%d.info" % pid)
        while True:  # the flusher's snapshot holds the open range: all is on disk
            try:
                if "\nopen " in open(info).read():
                    break
            except FileNotFoundError:
                pass
            time.sleep(0.01)
        if how == "SIGKILL":
            os.kill(pid, signal.SIGKILL)
            p.communicate()
        else:
            p.communicate("go\n")
        want = {"done": 1000, "late.open": 1}
    elif how == "SIGTERM mid-write":
        n = 5 * 10**6
        for attempt in range(4):  # until the signal lands in the exit write
            d = os.path.join(tmp, "fault-term-%d" % attempt)
            p = ncrun(a, d, ["--throttle", "off"], [lr, "timed", str(n)])
            p.stdout.readline()  # main returned: the exit write runs now
            pids = [f[6:-5] for f in os.listdir(d) if f.startswith(".ncrt-") and f.endswith(".info")]
            if pids:
                try:
                    os.kill(int(pids[0]), signal.SIGTERM)
                except ProcessLookupError:
                    pass
            p.communicate()
            if p.returncode:
                break
            n *= 2
        want = {"r": n}
    elif how == "RLIMIT_AS":
        def cap():
            resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))
        p = ncrun(a, d, [], [lr, "oom"], preexec_fn=cap)
        out, _ = p.communicate()
        want = {"before": 100000, "alloc": int(out.split("blocks")[1].split()[0]) + 1}
    else:  # _exit in a SIGTERM handler
        p = ncrun(a, d, [], [lr, "term-exit"])
        p.communicate()
        want = {"before.term": 2000}
    tr = trace_of(d)
    if not tr:
        return want, {}, p.returncode
    t = json.load(gzip.open(tr))
    got = {}
    for e in t["traceEvents"]:
        if e.get("cat") == "user_annotation" and e.get("ph") == "X":
            got[e["name"]] = got.get(e["name"], 0) + 1
    return want, got, p.returncode


def faults(a, lr, tmp):
    print("\n## Ranges kept per way of dying (issue 16 measured 0 kept on each)")
    print("%-20s %8s %10s %10s %8s" % ("fault", "status", "recorded", "kept", "ratio"))
    for how in ("SIGKILL", "SIGSEGV", "SIGTERM mid-write", "RLIMIT_AS", "_exit in handler"):
        want, got, rc = fault(a, lr, tmp, how)
        w, g = sum(want.values()), sum(min(got.get(k, 0), v) for k, v in want.items())
        print("%-20s %8d %10d %10d %7.3fx" % (how, rc, w, g, g / w))


def pair(a, pp, tmp):
    def best(cmd, env=None, reps=3):
        return min(float(subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout.split()[1])
                   for _ in range(reps))
    n = 2000000 if not a.quick else 200000
    off = best([pp, str(n * 10)])
    env = dict(os.environ, NVTX_INJECTION64_PATH=os.path.join(a.ncrt, "libncrt.so"), NCRT_THROTTLE="off",
               NCRT_OUTPUT_DIR=tmp, NCRT_QUIET="1")
    on = best([pp, str(n)], env)
    print("\n## C push/pop pair (ns, thread CPU time, best of 3)")
    print("no tool %.2f, libncrt recording %.2f: %.1fx; target <= 30 ns: %s" % (
        off, on, on / off if off > 0 else float("nan"), "met" if on <= 30 else "NOT met"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncrt", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lr, pp = build(tmp)
        rss_and_exit(a, lr, tmp)
        exit_paced(a, lr, tmp)
        faults(a, lr, tmp)
        pair(a, pp, tmp)


if __name__ == "__main__":
    sys.exit(main())
