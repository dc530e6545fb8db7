#!/usr/bin/env python3
"""A benchmark that keeps us honest (issue 40, item 6): does the full trace
say what perf says? Lua 5.4 and jq 1.6 (Debian's sources, built -O2 as
bench_c_scale.py builds them, with its helpers) and Debian's networkx (pure
Python, run by pyenv's CPython 3.12), each run three ways:

  perf       the original under `perf record -F 999`: self samples per symbol
             (C: `perf report --no-children --sort dso,sym`; Python:
             `python3.12 -X perf` under `--call-graph dwarf`, each sample given
             to its innermost `py::qualname:file` frame) and, for Python,
             cProfile's tottime beside it
  trace      `ncrewrite --full-trace` (default settings) of the sources (for
             networkx: a copy of the package, into a shadow tree put first on
             the path), run under `ncrun -a cpu` (default throttle), read with
             `nctrace summary --format json`
  cost       CPU time (user + sys, os.wait4) of the original, of the
             instrumented build with no tool attached, and under ncrun, in
             interleaved rounds; medians, as ratios to the original's

    bench/bench_agree.py [--build build] [--only lua,jq,networkx] [--cache DIR]
                         [--keep DIR] [--rounds 3] [--quick]

Printed per program: Spearman's rank correlation of self (exclusive) time
over the functions in both; perf's top-15 symbols with their share of perf's
samples and of the trace's exclusive time (or "missing"), each marked as the
program's own code (defined in its sources: a defined text symbol of the
original binary, or a function of networkx) or outside it (libc, libm, the
kernel, ld.so, the interpreter, the standard library); the missing ones, own
vs outside; the exclusive total against the recorded (in-ranges) time; the
costs; and the goals of issue 40, met or not.

Names are unified before matching: C symbols lose gcc's clone suffixes
(`.isra.0`, `.part.0`, `.constprop.0`, `.cold`), several clones of one
function summed; `py::QUALNAME:FILE` becomes `MODULE.QUALNAME`, which is the
trace's range name, and cProfile's (file, line, name) is turned into the same
through the code objects of that file.
"""
import argparse
import collections
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_c_scale as cs  # noqa: E402  (fetch, unpack, build, jq_prepare, jq_input, cpu)

PY312 = os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python3.12")
NX_SRC = "/usr/lib/python3/dist-packages/networkx"

# word count, sort and gsub over generated text (appended to binary-trees)
LUA_WORDS = r'''
local W = tonumber(arg and arg[2]) or 200000
local syl = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu"}
local seed = 42
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n + 1
end
local parts = {}
for _ = 1, W do
  local w = {}
  for _ = 1, rnd(4) do w[#w + 1] = syl[rnd(#syl)] end
  local word = table.concat(w)
  if rnd(5) == 1 then word = word:upper() end
  parts[#parts + 1] = word .. (rnd(8) == 1 and ", " or " ")
end
local text = table.concat(parts)
text = text:gsub("%p", " "):lower()
local counts, words = {}, {}
for word in text:gmatch("%a+") do
  counts[word] = (counts[word] or 0) + 1
  words[#words + 1] = word
end
table.sort(words, function(a, b)
  if counts[a] ~= counts[b] then return counts[a] > counts[b] end
  return a < b
end)
local rev = text:gsub("(%a+)", function(w) return w:reverse() end)
print(#words, words[1], counts[words[1]], #rev, rev:sub(1, 40))
'''

NX_SCRIPT = r'''
import random
import sys
import networkx as nx
n, m, k, nsrc = map(int, sys.argv[1:5])
G = nx.gnm_random_graph(n, m, seed=1)
rnd = random.Random(1)
for u, v in G.edges():
    G[u][v]["weight"] = rnd.randint(1, 20)
bc = nx.betweenness_centrality(G, k=k, seed=1, weight="weight")
tot = 0
for s in range(0, n, max(1, n // nsrc)):
    tot += sum(nx.single_source_dijkstra_path_length(G, s).values())
cl = nx.clustering(G)
print(round(sum(bc.values()), 6), tot, round(sum(cl.values()), 6))
'''

# cProfile's stats as JSON, names made MODULE.QUALNAME (run by python3.12)
CPROFILE_DUMP = r'''
import json, marshal, os, pstats, sys
prof, base = sys.argv[1], sys.argv[2]
st = pstats.Stats(prof).stats
qual = {}
def walk(co, path):
    qual[(path, co.co_firstlineno, co.co_name)] = co.co_qualname
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            walk(c, path)
out = {}
for (path, line, name), v in st.items():
    if path.endswith(".py") and os.path.exists(path):
        if not any(k[0] == path for k in qual):
            try:
                walk(compile(open(path, "rb").read(), path, "exec"), path)
            except SyntaxError:
                pass
        name = qual.get((path, line, name), name)
        key = "%s|%s" % (name, path)
    else:
        key = "%s|%s" % (name, path)
    out[key] = out.get(key, 0.0) + v[2]
json.dump(out, sys.stdout)
'''

GOAL_COST = {"lua": 2.5, "jq": 4.0, "networkx": 1.2}
CLONE_SUFFIXES = (".isra", ".part", ".constprop", ".cold", ".lto_priv", ".localalias")
CRT = {"_start", "_init", "_fini", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux",
       "frame_dummy", "__libc_csu_init", "__libc_csu_fini"}


def spearman(xs, ys):
    """Spearman's rho: Pearson's r of the ranks, tied values given their average rank."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r, i = [0.0] * len(v), 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for t in range(i, j + 1):
                r[order[t]] = (i + j) / 2 + 1
            i = j + 1
        return r
    if len(xs) < 3:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx, vy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return cov / math.sqrt(vx * vy) if vx and vy else float("nan")


def run(cmd, stdin=None, out=None):
    """Run cmd (stdin from a file, stdout to a file or nowhere); fail loudly."""
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    fout = open(out, "wb") if out else subprocess.DEVNULL
    p = subprocess.run(cmd, stdin=fin, stdout=fout, stderr=subprocess.PIPE)
    for f in (fin, fout):
        if f is not subprocess.DEVNULL:
            f.close()
    if p.returncode:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode()[-3000:]))


def c_name(sym):
    for s in CLONE_SUFFIXES:
        i = sym.find(s)
        if i > 0:
            return sym[:i]
    return sym


def own_text_symbols(exe):
    """Text symbols the binary defines (its own sources: libc and libm are linked dynamically)."""
    out = subprocess.run(["nm", "--defined-only", exe], capture_output=True, text=True, check=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "Tt" and f[2] not in CRT}


def perf_c(exe, args, stdin, data):
    """perf's samples of the original under --call-graph dwarf: self samples per symbol ({name: [samples,
    own]}, perf report's --no-children --sort dso,sym), the same given to the innermost frame of the
    program's own code (what a range's exclusive time holds: libc, the kernel and inlined code count for
    the caller), and the total."""
    run(["perf", "record", "-q", "-F", "999", "--call-graph", "dwarf", "-o", data, "--", exe] + args, stdin)
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "-n", "--stdio",
                          "-q", "-g", "none", "-t", "|"], capture_output=True, text=True, check=True).stdout
    own_syms, base = own_text_symbols(exe), os.path.basename(exe)
    rows, total = {}, 0
    for line in rep.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) < 4 or not f[1].isdigit():
            continue
        n, dso, sym = int(f[1]), f[2], f[3][4:] if f[3][:1] == "[" else f[3]
        total += n
        own = dso == base and sym in own_syms
        name = c_name(sym) if own else "%s (%s)" % (sym, dso)
        rows.setdefault(name, [0, own])[0] += n
    chains = collections.Counter(tuple(c_name(sym) for sym, dso in frames if dso == base and sym in own_syms)
                                 for frames in perf_chains(data))
    return rows, total, chains


def perf_chains(data):
    """Each sample's call chain, innermost first: [(symbol, dso basename)] (perf script, no inlined frames)."""
    p = subprocess.Popen(["perf", "script", "-i", data, "--no-inline"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    frames = None
    for line in p.stdout:
        if line[:1] not in ("", "\t", " ", "\n"):  # a sample's header line
            if frames is not None:
                yield frames
            frames = []
        elif line.strip() and frames is not None:
            f = line.strip().split(" ", 1)  # ADDR SYM+0xOFF (DSO)
            if len(f) == 2:
                sym, _, dso = f[1].rpartition(" (")
                frames.append((sym.rsplit("+0x", 1)[0], os.path.basename(dso.rstrip(")"))))
    if frames is not None:
        yield frames
    p.wait()


def py_module(path, base):
    """MODULE of a .py file under base (the directory that holds the package), else None."""
    rel = os.path.relpath(path, base)
    if rel.startswith("..") or not rel.endswith(".py"):
        return None
    mod = rel[:-3].replace(os.sep, ".")
    return mod[:-len(".__init__")] if mod.endswith(".__init__") else mod


def py_name(qualname, path, base):
    """The trace's name for a Python function (ncrewrite's MODULE.QUALNAME; no `<locals>`)."""
    mod = py_module(path, base)
    q = qualname.replace(".<locals>", "")
    if mod is None or mod.split(".")[0] != "networkx":
        return "%s (%s)" % (q, os.path.basename(path)), False
    return "%s.%s" % (mod, q), True


def perf_python(script, args, data, base):
    """perf's samples of python3.12 -X perf, each to its innermost py:: frame."""
    run(["perf", "record", "-q", "-F", "999", "--call-graph", "dwarf", "-o", data, "--", PY312, "-X", "perf",
         script] + args)
    rows, total, chains = {}, 0, collections.Counter()
    for frames in perf_chains(data):
        total += 1
        names = [py_name(*sym[4:].split(":", 1), base) for sym, _ in frames
                 if sym.startswith("py::")]
        name, own = names[0] if names else ("[no Python frame]", False)
        rows.setdefault(name, [0, own])[0] += 1
        chains[tuple(n for n, o in names if o)] += 1
    return rows, total, chains


def cprofile(script, args, out, base):
    """cProfile's tottime per function of the original, in the trace's names."""
    run([PY312, "-m", "cProfile", "-o", out, script] + args)
    text = subprocess.run([PY312, "-c", CPROFILE_DUMP, out, base], capture_output=True, text=True,
                          check=True).stdout
    rows = {}
    for key, tt in json.loads(text).items():
        qual, _, path = key.rpartition("|")
        name = py_name(qual, path, base)[0] if path.endswith(".py") else qual
        rows[name] = rows.get(name, 0.0) + tt
    return rows


def trace_summary(nctrace, rundir):
    """{name: exclusive_us} of the trace's CPU ranges, and the in-ranges (covered) time."""
    text = subprocess.run([nctrace, "summary", "--format", "json", "--top", "0", rundir], capture_output=True, text=True,
                          check=True).stdout
    st = json.loads(text)["structured"]
    excl = {}
    for o in st["operations"]:
        excl[o["name"]] = excl.get(o["name"], 0.0) + o["exclusive_us"]
    covered = sum(r["coverage"]["covered_us"] for r in st["ranks"])
    measured = sum(1 for o in st["operations"] if o.get("measured"))
    return excl, covered, measured


def prepare_c(name, a, work, ncrewrite, quick):
    """The original (cached as bench_c_scale caches it) and the instrumented build; how each runs."""
    tars = cs.fetch(a.cache)
    tree = cs.unpack(tars[name], os.path.join(a.cache, "unpacked"))
    if name == "lua":
        files, flags, libs = cs.LUA_FILES, cs.LUA_FLAGS, cs.LUA_LIBS
        script = os.path.join(work, "lua-agree.lua")
        with open(script, "w") as f:
            f.write("do\n%s\nend\n%s" % (cs.LUA_SCRIPT, LUA_WORDS))
        args, stdin = [script, "11" if quick else "16", "20000" if quick else "200000"], None
    else:
        cs.jq_prepare(tree)
        files, flags, libs = cs.JQ_FILES, cs.JQ_FLAGS, cs.JQ_LIBS
        stdin = os.path.join(work, "jq-input.json")
        cs.jq_input(stdin, 300_000 if quick else 6_000_000)
        args = ["-c", cs.JQ_FILTER]
    key = hashlib.sha1(repr((files, flags, libs)).encode()).hexdigest()[:12]
    os.makedirs(os.path.join(a.cache, "orig"), exist_ok=True)
    exe0 = os.path.join(a.cache, "orig", "%s-%s" % (name, key))
    if not os.path.exists(exe0):
        cs.build(os.path.join(tree, "src"), files, flags, libs, exe0 + ".tmp", ["-I" + tree])
        os.rename(exe0 + ".tmp", exe0)
    shadow, out = os.path.join(work, name + "-shadow"), os.path.join(work, name + "-out")
    for d in (shadow, out):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(tree, shadow, symlinks=True)
    cs.sh([ncrewrite, "-q", "--full-trace", os.path.join(tree, "src"), out])
    shutil.rmtree(os.path.join(shadow, "src"))
    shutil.copytree(out, os.path.join(shadow, "src"), symlinks=True)
    if name == "jq":
        cs.jq_prepare(shadow)
    exe1 = os.path.join(work, name + "-instrumented")
    cs.build(os.path.join(shadow, "src"), files, flags, libs, exe1,
             ["-I" + shadow, "-I" + a.include, "-isystem", cs.NVTX_INC])
    return dict(orig=[exe0] + args, inst=[exe1] + args, stdin=stdin, shadow=None, exe0=exe0)


def prepare_nx(a, work, ncrewrite, quick):
    """A copy of networkx beside the script (the script's directory is first on sys.path), and its
    full-trace shadow tree with the same script beside it."""
    orig, shadow = os.path.join(work, "nx-orig"), os.path.join(work, "nx-shadow")
    for d in (orig, shadow):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(orig)
    shutil.copytree(NX_SRC, os.path.join(orig, "networkx"), ignore=shutil.ignore_patterns("__pycache__", "tests"))
    cs.sh([ncrewrite, "-q", "--full-trace", orig, shadow])
    for d in (orig, shadow):
        with open(os.path.join(d, "nx_agree.py"), "w") as f:
            f.write(NX_SCRIPT)
    args = ["300", "1200", "20", "5"] if quick else ["2000", "8000", "120", "40"]
    return dict(orig=[PY312, os.path.join(orig, "nx_agree.py")] + args,
                inst=[PY312, os.path.join(shadow, "nx_agree.py")] + args, stdin=None, shadow=shadow,
                base=orig, script=os.path.join(orig, "nx_agree.py"), args=args)


def pct(x):
    return "%.1f %%" % (100 * x)


def report(name, perf_rows, perf_total, chains, excl, covered, measured, costs, cprof):
    """Print one program's tables; return its goal lines. chains: perf's samples by their call chain's
    own frames (innermost first); each is given to its innermost frame that has a range in the trace,
    which is where the trace puts that time (libc, the kernel, inlined and range-less callees count
    for the range around them)."""
    tot_ex = sum(excl.values())
    attr, inside = {}, 0
    for chain, k in chains.items():
        n = next((x for x in chain if x in excl), None)
        if n is not None:
            attr[n] = attr.get(n, 0) + k
            inside += k
    print("\n### %s\n" % name)
    print("perf: %d samples; trace: %d names (%d throttled, measured), exclusive total %.3f s"
          % (perf_total, len(excl), measured, tot_ex / 1e6))
    common = [n for n, (s, own) in perf_rows.items() if own and n in excl]
    rho = spearman([perf_rows[n][0] for n in common], [excl[n] for n in common])
    big = [n for n in common if perf_rows[n][0] >= 0.005 * perf_total]
    rho_big = spearman([perf_rows[n][0] for n in big], [excl[n] for n in big])
    print("Spearman (perf self samples vs trace exclusive), functions in both: %.3f over %d; "
          "over those with >= 0.5 %% of perf's samples: %.3f over %d" % (rho, len(common), rho_big, len(big)))
    ac = sorted(attr)
    rho_attr = spearman([attr[n] for n in ac], [excl[n] for n in ac])
    print("perf's samples with a traced function on their stack: %s; given to the innermost one, "
          "Spearman vs trace exclusive: %.3f over %d" % (pct(inside / perf_total), rho_attr, len(ac)))
    if cprof is not None:
        cc = [n for n in common if n in cprof]
        print("Spearman, cProfile tottime vs trace exclusive: %.3f over %d; cProfile vs perf: %.3f over %d"
              % (spearman([cprof[n] for n in cc], [excl[n] for n in cc]), len(cc),
                 spearman([cprof[n] for n in cc], [perf_rows[n][0] for n in cc]), len(cc)))
    top = sorted(perf_rows.items(), key=lambda kv: -kv[1][0])[:15]
    print("\n| # | perf's top-15 symbol | code | perf share | trace share | difference | perf, to innermost traced frame |")
    print("|---:|---|---|---:|---:|---:|---:|")
    missing_own, missing_out, top5 = [], [], []
    for i, (n, (s, own)) in enumerate(top, 1):
        ps = s / perf_total
        if n in excl:
            ts = excl[n] / tot_ex
            cell, diff = pct(ts), "%+.1f" % (100 * (ts - ps))
        else:
            cell, diff = "missing", ""
            (missing_own if own else missing_out).append(n)
        at = pct(attr[n] / inside) if n in attr else "-"
        print("| %d | `%s` | %s | %s | %s | %s | %s |" % (i, n, "own" if own else "outside", pct(ps), cell, diff, at))
    for n, (s, own) in sorted(perf_rows.items(), key=lambda kv: -kv[1][0]):
        if own and len(top5) < 5:
            top5.append((n, s / perf_total, excl[n] / tot_ex if n in excl else None))
    print("\nmissing from the trace: own code %d %s; outside %d (%s)"
          % (len(missing_own), missing_own, len(missing_out), pct(sum(perf_rows[n][0] for n in missing_out)
                                                                  / perf_total) + " of perf's samples"))
    disp = tot_ex / covered if covered else float("nan")
    print("displayed exclusive total / recorded (in-ranges) time: %.3f s / %.3f s = %s"
          % (tot_ex / 1e6, covered / 1e6, pct(disp)))
    o, i_, r = (statistics.median(costs[k]) for k in ("orig", "inst", "ncrun"))
    print("CPU (median of %d): original %.2f s; instrumented, no tool %.2fx; under ncrun -a cpu %.2fx"
          % (len(costs["orig"]), o, i_ / o, r / o))
    far = [t for t in top5 if t[2] is None or abs(t[2] - t[1]) > 0.03]
    goals = [
        ("Spearman >= 0.9", "%.3f" % rho, rho >= 0.9),
        ("no own top-15 symbol missing", "%d missing" % len(missing_own), not missing_own),
        ("own top-5 within 3 points", ", ".join("%s %.1f/%s" % (n, 100 * ps, "-" if ts is None else "%.1f" % (100 * ts))
                                                  for n, ps, ts in top5), not far),
        ("the same, perf's samples given to the innermost traced frame (not the issue's measure)",
         ", ".join("%s %.1f/%s" % (n, 100 * attr.get(n, 0) / inside, "-" if ts is None else "%.1f" % (100 * ts))
                   for n, ps, ts in top5),
         all(ts is not None and abs(ts - attr.get(n, 0) / inside) <= 0.03 for n, ps, ts in top5)),
        ("exclusive total <= 102 %", pct(disp), disp <= 1.02),
        ("ncrun cost <= %.1fx" % GOAL_COST[name], "%.2fx" % (r / o), r / o <= GOAL_COST[name]),
    ]
    print("\n| goal | %s | met |\n|---|---|---|" % name)
    for g, v, ok in goals:
        print("| %s | %s | %s |" % (g, v, "yes" if ok else "**no**"))
    return goals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--include", default=os.path.join(ROOT, "src/runtime/include"), help="where ncrt.h is")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/ncrewrite-bench"))
    ap.add_argument("--only", default="lua,jq,networkx")
    ap.add_argument("--keep", help="keep the builds, shadow trees, perf data and traces in this directory")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds for the costs")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test; figures mean little)")
    a = ap.parse_args()
    bins = os.path.join(a.build, "bin")
    ncrewrite, ncrun, nctrace = (os.path.join(bins, b) for b in ("ncrewrite", "ncrun", "nctrace"))
    names = [n for n in a.only.split(",") if n]
    for n in names:
        if n not in GOAL_COST:
            sys.exit("--only: unknown program %r" % n)
    if subprocess.run(["perf", "record", "-q", "-o", os.devnull, "true"], capture_output=True).returncode:
        sys.exit("perf record does not run here (linux-perf; perf_event_paranoid)")
    if "networkx" in names and not (os.path.isdir(NX_SRC) and os.access(PY312, os.X_OK)):
        sys.exit("networkx needs %s (apt-get install python3-networkx) and %s" % (NX_SRC, PY312))
    work = a.keep or tempfile.mkdtemp(prefix="ncbench-agree-")
    os.makedirs(work, exist_ok=True)
    print("load %.2f at start" % os.getloadavg()[0], flush=True)
    try:
        progs = {}
        for n in names:
            progs[n] = prepare_nx(a, work, ncrewrite, a.quick) if n == "networkx" else \
                prepare_c(n, a, work, ncrewrite, a.quick)
            o0, o1 = (os.path.join(work, "%s.%s.stdout" % (n, k)) for k in ("orig", "inst"))
            run(progs[n]["orig"], progs[n]["stdin"], o0)
            run(progs[n]["inst"], progs[n]["stdin"], o1)
            with open(o0, "rb") as f0, open(o1, "rb") as f1:
                if f0.read() != f1.read():
                    sys.exit("%s: the instrumented program's output differs from the original's" % n)
        costs = {n: {"orig": [], "inst": [], "ncrun": []} for n in names}
        for rnd in range(a.rounds):
            for n, p in progs.items():
                rundir = os.path.join(work, "%s-run%d" % (n, rnd))
                shutil.rmtree(rundir, ignore_errors=True)
                tool = [ncrun, "-q", "--run-dir", rundir, "-a", "cpu"]
                if p["shadow"]:
                    tool += ["--shadow", p["shadow"]]
                for k, cmd in (("orig", p["orig"]), ("inst", p["inst"]), ("ncrun", tool + ["--"] + p["inst"])):
                    costs[n][k].append(cs.cpu(cmd, p["stdin"])[0])
            print("round %d done, load %.2f" % (rnd + 1, os.getloadavg()[0]), file=sys.stderr, flush=True)
        allgoals = {}
        print("# Agreement with perf: %s; rounds %d%s" % (",".join(names), a.rounds, ", --quick" if a.quick else ""))
        for n, p in progs.items():
            data = os.path.join(work, n + ".perf.data")
            cprof = None
            if n == "networkx":
                rows, total, chains = perf_python(p["script"], p["args"], data, p["base"])
                cprof = cprofile(p["script"], p["args"], os.path.join(work, "nx.cprofile"), p["base"])
            else:
                rows, total, chains = perf_c(p["exe0"], p["orig"][1:], p["stdin"], data)
            # the trace of the last round (the others were for the costs)
            excl, covered, measured = trace_summary(nctrace, os.path.join(work, "%s-run%d" % (n, a.rounds - 1)))
            allgoals[n] = report(n, rows, total, chains, excl, covered, measured, costs[n], cprof)
        print("\nload %.2f at end" % os.getloadavg()[0])
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
