#!/usr/bin/env python3
"""No circles between files (issue 34): within each part, no file calls a
file that calls it back, directly or around a loop. Read from the objects:
each object file's global definitions (nm's T, D, B, R, C) and the symbols
it leaves undefined (U); an edge a -> b when a uses a symbol b defines; a
circle is a strongly connected set of two or more files.

Checked: the rewriter's parts (src/rewrite: base, rules, core, driver,
tools), the trace core (src/trace), ncbase, ncrun and libncrt (its writer
reads the collector through a view the collector hands it at set-up, so
the collector calls the writer and never the other way round: rt.h).

The detector is checked first on two objects made here that call each
other (it must find that circle), so a broken nm reading cannot pass.

    test_circles.py BUILD_DIR"""
import glob
import os
import subprocess
import sys
import tempfile


def read(objects):
    """({symbol: defining file}, {file: {undefined symbols}}) of archives
    or object files."""
    out = subprocess.run(["nm", "-A"] + list(objects), capture_output=True, text=True, check=True).stdout
    defs, undef = {}, {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        where, kind, sym = parts
        f = where.rstrip(":").split(":")
        f = f[-2] if len(f) >= 3 or (len(f) == 2 and not f[-1].endswith(".o")) else f[-1]
        f = os.path.basename(f)
        undef.setdefault(f, set())
        if kind == "U":
            undef[f].add(sym)
        elif kind in "TDBRCGSV":
            defs[sym] = f
    return defs, undef


def circles(objects):
    defs, undef = read(objects)
    g = {f: {defs[s] for s in us if s in defs and defs[s] != f} for f, us in undef.items()}
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def self_check():
    with tempfile.TemporaryDirectory() as d:
        for name, body in (("ping", "int pong(int); int ping(int n) { return n ? pong(n - 1) : 0; }"),
                           ("pong", "int ping(int); int pong(int n) { return n ? ping(n - 1) : 1; }"),
                           ("leaf", "int ping(int); int leaf(void) { return ping(3); }")):
            with open(os.path.join(d, name + ".c"), "w") as f:
                f.write(body + "\n")
            subprocess.run(["cc", "-c", "-o", os.path.join(d, name + ".c.o"), os.path.join(d, name + ".c")],
                           check=True)
        lib = os.path.join(d, "libx.a")
        subprocess.run(["ar", "rcs", lib] + glob.glob(os.path.join(d, "*.o")), check=True)
        got = circles([lib])
        if got != [["ping.c.o", "pong.c.o"]]:
            raise SystemExit("FAIL: the detector did not find ping <-> pong (found %s)" % got)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    b = sys.argv[1]
    self_check()
    parts = {"src/rewrite/" + p: [os.path.join(b, "src/rewrite/libncrw_%s.a" % p)]
             for p in ("base", "rules", "core", "driver", "tools")}
    parts["src/trace (core)"] = [os.path.join(b, "src/trace/libnctrace_core.a")]
    parts["src/common (ncbase)"] = [os.path.join(b, "src/common/libncbase.a")]
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def current(pattern, folder):
        """a build folder's objects whose source still exists (a file split
        or removed leaves its old object behind in an incremental build)"""
        return sorted(o for o in glob.glob(os.path.join(b, pattern))
                      if os.path.exists(os.path.join(src, folder, os.path.basename(o)[:-2])))

    parts["ncrun"] = current("src/runtime/CMakeFiles/ncrun.dir/ncrun/*.o", "src/runtime/ncrun")
    parts["libncrt"] = current("src/runtime/CMakeFiles/ncrt.dir/libncrt/*.o", "src/runtime/libncrt")
    fails = []
    for name, objs in parts.items():
        if not objs or not all(os.path.exists(o) for o in objs):
            fails.append("%s: no objects in %s" % (name, b))
            continue
        for c in circles(objs):
            fails.append("%s: %s call each other" % (name, " -> ".join(c + c[:1])))
    if fails:
        print("FAIL:\n  " + "\n  ".join(fails))
        return 1
    print("ok: no circles in %s" % ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
