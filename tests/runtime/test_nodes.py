#!/usr/bin/env python3
"""A training job over several nodes (issue 41), on one machine: each
simulated node is an ncrun in a pid namespace of its own (`unshare -p -f
--mount-proc`, as a container or another host is), all writing into one
run directory; collectives over gloo on CPU (torch).

    test_nodes.py CASE NCRUN_DIR NCTRACE

Exit 0 passed, 1 failed, 77 skipped (the reason printed: no torch with
gloo, or unshare not allowed here).
"""
import glob
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
PY = os.environ.get("NCRT_TEST_PYTHON", "/usr/bin/python3")
DDP = os.path.join(PROGS, "ddp_nodes.py")
LAUNCH = os.path.join(PROGS, "launch_ranks.py")
STEPS = 8
SKIP = 77


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def need_torch():
    r = subprocess.run([PY, "-c", "import torch.distributed as d; assert d.is_available() and d.is_gloo_available()"],
                       capture_output=True, text=True)
    if r.returncode:
        raise Skip("%s has no torch with gloo: %s" % (PY, (r.stderr.strip().splitlines() or ["?"])[-1]))


def need_unshare():
    r = subprocess.run(["unshare", "-p", "-f", "--mount-proc", "true"], capture_output=True, text=True)
    if r.returncode:
        raise Skip("unshare -p -f --mount-proc is not allowed here: %s" % r.stderr.strip())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def ranges(tr, name):
    return [e for e in tr["traceEvents"] if e.get("ph") == "X" and e.get("name") == name]


# the straggler's sleep per step in the tests that look for it, ms: large
# against what the machine's load does to the ranks' own compute
SLOW_MS = "250"


def run_nodes(ctx, d, nnodes, nproc, slow=-1, extra_env=None, own_ns=True, name="ddp"):
    """nnodes ncruns (each in its own pid namespace when own_ns) sharing
    run directory d, nproc ranks each; returns their (status, stderr)."""
    port = free_port()
    env = dict(os.environ, NCRT_TEST_SLOW_RANK=str(slow), NCRT_TEST_STEPS=str(STEPS), **(extra_env or {}))
    ps = []
    for n in range(nnodes):
        cmd = [os.path.join(ctx["ncrun"], "ncrun"), "--run-dir", d] + (["-n", name] if name else []) + [
               "--step", "train_step", "--", PY, LAUNCH, str(n), str(nnodes), str(nproc), str(port), "--", PY, DDP]
        if own_ns:
            cmd = ["unshare", "-p", "-f", "--mount-proc"] + cmd
        ps.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    out = []
    for p in ps:
        try:
            o, e = p.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for q in ps:
                q.kill()
            raise Fail("the job did not finish in 240 s")
        out.append((p.returncode, e))
    for rc, e in out:
        check(rc == 0, "ncrun exited %d:\n%s" % (rc, e))
    return out


def traces(d):
    return sorted(glob.glob(os.path.join(d, "*.pt.trace.json.gz")))


def check_job(d, nnodes, nproc, slow):
    """Every rank's trace complete, each rank's worker a helper of it, hosts
    told apart, nothing private left, env.json with each ncrun."""
    world = nnodes * nproc
    left = [f for f in os.listdir(d) if f.startswith(".")]
    check(not left, "private files left: %s" % left)
    mains, helpers = {}, {}
    for p in traces(d):
        tr = load(p)
        pr = tr["ncrt"]["process"]
        (mains if pr["is_rank"] else helpers).setdefault(pr["rank"], []).append((p, tr))
    check(sorted(mains) == list(range(world)), "rank traces: %s (files %s)" % (sorted(mains), os.listdir(d)))
    hosts = {}
    for r, lst in mains.items():
        check(len(lst) == 1, "rank %d has %d main traces" % (r, len(lst)))
        p, tr = lst[0]
        pr = tr["ncrt"]["process"]
        steps = ranges(tr, "train_step")
        check(len(steps) == STEPS, "%s: %d train_step ranges, not %d" % (p, len(steps), STEPS))
        check(len(ranges(tr, "slow_down")) == (STEPS if r == slow else 0), "%s: slow_down ranges" % p)
        check(tr["distributedInfo"] == {"backend": "gloo", "rank": r, "world_size": world},
              "%s: distributedInfo %s" % (p, tr["distributedInfo"]))
        h = pr["host"]
        check(h["node_rank"] == r // nproc and h["local_rank"] == r % nproc, "%s: host %s" % (p, h))
        check(h["name"] and h["pid_ns"] > 0 and len(h["id"]) == 12, "%s: host %s" % (p, h))
        c = pr["clock"]
        check(c["start"][0] > 0 and c["now"][1] >= c["start"][1], "%s: clock pairs %s" % (p, c))
        hosts.setdefault(r // nproc, set()).add(h["id"])
    # one id per node, a different one on each
    check(all(len(v) == 1 for v in hosts.values()), "host ids within a node differ: %s" % hosts)
    check(len({next(iter(v)) for v in hosts.values()}) == nnodes, "nodes share a host id: %s" % hosts)
    for r in range(world):
        lst = helpers.get(r, [])
        check(len(lst) == 1, "rank %d has %d helper traces (%s)" % (r, len(lst), [p for p, _ in lst]))
        p, tr = lst[0]
        check(tr["ncrt"]["process"]["role"] == "dataloader worker", "%s: role %s" % (p, tr["ncrt"]["process"]))
        check(len(ranges(tr, "collate")) >= 1, "%s: no collate range" % p)
        check(tr["ncrt"]["process"]["host"]["id"] in hosts[r // nproc], "%s: worker on another host" % p)
    with open(os.path.join(d, "env.json")) as f:
        env = json.load(f)
    inv = env.get("invocations", [])
    check(len(inv) == nnodes, "env.json has %d invocations, not %d" % (len(inv), nnodes))
    check(len({i["invocation"] for i in inv}) == nnodes and all(i["command"][-1] == DDP for i in inv),
          "env.json invocations: %s" % [(i.get("invocation"), i.get("command")) for i in inv])
    return mains


def nctrace(ctx, *args):
    r = subprocess.run([ctx["nctrace"]] + list(args), capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "nctrace %s: %d\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r


def check_merge(ctx, d, world, tmp):
    out = os.path.join(tmp, "m.json.gz")
    r = nctrace(ctx, "merge", d, "-o", out)
    check("missing or repeated" not in r.stderr, "merge warned: %s" % r.stderr)
    m = load(out)
    check(m["distributedInfo"]["world_size"] == world, "merged world_size %s" % m["distributedInfo"])
    rows = {e["pid"]: e["args"]["name"] for e in m["traceEvents"]
            if e.get("ph") == "M" and e["name"] == "process_name"}
    check(rows == {r: "rank %d" % r for r in range(world)}, "merged rows: %s" % rows)
    # every rank's row holds its own train_step ranges and its worker's collate
    for r in range(world):
        n = sum(1 for e in m["traceEvents"] if e.get("pid") == r and e.get("name") == "train_step")
        c = sum(1 for e in m["traceEvents"] if e.get("pid") == r and e.get("name") == "collate")
        check(n == STEPS and c >= 1, "merged rank %d: %d train_step, %d collate" % (r, n, c))


def check_straggler(ctx, paths, slow, world):
    r = nctrace(ctx, "summary", "--format", "json", *paths)
    js = json.loads(r.stdout)
    md = js["markdown"]
    titles = [b["title"] for b in js["structured"]["bottlenecks"]]
    check("Straggler: rank %d" % slow in titles, "no straggler rank %d among %s\n%s" % (slow, titles, md))
    check(not any(t.startswith("Slow rank") for t in titles), "a slow rank besides the straggler: %s" % titles)
    check("One range dominates: backward" not in titles, "backward dominates: %s" % titles)
    view = js["structured"]["rank_view"]
    check(view["ranks"] == list(range(world)), "rank view columns %s" % view["ranks"])
    names = {x["name"]: x["exclusive_us"] for x in view["names"]}
    check("slow_down" in names and "backward" in names, "rank view names %s" % list(names))
    check("## Ranks side by side" in md, "no per-rank view in the summary")
    b = [x for x in js["structured"]["bottlenecks"] if x["title"].startswith("Straggler")][0]
    # the wait: DDP's all-reduce in backward, or the barrier after it (on a
    # loaded machine either can hold more of it); the cause: slow_down
    check(("in backward" in b["evidence"] or "in barrier" in b["evidence"])
          and "spends ~" in b["evidence"] and "in slow_down" in b["evidence"], "evidence: %s" % b["evidence"])
    return js


def check_partial(ctx, d, tmp):
    """Item 6: the traces kept on their nodes (each node's own run directory,
    the same path on both), `summary --partial` on each, the two files
    combined: the summary of all the traces in one place, byte for byte,
    straggler and all."""
    nodes = [os.path.join(tmp, "node%d" % k) for k in (0, 1)]
    one = os.path.join(tmp, "one")
    for n in nodes + [one]:
        os.makedirs(os.path.join(n, "run"))
        shutil.copy(os.path.join(d, "env.json"), os.path.join(n, "run"))
    for p in traces(d):
        node = load(p)["ncrt"]["process"]["host"]["node_rank"]
        shutil.copy(p, os.path.join(nodes[node], "run"))
        shutil.copy(p, os.path.join(one, "run"))
    parts = []
    for k, n in enumerate(nodes):
        part = os.path.join(tmp, "node%d.part" % k)
        r = subprocess.run([ctx["nctrace"], "summary", "--partial", "--step", "train_step", "run", "-o", part],
                           cwd=n, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, "summary --partial on node %d: %s" % (k, r.stderr))
        parts.append(part)
    for fmt in ("md", "json"):
        a = subprocess.run([ctx["nctrace"], "summary", "--format", fmt, "--step", "train_step", "run"], cwd=one,
                           capture_output=True, text=True, timeout=120)
        b = subprocess.run([ctx["nctrace"], "summary", "--format", fmt, "--step", "train_step"] + parts, cwd=tmp,
                           capture_output=True, text=True, timeout=120)
        if a.stdout != b.stdout:
            for tag, x in (("all", a), ("combined", b)):
                with open(os.path.join(tempfile.gettempdir(), "nodes-partial-%s.%s" % (tag, fmt)), "w") as f:
                    f.write(x.stdout)
        check(a.returncode == 0 and a.stdout == b.stdout,
              "%s: the nodes' partials combined differ from the summary of all traces (kept in %s):\n%s\n%s"
              % (fmt, tempfile.gettempdir(), a.stderr, b.stderr))
    check("Straggler: rank 3" in a.stdout, "the combined summary does not name the straggler")


def case_shared_dir(ctx, tmp):
    """Two simulated nodes (pid namespaces: the same pids on both) share
    one run directory, run after run: every trace complete, no mixing."""
    need_unshare()
    for k in range(3):
        d = os.path.join(tmp, "run%d" % k)
        # the slow rank sleeps SLOW_MS: four ranks on a loaded 2-core machine
        # differ by up to ~90 ms a step in their own compute (measured at
        # load 9), which a 30 ms sleep does not dominate
        run_nodes(ctx, d, 2, 2, slow=3, extra_env={"NCRT_TEST_SLOW_MS": SLOW_MS})
        check_job(d, 2, 2, 3)
    check_merge(ctx, d, 4, tmp)
    check_straggler(ctx, [d], 3, 4)
    check_clocks(ctx, d, tmp, 2)
    check_partial(ctx, d, tmp)


def check_clocks(ctx, d, tmp, nproc):
    """Node 1's clock set 250 ms ahead (its traces' baseTimeNanoseconds, as
    its real-time clock would have made them): merge estimates the offset
    from the collectives' ends, corrects it to within 1 ms and says so;
    report says so too."""
    shifted = os.path.join(tmp, "shifted")
    os.makedirs(shifted)
    for p in traces(d):
        tr = load(p)
        if tr["ncrt"]["process"]["host"]["node_rank"] == 1:
            tr["baseTimeNanoseconds"] += 250000000
        with gzip.open(os.path.join(shifted, os.path.basename(p)), "wt") as f:
            json.dump(tr, f)
    out = os.path.join(tmp, "clocks.json.gz")
    r = nctrace(ctx, "merge", shifted, "-o", out)
    m = load(out)
    hosts = m["ncrt"]["clocks"]
    check(len(hosts) == 2 and hosts[0]["reference"] and hosts[1]["aligned"], "clocks: %s" % hosts)
    err = hosts[1]["offset_ns"] + 250000000
    check(abs(err) <= 1000000, "offset %d ns, 250 ms off by %d ns: %s" % (hosts[1]["offset_ns"], err, hosts[1]))
    check("is +250." in r.stderr or "is +249." in r.stderr, "merge did not say the offset: %s" % r.stderr)
    # the collectives' ends line up again in the merged timeline
    ends = {}
    for e in m["traceEvents"]:
        if e.get("ph") == "X" and e.get("name") == "barrier":
            ends.setdefault(e["pid"], []).append(e["ts"] + e["dur"])
    for v in ends.values():
        v.sort()
    diffs = sorted(b - a for a, b in zip(ends[0], ends[nproc]))
    check(abs(diffs[len(diffs) // 2]) <= 1000.0, "rank %d's barrier ends %s us after rank 0's" % (nproc, diffs))
    r = nctrace(ctx, "report", shifted, "-o", os.path.join(tmp, "r.html"))
    check("clocks:" in r.stderr and "corrected" in r.stderr, "report did not say the offset: %s" % r.stderr)


def case_one_node(ctx, tmp):
    """Two ranks on one node, rank 1 slow: merge numbers ranks with their
    workers, the straggler is named."""
    d = os.path.join(tmp, "run")
    run_nodes(ctx, d, 1, 2, slow=1, own_ns=False, extra_env={"NCRT_TEST_SLOW_MS": SLOW_MS})
    check_job(d, 1, 2, 1)
    check_merge(ctx, d, 2, tmp)
    check_straggler(ctx, [d], 1, 2)


def case_init_rank(ctx, tmp):
    """No rank variable: each rank passes its rank to init_process_group
    and destroys the group before exit; its worker is forked after init.
    Each rank's main process is that rank, its worker a helper of it, and
    the traces are named after the launcher's `--` target."""
    d = os.path.join(tmp, "run")
    run_nodes(ctx, d, 1, 2, own_ns=False, name=None, extra_env={"NCRT_TEST_RANK_ARG": "1"})
    got = {}
    for p in traces(d):
        pr = load(p)["ncrt"]["process"]
        got[os.path.basename(p)] = (pr["rank"], pr["is_rank"], pr["role"], pr["rank_from"])
    mains = {k: v for k, v in got.items() if v[1]}
    check(mains == {"ddp_nodes-rank0.pt.trace.json.gz": (0, True, "rank", "torch.distributed"),
                    "ddp_nodes-rank1.pt.trace.json.gz": (1, True, "rank", "torch.distributed")},
          "rank traces: %s" % got)
    helpers = sorted((v[0], v[2]) for v in got.values() if not v[1])
    check(helpers == [(0, "dataloader worker"), (1, "dataloader worker")], "helpers: %s" % got)
    check(all(k.startswith("ddp_nodes-") for k in got), "names: %s" % list(got))


def case_foreign_set(ctx, tmp):
    """The finalizer leaves another host's spill set alone (its pid means
    nothing here; the process may be alive) and says nothing of it."""
    d = os.path.join(tmp, "run")
    os.makedirs(d)
    other = os.path.join(d, ".ncrt-h000000000000-1")
    for sfx in (".info", ".raw", ".names"):
        with open(other + sfx, "w") as f:
            f.write("x\n")
    r = subprocess.run([os.path.join(ctx["ncrun"], "ncrun"), "--finalize", d], capture_output=True, text=True)
    for sfx in (".info", ".raw", ".names"):
        check(os.path.exists(other + sfx), "another host's %s was removed (%s)" % (sfx, r.stderr))
    check(not traces(d), "a trace was made of another host's set: %s" % os.listdir(d))


CASES = {
    "nodes-shared-dir": case_shared_dir,
    "nodes-one-node": case_one_node,
    "nodes-foreign-set": case_foreign_set,
    "nodes-init-rank": case_init_rank,
}
NEEDS_TORCH = {"nodes-shared-dir", "nodes-one-node", "nodes-init-rank"}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print("usage: test_nodes.py CASE NCRUN_DIR NCTRACE\ncases: " + " ".join(sorted(CASES)))
        return 2
    ctx = {"ncrun": sys.argv[2], "nctrace": sys.argv[3]}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if sys.argv[1] in NEEDS_TORCH:
                need_torch()
            CASES[sys.argv[1]](ctx, tmp)
        except Skip as e:
            print("SKIPPED: %s" % e)
            return SKIP
        except Fail as e:
            print("FAILED: %s" % e)
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
