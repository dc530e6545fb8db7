#!/usr/bin/env python3
"""Summaries of many traces folded apart and merged (issue 41 item 6).

`nctrace summary` folds its traces one at a time on several threads and
merges the states; `summary --partial` writes a node's state to a file and
`summary PART...` merges those files. Every way must give the summary that
one fold over all the traces gives (NCTRACE_FOLD=whole), byte for byte, in
Markdown and JSON:
  - synthetic ncrt traces of four ranks (the benchmark's generator), shapes
    that stream and shapes that are read into memory, on 1, 2 and 3 threads;
  - the same split over two "nodes" (each its own run directory of the same
    name, as node-local directories are), their partial files combined, and
    a partial file of partial files (a rack of nodes);
  - real traces with GPU work (the multirank case: kernels, launches).
A partial file written by anyone else is reported with its line, never
crashes: cut short, bad numbers, names or traces it does not list, another
--step; and traces mixed with partial files are refused.

usage: test_partial.py NCTRACE GEN
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
    return cond


def run(nctrace, args, cwd, env=None):
    return subprocess.run([nctrace] + args, cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=300)


def summaries(nctrace, args, cwd, env=None):
    out = []
    for fmt in ("md", "json"):
        p = run(nctrace, ["summary", "--format", fmt, "--step", "train_step"] + args, cwd, env)
        check(p.returncode == 0, "summary %s (%s): rc %d: %s" % (args, env, p.returncode, p.stderr))
        out.append((p.stdout, p.stderr))
    return out


def as_trace(f):
    """the name a run directory lists: rank0.json -> rank0.trace.json"""
    b = os.path.basename(f)
    return b if ".trace." in b else b.replace(".json", ".trace.json")


def node_dirs(tmp, files, groups):
    """one/run with every file; node<k>/run with group k's: the same relative
    path everywhere, as on nodes that each keep a run directory"""
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "one", "run"))
    for f in files:
        shutil.copy(f, os.path.join(tmp, "one", "run", as_trace(f)))
    for k, g in enumerate(groups):
        d = os.path.join(tmp, "node%d" % k, "run")
        os.makedirs(d)
        for f in g:
            shutil.copy(f, os.path.join(d, as_trace(f)))


def same_everywhere(nctrace, tmp, files, groups, what):
    node_dirs(tmp, files, groups)
    one = os.path.join(tmp, "one")
    whole = summaries(nctrace, ["run"], one, {"NCTRACE_FOLD": "whole"})
    check("## " in whole[0][0], "%s: no summary" % what)
    for threads in ("1", "2", "3"):
        got = summaries(nctrace, ["run"], one, {"NCTRACE_THREADS": threads})
        check(got == whole, "%s: %s thread(s) differ from one fold" % (what, threads))
    parts = []
    for k in range(len(groups)):
        part = os.path.join(tmp, "node%d.part" % k)
        p = run(nctrace, ["summary", "--partial", "--step", "train_step", "run", "-o", part],
                os.path.join(tmp, "node%d" % k))
        check(p.returncode == 0 and os.path.exists(part) and os.path.getsize(part) > 0,
              "%s: --partial on node %d: rc %d: %s" % (what, k, p.returncode, p.stderr))
        parts.append(part)
    got = summaries(nctrace, parts, tmp)
    check([o for o, _ in got] == [o for o, _ in whole], "%s: the combined partials differ from one fold" % what)
    if len(parts) > 2:
        # a rack: nodes 1.. combined into one partial, then with node 0
        rack = os.path.join(tmp, "rack.part")
        p = run(nctrace, ["summary", "--partial", "--step", "train_step"] + parts[1:] + ["-o", rack], tmp)
        check(p.returncode == 0, "%s: partial of partials: %s" % (what, p.stderr))
        got = summaries(nctrace, [parts[0], rack], tmp)
        check([o for o, _ in got] == [o for o, _ in whole], "%s: a partial of partials differs" % what)
    return parts, whole


def hostile(nctrace, tmp, good):
    """Damaged or crafted partial files: an error with the file and line."""
    text = open(good).read()
    lines = text.splitlines(True)
    name_line = next(i for i, l in enumerate(lines) if l.startswith("n "))
    row_line = next(i for i, l in enumerate(lines) if l.startswith("r "))
    rk_line = next(i for i, l in enumerate(lines) if l.startswith("rk "))
    cases = {
        "cut": (text[:len(text) // 2], "cut short"),
        "no-end": ("".join(lines[:-1]), "before its \"end\""),
        "bad-number": ("".join(lines[:row_line] + ["r 1 4 x 1 1 0 1 1 0\n"] + lines[row_line + 1:]),
                       ":%d: error: a number was expected" % (row_line + 1)),
        "name-out-of-range": ("".join(lines[:row_line] + ["r 99999 4 1 1 1 0 1 1 0\n"] + lines[row_line + 1:]),
                              ":%d: error: a name not listed" % (row_line + 1)),
        "huge": ("".join(lines[:row_line] + ["r 1 4 99999999999999999999 1 1 0 1 1 0\n"] + lines[row_line + 1:]),
                 "out of range"),
        "twice": ("".join(lines[:name_line + 1] + [lines[name_line]] + lines[name_line + 1:]), "listed twice"),
        "unknown": ("".join(lines[:2] + ["zz 1\n"] + lines[2:]), ":3: error: a record of an unknown kind"),
        "rank-rows": ("".join(lines[:rk_line] + lines[rk_line + 1:]), "not one rank row per trace"),
        "trace-ref": ("".join(lines[:-1] + ["st 77 0 0 1 0\n", "end\n"]), "a step of a trace or name not listed"),
        "escape": (text.replace('n "', 'n "\\q', 1), "unknown escape"),
        "not-partial": ("nctrace-partial 2\n", None),
    }
    for name, (body, want) in cases.items():
        path = os.path.join(tmp, name + ".part")
        with open(path, "w") as f:
            f.write(body)
        p = run(nctrace, ["summary", "--step", "train_step"] + ([path, good] if want else [path]), tmp)
        check(p.returncode != 0 and p.returncode < 128, "%s: rc %d" % (name, p.returncode))
        if want:
            check(path + ":" in p.stderr and want in p.stderr, "%s: message %r" % (name, p.stderr))
    # another --step than the fold's
    p = run(nctrace, ["summary", "--step", "other", good], tmp)
    check(p.returncode == 1 and "folded with --step 'train_step', not 'other'" in p.stderr,
          "--step mismatch: %s" % p.stderr)
    # traces and partial files together
    p = run(nctrace, ["summary", "--step", "train_step", good, os.path.join(tmp, "one", "run")], tmp)
    check(p.returncode == 2 and "not both" in p.stderr, "mixed inputs: %d %s" % (p.returncode, p.stderr))


def main():
    nctrace, gen = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="nc-partial-")
    try:
        src = os.path.join(tmp, "src")
        os.makedirs(src)
        shapes = [["--random"], ["--random", "--async", "30"], ["--random", "--unordered"],
                  ["--random", "--gaps", "20", "--orphans"], ["--random", "--nodepth"], ["--random", "--threads", "2"]]
        files = []
        for r, shape in enumerate(shapes):
            f = os.path.join(src, "job-rank%d.pt.trace.json" % r)
            subprocess.run([gen, f, "3000", "--seed", str(r + 1), "--rank", str(r), str(len(shapes))] + shape,
                           check=True, stderr=subprocess.DEVNULL)
            files.append(f)
        # a trace whose name has no rank: a run directory lists it first, so
        # the combined partials must reorder the last node's traces
        f = os.path.join(src, "job-pid77.pt.trace.json")
        subprocess.run([gen, f, "2000", "--seed", "77", "--random", "--rank", "6", "7"], check=True,
                       stderr=subprocess.DEVNULL)
        files.append(f)
        parts, whole = same_everywhere(nctrace, os.path.join(tmp, "synthetic"), files,
                                       [files[:2], files[2:4], files[4:]], "synthetic ranks")
        check("7 process(es) in 7 rank(s)" in whole[0][0], "synthetic: not seven ranks")
        if os.path.exists(parts[0]):
            hostile(nctrace, os.path.join(tmp, "synthetic"), parts[0])
        mr = os.path.join(HERE, "cases", "multirank")
        gpu = [os.path.join(mr, "rank0.json"), os.path.join(mr, "rank1.json")]
        same_everywhere(nctrace, os.path.join(tmp, "gpu"), gpu, [gpu[:1], gpu[1:]], "multirank GPU traces")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in FAILS:
        print("FAIL", f)
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
