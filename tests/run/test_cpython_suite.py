#!/usr/bin/env python3
"""Differential test on real code: CPython's own tests against an
instrumented standard library.

Instruments the system Python's Lib folder in full-trace mode (leaving out the
test package itself, so the tests stay as written), then runs a broad set of
CPython test modules (Debian's libpython3.11-testsuite) twice: against the
original library and with the instrumented library first on sys.path, the
second time with the fake ncrt collecting every range. The same tests must
pass, except the few listed in EXPECTED_DIFFERENT, which inspect the library's
bytecode or source by design. Skipped (exit 77) when the test suite is not installed.

Shared with nothing: the library is instrumented from a private copy, and
CPython's tests (and their temporary files: TMPDIR) run in this test's own
temporary directory. A CPython test that fails only on the instrumented
library is run again, alone, on both libraries: some of CPython's tests
are timing-sensitive on a loaded machine, and a difference counts only
when it is there every time.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = ("test_json test_argparse test_difflib test_csv test_configparser test_email test_textwrap "
         "test_string test_shlex test_pprint test_fractions test_statistics test_heapq test_bisect "
         "test_functools test_itertools test_collections test_dataclasses test_enum test_typing "
         "test_contextlib test_copy test_base64 test_calendar test_glob test_fnmatch test_tokenize "
         "test_ast test_inspect test_traceback test_logging test_html test_zipfile test_tarfile test_gzip "
         "test_datetime test_re test_pathlib test_tempfile test_shutil test_weakref test_abc "
         "test_operator test_reprlib test_textwrap test_graphlib test_dis test_pickle test_uuid "
         "test_urlparse test_ipaddress test_secrets test_getopt test_optparse test_queue "
         "test_sched test_colorsys test_numeric_tower test_decimal").split()


# Differences that instrumentation makes by design, with the reason:
EXPECTED_DIFFERENT = {
    # compares bytecode details (names, constants) of library functions:
    # an instrumented function also names __ncrt__.range
    "test_dis",
    # runs `python -I -m inspect <module>` (isolated: the original library)
    # and compares its source with the instrumented module's
    "test_inspect",
    # looks for CPython's test files beside the library's own location
    "test_ast",
    # compares a traceback's source text: a range over one statement is
    # written on that statement's own line (`with __ncrt__.range(...): stmt`,
    # so no line moves: docs/rules.md, "Locations in the shadow tree"), and
    # the shadow file's line shows that prefix; the line numbers are equal
    "test_contextlib",
}


RERUNS = 2  # how many more times a test that fails only when instrumented is run, alone


def run_suite(env, tests, jobs=2):
    p = subprocess.run([sys.executable, "-m", "test", "-j%d" % jobs] + sorted(set(tests)), capture_output=True,
                       text=True, env=env, cwd=env["TMPDIR"])
    failed = set()
    m = re.search(r"(\d+) tests? failed:\n((?:    .*\n)+)", p.stdout)
    if m:
        failed = set(m.group(2).split())
    ok = re.search(r"(\d+) tests? OK", p.stdout)
    if p.returncode not in (0, 2) and not failed:  # 2: some tests failed; anything else: the run itself
        failed = set(tests)
    return failed, int(ok.group(1)) if ok else 0, p.stdout[-4000:]


def main():
    ncrewrite = sys.argv[1]
    lib = sysconfig.get_paths()["stdlib"]
    if not os.path.exists(os.path.join(lib, "test", "test_json")):
        print("skipped: CPython's test suite is not installed (apt-get install libpython3.11-testsuite)")
        return 77
    with tempfile.TemporaryDirectory(prefix="nc-cpython-") as tmp:
        rules = os.path.join(tmp, "rules.yaml")
        out = os.path.join(tmp, "lib")
        # instrument a private copy of Lib without test/ (and without
        # site/dist-packages and the bytecode caches, which other Python
        # processes may be writing meanwhile); ncrewrite does not follow
        # links, so links are copied as the files they name
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        for name in os.listdir(lib):
            if name in ("test", "site-packages", "dist-packages", "__pycache__"):
                continue
            path = os.path.join(lib, name)
            if os.path.isdir(path):
                shutil.copytree(path, os.path.join(src, name), ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copyfile(path, os.path.join(src, name))
        open(rules, "w").write("full_trace_mode: true\n")
        p = subprocess.run([ncrewrite, "--config", rules, "-q", src, out], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr[-3000:])
            print("FAILED: ncrewrite exited", p.returncode)
            return 1
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["TMPDIR"] = os.path.join(tmp, "tmp")  # CPython's tests' files (and their clean-ups) stay in ours
        os.mkdir(env["TMPDIR"])
        # the fake ncrt from a copy too: CPython's tests may write beside what is on sys.path
        fake = shutil.copytree(os.path.join(HERE, "fake"), os.path.join(tmp, "fake"),
                               ignore=shutil.ignore_patterns("__pycache__"))
        ienv = dict(env, PYTHONPATH=out + os.pathsep + fake, NCRT_FAKE_LOG=os.path.join(tmp, "fake.json"))
        want_failed, want_ok, want_log = run_suite(env, TESTS)
        if not want_ok:
            print(want_log)
            print("FAILED: CPython's tests did not run on the original library")
            return 1
        got_failed, got_ok, log = run_suite(ienv, TESTS)
        new = got_failed - want_failed - EXPECTED_DIFFERENT
        flaky = set()
        for name in sorted(new):
            for _ in range(RERUNS):
                if not run_suite(env, [name], jobs=1)[0] and not run_suite(ienv, [name], jobs=1)[0]:
                    flaky.add(name)  # passed on both this time: not the instrumentation's doing
                    break
        new -= flaky
        check = subprocess.run([sys.executable, "-c", "import json, sys; print(json.__file__)"], capture_output=True,
                               text=True, env=dict(env, PYTHONPATH=out)).stdout.strip()
        if not check.startswith(out):
            print("FAILED: the instrumented library was not used (json from %s)" % check)
            return 1
    print("original: %d test modules OK, failed: %s" % (want_ok, sorted(want_failed) or "none"))
    print("instrumented: %d test modules OK, failed: %s" % (got_ok, sorted(got_failed) or "none"))
    if flaky:
        print("failed once on the instrumented library but passed on both when run again: %s" % sorted(flaky))
    if new:
        print(log)
        print("FAILED: tests that pass on the original fail on the instrumented library: %s" % sorted(new))
        return 1
    print("ok: every CPython test module that passes on the original passes on the instrumented library, "
          "except those expected to differ: %s" % sorted(EXPECTED_DIFFERENT & got_failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
