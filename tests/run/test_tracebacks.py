#!/usr/bin/env python3
"""A traceback through instrumented code reads as the original's (issue 31):
tracebacks/prog.py (a whole-function range on every function, ranges on
single statements) is instrumented and both copies run with an argument
that makes int() raise. The frames in prog.py must have the same lines,
and the same text but for the range a line may start with (`with
__ncrt__.range("total:L19"): values = load(items)`: a range over one
statement is written on its line). co_firstlineno is the original's for
every function with room for its range's line (a one-statement body, a
blank line under the docstring) and one less for those without (total
and Report.run: no docstring, no blank or comment line under a one-row
signature, so the range takes the blank line above the def; docs/rules.md,
"Locations in the shadow tree"). How many lines move over whole packages
is bench/bench_moved_lines.py's measure, not a test's.

    test_tracebacks.py NCREWRITE
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def frames(path):
    """(line, text) of each frame in prog.py of the traceback its run prints."""
    p = subprocess.run([sys.executable, "-c", """
import runpy, sys, traceback
sys.argv = ["prog.py", "1", "x"]
try:
    runpy.run_path(%r, run_name="__main__")
except ValueError:
    for f in traceback.extract_tb(sys.exc_info()[2]):
        if f.filename.endswith("prog.py"):
            print("%%d\\t%%s" %% (f.lineno, f.line))
""" % path], capture_output=True, text=True)
    if p.returncode:
        sys.exit("run of %s failed:\n%s" % (path, p.stderr))
    return [tuple(l.split("\t", 1)) for l in p.stdout.splitlines()]


FIRSTLINE = """
import importlib.util, sys
s = importlib.util.spec_from_file_location("prog", %r)
m = importlib.util.module_from_spec(s)
s.loader.exec_module(m)
for f in (m.parse, m.load, m.total, m.Report.run, m.Report.show):
    print(f.__qualname__, f.__code__.co_firstlineno)
"""


def firstlines(path):
    p = subprocess.run([sys.executable, "-c", FIRSTLINE % path], capture_output=True, text=True, check=True)
    return dict(l.split() for l in p.stdout.splitlines())


def main():
    nc = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(HERE, "tracebacks")
        out = os.path.join(d, "out")
        subprocess.run([nc, "-q", "--config", os.path.join(src, "rules.yaml"), src, out], check=True)
        shadow = open(os.path.join(out, "prog.py")).read()
        want, got = frames(os.path.join(src, "prog.py")), frames(os.path.join(out, "prog.py"))
        same = len(want) == len(got) and all(
            a[0] == b[0] and (a[1] == b[1] or re.fullmatch(r"with __ncrt__\.range\(\"[^\"]*\"\): " + re.escape(a[1]), b[1]))
            for a, b in zip(want, got))
        if len(want) < 6 or not same:
            print("original:", want, "\ninstrumented:", got, "\n" + shadow)
            return 1
        a, b = firstlines(os.path.join(src, "prog.py")), firstlines(os.path.join(out, "prog.py"))
        moved = {k: int(a[k]) - int(b[k]) for k in a if a[k] != b[k]}
        if moved != {"total": 1, "Report.run": 1}:
            print("co_firstlineno: original", a, "instrumented", b)
            return 1
        print("ok: %d frames, same lines and text; co_firstlineno kept but for total and Report.run" % len(want))
    return 0


if __name__ == "__main__":
    sys.exit(main())
