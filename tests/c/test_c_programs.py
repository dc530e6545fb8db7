#!/usr/bin/env python3
"""Run test: C, C++ and CUDA programs built from the instrumented tree behave
exactly like the originals (same stdout, same exit status), and the ranges
close on every path out (early return, break/continue, goto, exceptions).

A small NVTX injection library (nvtx_counter.c, tests only) counts pushes per
range name and unmatched pops; the counts below are worked out by hand from
the programs in prog/. calc.c prints __FILE__ and __LINE__, which must not
change (the #line directive keeps them); it is also built with -DNCRT_DISABLE,
where no range may be recorded, and with clang -Wall -Wextra -Werror (clang
rejects a goto into the scope of a cleanup variable, which the rewriter must
never produce). The CUDA program is built with nvcc; with no GPU it takes its
error path the same way before and after instrumentation.
"""
import os
import shutil
import sys
import tempfile

from nccheck import HERE, INC, Failed, counter_lib, read_counts, sh

EXPECTED = {
    "calc.c": {
        "classify": 5,        # i = -2..2
        "loop": 1,
        "loop.body": 12,      # i = 0..11: 0, 3, 6, 9 continue; 11 breaks (total 48 > 40)
        "search": 2,          # one found via goto, one not
        "scan": 2,            # the loop; one run leaves it by goto
        "found": 1,           # opens after the label the goto jumps to
        "call.classify": 5,   # a loop body without braces gets its block
        "call.loop": 1,       # around the initializer of a variable used later
        "main": 1,
    },
    "shapes.cpp": {
        "geo::checked_area": 4,
        "geo::Square::Square": 4,     # two of them throw from inside the range
        "geo::Square::area": 2,
        "call.checked_area": 4,       # the call site inside try { }
        "main": 1,
    },
    "vec.cu": {  # no GPU: cudaMalloc fails, run() returns early
        "run": 1,
        "main": 1,
    },
}


def main():
    ncrewrite = sys.argv[1]
    failures = []
    skipped = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            lib = counter_lib(tmp)
        except Failed as e:
            print("FAILED: %s" % e)
            return 1
        out = os.path.join(tmp, "out")
        r = sh([ncrewrite, "-q", "--config", os.path.join(HERE, "prog/rules.yaml"), os.path.join(HERE, "prog"), out])
        if r.returncode:
            print(r.stderr)
            print("FAILED: ncrewrite exited", r.returncode)
            return 1
        gpu = shutil.which("nvidia-smi") and sh(["nvidia-smi", "-L"]).returncode == 0
        for name, counts in EXPECTED.items():
            ext = name.rsplit(".", 1)[1]
            if ext == "cu" and not shutil.which("nvcc"):
                skipped.append(name + " (no nvcc)")
                continue
            cc = {"c": ["gcc", "-std=gnu11"], "cpp": ["g++", "-std=gnu++17"], "cu": ["nvcc", "-std=c++17"]}[ext]
            exes = []
            for tag, d in (("orig", os.path.join(HERE, "prog")), ("inst", out)):
                exe = os.path.join(tmp, tag + "-" + name.replace(".", "_"))
                r = sh(cc + INC + [os.path.join(d, name), "-o", exe])
                if r.returncode:
                    failures.append("%s (%s) does not build:\n%s" % (name, tag, r.stderr[-2000:]))
                exes.append(exe)
            if failures:
                continue
            want = sh([exes[0]])
            log = os.path.join(tmp, name + ".log")
            env = dict(os.environ, NVTX_INJECTION64_PATH=lib, NVTX_COUNTER_LOG=log)
            got = sh([exes[1]], env=env)
            if (got.returncode, got.stdout) != (want.returncode, want.stdout):
                failures.append("%s: instrumented run differs: %r vs %r" % (name, (got.returncode, got.stdout),
                                                                             (want.returncode, want.stdout)))
                continue
            seen = read_counts(log)
            if seen.pop("unbalanced", None) != 0:
                failures.append("%s: a range was left open or popped twice" % name)
            if ext == "cu" and gpu:
                counts = dict(counts, **{"mem": 3, "launch": 1})  # the full path runs on a GPU
            if seen != counts:
                failures.append("%s: ranges %s, expected %s" % (name, seen, counts))
            if ext == "c" and shutil.which("clang"):
                # clang too, warnings as errors: it rejects a goto into the scope of a cleanup
                # variable, which the rewriter must never produce
                exe = os.path.join(tmp, "clang-" + name.replace(".", "_"))
                r = sh(["clang", "-std=gnu11", "-Wall", "-Wextra", "-Wshadow", "-Werror"] + INC +
                       [os.path.join(out, name), "-o", exe])
                got = sh([exe]) if not r.returncode else None
                if r.returncode or (got.returncode, got.stdout) != (want.returncode, want.stdout):
                    failures.append("%s: clang build or run differs:\n%s" % (name, r.stderr[-2000:]))
            if ext == "c":
                # -DNCRT_DISABLE: the macros vanish, the program is unchanged
                exe = os.path.join(tmp, "disabled-" + name.replace(".", "_"))
                r = sh(cc + INC + ["-DNCRT_DISABLE", os.path.join(out, name), "-o", exe])
                log2 = os.path.join(tmp, name + ".disabled.log")
                got = sh([exe], env=dict(env, NVTX_COUNTER_LOG=log2)) if not r.returncode else None
                if r.returncode or (got.returncode, got.stdout) != (want.returncode, want.stdout):
                    failures.append("%s: build or run with -DNCRT_DISABLE differs" % name)
                elif os.path.exists(log2) and open(log2).read() != "unbalanced 0\n":
                    failures.append("%s: ranges recorded with -DNCRT_DISABLE" % name)
    if skipped:
        print("skipped:", ", ".join(skipped))
    if failures:
        print("\n".join(failures))
        print("FAILED")
        return 1
    print("ok: %d programs behave the same instrumented; every range closed; counts as expected" %
          (len(EXPECTED) - len(skipped)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
