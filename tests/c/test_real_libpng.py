#!/usr/bin/env python3
"""Differential test on a real C library with its own test suite: libpng 1.6
(setjmp/longjmp error handling through png_error -> png_longjmp, the
PNG_EXPORT / PNG_FUNCTION / PNGAPI export macros).

The source is Debian bookworm's libpng1.6 source package, fetched with
`apt-get source --download-only` through a private sources list and package
lists (the system's apt state is not touched) and cached in CACHE_DIR; only
the upstream (orig) tarball is used, Debian's patches are not applied.

1. The original is configured and built with libpng's own build, out of
   tree (`configure && make`, its own flags: CFLAGS=-g -O2), and the TESTS
   of its `make check` (pngtest on pngtest.png and the crashers, pngvalid,
   pngstest, pngunknown, pngimage: 32 scripts) are run the way `make check`
   runs them. Build, warnings and results are cached in CACHE_DIR, keyed by
   the tarball, the compiler and this recipe.
2. `ncrewrite --full-trace -q` instruments the whole source tree (library
   and test programs) into a new directory, which is configured and built
   the same way, adding only -I<ncrt.h's directory> -I<NVTX> to CPPFLAGS.
3. Asserted:
   - no new warnings: the warning lines of the two builds, paths made
     relative, compared as sets; and again with -Wall -Wextra over the
     library's sources and the suite's programs (each must compile);
   - every function libpng16.so exports has a range, but for those in
     KNOWN_UNRANGED, whose text tree-sitter cannot parse (#if lines that
     split a statement or a function, a macro given a type; docs/rules-c.md,
     "What is never instrumented"); an export missing a range that is not in
     that list fails the test, with what `ncrewrite --explain` says;
   - the whole suite, run on the instrumented build under an independent,
     longjmp-aware NVTX logger (libpng/nvtx_jmp_logger.c: LD_PRELOADed and
     the NVTX injection at once, one log per process), prints the same
     stdout and stderr (paths made relative) and exits the same as the
     original, test by test;
   - every push has its pop: in every process that initialised NVTX (each
     wrote its log at exit), on every thread, no range is open at exit, no
     pop comes without a push, and no range is left behind by a longjmp; a
     range counts as closed by longjmp when a longjmp abandons the stack
     frame its scope object (NCRT_RANGE's payload) lies in;
   - libpng's longjmp error path ran with ranges on: ranges were closed by
     longjmp, and png_longjmp's range (every png_error ends there: pngtest's
     crasher images) was entered and each time closed by its longjmp;
   - a lighter part of the suite (LIGHT: about 11 million ranges, where
     the whole suite makes about 4 billion) prints and exits the same with
     no tool attached and under `ncrun --throttle off` (left out when libncrt
     is built with a sanitizer); in ncrun's traces no record is dropped,
     none is "open at exit", and, test by test, they hold as many ranges as
     the logger counted pushes and mark "longjmp" exactly the ranges (by
     name and count) the logger saw closed by longjmp: libncrt's own
     longjmp handling (src/runtime/libncrt/longjmp.c) against the logger's;
   - the source tree is unchanged.

Nothing is timed against a limit: every check compares outputs, exit
statuses or counts, which do not depend on the machine's load. On 2 cores
(-j2) the test takes about 2.7 minutes with CACHE_DIR filled and 3.2 without
(download, then the original's build and suite); the whole suite under the
logger is about 1.5 of them (4.2 billion ranges), so no subset is needed.

Times (wall and CPU seconds of all processes) are printed; --bench N runs
each configuration N times, interleaved, for docs/performance.md: the
rewrite, both builds, the whole suite (original, no tool, logger, ncrun with
its default throttle) and LIGHT (original, no tool, logger, ncrun
--throttle off).

    test_real_libpng.py NCREWRITE NCRUN CACHE_DIR [--bench N] [--keep DIR] [-j N]

Exit status: 0 passed, 1 failed, 77 skipped (the source cannot be downloaded).
"""
import argparse
import collections
import glob
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nccheck import HERE, INC, Failed, sh  # noqa: E402

SKIP = 77
PACKAGE = "libpng1.6"
SOURCES = "deb-src http://deb.debian.org/debian bookworm main\n"
RECIPE = "3"  # bump when the original's build or run changes: the cache is redone
# the tests also run with no tool and under ncrun: a few million ranges in
# all, where pngstest-* and pngimage-full make hundreds of millions each
LIGHT = ["tests/pngtest-all", "tests/pngimage-quick", "tests/pngvalid-standard",
         "tests/pngvalid-progressive-standard", "tests/pngvalid-progressive-interlace-standard",
         "tests/pngvalid-gamma-threshold"] + ["tests/pngunknown-" + u for u in
                                              ("IDAT", "discard", "if-safe", "sAPI", "sTER", "save", "vpAg")]
# the -Wall -Wextra pass: the library's sources and the suite's programs
WALL_FILES = ["png.c", "pngerror.c", "pngget.c", "pngmem.c", "pngpread.c", "pngread.c", "pngrio.c", "pngrtran.c",
              "pngrutil.c", "pngset.c", "pngtrans.c", "pngwio.c", "pngwrite.c", "pngwtran.c", "pngwutil.c",
              "intel/intel_init.c", "intel/filter_sse2_intrinsics.c", "pngtest.c", "contrib/libtests/pngvalid.c",
              "contrib/libtests/pngstest.c", "contrib/libtests/pngunknown.c", "contrib/libtests/pngimage.c"]
WALL_FLAGS = ["-g", "-O2", "-Wall", "-Wextra"]
LONGJMP = "png_longjmp"  # every png_error (and png_chunk_error, ...) ends there
LOGGER = os.path.join(HERE, "libpng", "nvtx_jmp_logger.c")
# exported functions ncrewrite cannot instrument (1.6.39, full trace): their
# text does not parse for tree-sitter, mostly #if lines that split a
# statement or close the function in one branch (docs/rules-c.md, "What is
# never instrumented"); `ncrewrite --explain` names most of them
KNOWN_UNRANGED = {
    "png_benign_error": "#if lines inside the body",
    "png_create_read_struct": "an #else branch ends it and opens png_create_read_struct_2",
    "png_create_write_struct": "an #else branch ends it and opens png_create_write_struct_2",
    "png_free": "an #ifdef branch ends it and opens png_free_default",
    "png_get_compression_buffer_size": "#ifdef between an if and its block (--explain says nothing)",
    "png_get_copyright": "#ifdef splits a return statement",
    "png_get_header_version": "#ifdef splits a return statement",
    "png_read_end": "#ifdef between an if and its body (--explain names only the macro calls inside)",
    "png_read_info": "#if lines inside the body",
    "png_read_png": "#if lines inside the body",
    "png_read_row": "#if lines inside the body",
    "png_set_PLTE": "#ifdef inside an if condition",
    "png_set_longjmp_fn": "png_voidcast(jmp_buf *, ...): a macro with a type argument",
    "png_set_rgb_to_gray_fixed": "#if lines inside the body",
    "png_write_info_before_PLTE": "#if lines inside the body",
    "png_write_png": "#if lines inside the body",
}


class Skip(Exception):
    """The test cannot run here; the message says why."""


def log(msg):
    print(msg, flush=True)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


# ---- the source -----------------------------------------------------------

def apt_source(cache):
    """Download Debian's source package into cache with a private sources
    list, package lists and apt cache; return the orig tarball."""
    if not shutil.which("apt-get"):
        raise Skip("no apt-get here to download Debian's %s source package" % PACKAGE)
    with tempfile.TemporaryDirectory(dir=cache, prefix="apt-") as d:
        os.makedirs(os.path.join(d, "lists", "partial"))
        os.makedirs(os.path.join(d, "cache", "archives", "partial"))
        with open(os.path.join(d, "sources.list"), "w") as f:
            f.write(SOURCES)
        opts = ["-q", "-o", "Dir::Etc::SourceList=" + os.path.join(d, "sources.list"),
                "-o", "Dir::Etc::SourceParts=/dev/null", "-o", "Dir::State::Lists=" + os.path.join(d, "lists"),
                "-o", "Dir::Cache=" + os.path.join(d, "cache")]
        if os.geteuid() == 0:
            opts += ["-o", "APT::Sandbox::User=root"]  # apt's _apt user cannot enter the private directory
        said = ""
        for args in (["update"], ["source", "--download-only", PACKAGE]):
            try:
                r = sh(["apt-get"] + opts + args, cwd=d, timeout=600)
            except subprocess.TimeoutExpired:
                raise Skip("apt-get %s timed out" % args[0])
            said += r.stderr  # apt-get update exits 0 when it cannot reach the mirror: say what it said
            if r.returncode:
                raise Skip("cannot download the %s source package (apt-get %s exited %d): %s" %
                           (PACKAGE, args[0], r.returncode, said.strip()[-800:]))
        got = glob.glob(os.path.join(d, "*.orig.tar.*"))
        if not got:
            raise Skip("apt-get source downloaded no orig tarball (%s)" % sorted(os.listdir(d)))
        for f in os.listdir(d):
            if f.startswith(PACKAGE + "_"):
                os.replace(os.path.join(d, f), os.path.join(cache, f))
    return os.path.join(cache, os.path.basename(got[0]))


def source_tree(cache):
    """The unpacked orig tarball (downloaded once, unpacked once)."""
    os.makedirs(cache, exist_ok=True)
    found = sorted(glob.glob(os.path.join(cache, PACKAGE + "_*.orig.tar.*")))
    tarball = found[-1] if found else apt_source(cache)
    with tarfile.open(tarball) as t:
        top = t.getnames()[0].split("/")[0]
        dest = os.path.join(cache, top)
        if not os.path.exists(dest + ".unpacked"):
            shutil.rmtree(dest, ignore_errors=True)
            tmp = tempfile.mkdtemp(dir=cache, prefix="unpack-")
            t.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            os.replace(os.path.join(tmp, top), dest)
            os.rmdir(tmp)
            open(dest + ".unpacked", "w").close()
    return tarball, dest


def tree_state(root):
    """Every file under root with its size and mtime."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            st = os.lstat(os.path.join(d, f))
            out[os.path.relpath(os.path.join(d, f), root)] = (st.st_size, st.st_mtime_ns)
    return out


# ---- building -------------------------------------------------------------

WARNING = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)? warning: (?P<msg>.*)$")


def parallel(items, jobs, fn):
    """fn(item) for each item, `jobs` at a time; {item: result}."""
    results, lock, queue = {}, threading.Lock(), list(items)

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                item = queue.pop(0)
            results[item] = fn(item)

    threads = [threading.Thread(target=worker) for _ in range(jobs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return results


def build(src, bld, jobs, cppflags=()):
    """configure && make (and the suite's programs, as `make check` builds
    them), out of tree; then the -Wall -Wextra pass. Returns ((wall, CPU
    seconds of the build), warning lines of the build, warning lines of the
    -Wall pass)."""
    shutil.rmtree(bld, ignore_errors=True)
    os.makedirs(bld)
    args = [os.path.join(src, "configure"), "--quiet"]
    if cppflags:
        args.append("CPPFLAGS=" + " ".join(cppflags))
    t0, c0 = time.monotonic(), os.times()
    steps = [args, ["make", "-j%d" % jobs], ["make", "-j%d" % jobs, "check", "TESTS="]]  # no TESTS: build only
    text = ""
    for cmd in steps:
        r = sh(cmd, cwd=bld)
        text += r.stdout + r.stderr
        if r.returncode:
            raise Failed("%s in %s exited %d:\n%s" % (" ".join(cmd[:2]), bld, r.returncode, text[-4000:]))
    c1 = os.times()
    secs = (time.monotonic() - t0, c1.children_user - c0.children_user + c1.children_system - c0.children_system)
    with open(os.path.join(bld, "ncrewrite-build.log"), "w") as f:
        f.write(text)

    def wall(f):
        return sh(["gcc", "-DHAVE_CONFIG_H", "-I" + bld, "-I" + src] + list(cppflags) + WALL_FLAGS +
                  ["-c", os.path.join(src, f), "-o", "/dev/null"])
    walls = parallel(WALL_FILES, jobs, wall)
    broken = ["%s (exit %d):\n%s" % (f, r.returncode, r.stderr[-2000:])
              for f, r in sorted(walls.items()) if r.returncode]
    if broken:
        raise Failed("the -Wall -Wextra pass does not compile in %s: %s" % (src, "\n".join(broken)))
    wall_text = "".join(r.stderr for r in walls.values())
    return (secs, [x for x in text.splitlines() if WARNING.match(x)],
            [x for x in wall_text.splitlines() if WARNING.match(x)])


def norm_warnings(lines, roots):
    """Warnings as a set of 'file:line: message', the file relative to the
    tree it is in (source or build), columns dropped."""
    out = set()
    for line in lines:
        m = WARNING.match(line)
        f = os.path.normpath(m["file"])
        for tag, root in roots:
            if f.startswith(root + os.sep):
                f = tag + f[len(root):]
                break
        out.add("%s:%s: %s" % (f, m["line"], m["msg"]))
    return out


def suite_tests(bld):
    """The TESTS of libpng's `make check`, from the generated Makefile."""
    text = open(os.path.join(bld, "Makefile")).read().replace("\\\n", " ")
    m = re.search(r"^TESTS = (.*)$", text, re.M)
    if not m:
        raise Failed("no TESTS in %s/Makefile" % bld)
    return m.group(1).split()


# ---- running the suite ------------------------------------------------------

def run_suite(tests, src, bld, jobs, env=None, wrap=None, order=None):
    """Run each test script as `make check` does (in the build directory,
    srcdir exported), `jobs` at a time, longest first by `order` (test ->
    seconds). Returns ({test: (exit status, stdout, stderr, seconds)}, wall
    seconds, CPU seconds of all the processes)."""
    env = dict(os.environ if env is None else env, srcdir=src, LC_ALL="C")

    def one(t):
        t0 = time.monotonic()
        p = subprocess.run((wrap(t) if wrap else []) + ["sh", os.path.join(src, t)], cwd=bld, env=env,
                           capture_output=True)
        return p.returncode, p.stdout.decode("latin-1"), p.stderr.decode("latin-1"), time.monotonic() - t0

    c0, t0 = os.times(), time.monotonic()
    results = parallel(sorted(tests, key=lambda t: -(order or {}).get(t, 0)), jobs, one)
    c1 = os.times()
    return (results, time.monotonic() - t0,
            c1.children_user - c0.children_user + c1.children_system - c0.children_system)


def normalise(text, roots):
    for tag, root in roots:
        text = text.replace(root, tag)
    return text


def compare_suite(want, got, roots_want, roots_got, what):
    """Failures (strings) where `got` differs from `want`, test by test."""
    bad = []
    for t in sorted(got):
        rc0, out0, err0, _ = want[t]
        rc1, out1, err1, _ = got[t]
        if rc0 != rc1:
            bad.append("%s: %s exits %d, the original %d; its stderr ends:\n%s" % (t, what, rc1, rc0, err1[-800:]))
        for name, a, b in (("stdout", out0, out1), ("stderr", err0, err1)):
            la, lb = normalise(a, roots_want).splitlines(), normalise(b, roots_got).splitlines()
            if la != lb:
                i = next((i for i in range(min(len(la), len(lb))) if la[i] != lb[i]), min(len(la), len(lb)))
                bad.append("%s: %s's %s differs from the original's at line %d: %r, not %r" %
                           (t, what, name, i + 1, lb[i] if i < len(lb) else "<end>", la[i] if i < len(la) else "<end>"))
    return bad


def logger_lib(tmp):
    """The longjmp-aware NVTX logger (libpng/nvtx_jmp_logger.c), built."""
    lib = os.path.join(tmp, "libnvtx_jmp_logger.so")
    r = sh(["gcc", "-shared", "-fPIC", "-O1", "-fno-omit-frame-pointer"] + INC + [LOGGER, "-o", lib, "-ldl",
                                                                                   "-lpthread"])
    if r.returncode:
        raise Failed("the NVTX logger does not build:\n%s" % r.stderr)
    return lib


def read_log(path):
    """One process's log from the logger: {"guard": ..., "threads": [{...}],
    "open": [(tid, depth, name)], "names": {name: (pushes, closed by longjmp)}}."""
    out = {"guard": None, "threads": [], "open": [], "names": {}}
    with open(path, encoding="latin-1") as f:
        for line in f.read().splitlines():
            w = line.split(" ")
            if w[0] == "guard":
                out["guard"] = w[1]
            elif w[0] == "thread":
                t = {"tid": int(w[1])}
                t.update((k, int(v)) for k, v in zip(w[2::2], w[3::2]))
                out["threads"].append(t)
            elif w[0] == "open":
                out["open"].append((int(w[1]), int(w[2]), " ".join(w[3:])))
            elif w[0] == "name":
                out["names"][" ".join(w[1:-2])] = (int(w[-2]), int(w[-1]))
            else:
                raise Failed("%s: unexpected line %r" % (path, line))
    if out["guard"] is None:
        raise Failed("%s: no guard line (a truncated log?)" % path)
    return out


def scan_traces(d):
    """Files, bytes and ranges of the ncrun traces under d, the ranges they
    mark closed by longjmp and "open at exit" (by name), and the records
    they say were dropped (libncrt writes one event per line; the "ncrt"
    trailer, with "dropped", comes last)."""
    files = glob.glob(os.path.join(d, "**", "*.trace.json.gz"), recursive=True)
    ranges, jumped, open_at_exit, dropped, trailers = 0, collections.Counter(), collections.Counter(), 0, 0
    for path in files:
        z, tail = zlib.decompressobj(zlib.MAX_WBITS | 16), b""
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                data = tail + z.decompress(chunk)
                cut = data.rfind(b"\n") + 1
                lines, tail = data[:cut], data[cut:]
                ranges += lines.count(b'"ph":"X","cat":"user_annotation"')
                if b'"longjmp":true' in lines or b"open at exit" in lines:
                    for line in lines.split(b"\n"):
                        if b'"longjmp":true' in line:
                            jumped[json.loads(line.rstrip(b",\r"))["name"]] += 1
                        if b"open at exit" in line:
                            open_at_exit[json.loads(line.rstrip(b",\r"))["name"]] += 1
                for m in re.finditer(rb'^  "dropped": (\d+)', lines, re.M):
                    dropped += int(m[1])
                    trailers += 1
    return {"files": len(files), "bytes": sum(os.path.getsize(p) for p in files), "ranges": ranges,
            "jumped": jumped, "open_at_exit": open_at_exit, "dropped": dropped, "trailers": trailers}


def sanitized(ncrun):
    """Is libncrt (beside ncrun) built with a sanitizer? Then it cannot be
    preloaded into programs built without one."""
    lib = os.path.join(os.path.dirname(ncrun), "libncrt.so")
    r = sh(["ldd", lib]) if os.path.exists(lib) else None
    return bool(r and re.search(r"lib(asan|ubsan|tsan)", r.stdout))


# ---- the original (cached) --------------------------------------------------

def original(cache, tarball, src, jobs):
    """Build the original and run its suite, or reuse what an earlier run of
    the same recipe cached. Returns (its build directory, the record)."""
    gcc = sh(["gcc", "--version"]).stdout.splitlines()[0]
    key = {"recipe": RECIPE, "tarball": os.path.basename(tarball), "sha256": sha256(tarball), "gcc": gcc, "src": src}
    bld = os.path.join(cache, "orig-build")
    rec_path = os.path.join(cache, "orig.json")
    try:
        with open(rec_path) as f:
            rec = json.load(f)
        if rec["key"] == key and os.path.exists(os.path.join(bld, ".libs", "libpng16.so")):
            rec["cached"] = True
            rec["results"] = {t: tuple(v) for t, v in rec["results"].items()}
            return bld, rec
    except (OSError, ValueError, KeyError):
        pass
    log("building the original and running its suite (cached in %s)" % cache)
    secs, warnings, wall_warnings = build(src, bld, jobs)
    tests = suite_tests(bld)
    results, wall, cpu = run_suite(tests, src, bld, jobs)
    rec = {"key": key, "build_s": secs, "warnings": warnings, "wall_warnings": wall_warnings, "tests": tests,
           "results": results, "wall": wall, "cpu": cpu}
    with open(rec_path + ".tmp", "w") as f:
        json.dump(rec, f)
    os.replace(rec_path + ".tmp", rec_path)
    rec["cached"] = False
    return bld, rec


# ---- the checks -------------------------------------------------------------

def exported(bld):
    """The functions libpng16.so exports."""
    r = sh(["nm", "-D", "--defined-only", os.path.realpath(os.path.join(bld, ".libs", "libpng16.so"))])
    return {f[2].split("@")[0] for f in (line.split() for line in r.stdout.splitlines())
            if len(f) == 3 and f[1] == "T"}


def c_files(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith((".c", ".h"))]


def keep_all(tmp):
    """--config for a full trace that keeps inline and small functions too
    (left out by default): this test checks every function it can
    instrument, and pins the exported ones it cannot."""
    path = os.path.join(tmp, "keep-all.yaml")
    with open(path, "w") as f:
        f.write("full_trace_inline: true\n")
    return ["--config", path]


def explain_missing(ncrewrite, src, tmp, missing):
    """What `ncrewrite --explain` says about each function in `missing`:
    {name: "file:line: reason"}; the skip lines that name no function (code
    produced by a macro) are matched by the function's name on that line."""
    out = os.path.join(tmp, "explain-out")
    r = sh([ncrewrite, "--full-trace", "--explain"] + keep_all(tmp) + [src, out])
    shutil.rmtree(out, ignore_errors=True)
    why, by_line = {}, []
    for line in r.stdout.splitlines():
        m = re.match(r"^(png[a-z]*\.c):(\d+): skipped (.*?): (.*)$", line)  # the library's sources
        if m and m[3] in missing:
            why.setdefault(m[3], "%s:%s: %s" % (m[1], m[2], m[4]))
        elif m:
            by_line.append(m)
    for m in by_line:
        with open(os.path.join(src, m[1]), errors="replace") as f:
            text = " ".join(f.read().splitlines()[int(m[2]) - 1:int(m[2]) + 2])
        for n in missing - set(why):
            if re.search(r"\b%s\b" % n, text):
                why[n] = "%s:%s: %s (%s)" % (m[1], m[2], m[4], m[3])
    return why


class Suite:
    """The configurations the suite runs in."""

    def __init__(self, args, tests, src, obld, inst, ibld, jobs, order, tmp):
        self.args, self.tests, self.jobs, self.order, self.tmp = args, tests, jobs, order, tmp
        self.trees = {"orig": (src, obld), "inst": (inst, ibld)}
        self.logger = logger_lib(tmp)

    def run(self, config, tests, d=None):
        """config: orig, none (instrumented, no tool), logger, ncrun (with
        --throttle off), ncrun-throttled (ncrun's default throttle). Logs or
        traces go to d/<test>/."""
        src, bld = self.trees["orig" if config == "orig" else "inst"]
        env = wrap = None
        if d:
            shutil.rmtree(d, ignore_errors=True)
        if config == "logger":
            for t in tests:
                os.makedirs(os.path.join(d, os.path.basename(t)))
            preload = " ".join(x for x in (self.logger, os.environ.get("LD_PRELOAD")) if x)
            env = dict(os.environ, NVTX_INJECTION64_PATH=self.logger, LD_PRELOAD=preload)
            wrap = lambda t: ["env", "NVTX_COUNTER_DIR=" + os.path.join(d, os.path.basename(t))]  # noqa: E731
        elif config in ("ncrun", "ncrun-throttled"):
            throttle = ["--throttle", "off"] if config == "ncrun" else []  # or ncrun's default throttle
            wrap = lambda t: [self.args.ncrun, "-q"] + throttle + [  # noqa: E731
                "--run-dir", os.path.join(d, os.path.basename(t)), "--"]
        return run_suite(tests, src, bld, self.jobs, env=env, wrap=wrap, order=self.order)


def command_line(path):
    """The command line the logger saved beside a log, file names only."""
    try:
        with open(path, "rb") as c:
            return " ".join(os.path.basename(a) for a in c.read().decode("latin-1").split("\0")[:-1])
    except OSError:
        return os.path.basename(path)


def logger_report(ldir, tests):
    """Failures, a summary line, and per test {"pushes": n, "jumped":
    Counter(name: ranges closed by longjmp)}, from the logger's per-process
    logs."""
    failures, unbalanced, unlogged, unguarded = [], [], [], []
    procs = pushes = pops = jumped = jumps = 0
    lj_in = lj_jumped = 0
    per_test = {}
    for t in tests:
        d = os.path.join(ldir, os.path.basename(t))
        stats = per_test[t] = {"pushes": 0, "jumped": collections.Counter()}
        for f in sorted(os.listdir(d)):
            if not f.endswith(".cmd"):
                continue
            base = os.path.join(d, f[:-4])
            if not os.path.exists(base + ".log"):
                unlogged.append("%s: %s" % (t, command_line(base + ".cmd")))
                continue
            lg = read_log(base + ".log")
            procs += 1
            if lg["guard"] != "ok":
                unguarded.append("%s: %s" % (t, command_line(base + ".cmd")))
            for th in lg["threads"]:
                pushes, pops, jumped, jumps = (pushes + th["pushes"], pops + th["pops"], jumped + th["longjmp_pops"],
                                               jumps + th["jumps"])
                stats["pushes"] += th["pushes"]
                bad = {k: th[k] for k in ("open", "underflows", "misplaced") if th[k]}
                if bad:
                    opened = [n for tid, _, n in lg["open"] if tid == th["tid"]]
                    unbalanced.append("%s: %s (thread %d): %s%s" % (
                        t, command_line(base + ".cmd"), th["tid"], ", ".join("%s %d" % kv for kv in bad.items()),
                        "; open, outermost first: " + " > ".join(opened[:12]) + (" ..." if len(opened) > 12 else "")
                        if opened else ""))
            for name, (n, j) in lg["names"].items():
                if j:
                    stats["jumped"][name] += j
            n, j = lg["names"].get(LONGJMP, (0, 0))
            lj_in, lj_jumped = lj_in + n, lj_jumped + j
    summary = ("logger: %d processes recorded ranges: %d pushes, %d pops, %d closed by %d longjmps; %s's range "
               "entered %d times, closed by its longjmp %d times" % (procs, pushes, pops, jumped, jumps, LONGJMP,
                                                                     lj_in, lj_jumped))
    if procs == 0:
        failures.append("no process of the suite recorded a range under the logger")
    if unlogged:
        failures.append("%d processes initialised NVTX under the logger but wrote no log (they did not reach exit):"
                        "\n    %s" % (len(unlogged), "\n    ".join(unlogged)))
    if unguarded:
        failures.append("the logger could not read the stack pointer out of a jmp_buf (its pointer guard check "
                        "failed), so it does not follow longjmp, in:\n    %s" % "\n    ".join(unguarded))
    if unbalanced:
        failures.append("%d threads ended with unbalanced NVTX ranges (open: pushed, never popped nor abandoned "
                        "by a longjmp; underflows: pops without a push; misplaced: left behind by a longjmp under "
                        "a range that stays open); test: command line (file names only):\n    %s" %
                        (len(unbalanced), "\n    ".join(unbalanced)))
    if jumped == 0:
        failures.append("no range was closed by longjmp (%d longjmps with ranges open): libpng's error path was "
                        "not exercised with ranges on, or the logger missed the jumps" % jumps)
    if lj_in == 0:
        failures.append("%s's range was never entered: the suite's png_error calls (pngtest's crashers) did not "
                        "reach it with ranges on" % LONGJMP)
    elif lj_jumped != lj_in:
        failures.append("%s's range was entered %d times but closed by its longjmp %d times" %
                        (LONGJMP, lj_in, lj_jumped))
    return failures, summary, per_test


def check(args, tmp):
    failures = []
    jobs = args.jobs or os.cpu_count() or 2
    cache = os.path.abspath(args.cache)
    tarball, src = source_tree(cache)
    log("source: %s (sha256 %s...), Debian's patches not applied" % (os.path.basename(tarball),
                                                                     sha256(tarball)[:16]))
    before = tree_state(src)
    obld, orig = original(cache, tarball, src, jobs)
    want, tests = orig["results"], orig["tests"]
    log("original: built in %.1f s wall, %.1f s CPU%s, %d warnings (%d with -Wall -Wextra); suite of %d tests: "
        "%.1f s wall, %.1f s CPU" % (*orig["build_s"], " (cached)" if orig["cached"] else "", len(orig["warnings"]),
                        len(orig["wall_warnings"]), len(tests), orig["wall"], orig["cpu"]))
    if any(v[0] for v in want.values()):
        failures.append("the original's own suite fails: %s" % [t for t, v in want.items() if v[0]])
    roots0 = [("<src>", src), ("<build>", obld)]

    # instrument the whole tree
    inst = os.path.join(tmp, "inst")
    files = c_files(src)
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    t0 = time.monotonic()
    r = sh([args.ncrewrite, "--full-trace", "-q"] + keep_all(tmp) + [src, inst])
    rewrite_s = time.monotonic() - t0
    if r.returncode:
        raise Failed("ncrewrite exited %d:\n%s" % (r.returncode, r.stderr[-3000:]))
    names, nranges = set(), 0
    for f in c_files(inst):
        text = open(f, errors="replace").read()
        names.update(re.findall(r'NCRT_RANGE\("([^"]+)"\)', text))
        nranges += text.count("NCRT_RANGE(")
    log("rewrite: %d C files (%.2f MB) in %.2f s, %d ranges" % (len(files), mb, rewrite_s, nranges))

    # build it the same way, adding only the include directories
    ibld = os.path.join(tmp, "inst-build")
    build_s, iwarn, iwall = build(inst, ibld, jobs, cppflags=INC)
    log("instrumented: built in %.1f s wall, %.1f s CPU, %d warnings (%d with -Wall -Wextra)" %
        (*build_s, len(iwarn), len(iwall)))
    roots1 = [("<src>", inst), ("<build>", ibld), ("<src>", src)]  # #line names the original files
    for what, w1, w0 in (("its own flags", iwarn, orig["warnings"]),
                         ("-Wall -Wextra", iwall, orig["wall_warnings"])):
        new = sorted(norm_warnings(w1, roots1) - norm_warnings(w0, roots0))
        if new:
            failures.append("the instrumented build has %d new warning(s) with %s:\n    %s" %
                            (len(new), what, "\n    ".join(new)))

    # every exported function has a range, but for the known ones
    exports = exported(obld)
    missing = exports - names
    log("exports: %d functions in libpng16.so, %d with a range, %d without (%d of them known: KNOWN_UNRANGED)" %
        (len(exports), len(exports - missing), len(missing), len(missing & set(KNOWN_UNRANGED))))
    new = sorted(missing - set(KNOWN_UNRANGED))
    if new:
        why = explain_missing(args.ncrewrite, src, tmp, set(new))
        failures.append("%d of the %d functions libpng16.so exports have no range (and are not in KNOWN_UNRANGED); "
                        "`ncrewrite --explain` says:\n    %s" % (len(new), len(exports), "\n    ".join(
                            "%s: %s" % (n, why.get(n, "nothing")) for n in new)))
    ranged = sorted(set(KNOWN_UNRANGED) & names)
    if ranged:
        log("note: now instrumented, to be taken out of KNOWN_UNRANGED: %s" % ", ".join(ranged))

    suite = Suite(args, tests, src, obld, inst, ibld, jobs, {t: v[3] for t, v in want.items()}, tmp)
    light = [t for t in LIGHT if t in tests]
    use_ncrun = not sanitized(args.ncrun)
    if args.bench:
        bench(args, suite, tests, light, use_ncrun)

    # the whole suite under the logger: the same output, every push popped
    # (--suite light: the lighter tests only, the same checks, for CI: the
    # whole suite makes 4.2e9 pushes and ran past 900 s on a loaded machine)
    logged_tests = light if args.suite == "light" else tests
    ldir = os.path.join(tmp, "logs")
    got, wall, cpu = suite.run("logger", logged_tests, ldir)
    log("suite under the NVTX logger: %.1f s wall, %.1f s CPU (the original: %.1f s, %.1f s%s)" %
        (wall, cpu, orig["wall"], orig["cpu"], ", cached" if orig["cached"] else ""))
    failures += compare_suite({t: v for t, v in want.items() if t in logged_tests}, got, roots0, roots1,
                              "the instrumented build under the logger")
    f, summary, logged = logger_report(ldir, logged_tests)
    log(summary)
    failures += f

    # the lighter tests: original, no tool, ncrun
    got, wall0, cpu0 = suite.run("orig", light)
    got, wall1, cpu1 = suite.run("none", light)
    failures += compare_suite(want, got, roots0, roots1, "the instrumented build (no tool)")
    line = "%d lighter tests: original %.1f s wall, %.1f s CPU; instrumented, no tool %.1f s, %.1f s" % (
        len(light), wall0, cpu0, wall1, cpu1)
    if use_ncrun:
        rdir = os.path.join(tmp, "ncrun")
        got, wall2, cpu2 = suite.run("ncrun", light, rdir)
        failures += compare_suite(want, got, roots0, roots1, "the instrumented build under ncrun")
        trs = {t: scan_traces(os.path.join(rdir, os.path.basename(t))) for t in light}
        tr = {k: sum(x[k] for x in trs.values()) for k in ("files", "bytes", "ranges", "dropped", "trailers")}
        log(line + "; under ncrun --throttle off %.1f s, %.1f s: %d traces, %.1f MB, %d ranges (%.2f bytes/range), "
            "%d closed by longjmp" % (wall2, cpu2, tr["files"], tr["bytes"] / 1e6, tr["ranges"],
                                      tr["bytes"] / max(tr["ranges"], 1),
                                      sum(sum(x["jumped"].values()) for x in trs.values())))
        failures += compare_traces(trs, logged)
    else:
        log(line + "; ncrun left out: libncrt beside %s is built with a sanitizer" % args.ncrun)

    if tree_state(src) != before:
        failures.append("the source tree %s changed" % src)
    if failures:
        raise Failed("\n- " + "\n- ".join(failures))
    return ("libpng (%s) instrumented, %d ranges: no new warnings, every export but the %d known ones has a range, "
            "its suite of %d tests prints and exits the same, every push has its pop (longjmp included)%s" %
            (os.path.basename(src), nranges, len(KNOWN_UNRANGED), len(tests),
             ", ncrun's traces agree with the logger" if use_ncrun else ""))


def compare_traces(trs, logged):
    """Failures where ncrun's traces of a test ({test: scan_traces()})
    disagree with what the logger counted in the same test, or hold what
    they should not."""
    bad = []
    for t, tr in sorted(trs.items()):
        if tr["trailers"] != tr["files"]:
            bad.append("%s: %d of ncrun's %d traces end without their \"ncrt\" trailer" %
                       (t, tr["files"] - tr["trailers"], tr["files"]))
        if tr["dropped"]:
            bad.append("%s: ncrun's traces say %d records were dropped" % (t, tr["dropped"]))
        if tr["open_at_exit"]:
            bad.append("%s: ncrun's traces hold %d ranges open at exit: %s" % (t, sum(tr["open_at_exit"].values()),
                       ", ".join("%s %d" % kv for kv in tr["open_at_exit"].most_common())))
        if tr["ranges"] != logged[t]["pushes"]:
            bad.append("%s: ncrun's traces hold %d ranges, the logger counted %d pushes" %
                       (t, tr["ranges"], logged[t]["pushes"]))
        if tr["jumped"] != logged[t]["jumped"]:
            diff = sorted(set(tr["jumped"]) | set(logged[t]["jumped"]))
            bad.append("%s: the ranges closed by longjmp differ (name: ncrun's traces / the logger): %s" % (
                t, ", ".join("%s: %d/%d" % (n, tr["jumped"][n], logged[t]["jumped"][n]) for n in diff
                             if tr["jumped"][n] != logged[t]["jumped"][n])))
    return bad


def bench(args, suite, tests, light, use_ncrun):
    """Each configuration args.bench times, interleaved: the rewrite, the
    builds, the whole suite (original, no tool, logger, ncrun with its
    default throttle) and the lighter tests (original, no tool, logger,
    ncrun --throttle off)."""
    rows = collections.defaultdict(list)
    extra = {}
    for _ in range(args.bench):
        out = os.path.join(suite.tmp, "bench-rewrite")
        shutil.rmtree(out, ignore_errors=True)
        t0, c0 = time.monotonic(), os.times()
        r = sh([args.ncrewrite, "--full-trace", "-q"] + keep_all(suite.tmp) + [suite.trees["orig"][0], out])
        c1 = os.times()
        if r.returncode:
            raise Failed("ncrewrite exited %d:\n%s" % (r.returncode, r.stderr[-3000:]))
        rows["rewrite", "full-trace"].append((time.monotonic() - t0, c1.children_user - c0.children_user +
                                              c1.children_system - c0.children_system))
        shutil.rmtree(out)
        for config, tree, flags in (("orig", "orig", ()), ("inst", "inst", INC)):
            secs = build(suite.trees[tree][0], os.path.join(suite.tmp, "bench-build"), suite.jobs, flags)[0]
            rows["build", config].append(secs)
        shutil.rmtree(os.path.join(suite.tmp, "bench-build"))
        for part, ts, configs in (("suite", tests, ["orig", "none", "logger"] +
                                   (["ncrun-throttled"] if use_ncrun else [])),
                                  ("light", light, ["orig", "none", "logger"] + (["ncrun"] if use_ncrun else []))):
            for config in configs:
                d = os.path.join(suite.tmp, "bench-%s-%s" % (part, config))
                _, wall, cpu = suite.run(config, ts, d if config not in ("orig", "none") else None)
                rows[part, config].append((wall, cpu))
                if config.startswith("ncrun"):
                    extra[config] = scan_traces(d)
                    shutil.rmtree(d)  # the whole suite's traces are large
                if config == "logger":
                    extra[part] = sum(x["pushes"] for x in logger_report(d, ts)[2].values())
                    shutil.rmtree(d)
    log("bench: %d round(s), %d jobs; seconds, best (median)" % (args.bench, suite.jobs))
    for part, config in rows:
        w, c = zip(*rows[part, config])
        base = min(y for _, y in rows[part, "orig"]) if (part, "orig") in rows else None
        log("  %-7s %-15s wall %7.2f (%7.2f)  CPU %7.2f (%7.2f)%s" %
            (part, config, min(w), statistics.median(w), min(c), statistics.median(c),
             "  CPU x%.2f" % (min(c) / base) if base else ""))
    for part in ("suite", "light"):
        if part in extra:
            log("  %s: %d ranges counted by the logger" % (part, extra[part]))
    for config, part in (("ncrun", "light"), ("ncrun-throttled", "suite")):
        if config in extra:
            tr = extra[config]
            log("  %s traces (%s): %d files, %.1f MB, %d ranges, %.2f bytes/range" %
                (config, part, tr["files"], tr["bytes"] / 1e6, tr["ranges"], tr["bytes"] / max(tr["ranges"], 1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ncrewrite")
    ap.add_argument("ncrun")
    ap.add_argument("cache", help="where the download, the unpacked source and the original's build are cached")
    ap.add_argument("--bench", type=int, default=0, metavar="N", help="time every configuration N times first")
    ap.add_argument("--suite", choices=("full", "light"), default="full",
                    help="light: only the lighter tests under the logger (CI's run; label long runs full)")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (emptied first, kept) instead of a temporary one")
    ap.add_argument("-j", "--jobs", type=int, default=0, help="make and suite jobs (default: the CPU count)")
    args = ap.parse_args()
    args.ncrewrite, args.ncrun = os.path.abspath(args.ncrewrite), os.path.abspath(args.ncrun)
    try:
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            os.makedirs(args.keep)
            print("ok: " + check(args, os.path.abspath(args.keep)))
        else:
            with tempfile.TemporaryDirectory(prefix="ncrewrite-libpng-") as tmp:
                print("ok: " + check(args, tmp))
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    except Failed as e:
        print("FAILED: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
