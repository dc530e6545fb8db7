#!/usr/bin/env python3
"""Run one golden case of nctrace.

A case is CASES/<dir>/<name>.args: one line of nctrace arguments, run with
the case directory as working directory. Expected results sit beside it:
<name>.out (stdout), <name>.err (stderr; absent = must be empty) and
<name>.rc (exit status; absent = 0). --update rewrites them from the
actual run; review the diff like code.

usage: run_case.py NCTRACE CASE_DIR NAME [--update]
"""
import os
import shlex
import subprocess
import sys


def main():
    nctrace, case_dir, name = sys.argv[1:4]
    update = "--update" in sys.argv[4:] or os.environ.get("NCTRACE_UPDATE") == "1"
    with open(os.path.join(case_dir, name + ".args")) as f:
        args = shlex.split(f.read().strip())
    p = subprocess.run([nctrace] + args, cwd=case_dir, capture_output=True, timeout=120)
    got = {"out": p.stdout.decode("utf-8", "replace"), "err": p.stderr.decode("utf-8", "replace"),
           "rc": "%d\n" % p.returncode}
    if p.returncode < 0 or p.returncode >= 128:
        print("nctrace crashed (signal %d)" % -p.returncode)
        print(got["err"])
        return 1
    failed = False
    for kind in ("out", "err", "rc"):
        path = os.path.join(case_dir, "%s.%s" % (name, kind))
        default = "0\n" if kind == "rc" else ""
        if update:
            if got[kind] == default:
                if os.path.exists(path):
                    os.remove(path)
            else:
                with open(path, "w") as f:
                    f.write(got[kind])
            continue
        want = open(path).read() if os.path.exists(path) else default
        if want != got[kind]:
            failed = True
            print("--- %s differs (%s)" % (kind, path))
            import difflib
            sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got[kind].splitlines(True),
                                                       "expected", "actual"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
