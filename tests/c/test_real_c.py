#!/usr/bin/env python3
"""Differential test on a real C code base: the tree-sitter core library
(its pinned sources from .deps/) instrumented in full-trace mode — every
function gets an NVTX range — must build and behave exactly like the
original: a parser built on it prints the same syntax trees for a set of
Python files, and every range closes (counted by the test-only NVTX
injection).

    test_real_c.py NCREWRITE DEPS_DIR PYTHON_GRAMMAR_LIB
"""
import os
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INC = ["-I", os.path.join(ROOT, "src/runtime/include"), "-I", "/usr/local/cuda/include"]


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    ncrewrite, deps, grammar = sys.argv[1:4]
    core = os.path.join(deps, "tree-sitter-0.25.0/package/vendor/tree-sitter/lib")
    inputs = [os.path.join(sysconfig.get_paths()["stdlib"], d) for d in ("json", "email", "asyncio")]
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "rules.yaml")
        open(rules, "w").write('full_trace_mode: true\ntargets:\n  "**.[ch]": {}\n')
        inst = os.path.join(tmp, "src")
        r = sh([ncrewrite, "-q", "--config", rules, os.path.join(core, "src"), inst])
        if r.returncode:
            print(r.stderr)
            return 1
        nranges = sum(open(os.path.join(inst, f)).read().count("NCRT_RANGE(") for f in os.listdir(inst) if f.endswith(".c"))
        outs = []
        for tag, srcdir in (("orig", os.path.join(core, "src")), ("inst", inst)):
            exe = os.path.join(tmp, "tsdump-" + tag)
            r = sh(["gcc", "-std=gnu11", "-O1", "-I", os.path.join(core, "include"), "-I", srcdir] + INC +
                   [os.path.join(srcdir, "lib.c"), os.path.join(HERE, "tsdump.c"), grammar, "-o", exe])
            if r.returncode:
                print("FAILED: %s build:\n%s" % (tag, r.stderr[-3000:]))
                return 1
            outs.append(exe)
        lib = os.path.join(tmp, "libnvtx_counter.so")
        r = sh(["gcc", "-shared", "-fPIC"] + INC + [os.path.join(HERE, "nvtx_counter.c"), "-o", lib, "-lpthread"])
        if r.returncode:
            print(r.stderr)
            return 1
        want = sh([outs[0]] + inputs)
        log = os.path.join(tmp, "counts.txt")
        got = sh([outs[1]] + inputs, env=dict(os.environ, NVTX_INJECTION64_PATH=lib, NVTX_COUNTER_LOG=log))
        if (got.returncode, got.stdout) != (want.returncode, want.stdout) or not want.stdout:
            print("FAILED: the instrumented library parses differently")
            return 1
        counts = dict(line.rsplit(" ", 1) for line in open(log).read().splitlines())
        if counts.pop("unbalanced") != "0":
            print("FAILED: unbalanced ranges")
            return 1
        calls = sum(int(v) for v in counts.values())
        if len(counts) < 50:
            print("FAILED: only %d functions recorded ranges" % len(counts))
            return 1
    print("ok: tree-sitter core instrumented (%d ranges in the source) parses %d files identically; "
          "%d functions ran, %d ranges opened and closed" % (nranges, want.stdout.count("\n"), len(counts), calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
