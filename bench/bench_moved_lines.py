#!/usr/bin/env python3
"""How many lines the shadow tree moves (issue 31, item 3): every statement
of the original is matched with its copy in the shadow file (both parsed with
Python's ast, statements in document order; the `with` lines, the prelude and
context imports ncrewrite adds are left out of the shadow's list), and the
two line numbers compared. Reported per corpus: body statements moved (every
statement that is not a def or a class; docstrings left out, no traceback
points at them), `def` lines moved (FunctionDef.lineno: the `def` keyword's
line, what tracebacks and co_firstlineno-based tools show for a function)
and class lines moved. Also counted: the functions whose whole body is one
range and that have no free row for it (no blank or comment row between the
header and the first statement, a one-row signature, no docstring of several
rows that is not raw, more than one simple statement): a lower bound on
(def lines moved + body statements moved) for any layout that puts a
range's `with` inside the function (issue 31: why both goals cannot be met
at once).

Corpora: full traces of networkx 2.8 and sympy's core (the Debian packages
python3-networkx and python3-sympy), and tests/project/src after two drill
rounds, once from a full trace and once from four broad ranges (the
tutorial's way: the attention's and feed-forward's forward, train_step,
train_epoch): instrument, a synthetic trace over the manifest's ranges (each
range one call, a fixed pseudo-random duration per name), `drill --top 5
--min-share 0`, instrument, a new trace over the new manifest, drill again,
instrument; the figures are those of the last shadow tree.

With --before BIN the same corpora go through another ncrewrite build and
both are printed side by side (build the older commit elsewhere and pass its
binary).

    bench/bench_moved_lines.py [--ncrewrite build/bin/ncrewrite] [--before OLD_NCREWRITE]
"""
import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CORPORA = [
    ("networkx 2.8 (full trace)", "/usr/lib/python3/dist-packages/networkx"),
    ("sympy core (full trace)", "/usr/lib/python3/dist-packages/sympy/core"),
]
PROJECT = os.path.join(ROOT, "tests/project/src")


def ours(node):
    """Is this statement one ncrewrite added (a range's with, the prelude,
    a context import)?"""
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return "__ncrt" in ast.unparse(node.items[0].context_expr)
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id.startswith("__ncrt") for t in node.targets)
    if isinstance(node, ast.ImportFrom):
        return any((a.asname or "").startswith("__ncrt_ctx") for a in node.names)
    return False


def statements(tree, shadow):
    """(kind, line) of every statement in document order; kind is 'def',
    'class', 'doc' (a docstring) or 'stmt'."""
    out = []

    def block(body, owner_has_doc):
        for i, s in enumerate(body):
            if shadow and ours(s):
                if isinstance(s, (ast.With, ast.AsyncWith)):
                    block(s.body, False)
                continue
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append(("def", s.lineno))
            elif isinstance(s, ast.ClassDef):
                out.append(("class", s.lineno))
            elif (owner_has_doc and i == 0 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                  and isinstance(s.value.value, str)):
                out.append(("doc", s.lineno))
            else:
                out.append(("stmt", s.lineno))
            docs = isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for field in ("body", "orelse", "finalbody"):
                block(getattr(s, field, []) or [], docs and field == "body")
            for h in getattr(s, "handlers", []) or []:
                block(h.body, False)
            for c in getattr(s, "cases", []) or []:
                block(c.body, False)

    block(tree.body, True)
    return out


def functions(node):
    """Every def under node, in document order (ast.walk goes breadth first,
    and the shadow's ranges add levels)."""
    for c in ast.iter_child_nodes(node):
        if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield c
        yield from functions(c)


def has_doc(body):
    return (bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str))


def whole_range(f):
    """Does the shadow function f run its whole body under one range?"""
    body = f.body[1:] if has_doc(f.body) else f.body
    return (len(body) == 1 and isinstance(body[0], (ast.With, ast.AsyncWith))
            and "__ncrt" in ast.unparse(body[0].items[0].context_expr))


def no_free_row(f, rows):
    """Has the original function f no row a range over its whole body could
    take between its header and its first statement? Free rows are those the
    rewriter knows how to use: a blank or comment row there, a signature of
    several rows (joined), a docstring of several rows (its last line break
    folded into an escape; not a raw one), or a body of one simple statement
    (the range goes on that statement's row)."""
    doc = has_doc(f.body)
    body = f.body[1:] if doc else f.body
    if not body:
        return False
    if len(body) == 1 and not isinstance(body[0], (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
                                                   ast.AsyncWith, ast.Try, ast.FunctionDef, ast.ClassDef,
                                                   ast.AsyncFunctionDef)) \
            and not type(body[0]).__name__ in ("Match", "TryStar"):
        return False
    first = body[0]
    top = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
    above = top - 1                       # rows are 1-based; rows[above - 1] is the row above
    gap = 0
    while above >= 1 and (not rows[above - 1].strip() or rows[above - 1].lstrip().startswith("#")):
        gap += 1
        above -= 1
    if gap:
        return False
    if doc:
        d = f.body[0]
        raw = rows[d.lineno - 1][d.col_offset:d.col_offset + 4].lower().lstrip("bu").startswith("r")
        return (d.end_lineno == d.lineno or raw) and d.lineno == f.lineno + 1
    return above == f.lineno              # the header is one row: nothing to join


def compare(src, out):
    """Counts over every .py file of src that the shadow tree out rewrote."""
    n = {"stmt": [0, 0], "def": [0, 0], "class": [0, 0], "files": 0, "unmatched": 0, "forced": [0, 0]}
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            a = os.path.join(dirpath, f)
            b = os.path.join(out, os.path.relpath(a, src))
            if not os.path.exists(b):
                continue
            try:
                ta = ast.parse(open(a, "rb").read())
                tb = ast.parse(open(b, "rb").read())
            except (SyntaxError, ValueError):
                continue
            sa, sb = statements(ta, False), statements(tb, True)
            if [k for k, _ in sa] != [k for k, _ in sb]:
                n["unmatched"] += 1
                continue
            n["files"] += 1
            rows = open(a, "rb").read().decode("utf-8", "replace").splitlines()
            for fa, fb in zip(list(functions(ta)), list(functions(tb))):
                if whole_range(fb) and no_free_row(fa, rows):
                    n["forced"][0] += 1
                    first = (fa.body[1:] if has_doc(fa.body) else fa.body)[0]
                    sfirst = ((fb.body[1:] if has_doc(fb.body) else fb.body)[0]).body[0]
                    n["forced"][1] += fa.lineno == fb.lineno and first.lineno == sfirst.lineno
            for (k, la), (_, lb) in zip(sa, sb):
                if k == "doc":
                    continue
                n[k][0] += 1
                n[k][1] += la != lb
    return n


def fake_trace(path, out):
    """One call per range of out's manifest, its duration fixed by its name."""
    man = json.load(open(os.path.join(out, ".ncrewrite/manifest.json")))
    ev, ts = [], 0
    for f in man["files"]:
        for r in f.get("ranges", []):
            dur = 100 + int(hashlib.sha256(r["name"].encode()).hexdigest()[:6], 16) % 10000
            ev.append({"ph": "X", "cat": "user_annotation", "name": r["name"], "pid": 1, "tid": 1, "ts": ts,
                       "dur": dur, "args": {"file": os.path.join(out, f["path"]), "line": r["out_lines"][0]}})
            ts += dur + 10
    json.dump({"schemaVersion": 1, "traceEvents": ev}, open(path, "w"))


BROAD = """targets:
  model.attention:
    class_func_context_wrappings:
      MultiHeadAttention: {forward: {}}
  model.transformer:
    class_func_context_wrappings:
      FeedForward: {forward: {}}
  engine.loop:
    func_context_wrappings:
      train_step: {}
      train_epoch: {}
"""


def drilled(nc, d, start):
    """tests/project/src after two drill rounds from the rule file `start`;
    returns the last shadow tree."""
    os.makedirs(d)
    rules = os.path.join(d, "rules.yaml")
    with open(rules, "w") as f:
        f.write(start)
    out = os.path.join(d, "out")
    for rnd in range(3):
        subprocess.run([nc, "-q", "--config", rules, PROJECT, out], check=True)
        if rnd == 2:
            return out
        trace = os.path.join(d, "t%d.json" % rnd)
        fake_trace(trace, out)
        p = subprocess.run([nc, "drill", "--config", rules, "--src", PROJECT, "--trace", trace, "--top", "5",
                            "--min-share", "0"], capture_output=True, text=True)
        if p.returncode not in (0, 3):
            sys.exit("drill failed:\n" + p.stdout + p.stderr)


def measure(nc, d):
    res = []
    for name, src in CORPORA:
        if not os.path.isdir(src):
            print("skipped %s: %s not found (apt-get install python3-networkx python3-sympy)" % (name, src))
            continue
        out = os.path.join(d, os.path.basename(src))
        subprocess.run([nc, "-q", "--full-trace", src, out], check=True)
        res.append((name, compare(src, out)))
    res.append(("tests/project, full trace + two drill rounds",
                compare(PROJECT, drilled(nc, os.path.join(d, "drill"), "full_trace_mode: true\n"))))
    res.append(("tests/project, four functions + two drill rounds",
                compare(PROJECT, drilled(nc, os.path.join(d, "drill-broad"), BROAD))))
    return res


def pct(p):
    return "%d/%d (%.1f %%)" % (p[1], p[0], 100.0 * p[1] / p[0] if p[0] else 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncrewrite", default=os.path.join(ROOT, "build/bin/ncrewrite"))
    ap.add_argument("--before", help="another ncrewrite build, shown beside")
    a = ap.parse_args()
    runs = [("before", a.before)] if a.before else []
    runs.append(("now", a.ncrewrite))
    table = []
    for label, nc in runs:
        with tempfile.TemporaryDirectory() as d:
            table.append((label, measure(os.path.abspath(nc), d)))
    print("| corpus | build | files | body statements moved | def lines moved | class lines moved "
          "| functions with no free row |")
    print("|---|---|---|---|---|---|---|")
    for i, (name, _) in enumerate(table[0][1]):
        for label, res in table:
            n = res[i][1]
            print("| %s | %s | %d%s | %s | %s | %s | %d (%d moved nothing) |" % (name, label, n["files"],
                  " (%d unmatched)" % n["unmatched"] if n["unmatched"] else "", pct(n["stmt"]), pct(n["def"]),
                  pct(n["class"]), n["forced"][0], n["forced"][1]))
    print()
    print("A function with no free row needs a row for its range's `with` between its header and its first")
    print("statement, and the original has none there: any layout moves its def or its first statement.")
    print("So, per corpus, (def lines moved) + (body statements moved) >= (functions with no free row).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
