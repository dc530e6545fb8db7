#!/usr/bin/env python3
"""nctrace summary streamed (issue 33 item 6) against today's in-memory path
(NCTRACE_STREAM=0), on synthetic ncrt-layout traces of growing size from
gen_ncrt_trace (bench/trace/gen_ncrt_trace.c: 4 threads, steps of 757 nested
ranges, recursion, a throttled name, start/end ranges; ~114 bytes of JSON an
event). Per size: CPU seconds (user + system, all threads), wall seconds,
peak RSS (ru_maxrss from wait4) and events per CPU second for each path,
best of --rounds interleaved runs, then the ratios in-memory / streamed;
both outputs are checked identical. The last column relates the streamed
rate to `uftrace report`'s 2 M calls/s in about 5.5 MiB (the issue's
figure: uftrace is not run here). Sizes above --memory-max events run the
streamed path only (the in-memory one needs ~60 bytes an event of RAM).

Traces are written under --tmp (default /tmp) and deleted after each size.
Never a test: timings depend on the machine.

usage: bench_stream.py --build BUILD_DIR [--events 1e6,1e7] [--rounds 3]
                       [--memory-max 3e7] [--gzip] [--tmp DIR]"""
import argparse
import os
import subprocess
import sys
import time

UFTRACE_CALLS_PER_S = 2e6
UFTRACE_MIB = 5.5


def run(cmd, env, out_path):
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        sys.exit("failed: %s" % " ".join(cmd))
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "rss": ru.ru_maxrss / 1024.0}


def best(rs):
    return {k: min(r[k] for r in rs) for k in rs[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--events", default="1e6,1e7")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--memory-max", type=float, default=3e7)
    ap.add_argument("--gzip", action="store_true", help="traces as .json.gz (gzip -1), as ncrt writes them")
    ap.add_argument("--tmp", default="/tmp")
    a = ap.parse_args()
    nctrace = os.path.join(a.build, "bin", "nctrace")
    gen = os.path.join(a.build, "tests", "trace", "gen_ncrt_trace")
    for exe in (nctrace, gen):
        if not os.path.exists(exe):
            sys.exit("%s not built (cmake --build %s --target nctrace gen_ncrt_trace)" % (exe, a.build))
    rows = []
    for n in [int(float(x)) for x in a.events.split(",")]:
        path = os.path.join(a.tmp, "bench_stream_%d.json%s" % (n, ".gz" if a.gzip else ""))
        t0 = time.perf_counter()
        if a.gzip:
            with open(path, "wb") as f:
                g = subprocess.Popen([gen, "-", str(n), "--async", "100"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
                subprocess.run(["gzip", "-1"], stdin=g.stdout, stdout=f, check=True)
                g.wait()
        else:
            subprocess.run([gen, path, str(n), "--async", "100"], check=True, stderr=subprocess.DEVNULL)
        size = os.path.getsize(path)
        print("%d events: %.0f MB%s, generated in %.1f s" % (n, size / 1e6, " gzip" if a.gzip else "",
                                                             time.perf_counter() - t0), file=sys.stderr)
        both = n <= a.memory_max
        res = {"stream": [], "memory": []}
        outs = {k: os.path.join(a.tmp, "bench_stream_%s.json" % k) for k in res}
        for _ in range(a.rounds):
            for k in (("stream", "memory") if both else ("stream",)):
                env = dict(os.environ, NCTRACE_STREAM="1" if k == "stream" else "0")
                res[k].append(run([nctrace, "summary", "--format", "json", path], env, outs[k]))
        if both and open(outs["stream"], "rb").read() != open(outs["memory"], "rb").read():
            sys.exit("%d events: the streamed summary differs from the in-memory one" % n)
        for k in outs:
            if os.path.exists(outs[k]):
                os.unlink(outs[k])
        os.unlink(path)
        rows.append((n, size, best(res["stream"]), best(res["memory"]) if both else None))
    print("| events | trace | streamed CPU s | wall s | peak RSS MiB | events/CPU s | in-memory CPU s | wall s "
          "| peak RSS MiB | CPU ratio (mem ÷ stream) | RSS ratio (mem ÷ stream) | streamed ÷ uftrace rate |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, size, s, m in rows:
        rate = n / s["cpu"]
        mem = ("%.2f | %.2f | %.0f | %.2f | %.1f" % (m["cpu"], m["wall"], m["rss"], m["cpu"] / s["cpu"],
                                                    m["rss"] / s["rss"])) if m else "- | - | - | - | -"
        print("| %.0e | %.0f MB%s | %.2f | %.2f | %.1f | %.2f M | %s | %.2f |"
              % (n, size / 1e6, " gz" if a.gzip else "", s["cpu"], s["wall"], s["rss"], rate / 1e6, mem,
                 rate / UFTRACE_CALLS_PER_S))
    print("\nuftrace report (the issue's figure, not run here): %.0f M calls/s in %.1f MiB."
          % (UFTRACE_CALLS_PER_S / 1e6, UFTRACE_MIB))


if __name__ == "__main__":
    main()
