#!/usr/bin/env python3
"""The run directory's layout is written once (issue 34): src/common/rundir.h
names env.json, summary.md, the private prefix .ncrt-, ncu/ and nsys/ and the
files the deep stage leaves there. No C file spells one of those names in a
path literal (a string with no blank: "%s/env.json", "/.ncrt-budget"); the
Python sides' private files start with the header's prefix; and every name
is in docs/runtime.md's description of the run directory. Self-checked: the
scanner must flag planted literals and pass sentences that mention a name.

    test_rundir_names.py SOURCE_DIR"""
import glob
import os
import re
import sys

C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
C_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def read_header(path):
    """NC_RUN_* -> its string value (string pasting with earlier names done)."""
    names = {}
    for name, body in re.findall(r"#define (NC_RUN_\w+) ([^\n/]*)", open(path).read()):
        value = ""
        for tok in re.findall(r'"[^"]*"|\w+', body):
            value += tok[1:-1] if tok.startswith('"') else names.get(tok, "\0")
        if "\0" not in value:
            names[name] = value
    return names


def path_literals(text, values):
    """(line, literal, name) for each C string without a blank that holds one
    of values, outside comments."""
    text = C_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for m in C_STRING.finditer(text):
        s = m.group(1)
        if " " in s or "\\n" in s:
            continue  # a sentence (a message, --help) may mention a name
        for v in values:
            if v in s:
                yield text.count("\n", 0, m.start()) + 1, s, v
                break


def main():
    root = sys.argv[1]
    header = os.path.join(root, "src/common/rundir.h")
    names = read_header(header)
    fails = []
    want = {"NC_RUN_ENV": "env.json", "NC_RUN_SUMMARY": "summary.md", "NC_RUN_PRIVATE": ".ncrt-",
            "NC_RUN_BUDGET": ".ncrt-budget"}
    for k, v in want.items():
        if names.get(k) != v:
            fails.append("%s: %s is %r, expected %r (the header could not be read?)" % (header, k, names.get(k), v))
    values = sorted(set(names.values()) - {"ncu", "nsys"}, key=len, reverse=True)  # dir names: too common
    # the scanner itself: planted path literals found, sentences and comments passed
    planted = 'f("%s/env.json"); g("/.ncrt-budget"); /* "x/env.json" */ h("write summary.md at the end");'
    got = [lit for _, lit, _ in path_literals(planted, values)]
    if got != ["%s/env.json", "/.ncrt-budget"]:
        fails.append("the scanner is broken: it found %s in the planted sample" % got)
    files = [f for pat in ("src/**/*.c", "src/**/*.h", "python/src/*.c") for f in
             glob.glob(os.path.join(root, pat), recursive=True) if os.path.abspath(f) != os.path.abspath(header)]
    for f in sorted(files):
        for line, lit, v in path_literals(open(f, errors="replace").read(), values):
            fails.append('%s:%d: "%s" spells %s (use rundir.h\'s name)' % (os.path.relpath(f, root), line, lit, v))
    py = [f for pat in ("python/ncrewrite/*.py", "src/runtime/python/**/*.py") for f in
          glob.glob(os.path.join(root, pat), recursive=True)]
    private = 0
    for f in py:
        for n, line in enumerate(open(f, errors="replace"), 1):
            for m in re.finditer(r'["\'](\.ncrt[^"\']*)["\']', line):
                private += 1
                if not m.group(1).startswith(names.get("NC_RUN_PRIVATE", "?")):
                    fails.append("%s:%d: %r is a private run-dir file without rundir.h's prefix %r"
                                 % (os.path.relpath(f, root), n, m.group(1), names.get("NC_RUN_PRIVATE")))
    if not private:
        fails.append("no private run-dir file named by the Python sides: the check reads nothing")
    doc = open(os.path.join(root, "docs/runtime.md")).read()
    for k, v in sorted(names.items()):
        if v not in doc:
            fails.append("docs/runtime.md does not mention %s (%s)" % (v, k))
    if fails:
        print("FAIL:\n  " + "\n  ".join(fails))
        return 1
    print("ok: %d run-directory names, one definition, in %d C files and %d Python private names"
          % (len(names), len(files), private))
    return 0


if __name__ == "__main__":
    sys.exit(main())
