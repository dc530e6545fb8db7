#!/usr/bin/env python3
"""`nctrace summary` streamed (src/trace/core/stream.h) against the
in-memory path (NCTRACE_STREAM=0), issue 33 item 6.

1. Same output: on synthetic ncrt-layout traces (bench/trace/gen_ncrt_trace.c:
   threads, recursion, depth gaps, zero-length ranges, whole-microsecond
   times, start/end ranges, throttled names, roots not recorded, events out
   of end order, no depth, parents with more children than the fold keeps
   apart), on real ncrt traces (a threaded, recursive Python program under
   ncrun with a name throttled; a throttled range holding recorded ones), and on every trace of
   the golden cases, `summary` writes byte-identical Markdown and JSON both
   ways. NCTRACE_STREAM_REPORT's note says which path ran: the shapes that
   must stream do, the ones that cannot fall back.
2. Memory: the peak RSS of a streamed summary of 3*10^5 and 3*10^6 events
   (fresh processes, ru_maxrss from wait4) grows by less than 16 MiB, while
   the in-memory path's grows by 100 MiB or more (48 bytes an event).

usage: test_stream.py NCTRACE GEN_NCRT_TRACE [NCRUN_DIR]"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []


def summary(nctrace, path, fmt, stream, extra=()):
    env = dict(os.environ, NCTRACE_STREAM="1" if stream else "0", NCTRACE_STREAM_REPORT="1")
    p = subprocess.run([nctrace, "summary", "--format", fmt] + list(extra) + [path], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    note = [l for l in p.stderr.decode(errors="replace").splitlines() if "summary streamed" in l or
            "summary read into memory" in l]
    return p.returncode, p.stdout, note[0] if note else ""


def same(nctrace, path, what, expect=None, extra=()):
    """Both paths alike; expect: 'stream', 'memory' or None (either)."""
    for fmt in ("md", "json"):
        rc_s, out_s, note = summary(nctrace, path, fmt, True, extra)
        rc_m, out_m, _ = summary(nctrace, path, fmt, False, extra)
        if (rc_s, out_s) != (rc_m, out_m):
            FAILS.append("%s (%s): streamed output differs from the in-memory one (rc %d/%d; %s)"
                         % (what, fmt, rc_s, rc_m, note))
            keep = os.path.join(tempfile.gettempdir(), "test_stream_" + what.replace(" ", "_"))
            shutil.copy(path, keep)
            print("kept %s" % keep)
        streamed = "summary streamed" in note
        if expect == "stream" and not streamed:
            FAILS.append("%s (%s): not streamed: %s" % (what, fmt, note))
        if expect == "memory" and streamed:
            FAILS.append("%s (%s): streamed, but the in-memory path was expected" % (what, fmt))
    return note


SHAPES = [
    # (options, expected path)
    ([], "stream"),
    (["--threads", "1"], "stream"),
    (["--random"], "stream"),
    (["--random", "--threads", "7"], "stream"),
    (["--random", "--coarse"], "stream"),
    (["--random", "--async", "40"], "stream"),
    (["--random", "--zero", "30"], None),
    (["--random", "--zero", "30", "--coarse"], None),
    (["--random", "--gaps", "20"], "stream"),
    (["--random", "--gaps", "20", "--coarse", "--zero", "20"], None),
    (["--random", "--orphans"], "stream"),
    (["--random", "--orphans", "--gaps", "10", "--async", "10"], "stream"),
    (["--random", "--wide", "100"], "stream"),
    (["--random", "--wide", "70", "--gaps", "40", "--threads", "2"], None),
    (["--random", "--unordered"], "memory"),
    (["--random", "--nodepth"], "memory"),
]


def differential(nctrace, gen, tmp):
    path = os.path.join(tmp, "t.json")
    streamed = 0
    for opts, expect in SHAPES:
        for seed in range(1, 6):
            subprocess.run([gen, path, "3000", "--seed", str(seed)] + opts, check=True, stderr=subprocess.DEVNULL)
            note = same(nctrace, path, "%s seed %d" % (" ".join(opts) or "bench", seed), expect,
                        ["--step", "train_step"])
            streamed += "summary streamed" in note
    # some of the mixed shapes must stream too, or the test proves little
    if streamed < 10 * 5 + 3:
        FAILS.append("only %d synthetic traces streamed" % streamed)
    # several files as one summary (ranks), and a run directory's worth
    paths = []
    for seed in (1, 2, 3):
        p = os.path.join(tmp, "rank%d.json" % seed)
        subprocess.run([gen, p, "2000", "--seed", str(seed), "--random"], check=True, stderr=subprocess.DEVNULL)
        paths.append(p)
    for fmt in ("md", "json"):
        a = subprocess.run([nctrace, "summary", "--format", fmt] + paths, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           env=dict(os.environ, NCTRACE_STREAM="1")).stdout
        b = subprocess.run([nctrace, "summary", "--format", fmt] + paths, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           env=dict(os.environ, NCTRACE_STREAM="0")).stdout
        if a != b:
            FAILS.append("three files (%s): streamed output differs" % fmt)
    print("differential: %d synthetic shapes x 5 seeds, %d streamed" % (len(SHAPES), streamed))


def tied_steps(nctrace, tmp):
    """Steps starting at the same time on two threads (and one nested in
    another at its start): their rows tie in the step table's order, which
    must still come out the same both ways."""
    ev = []
    for tid, durs in ((1, (50, 40)), (2, (70, 30)), (3, (50, 40))):
        t = 10
        for d in durs:
            ev.append((tid, "leaf", t + 1, 2, 2))
            ev.append((tid, "train_step", t, d - 5, 1))  # a step nested in a step, same start
            ev.append((tid, "train_step", t, d, 0))
            t += 100
    # libncrt writes blocks of a thread's events: interleave the threads
    ev.sort(key=lambda e: (e[2] + e[3], e[0]))
    lines = ['{"ph":"X","cat":"user_annotation","name":"%s","pid":1,"tid":%d,"ts":%d,"dur":%d,"depth":%d}'
             % (n, tid, ts, d, dp) for tid, n, ts, d, dp in ev]
    path = os.path.join(tmp, "tied.json")
    open(path, "w").write('{"traceEvents": [\n' + ",\n".join(lines) + "\n]}\n")
    same(nctrace, path, "tied steps", "stream", ["--step", "train_step"])


def golden(nctrace):
    n = 0
    for path in sorted(glob.glob(os.path.join(HERE, "cases", "*", "*.json*"))):
        same(nctrace, path, os.path.relpath(path, HERE))
        n += 1
    print("golden cases' traces: %d alike both ways" % n)


PROG = r'''
import threading, ncrt
def rec(n):
    with ncrt.range("rec"):
        if n:
            with ncrt.range("mid"):
                rec(n - 1)
def leaf():
    with ncrt.range("leaf"):
        pass
def work(k):
    for i in range(100):
        with ncrt.range("step"):
            rec(1 + i % 4)
            for j in range(20):
                leaf()
            with ncrt.range("tiny"):
                pass
ts = [threading.Thread(target=work, args=(k,)) for k in range(3)]
for t in ts: t.start()
work(9)
for t in ts: t.join()
'''


PROG_THROTTLED = r'''
import ncrt
def inner():
    with ncrt.range("inner"):
        pass
def outer(i):
    with ncrt.range("outer"):
        if i % 10 == 0:
            inner()
def other():
    with ncrt.range("other"):
        inner()
for s in range(300):
    with ncrt.range("step"):
        for i in range(20):
            outer(i)
        other()
'''


def real_trace(nctrace, ncrun_dir, tmp):
    ncrun = os.path.join(ncrun_dir, "ncrun")
    if not os.path.exists(ncrun):
        print("skipped the real trace: no ncrun")
        return
    prog = os.path.join(tmp, "prog.py")
    open(prog, "w").write(PROG)
    runs = os.path.join(tmp, "runs")
    p = subprocess.run([ncrun, "-o", runs, "--throttle", "1000", "--", sys.executable, prog],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    traces = glob.glob(os.path.join(runs, "*", "*.trace.json*"))
    if p.returncode or not traces:
        FAILS.append("ncrun failed (%d): %s" % (p.returncode, p.stderr.decode(errors="replace")[-2000:]))
        return
    same(nctrace, traces[0], "real ncrt trace", "stream")
    same(nctrace, os.path.dirname(traces[0]), "real ncrt run directory", "stream")
    # a throttled range with recorded ranges inside, beside a recorded one
    prog2 = os.path.join(tmp, "prog2.py")
    open(prog2, "w").write(PROG_THROTTLED)
    runs2 = os.path.join(tmp, "runs2")
    subprocess.run([ncrun, "-o", runs2, "--throttle", "1000", "--", sys.executable, prog2],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    traces = glob.glob(os.path.join(runs2, "*", "*.trace.json*"))
    if not traces:
        FAILS.append("ncrun made no trace of the throttled program")
        return
    same(nctrace, traces[0], "real ncrt trace, throttled parent", "stream")
    print("real ncrt traces: alike, streamed")


def peak_mib(cmd, env):
    with open(os.devnull, "wb") as out:
        p = subprocess.Popen(cmd, stdout=out, env=env)
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status):
        FAILS.append("failed: %s" % " ".join(cmd))
    return ru.ru_maxrss / 1024.0


def memory(nctrace, gen, tmp):
    small, big = os.path.join(tmp, "small.json"), os.path.join(tmp, "big.json")
    subprocess.run([gen, small, "300000"], check=True, stderr=subprocess.DEVNULL)
    subprocess.run([gen, big, "3000000"], check=True, stderr=subprocess.DEVNULL)
    rss = {}
    for stream in (True, False):
        env = dict(os.environ, NCTRACE_STREAM="1" if stream else "0")
        rss[stream] = [peak_mib([nctrace, "summary", "--format", "json", f], env) for f in (small, big)]
    os.unlink(big)
    gs, gm = rss[True][1] - rss[True][0], rss[False][1] - rss[False][0]
    print("peak RSS, 3e5 -> 3e6 events: streamed %.1f -> %.1f MiB (+%.1f), in memory %.1f -> %.1f MiB (+%.1f)"
          % (rss[True][0], rss[True][1], gs, rss[False][0], rss[False][1], gm))
    if gs >= 16:
        FAILS.append("the streamed summary's memory grew by %.1f MiB from 3e5 to 3e6 events (bound 16)" % gs)
    if gm < 100:
        FAILS.append("the in-memory path grew by only %.1f MiB: the test does not tell the paths apart" % gm)


def main():
    nctrace, gen = sys.argv[1], sys.argv[2]
    ncrun_dir = sys.argv[3] if len(sys.argv) > 3 else None
    tmp = tempfile.mkdtemp(prefix="nct_stream_")
    try:
        differential(nctrace, gen, tmp)
        tied_steps(nctrace, tmp)
        golden(nctrace)
        if ncrun_dir:
            real_trace(nctrace, ncrun_dir, tmp)
        memory(nctrace, gen, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("FAIL:\n  " + "\n  ".join(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
