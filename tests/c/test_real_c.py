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
import sys
import sysconfig
import tempfile

from nccheck import HERE, INC, Failed, counter_lib, full_trace, run_pair, sh


def check(ncrewrite, deps, grammar, tmp):
    core = os.path.join(deps, "tree-sitter-0.25.0/package/vendor/tree-sitter/lib")
    inputs = [os.path.join(sysconfig.get_paths()["stdlib"], d) for d in ("json", "email", "asyncio")]
    inst = os.path.join(tmp, "src")
    full_trace(ncrewrite, os.path.join(core, "src"), inst, 'full_trace_mode: true\nfull_trace_inline: true\ntargets:\n  "**.[ch]": {}\n')
    nranges = sum(open(os.path.join(inst, f)).read().count("NCRT_RANGE(") for f in os.listdir(inst) if f.endswith(".c"))
    exes = []
    for tag, srcdir in (("orig", os.path.join(core, "src")), ("inst", inst)):
        exe = os.path.join(tmp, "tsdump-" + tag)
        r = sh(["gcc", "-std=gnu11", "-O1", "-I", os.path.join(core, "include"), "-I", srcdir] + INC +
               [os.path.join(srcdir, "lib.c"), os.path.join(HERE, "tsdump.c"), grammar, "-o", exe])
        if r.returncode:
            raise Failed("%s build:\n%s" % (tag, r.stderr[-3000:]))
        exes.append(exe)
    want, counts = run_pair(exes[0], exes[1], counter_lib(tmp), os.path.join(tmp, "counts.txt"), inputs,
                            "the instrumented parser")
    if len(counts) < 50:
        raise Failed("only %d functions recorded ranges" % len(counts))
    return "tree-sitter core instrumented (%d ranges in the source) parses %d files identically; " \
           "%d functions ran, %d ranges opened and closed" % (nranges, want.stdout.count("\n"), len(counts),
                                                              sum(counts.values()))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        try:
            print("ok: " + check(*sys.argv[1:4], tmp))
        except Failed as e:
            print("FAILED: %s" % e)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
