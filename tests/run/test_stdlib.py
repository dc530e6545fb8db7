#!/usr/bin/env python3
"""Run test on real code: the whole standard library in full-trace mode.

Instruments the system Python's Lib folder (every function of every module)
and checks that (1) every output file compiles wherever its input compiles,
(2) a workload importing many stdlib modules prints exactly the same with the
instrumented library first on sys.path, without ncrt (no-op markers) and with
the fake ncrt (ranges recorded: nesting checked, spans closed).

The library is first copied into this test's own temporary directory and
everything reads that copy: the system's Lib is shared with other tests
(differential/cpython-tests runs CPython's tests against it, as root, and
they write into it), so a tree walked twice there (by ncrewrite, then
here) need not be the same tree.
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ncrewrite = sys.argv[1]
    system_lib = sysconfig.get_paths()["stdlib"]
    failures = []
    with tempfile.TemporaryDirectory(prefix="nc-stdlib-") as tmp:
        # a private snapshot (links kept as links, as ncrewrite sees them)
        lib = os.path.join(tmp, "snapshot")
        shutil.copytree(system_lib, lib, symlinks=True,
                        ignore=shutil.ignore_patterns("site-packages", "dist-packages", "__pycache__"))
        out = os.path.join(tmp, "lib")
        p = subprocess.run([ncrewrite, "--full-trace", "-q", lib, out], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr[-3000:])
            print("FAILED: ncrewrite exited", p.returncode)
            return 1
        n = bad = 0
        for base, dirs, files in os.walk(lib):
            dirs[:] = [d for d in dirs if d not in ("site-packages", "dist-packages", "__pycache__")]
            for f in files:
                if not f.endswith(".py"):
                    continue
                src = os.path.join(base, f)
                dst = os.path.join(out, os.path.relpath(src, lib))
                try:
                    compile(open(src, "rb").read(), src, "exec")
                except (SyntaxError, ValueError):
                    continue
                n += 1
                try:
                    compile(open(dst, "rb").read(), dst, "exec")
                except (SyntaxError, ValueError) as e:
                    bad += 1
                    failures.append("%s does not compile after instrumentation: %s" % (dst, e))
        workload = os.path.join(HERE, "stdlib_workload.py")
        code = "import sys; sys.path.insert(%d, %r); sys.argv = ['w']; exec(compile(open(%r).read(), %r, 'exec'))"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["TMPDIR"] = os.path.join(tmp, "tmp")  # the workload's temporary files stay in ours
        os.mkdir(env["TMPDIR"])
        # the reference: the same snapshot, not instrumented, first on sys.path
        want = subprocess.run([sys.executable, "-c", code % (0, lib, workload, workload)], capture_output=True,
                              text=True, env=env)
        got = subprocess.run([sys.executable, "-c", code % (0, out, workload, workload)], capture_output=True,
                             text=True, env=env)
        if (got.returncode, got.stdout) != (want.returncode, want.stdout):
            failures.append("without ncrt: workload output differs:\n" + got.stdout[-2000:] + got.stderr[-2000:])
        log = os.path.join(tmp, "fake.json")
        fenv = dict(env, PYTHONPATH=os.path.join(HERE, "fake"), NCRT_FAKE_LOG=log)
        got = subprocess.run([sys.executable, "-c", code % (1, out, workload, workload)], capture_output=True,
                             text=True, env=fenv)
        if (got.returncode, got.stdout) != (want.returncode, want.stdout):
            failures.append("with ncrt: workload output differs:\n" + got.stdout[-2000:] + got.stderr[-2000:])
        else:
            d = json.load(open(log))
            if d["violations"] or d["open_spans"]:
                failures.append("nesting violations %s, open spans %d" % (d["violations"][:3], d["open_spans"]))
            if len(d["counts"]) < 100:
                failures.append("only %d distinct ranges recorded; instrumentation not active?" % len(d["counts"]))
    if failures:
        print("\n".join(failures[:20]))
        print("FAILED")
        return 1
    print("ok: %d stdlib files instrumented and compiled; workload output identical; %d ranges seen" %
          (n, len(d["counts"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
