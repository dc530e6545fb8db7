#!/usr/bin/env python3
"""Differential test on real interpreters (issue 40): Lua 5.4 and jq 1.6,
from Debian's source packages (fetched with apt-get's own client, as
bench/bench_c_scale.py does), instrumented with `ncrewrite --full-trace`
at its default settings, built -O2 and run beside the originals.

Checked, on both:
  - the instrumented program prints what the original prints;
  - functions whose body tree-sitter cannot parse but whose header and
    braces are certain get their range (Lua's luaV_execute);
  - under ncrun with no throttle, every range closes on every path out:
    returns, and Lua's errors, which leave the C stack by longjmp (ranges
    closed so are marked "longjmp"), nest as their depths say
    (check_nesting, the same check as tests/runtime's);
  - under the default throttle, `nctrace summary` streams (the depths give
    the nesting, however deep the pcall chain: they used to stop at 255)
    and the exclusive times add up to the time the ranges cover (every
    call counted once, throttled ones included).

Without network access to Debian's archive (apt-get source fails) the test
is skipped (77), saying so.

    test_lua_jq.py NCREWRITE NCRUN NCTRACE
"""
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench_c_scale as cs  # noqa: E402  (the sources, flags and builds bench_c_scale uses)

INC = ["-I" + os.path.join(ROOT, "src/runtime/include"), "-isystem", "/usr/local/cuda/include"]

# errors raised deep in a pcall chain (longjmp through the C stack), plus
# string and table work
LUA_REC = r'''
local function deep(n, fail)
  if n == 0 then
    if fail then error("boom") end
    return 0
  end
  local ok, v = pcall(deep, n - 1, fail)
  if ok then return v + 1 end
  return -1
end
local s = 0
local N = tonumber(arg[1]) or 20
for i = 1, N do
  s = s + deep(40, i % 3 == 0)
  local t = {}
  for k = 1, 30 do t[k] = tostring(k * i) .. "x" end
  table.sort(t)
  s = s + #table.concat(t, ",")
end
print(s)
'''

JQ_TRY = '[.[] | try (if .score > 50 then error("high") else .score end) catch "caught"] | length'


class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def run(cmd, stdin=None, env=None):
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        return subprocess.run(cmd, stdin=f, capture_output=True, env=env)


def events(run_dir):
    (path,) = [os.path.join(run_dir, f) for f in os.listdir(run_dir) if f.endswith(".trace.json.gz")]
    with gzip.open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def check_nesting(evs, what):
    """Per thread, the ranges nest by time exactly as their depths say."""
    by_tid = collections.defaultdict(list)
    for e in evs:
        by_tid[(e["pid"], e["tid"])].append(e)
    for tid, lst in by_tid.items():
        lst.sort(key=lambda e: (e["ts"], -e["dur"], e["depth"]))
        stack = []
        for e in lst:
            while stack and (e["ts"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-9 or
                             (e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-9 and
                              e["depth"] <= stack[-1]["depth"])):
                stack.pop()
            check(not stack or e["ts"] + e["dur"] <= stack[-1]["ts"] + stack[-1]["dur"] + 1e-3,
                  "%s: ranges overlap without nesting: %s in %s" % (what, e, stack[-1] if stack else None))
            check(e["depth"] == len(stack), "%s: depth %s recorded, %d seen: %s" % (what, e["depth"], len(stack), e))
            stack.append(e)


def summary_adds_up(nctrace, run_dir, what):
    env = dict(os.environ, NCTRACE_STREAM_REPORT="1")
    p = subprocess.run([nctrace, "summary", "--format", "json", "--top", "0", run_dir], capture_output=True,
                       text=True, env=env)
    check(p.returncode == 0, "%s: summary: %s" % (what, p.stderr))
    check("summary streamed" in p.stderr, "%s: the summary did not stream: %s" % (what, p.stderr.strip()))
    st = json.loads(p.stdout)["structured"]
    rows = st["operations"]
    total = sum(r["exclusive_us"] for r in rows)
    covered = sum(r["coverage"]["covered_us"] for r in st["ranks"])
    check(abs(total - covered) <= 0.02 * covered,
          "%s: exclusive times add up to %.1f us, the ranges cover %.1f us" % (what, total, covered))
    return {r["name"]: r for r in rows}


def program(name, tree, ncrewrite, work):
    """(original, instrumented) executables and the --explain text."""
    if name == "lua":
        files, flags, libs = cs.LUA_FILES, cs.LUA_FLAGS, cs.LUA_LIBS
    else:
        cs.jq_prepare(tree)
        files, flags, libs = cs.JQ_FILES, cs.JQ_FLAGS, cs.JQ_LIBS
    exe0 = os.path.join(work, name + "-orig")
    cs.build(os.path.join(tree, "src"), files, flags, libs, exe0, ["-I" + tree])
    shadow = os.path.join(work, name + "-shadow")
    shutil.copytree(tree, shadow, symlinks=True)
    out = os.path.join(work, name + "-out")
    p = subprocess.run([ncrewrite, "-q", "--full-trace", "--explain", os.path.join(tree, "src"), out],
                       capture_output=True, text=True)
    check(p.returncode == 0, "%s: ncrewrite: %s" % (name, p.stderr))
    shutil.rmtree(os.path.join(shadow, "src"))
    shutil.copytree(out, os.path.join(shadow, "src"), symlinks=True)
    if name == "jq":
        cs.jq_prepare(shadow)
    exe1 = os.path.join(work, name + "-instr")
    cs.build(os.path.join(shadow, "src"), files, flags, libs, exe1, ["-I" + shadow] + INC)
    return exe0, exe1, p.stdout, out


def main():
    ncrewrite, ncrun, nctrace = sys.argv[1:4]
    cache = os.environ.get("NCREWRITE_BENCH_CACHE", os.path.expanduser("~/.cache/ncrewrite-bench"))
    try:
        tars = cs.fetch(cache)
    except SystemExit as e:
        print("SKIPPED: the Lua and jq sources could not be fetched with apt-get source: %s" % str(e)[:300])
        return 77
    with tempfile.TemporaryDirectory() as work:
        try:
            # ---- Lua
            tree = cs.unpack(tars["lua"], os.path.join(cache, "unpacked"))
            exe0, exe1, explain, _ = program("lua", tree, ncrewrite, work)
            check("luaV_execute: full-trace range 'luaV_execute' (its body does not parse in places" in explain,
                  "luaV_execute has no range:\n%s" % "\n".join(l for l in explain.splitlines() if "luaV_execute" in l))
            script = os.path.join(work, "rec.lua")
            with open(script, "w") as f:
                f.write(LUA_REC)
            trees = os.path.join(work, "trees.lua")
            with open(trees, "w") as f:
                f.write(cs.LUA_SCRIPT)
            for args in ([script, "30"], [trees, "8"]):
                a, b = run([exe0] + args), run([exe1] + args)
                check(a.returncode == b.returncode == 0 and a.stdout == b.stdout,
                      "lua %s: the instrumented program differs: %r / %r" % (args, a.stdout[-200:], b.stdout[-200:]))
            d = os.path.join(work, "lua-all")
            p = run([ncrun, "-q", "--run-dir", d, "--throttle", "off", "--", exe1, script, "3"])
            check(p.returncode == 0, "lua under ncrun: %s" % p.stderr[-500:])
            evs = events(d)
            jumped = [e for e in evs if e.get("args", {}).get("longjmp")]
            check(jumped, "lua: no range closed by a longjmp (errors inside pcall should leave some)")
            check(max(e["depth"] for e in evs) > 255, "lua: the pcall chain is not deeper than 255")
            check_nesting(evs, "lua")
            d = os.path.join(work, "lua-default")
            p = run([ncrun, "-q", "--run-dir", d, "--", exe1, script, "300"])
            check(p.returncode == 0, "lua under ncrun: %s" % p.stderr[-500:])
            rows = summary_adds_up(nctrace, d, "lua")
            check("luaV_execute" in rows and rows["luaV_execute"]["exclusive_us"] > 0,
                  "lua: luaV_execute has no exclusive time: %s" % rows.get("luaV_execute"))
            # ---- jq
            tree = cs.unpack(tars["jq"], os.path.join(cache, "unpacked"))
            exe0, exe1, explain, _ = program("jq", tree, ncrewrite, work)
            data = os.path.join(work, "in.json")
            cs.jq_input(data, size=60_000)
            for flt in (cs.JQ_FILTER, JQ_TRY):
                a, b = run([exe0, "-c", flt], data), run([exe1, "-c", flt], data)
                check(a.returncode == b.returncode == 0 and a.stdout == b.stdout,
                      "jq %s: the instrumented program differs: %r / %r" % (flt, a.stdout[-200:], b.stdout[-200:]))
            d = os.path.join(work, "jq-all")
            p = run([ncrun, "-q", "--run-dir", d, "--throttle", "off", "--", exe1, "-c", JQ_TRY], data)
            check(p.returncode == 0, "jq under ncrun: %s" % p.stderr[-500:])
            check_nesting(events(d), "jq")
            d = os.path.join(work, "jq-default")
            p = run([ncrun, "-q", "--run-dir", d, "--", exe1, "-c", cs.JQ_FILTER], data)
            check(p.returncode == 0, "jq under ncrun: %s" % p.stderr[-500:])
            summary_adds_up(nctrace, d, "jq")
        except Failed as e:
            print("FAILED: %s" % e)
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
