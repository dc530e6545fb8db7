#!/usr/bin/env python3
"""Full trace of real C programs (issue 33): Lua 5.4 and jq 1.6, from
Debian's source packages, built -O2 as they are and instrumented with
`ncrewrite --full-trace`, timed side by side in interleaved rounds by the
CPU time (user + sys) of the child process; each figure is the median of
the rounds, printed as a ratio to the original's median, with the ratio
of the best rounds beside it (on a loaded machine the best is the least
disturbed).

    bench/bench_c_scale.py [--build build] [--rounds 5] [--ncrun]
                           [--include DIR] [--cache DIR] [--only lua,jq]
                           [--before BUILD:INCLUDE] [--peers]

  original                  gcc -O2, no ncrewrite
  instrumented, no collector  the same build of the shadow tree (markers
                            from --include's ncrt.h, default this tree's),
                            run directly: no NVTX tool is attached
  before: no collector      (--before OTHER/build:OTHER/src/runtime/include)
                            the same with another tree's ncrewrite and
                            ncrt.h, in the same rounds: before/after in one run
  under ncrun               (--ncrun) the instrumented program under ncrun
                            with its default throttle (slow: tens of times
                            the original)
  peers                     (--peers) what a user would pick instead, on
                            the original: uftrace record of a -pg build
                            (every call; and with -t 1us, its time
                            filter), perf record (sampling, 4 kHz), each
                            where installed (apt-get install uftrace
                            linux-perf)

The sources are fetched once with apt-get's own client into the cache
(default ~/.cache/ncrewrite-bench), without touching the system's apt
configuration: a private sources.list (`deb-src ... bookworm main`) and
lists directory. The original builds are cached there too; the shadow
trees are instrumented and built again on every run, so the figures are
those of the ncrewrite (--build) and ncrt.h (--include) given. To measure
another tree's markers: --build OTHER/build --include OTHER/src/runtime/include.

Workloads: Lua runs a binary-trees script (allocation, recursion, calls
through the VM); jq runs a filter over a generated JSON input of ~0.5 MB,
six times per sample (one run takes ~0.08 s).
Output of the instrumented programs is checked against the original's.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NVTX_INC = "/usr/local/cuda/include"

LUA_SCRIPT = r'''
local function bottom_up(d)
  if d == 0 then return {} end
  d = d - 1
  return { bottom_up(d), bottom_up(d) }
end
local function check(t)
  if t[1] then return 1 + check(t[1]) + check(t[2]) end
  return 1
end
local N = tonumber(arg and arg[1]) or 15
local maxd = math.max(6, N)
local long = bottom_up(maxd)
local out = {}
for d = 4, maxd, 2 do
  local iters = 1 << (maxd - d + 4)
  local c = 0
  for _ = 1, iters do c = c + check(bottom_up(d)) end
  out[#out + 1] = string.format("%d\t trees of depth %d\t check: %d", iters, d, c)
end
out[#out + 1] = string.format("long lived tree of depth %d\t check: %d", maxd, check(long))
print(table.concat(out, "\n"))
'''

JQ_FILTER = ('[.[] | select(.score > 20) | {id, name: (.name | ascii_upcase), '
             'total: ([.items[].qty * .items[].price] | add), tags: (.tags | sort | join(","))}] '
             '| group_by(.tags) | map({tags: .[0].tags, n: length, sum: (map(.total) | add)}) | sort_by(-.n)')

LUA_FILES = ["lapi", "lcode", "lctype", "ldebug", "ldo", "ldump", "lfunc", "lgc", "llex", "lmem", "lobject",
             "lopcodes", "lparser", "lstate", "lstring", "ltable", "ltm", "lundump", "lvm", "lzio", "lauxlib",
             "lbaselib", "lcorolib", "ldblib", "liolib", "lmathlib", "loadlib", "loslib", "lstrlib", "ltablib",
             "lutf8lib", "linit", "lua"]
LUA_FLAGS = ["-std=gnu99", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX"]
LUA_LIBS = ["-lm", "-ldl"]

JQ_FILES = ["builtin", "bytecode", "compile", "execute", "jq_test", "jv", "jv_alloc", "jv_aux", "jv_dtoa",
            "jv_file", "jv_parse", "jv_print", "jv_unicode", "linker", "locfile", "util", "lexer", "parser",
            "main"]
# what jq 1.6's configure finds on Debian 12 (enough for the filter; no oniguruma)
JQ_FLAGS = ["-DIEEE_8087", "-DHAVE_MEMMEM", "-DHAVE_ALLOCA_H", "-DHAVE_ALLOCA", "-DHAVE_PTHREAD_KEY_CREATE",
            "-DHAVE_PTHREAD_ONCE", "-DHAVE___THREAD", "-DHAVE_ISATTY", "-DHAVE_MKSTEMP", "-DHAVE_GETTIMEOFDAY",
            "-DHAVE_FREXP", "-DHAVE_MODF", "-DHAVE_GMTIME_R", "-DHAVE_TIMEGM", "-DHAVE_STRPTIME",
            "-DHAVE_STRFTIME", "-DHAVE_LOCALTIME_R", "-DHAVE_GMTIME", "-DHAVE_TM_TM_GMT_OFF"]
JQ_LIBS = ["-lm", "-lpthread"]


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout[-3000:], p.stderr[-3000:]))
    return p


def fetch(cache):
    """The orig tarballs of lua5.4 and jq, with apt-get's client and a private configuration."""
    src = os.path.join(cache, "src")
    want = {"lua": "lua5.4_*.orig.tar.gz", "jq": "jq_*.orig.tar.gz"}
    if all(glob.glob(os.path.join(src, w)) for w in want.values()):
        return {k: sorted(glob.glob(os.path.join(src, w)))[-1] for k, w in want.items()}
    apt = os.path.join(cache, "apt")
    os.makedirs(os.path.join(apt, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(apt, "sources.list.d"), exist_ok=True)
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(apt, "sources.list"), "w") as f:
        f.write("deb-src http://deb.debian.org/debian bookworm main\n")
    opts = ["-o", "Dir::Etc::SourceList=" + os.path.join(apt, "sources.list"),
            "-o", "Dir::Etc::SourceParts=" + os.path.join(apt, "sources.list.d"),
            "-o", "Dir::State::Lists=" + os.path.join(apt, "lists")]
    sh(["apt-get", "-q"] + opts + ["update"])
    sh(["apt-get", "-q"] + opts + ["source", "--download-only", "lua5.4", "jq"], cwd=src)
    return {k: sorted(glob.glob(os.path.join(src, w)))[-1] for k, w in want.items()}


def unpack(tarball, dest):
    """The tarball's one top directory, unpacked under dest (once)."""
    os.makedirs(dest, exist_ok=True)
    top = sh(["tar", "tzf", tarball]).stdout.split("\n", 1)[0].split("/")[0]
    d = os.path.join(dest, top)
    if not os.path.isdir(d):
        sh(["tar", "xzf", tarball, "-C", dest])
    return d


def build(srcdir, files, flags, libs, exe, extra, jobs=2):
    """gcc -O2 each file (in parallel), then link: the same for both trees."""
    objdir = exe + ".o.d"
    shutil.rmtree(objdir, ignore_errors=True)
    os.makedirs(objdir)
    def cc(f):
        o = os.path.join(objdir, f + ".o")
        sh(["gcc", "-O2", "-w"] + flags + extra + ["-c", os.path.join(srcdir, f + ".c"), "-o", o])
        return o
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        objs = list(ex.map(cc, files))
    sh(["gcc", "-o", exe] + objs + libs)
    shutil.rmtree(objdir, ignore_errors=True)


def jq_prepare(tree):
    """What jq's Makefile generates (version.h, builtin.inc), without autotools."""
    with open(os.path.join(tree, "src", "version.h"), "w") as f:
        f.write('#define JQ_VERSION "1.6"\n')
    with open(os.path.join(tree, "src", "builtin.jq")) as f:
        jqsrc = f.read().splitlines()
    with open(os.path.join(tree, "src", "builtin.inc"), "w") as f:
        for line in jqsrc:
            f.write('"%s\\n"\n' % line.replace("\\", "\\\\").replace('"', '\\"'))


def jq_input(path, size=500_000):
    rnd = random.Random(33)
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
    recs, n = [], 0
    import json
    while n < size:
        r = {"id": len(recs), "name": "".join(rnd.choice("abcdefghij") for _ in range(8)),
             "score": rnd.randint(0, 100), "tags": rnd.sample(words, 3),
             "items": [{"qty": rnd.randint(1, 9), "price": round(rnd.random() * 100, 2)} for _ in range(3)]}
        recs.append(r)
        n += len(json.dumps(r)) + 2
    with open(path, "w") as f:
        json.dump(recs, f, indent=1)


def cpu(cmd, stdin=None, capture=False):
    """CPU seconds (user + sys) of the child and its waited-for children, and its stdout."""
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    out = tempfile.TemporaryFile() if capture else subprocess.DEVNULL
    p = subprocess.Popen(cmd, stdin=fin, stdout=out, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    if stdin:
        fin.close()
    if status:
        sys.exit("failed (status %d): %s" % (status, " ".join(cmd)))
    text = None
    if capture:
        out.seek(0)
        text = out.read()
        out.close()
    return ru.ru_utime + ru.ru_stime, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--include", default=os.path.join(ROOT, "src/runtime/include"), help="where ncrt.h is")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/ncrewrite-bench"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ncrun", action="store_true", help="add the row under ncrun (default throttle)")
    ap.add_argument("--only", default="lua,jq")
    ap.add_argument("--keep", help="keep the instrumented trees and builds in this directory")
    ap.add_argument("--before", help="BUILD:INCLUDE of another tree, for a row of its instrumented programs")
    ap.add_argument("--peers", action="store_true", help="add uftrace's and perf's rows (where installed)")
    a = ap.parse_args()
    ncrewrite = os.path.join(a.build, "bin", "ncrewrite")
    ncrun = os.path.join(a.build, "bin", "ncrun")
    tars = fetch(a.cache)
    srcs = os.path.join(a.cache, "unpacked")
    orig = os.path.join(a.cache, "orig")
    os.makedirs(orig, exist_ok=True)
    work = a.keep or tempfile.mkdtemp(prefix="ncbench-cscale-")
    os.makedirs(work, exist_ok=True)
    progs = {}
    try:
        for name in a.only.split(","):
            tree = unpack(tars[name], srcs)
            if name == "lua":
                files, flags, libs, sub = LUA_FILES, LUA_FLAGS, LUA_LIBS, "src"
                script = os.path.join(work, "binary-trees.lua")
                with open(script, "w") as f:
                    f.write(LUA_SCRIPT)
                args, stdin, reps = [script, "15"], None, 1
            else:
                jq_prepare(tree)
                files, flags, libs, sub = JQ_FILES, JQ_FLAGS, JQ_LIBS, "src"
                stdin = os.path.join(work, "input.json")
                jq_input(stdin)
                args, reps = ["-c", JQ_FILTER], 6  # one run is ~0.08 s: a sample is 6 runs
            # the original, cached by its flags
            key = hashlib.sha1(repr((files, flags, libs)).encode()).hexdigest()[:12]
            exe0 = os.path.join(orig, "%s-%s" % (name, key))
            if not os.path.exists(exe0):
                build(os.path.join(tree, sub), files, flags, libs, exe0 + ".tmp", ["-I" + tree])
                os.rename(exe0 + ".tmp", exe0)
            # the shadow trees: the whole source tree, with SUB instrumented
            variants = [("exe1", ncrewrite, a.include)]
            if a.before:
                bb, bi = a.before.split(":")
                variants.append(("exe2", os.path.join(bb, "bin", "ncrewrite"), bi))
            progs[name] = dict(exe0=exe0, args=args, stdin=stdin, reps=reps)
            if a.peers and shutil.which("uftrace"):
                # uftrace traces a build compiled with -pg (its mcount hooks)
                key = hashlib.sha1(repr((files, flags + ["-pg"], libs)).encode()).hexdigest()[:12]
                exe_pg = os.path.join(orig, "%s-pg-%s" % (name, key))
                if not os.path.exists(exe_pg):
                    build(os.path.join(tree, sub), files, flags + ["-pg"], libs + ["-pg"], exe_pg + ".tmp",
                          ["-I" + tree])
                    os.rename(exe_pg + ".tmp", exe_pg)
                progs[name]["exe_pg"] = exe_pg
            for key, nc, inc in variants:
                shadow = os.path.join(work, name + "-" + key)
                shutil.rmtree(shadow, ignore_errors=True)
                shutil.copytree(tree, shadow, symlinks=True)
                out = os.path.join(work, name + "-" + key + "-out")
                shutil.rmtree(out, ignore_errors=True)
                p = sh([nc, "-q", "--full-trace", "--explain", os.path.join(tree, sub), out])
                with open(os.path.join(work, name + "-" + key + ".explain"), "w") as f:
                    f.write(p.stdout)
                shutil.rmtree(os.path.join(shadow, sub))
                shutil.copytree(out, os.path.join(shadow, sub), symlinks=True)
                if name == "jq":
                    jq_prepare(shadow)
                exe = os.path.join(work, name + "-instrumented-" + key)
                build(os.path.join(shadow, sub), files, flags, libs, exe,
                      ["-I" + shadow, "-I" + inc, "-isystem", NVTX_INC])
                progs[name][key] = exe
                if key == "exe1":
                    progs[name]["ranges"] = sum(1 for line in p.stdout.splitlines() if "full-trace range" in line)
                    progs[name]["left"] = sum(1 for line in p.stdout.splitlines() if "left out of full trace" in line)
                # same output
                o0 = cpu([exe0] + args, stdin, capture=True)[1]
                o1 = cpu([exe] + args, stdin, capture=True)[1]
                if o0 != o1:
                    sys.exit("%s: the instrumented program's output differs from the original's" % name)
        # (label, program, how it runs: None alone, else the tool it runs under)
        rows = [("original", "exe0", None), ("instrumented, no collector", "exe1", None)]
        if a.before:
            rows.append(("before: no collector", "exe2", None))
        if a.ncrun:
            rows.append(("under ncrun, default throttle", "exe1", "ncrun"))
            rows.append(("  the same, --trace-format perfetto", "exe1", "ncrun-pf"))
        if a.peers:
            if shutil.which("uftrace"):
                rows.append(("uftrace record (-pg build)", "exe_pg", "uftrace"))
                rows.append(("uftrace record -t 1us", "exe_pg", "uftrace-t"))
            else:
                print("uftrace not installed (apt-get install uftrace): its rows are left out")
            if shutil.which("perf") and subprocess.run(["perf", "record", "-q", "-o", os.devnull, "true"],
                                                       capture_output=True).returncode == 0:
                rows.append(("perf record (sampling)", "exe0", "perf"))
            else:
                print("perf record does not run here (linux-perf; perf_event_paranoid): its row is left out")
        samples = {(n, r[0]): [] for n in progs for r in rows}
        rundir = os.path.join(work, "runs")
        for _ in range(a.rounds):
            for n, p in progs.items():
                for label, exe, how in rows:
                    cmd = [p[exe]] + p["args"]
                    if how in ("ncrun", "ncrun-pf"):
                        fmt = ["--trace-format", "perfetto"] if how == "ncrun-pf" else []
                        cmd = [ncrun, "-q", "--run-dir", rundir] + fmt + ["--"] + cmd
                    elif how in ("uftrace", "uftrace-t"):
                        cmd = ["uftrace", "record", "-d", rundir] + (["-t", "1us"] if how == "uftrace-t" else []) + cmd
                    elif how == "perf":
                        cmd = ["perf", "record", "-q", "-o", os.path.join(work, "perf.data"), "--"] + cmd
                    total = 0.0
                    for _ in range(p["reps"]):
                        shutil.rmtree(rundir, ignore_errors=True)  # each run writes afresh
                        total += cpu(cmd, p["stdin"])[0]
                    samples[(n, label)].append(total)
        print("CPU time (user+sys), median of %d interleaved rounds as a ratio to the original's median (and the\n"
              "best round's ratio to the original's best, less disturbed by other work); load %.2f"
              % (a.rounds, os.getloadavg()[0]))
        print("ncrewrite: %s; ncrt.h: %s\n" % (ncrewrite, a.include))
        names = list(progs)
        print("%-32s" % "" + "".join("%26s" % ("Lua binary-trees" if n == "lua" else "jq filter (0.5 MB)")
                                     for n in names))
        for label, _, _ in rows:
            cells = []
            for n in names:
                m = statistics.median(samples[(n, label)])
                base = statistics.median(samples[(n, "original")])
                best = min(samples[(n, label)]) / min(samples[(n, "original")])
                cells.append("%.2f× (best %.2f×)" % (m / base, best) if label != "original"
                             else "1.00× (%.2f s)" % m)
            print("%-32s" % label + "".join("%26s" % c for c in cells))
        print("%-32s" % "full-trace ranges / left out" + "".join(
            "%26s" % ("%d / %d" % (progs[n]["ranges"], progs[n]["left"])) for n in names))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
