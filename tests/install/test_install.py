#!/usr/bin/env python3
"""Install tests: `cmake --install` into a temporary prefix, then use only
what was installed (the build tree is not on any path).

    test_install.py CASE BUILD_DIR

prefix          the layout; the prefix is moved after installing (ncrun finds
                libncrt.so and the ncrt module relative to itself); a Python
                and a C program instrumented, run under the installed ncrun,
                traces read with the installed nctrace; a C file compiled via
                `pkg-config --cflags --libs ncrt`.
cmake-package   a small CMake project using find_package(ncrewrite) and
                ncrewrite_instrument(), built with make and with ninja, run
                under ncrun; editing the rules re-instruments, a no-op build
                does nothing.
bazel           `ncrewrite --file` as a Bazel genrule (Debian's bazel-bootstrap):
                sandboxed, cached, rerun when the rules change.
Exit 0 passed, 1 failed, 77 skipped (the reason printed).
"""
import glob
import gzip
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        raise Fail("%s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stdout))
    # the prefix's path has a blank: nothing may try to LD_PRELOAD through it
    # (ld.so would split it and print errors into the program's stderr)
    check("ld.so:" not in p.stdout, "%s: %s" % (" ".join(cmd), p.stdout))
    return p.stdout


def clean_env(**extra):
    """The environment a user of the prefix has: no build tree, no ncrt."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("NCRT_", "NVTX_", "CUDA_INJECTION")) and k not in ("PYTHONPATH", "RANK")}
    e.update(extra)
    return e


def install(build, tmp):
    """Install into one prefix, then move it: nothing may point at the first."""
    staged = os.path.join(tmp, "staged")
    run(["cmake", "--install", build, "--prefix", staged])
    prefix = os.path.join(tmp, "moved prefix")
    shutil.move(staged, prefix)
    return prefix


def ranges(trace):
    with gzip.open(trace, "rt") as f:
        doc = json.load(f)
    names = {}
    for ev in doc["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("cat") == "user_annotation":
            names[ev["name"]] = names.get(ev["name"], 0) + 1
    return names


def under_ncrun(prefix, tmp, name, cmd, **kw):
    """Run cmd under the installed ncrun; return (output, trace path, run dir)."""
    out = run([os.path.join(prefix, "bin/ncrun"), "-o", os.path.join(tmp, "runs"), "-n", name, "--"] + cmd,
              env=clean_env(), **kw)
    traces = glob.glob(os.path.join(tmp, "runs", name + "-*", name + "-rank0.pt.trace.json.gz"))
    check(len(traces) == 1, "%s: one trace expected, found %s\n%s" % (name, traces, out))
    return out, traces[0], os.path.dirname(traces[0])


def summary_counts(prefix, trace):
    s = json.loads(run([os.path.join(prefix, "bin/nctrace"), "summary", trace, "--format", "json"]))
    return {op["name"]: op["count"] for op in s["structured"]["operations"]}


PY_PROG = '''def step(i):
    return sum(range(i))


def main():
    for i in range(5):
        step(i)
    import sys
    print("ncrt module:", sys.modules["ncrt"].__file__)


main()
'''

C_PROG = '''#include <stdio.h>

static int work(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += i;
  return s;
}

int main(void) {
  int t = 0;
  for (int k = 0; k < 7; k++) t += work(k);
  printf("total %d\\n", t);
  return 0;
}
'''


def case_prefix(build, tmp):
    prefix = install(build, tmp)
    real = os.path.realpath(prefix)
    for rel in ("bin/ncrewrite", "bin/ncrun", "bin/nctrace", "lib/libncrt.so", "include/ncrt.h",
                "lib/pkgconfig/ncrt.pc", "lib/cmake/ncrewrite/ncrewriteConfig.cmake",
                "lib/cmake/ncrewrite/ncrewriteConfigVersion.cmake",
                "share/man/man1/ncrewrite.1", "share/man/man1/ncrun.1", "share/man/man1/nctrace.1"):
        check(os.path.isfile(os.path.join(prefix, rel)), "not installed: " + rel)
    # one build per CPython found at configure time; /usr/bin/python3's must be there
    suffix = subprocess.run(["/usr/bin/python3", "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                            capture_output=True, text=True).stdout.strip()
    mods = [m for m in glob.glob(os.path.join(prefix, "lib/ncrewrite/python/ncrt*.so")) if m.endswith("/ncrt" + suffix)]
    check(len(mods) == 1, "the ncrt Python module for /usr/bin/python3 (ncrt%s) is not installed: %s" %
          (suffix, glob.glob(os.path.join(prefix, "lib/ncrewrite/python/*"))))
    nc = os.path.join(prefix, "bin/ncrewrite")

    # Python: instrument, run under the installed ncrun, read the trace
    os.makedirs(os.path.join(tmp, "py/app"))
    with open(os.path.join(tmp, "py/app/train.py"), "w") as f:
        f.write(PY_PROG)
    with open(os.path.join(tmp, "py.yaml"), "w") as f:
        f.write("targets:\n  app.train:\n    func_context_wrappings:\n      step: {}\n")
    run([nc, "-q", "--config", os.path.join(tmp, "py.yaml"), os.path.join(tmp, "py"), os.path.join(tmp, "pyout")])
    out, trace, rundir = under_ncrun(prefix, tmp, "train", ["/usr/bin/python3", os.path.join(tmp, "pyout/app/train.py")])
    check("ncrt module: " + os.path.realpath(mods[0]) in out, "the program did not use the installed ncrt module:\n" + out)
    check(ranges(trace).get("step") == 5, "python: 5 'step' ranges expected, trace has %s" % ranges(trace))
    check(summary_counts(prefix, trace).get("step") == 5, "nctrace summary: step count is not 5")
    with open(os.path.join(rundir, "env.json")) as f:
        env = json.load(f)
    check(env["libncrt"] == os.path.join(real, "lib/libncrt.so"), "ncrun used %s" % env["libncrt"])

    # C: instrument, compile with pkg-config's flags, run, read the trace
    os.makedirs(os.path.join(tmp, "c"))
    with open(os.path.join(tmp, "c/work.c"), "w") as f:
        f.write(C_PROG)
    with open(os.path.join(tmp, "c.yaml"), "w") as f:
        f.write('targets:\n  "*.c":\n    func_context_wrappings:\n      work: {}\n')
    run([nc, "-q", "--config", os.path.join(tmp, "c.yaml"), os.path.join(tmp, "c"), os.path.join(tmp, "cout")])
    pc_env = clean_env(PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
    # pkg-config escapes the space in the prefix's name as a shell would read it
    flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "ncrt"], env=pc_env))
    check(any(f.startswith("-I") and os.path.realpath(f[2:]) == os.path.join(real, "include") for f in flags),
          "pkg-config --cflags does not name the prefix's include dir: %s" % flags)
    inj = shlex.split(run(["pkg-config", "--variable=injection", "ncrt"], env=pc_env))[0]
    check(os.path.realpath(inj) == os.path.join(real, "lib/libncrt.so"), "injection variable: " + inj)
    exe = os.path.join(tmp, "work")
    run(["cc", "-std=c11", "-Wall", "-Werror", os.path.join(tmp, "cout/work.c"), "-o", exe] + flags)
    out, trace, _ = under_ncrun(prefix, tmp, "work", [exe])
    check("total 35" in out, "the C program's output changed:\n" + out)
    check(ranges(trace).get("work") == 7, "C: 7 'work' ranges expected, trace has %s" % ranges(trace))
    check(summary_counts(prefix, trace).get("work") == 7, "nctrace summary: work count is not 7")


CMAKE_LISTS = '''cmake_minimum_required(VERSION 3.20)
project(app LANGUAGES C)
find_package(ncrewrite 0.1 REQUIRED)
add_executable(app main.c util/work.c)
ncrewrite_instrument(TARGET app RULES ${CMAKE_CURRENT_SOURCE_DIR}/ranges.yaml)
'''

CMAKE_MAIN = '''#include <stdio.h>
#include "util/work.h"

static int outer(int k) { return work(k) + 1; }

int main(void) {
  int t = 0;
  for (int k = 0; k < 4; k++) t += outer(k);
  printf("total %d\\n", t);
  return 0;
}
'''

CMAKE_RULES = '''targets:
  "util/*.c":
    func_context_wrappings:
      work: {}
'''


def case_cmake_package(build, tmp):
    prefix = install(build, tmp)
    proj = os.path.join(tmp, "proj")
    os.makedirs(os.path.join(proj, "util"))
    # util/work.c includes its sibling "work.h" (quoted: found beside the
    # original, not the copy under the build tree)
    files = {"CMakeLists.txt": CMAKE_LISTS, "main.c": CMAKE_MAIN, "ranges.yaml": CMAKE_RULES,
             "util/work.h": "int work(int n);\n",
             "util/work.c": '#include "work.h"\n' + C_PROG.split("\nint main")[0].replace("static ", "")}
    for rel, text in files.items():
        with open(os.path.join(proj, rel), "w") as f:
            f.write(text)
    gens = ["Unix Makefiles"] + (["Ninja"] if shutil.which("ninja") else [])
    for gen in gens:
        b = os.path.join(tmp, "b-" + gen.split()[0].lower())
        run(["cmake", "-S", proj, "-B", b, "-G", gen, "-DCMAKE_PREFIX_PATH=" + prefix], env=clean_env())
        log = run(["cmake", "--build", b], env=clean_env())
        check("Instrumenting util/work.c" in log and "Instrumenting main.c" in log, gen + ": no instrumenting step:\n" + log)
        name = "app" + gen.split()[0].lower()
        out, trace, _ = under_ncrun(prefix, tmp, name, [os.path.join(b, "app")])
        check("total 8" in out, gen + ": output changed:\n" + out)
        check(ranges(trace) == {"work": 4}, gen + ": expected 4 'work' ranges only, trace has %s" % ranges(trace))
        # a second build does nothing; a touched rule file re-instruments
        log = run(["cmake", "--build", b], env=clean_env())
        check("Instrumenting" not in log, gen + ": a no-op build re-instrumented:\n" + log)
        os.utime(os.path.join(proj, "ranges.yaml"))
        log = run(["cmake", "--build", b], env=clean_env())
        check("Instrumenting util/work.c" in log, gen + ": editing the rules did not re-instrument:\n" + log)
        with open(os.path.join(b, "ncrewrite/app/util/work.c.d")) as f:
            dep = f.read()
        check(os.path.join(proj, "util/work.c") in dep and os.path.join(proj, "ranges.yaml") in dep,
              gen + ": depfile lacks the input or the rules: " + dep)
    # STRICT: a rule that matches nothing fails the build (a warning without)
    with open(os.path.join(proj, "ranges.yaml"), "w") as f:
        f.write(CMAKE_RULES + "      nothere: {}\n")
    with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
        f.write(CMAKE_LISTS.replace("ranges.yaml)", "ranges.yaml STRICT)"))
    b = os.path.join(tmp, "b-strict")
    run(["cmake", "-S", proj, "-B", b, "-DCMAKE_PREFIX_PATH=" + prefix], env=clean_env())
    p = subprocess.run(["cmake", "--build", b], capture_output=True, text=True, env=clean_env())
    check(p.returncode != 0 and "rule matches nothing" in p.stdout + p.stderr,
          "STRICT: a rule that matches nothing did not fail the build:\n" + p.stdout + p.stderr)


BAZEL_BUILD = '''genrule(
    name = "instrument",
    srcs = ["src/work.c", "ranges.yaml"],
    outs = ["gen/work.c"],
    cmd = "{nc} -q --config $(location ranges.yaml) --file $(location src/work.c) --as src/work.c -o $@",
)

# Compiled by a second genrule: rules_cc cannot be fetched on the test
# machine (offline); a cc_binary with srcs = [":instrument"] is the same.
genrule(
    name = "app",
    srcs = [":instrument"],
    outs = ["work"],
    cmd = "cc -std=c11 -Wall -Werror $(location :instrument) -o $@ {flags}",
)
'''


def case_bazel(build, tmp):
    """ncrewrite --file as a Bazel action: runs in Bazel's sandbox with only
    its declared inputs, is cached (a no-op build does not run it), and
    reruns when the rule file changes."""
    if not shutil.which("bazel"):
        print("skipped: bazel is not installed (Debian's bazel-bootstrap)")
        sys.exit(SKIP)
    prefix = install(build, tmp)
    ws = os.path.join(tmp, "ws")
    os.makedirs(os.path.join(ws, "src"))
    pc_env = clean_env(PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
    flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "ncrt"], env=pc_env))
    files = {"WORKSPACE": "", "src/work.c": C_PROG,
             "ranges.yaml": 'targets:\n  "src/*.c":\n    func_context_wrappings:\n      work: {}\n',
             "BUILD": BAZEL_BUILD.format(nc=shlex.quote(os.path.join(prefix, "bin/ncrewrite")),
                                         flags=" ".join(shlex.quote(f) for f in flags))}
    for rel, text in files.items():
        with open(os.path.join(ws, rel), "w") as f:
            f.write(text)
    bazel = ["bazel", "--output_user_root=" + os.path.join(tmp, "bazel-root"), "--max_idle_secs=60"]
    gen, exe = os.path.join(ws, "bazel-bin/gen/work.c"), os.path.join(ws, "bazel-bin/work")
    try:
        run(bazel + ["build", "//:app"], cwd=ws, env=clean_env())
        with open(gen) as f:
            text = f.read()
        check('NCRT_RANGE("work")' in text, "bazel: the action did not instrument work():\n" + text)
        out, trace, _ = under_ncrun(prefix, tmp, "bazel1", [exe])
        check("total 35" in out, "bazel: the program's output changed:\n" + out)
        check(ranges(trace) == {"work": 7}, "bazel: 7 'work' ranges expected, trace has %s" % ranges(trace))
        # cached: a no-op build leaves the action's output alone
        before = os.stat(gen).st_mtime_ns
        run(bazel + ["build", "//:app"], cwd=ws, env=clean_env())
        check(os.stat(gen).st_mtime_ns == before, "bazel: a no-op build reran the instrumenting action")
        # the rule file is an input: changing it reruns the action
        with open(os.path.join(ws, "ranges.yaml"), "a") as f:
            f.write("      main: {}\n")
        run(bazel + ["build", "//:app"], cwd=ws, env=clean_env())
        out, trace, _ = under_ncrun(prefix, tmp, "bazel2", [exe])
        check("total 35" in out and ranges(trace) == {"work": 7, "main": 1},
              "bazel: after editing the rules, expected work x7 and main x1, trace has %s" % ranges(trace))
    finally:
        subprocess.run(bazel + ["shutdown"], cwd=ws, capture_output=True)
        subprocess.run(["chmod", "-R", "u+w", os.path.join(tmp, "bazel-root")], capture_output=True)


def main():
    case, build = sys.argv[1], sys.argv[2]
    fn = {"prefix": case_prefix, "cmake-package": case_cmake_package, "bazel": case_bazel}[case]
    for tool in ("cmake", "pkg-config", "cc"):
        if not shutil.which(tool):
            print("skipped: %s is not installed" % tool)
            return SKIP
    tmp = tempfile.mkdtemp(prefix="ncinstall-")
    try:
        fn(build, tmp)
    except Fail as e:
        print("FAIL:", e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
