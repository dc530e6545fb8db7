#!/usr/bin/env python3
"""The NCRT_* environment names live in one place (issue 34):
src/runtime/include/ncrt_protocol.h's NCRT_ENV_* defines. No C file spells
one as a literal (they use the define); every literal NCRT_* name in the
Python sides (the ncrt module's torch backend, the ncrewrite package) is
one the header defines, so the two cannot drift apart; and every name the
header defines is documented in docs/runtime.md.

    test_env_names.py SOURCE_DIR"""
import glob
import os
import re
import sys


def main():
    root = sys.argv[1]
    header = os.path.join(root, "src/runtime/include/ncrt_protocol.h")
    defined = dict(re.findall(r'#define (NCRT_ENV_\w+) "(NCRT_\w+)"', open(header).read()))
    names = set(defined.values())
    fails = []
    if len(names) < 10:
        fails.append("only %d NCRT_ENV_* names read from %s" % (len(names), header))
    lit = re.compile(r'"(NCRT_[A-Z0-9_]+)"')
    c_files = [f for pat in ("src/**/*.c", "src/**/*.h", "python/src/*.c") for f in
               glob.glob(os.path.join(root, pat), recursive=True) if os.path.abspath(f) != os.path.abspath(header)]
    for f in c_files:
        for n, line in enumerate(open(f, errors="replace"), 1):
            for m in lit.finditer(line):
                fails.append("%s:%d: %s spelled as a literal (use ncrt_protocol.h's define)"
                             % (os.path.relpath(f, root), n, m.group(1)))
    py_files = [f for pat in ("python/ncrewrite/*.py", "src/runtime/python/**/*.py") for f in
                glob.glob(os.path.join(root, pat), recursive=True)]
    seen = set()
    for f in py_files:
        for n, line in enumerate(open(f, errors="replace"), 1):
            for m in re.finditer(r'["\'](NCRT_[A-Z0-9_]+)["\']', line):
                seen.add(m.group(1))
                if m.group(1) not in names:
                    fails.append("%s:%d: %s is not a name ncrt_protocol.h defines"
                                 % (os.path.relpath(f, root), n, m.group(1)))
    if not seen:
        fails.append("no NCRT_* name read from the Python files: the check reads nothing")
    doc = open(os.path.join(root, "docs/runtime.md")).read()
    for n in sorted(names):
        if n not in doc and "TEST" not in n:
            fails.append("docs/runtime.md does not document %s" % n)
    if fails:
        print("FAIL:\n  " + "\n  ".join(fails))
        return 1
    print("ok: %d NCRT_* names, one definition; %d of them used by the Python sides" % (len(names), len(seen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
