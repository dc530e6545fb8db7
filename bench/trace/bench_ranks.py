#!/usr/bin/env python3
"""nctrace summary of a many-rank job (issue 41 item 6): RANKS traces of
EVENTS events each (gen_ncrt_trace: ncrt's layout, ~114 bytes of JSON an
event, one rank's distributedInfo each), summarised

  whole     one fold over all the traces on one thread (NCTRACE_FOLD=whole:
            what `summary` did before this issue; the baseline)
  threads   the traces folded one at a time on every core, merged
  partial   the job split over NODES node-local run directories: `summary
            --partial` on each node (run one after another here: the figure
            a node would see is the slowest one), then `summary` of the
            partial files (the combine step)

Per way: wall seconds, CPU seconds (user + system, all threads), peak RSS
(ru_maxrss from wait4), then the ratios to `whole`; all outputs are checked
identical. Best of --rounds interleaved runs. Traces are written under --tmp
and deleted at the end. Never a test: timings depend on the machine.

usage: bench_ranks.py --build BUILD_DIR [--ranks 64] [--events 1e6]
                      [--nodes 8] [--rounds 2] [--tmp DIR]"""
import argparse
import os
import shutil
import subprocess
import sys
import time


def run(cmd, env, cwd, out_path):
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, env=env, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        sys.exit("failed: %s" % " ".join(cmd))
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "rss": ru.ru_maxrss / 1024.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--events", type=float, default=1e6)
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tmp", default="/tmp")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    nctrace = os.path.join(a.build, "bin", "nctrace")
    gen = os.path.join(a.build, "tests", "trace", "gen_ncrt_trace")
    root = os.path.join(a.tmp, "nc-bench-ranks")
    shutil.rmtree(root, ignore_errors=True)
    one = os.path.join(root, "one", "run")
    os.makedirs(one)
    per = (a.ranks + a.nodes - 1) // a.nodes
    nodes = []
    for k in range(a.nodes):
        d = os.path.join(root, "node%d" % k, "run")
        os.makedirs(d)
        nodes.append(d)
    total = 0
    for r in range(a.ranks):
        f = os.path.join(one, "job-rank%d.pt.trace.json" % r)
        subprocess.run([gen, f, str(int(a.events)), "--seed", str(r + 1), "--random", "--rank", str(r),
                        str(a.ranks)], check=True, stderr=subprocess.DEVNULL)
        total += os.path.getsize(f)
        os.link(f, os.path.join(nodes[r // per], os.path.basename(f)))
    print("%d ranks x %.0e events: %.2f GB of JSON; %d nodes of %d ranks; %d cores" %
          (a.ranks, a.events, total / 1e9, a.nodes, per, os.cpu_count()))
    env = dict(os.environ)
    best = {}
    outs = {}
    for rnd in range(a.rounds):
        for way in ("whole", "threads", "partial"):
            out = os.path.join(root, "%s.md" % way)
            if way == "partial":
                parts, node_runs = [], []
                for k, d in enumerate(nodes):
                    part = os.path.join(root, "node%d.part" % k)
                    node_runs.append(run([nctrace, "summary", "--partial", "run", "-o", part], env,
                                         os.path.dirname(d), os.devnull))
                    parts.append(part)
                comb = run([nctrace, "summary"] + parts, env, root, out)
                slow = max(node_runs, key=lambda x: x["wall"])
                r = {"wall": slow["wall"] + comb["wall"], "cpu": sum(x["cpu"] for x in node_runs) + comb["cpu"],
                     "rss": max(max(x["rss"] for x in node_runs), comb["rss"]),
                     "node_wall": slow["wall"], "comb_wall": comb["wall"], "comb_rss": comb["rss"],
                     "part_bytes": max(os.path.getsize(p) for p in parts)}
            else:
                e = dict(env, NCTRACE_FOLD="whole", NCTRACE_THREADS="1") if way == "whole" else env
                r = run([nctrace, "summary", "run"], e, os.path.dirname(one), out)
            outs[way] = open(out, "rb").read()
            if way not in best or r["wall"] < best[way]["wall"]:
                best[way] = r
        if not (outs["whole"] == outs["threads"] == outs["partial"]):
            sys.exit("the summaries differ")
    base = best["whole"]
    print("| way | wall s | CPU s | peak RSS MiB | wall / whole | RSS / whole | events per wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for way in ("whole", "threads", "partial"):
        r = best[way]
        print("| %s | %.2f | %.2f | %.0f | %.2f | %.2f | %.2e |" % (
            way, r["wall"], r["cpu"], r["rss"], r["wall"] / base["wall"], r["rss"] / base["rss"],
            a.ranks * a.events / r["wall"]))
    p = best["partial"]
    print("partial: slowest node %.2f s (%d ranks), combine %.3f s in %.0f MiB; a node's partial file %.1f KiB"
          % (p["node_wall"], per, p["comb_wall"], p["comb_rss"], p["part_bytes"] / 1024.0))
    print("outputs identical: yes")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
