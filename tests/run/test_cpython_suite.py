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
"""
import os
import re
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
}


def run_suite(env):
    p = subprocess.run([sys.executable, "-m", "test", "-j2"] + sorted(set(TESTS)), capture_output=True,
                       text=True, env=env)
    failed = set()
    m = re.search(r"(\d+) tests? failed:\n((?:    .*\n)+)", p.stdout)
    if m:
        failed = set(m.group(2).split())
    ok = re.search(r"(\d+) tests? OK", p.stdout)
    return failed, int(ok.group(1)) if ok else 0, p.stdout[-4000:]


def main():
    ncrewrite = sys.argv[1]
    lib = sysconfig.get_paths()["stdlib"]
    if not os.path.exists(os.path.join(lib, "test", "test_json")):
        print("skipped: CPython's test suite is not installed (apt-get install libpython3.11-testsuite)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        os.symlink(lib, src)
        # a rule file that leaves the test package out
        rules = os.path.join(tmp, "rules.yaml")
        out = os.path.join(tmp, "lib")
        # instrument a view of Lib without test/ (and without site/dist-packages)
        view = os.path.join(tmp, "view")
        os.mkdir(view)
        for name in os.listdir(lib):
            if name in ("test", "site-packages", "dist-packages", "__pycache__"):
                continue
            os.symlink(os.path.join(lib, name), os.path.join(view, name))
        # ncrewrite does not follow links: materialise the view as real files
        subprocess.run(["cp", "-rL", view, src + ".copy"], check=True)
        open(rules, "w").write("full_trace_mode: true\n")
        p = subprocess.run([ncrewrite, "--config", rules, "-q", src + ".copy", out], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr[-3000:])
            print("FAILED: ncrewrite exited", p.returncode)
            return 1
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        want_failed, want_ok, _ = run_suite(env)
        got_failed, got_ok, log = run_suite(dict(env, PYTHONPATH=out + os.pathsep + os.path.join(HERE, "fake"),
                                                 NCRT_FAKE_LOG=os.path.join(tmp, "fake.json")))
        check = subprocess.run([sys.executable, "-c", "import json, sys; print(json.__file__)"], capture_output=True,
                               text=True, env=dict(env, PYTHONPATH=out)).stdout.strip()
        if not check.startswith(out):
            print("FAILED: the instrumented library was not used (json from %s)" % check)
            return 1
    new = got_failed - want_failed - EXPECTED_DIFFERENT
    print("original: %d test modules OK, failed: %s" % (want_ok, sorted(want_failed) or "none"))
    print("instrumented: %d test modules OK, failed: %s" % (got_ok, sorted(got_failed) or "none"))
    if new:
        print(log)
        print("FAILED: tests that pass on the original fail on the instrumented library: %s" % sorted(new))
        return 1
    print("ok: every CPython test module that passes on the original passes on the instrumented library, "
          "except those expected to differ: %s" % sorted(EXPECTED_DIFFERENT & got_failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
