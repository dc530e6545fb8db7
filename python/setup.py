"""Build the ncrewrite Python package and its C extension, ncrewrite._engine.

    python3 -m pip install --no-build-isolation ./python        (from the clone)

How the extension gets the compiler core, and why this way:

The extension compiles the very same C files the CMake build compiles into
ncbase, ncrw_base, ncrw_rules and ncrw_core, and the tree-sitter core and
grammars (ts_grammars), reading the lists from the CMake files themselves
(src/rewrite/CMakeLists.txt, src/grammar/CMakeLists.txt), so a file added
there is built here too and there is one list of sources, not two. It does
not link the CMake build's static libraries: those are not
position-independent (a shared object cannot take them), they belong to
whichever build directory made them (RelWithDebInfo, ASan, TSan, fuzzing:
a sanitizer build linked into python would not even load), and
`pip install ./python` should not depend on a build directory existing or
being up to date. Compiling ~25 files takes a few seconds.

Offline: the tree-sitter sources are the npm tarballs CMake's configure step
fetches into the clone's .deps/ (or $NCREWRITE_DEPS_DIR), checked here
against the same SHA-512 pins; nothing is downloaded. Run
`cmake -S . -B build` once first if .deps/ is empty. libyaml and cJSON are
Debian's (libyaml-dev, libcjson-dev), as for the CMake build. Build with
--no-build-isolation: pip's isolated build would fetch setuptools from PyPI.

The source tree is found as this file's parent folder ($NCREWRITE_SOURCE_DIR
overrides it: the tests build from a copy of python/).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)  # setuptools wants package paths relative to setup.py's folder
ROOT = os.environ.get("NCREWRITE_SOURCE_DIR") or os.path.dirname(HERE)
LIMITED_API = "0x03090000"  # CPython >= 3.9, one abi3 build for all


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def fail(msg):
    sys.exit("ncrewrite setup: " + msg)


if not os.path.isfile(os.path.join(ROOT, "src", "rewrite", "CMakeLists.txt")):
    fail("no ncrewrite source tree at %s: build from a clone (pip install ./python), "
         "or set NCREWRITE_SOURCE_DIR" % ROOT)

VERSION = re.search(r"project\(ncrewrite\s+VERSION\s+([0-9.]+)", read("CMakeLists.txt")).group(1)


def rewrite_parts():
    """{part: [source files]} from src/rewrite/CMakeLists.txt's nc_rw_part calls."""
    text = re.sub(r"#[^\n]*", "", read("src", "rewrite", "CMakeLists.txt"))
    parts = {}
    for m in re.finditer(r"nc_rw_part\((\w+)\s+SOURCES\s+(.*?)\s+LINKS", text, re.S):
        parts[m.group(1)] = [os.path.join(ROOT, "src", "rewrite", s) for s in m.group(2).split()]
    for need in ("ncrw_base", "ncrw_rules", "ncrw_core", "ncrw_driver", "ncrw_tools"):
        if need not in parts:
            fail("src/rewrite/CMakeLists.txt: no nc_rw_part(%s ...)" % need)
    return parts


def trace_sources():
    """nctrace's core (nctrace_core) and its commands (the nctrace program's
    files but main.c, and report.c, whose page assets the CMake build
    generates) from src/trace/CMakeLists.txt: run_tool calls them."""
    text = re.sub(r"#[^\n]*", "", read("src", "trace", "CMakeLists.txt"))
    core = re.search(r"add_library\(nctrace_core\s+STATIC\s+(.*?)\)", text, re.S)
    cli = re.search(r"add_executable\(nctrace\s+(.*?)\)", text, re.S)
    if not core or not cli:
        fail("src/trace/CMakeLists.txt: cannot read nctrace_core's and nctrace's sources")
    files = core.group(1).split() + [f for f in cli.group(1).split() if f not in ("cli/main.c", "cli/report.c")]
    return [os.path.join(ROOT, "src", "trace", f) for f in files]


def grammar_pins():
    """[(name, version, sha512, VAR)] and {target: (VAR, [files])} from src/grammar/CMakeLists.txt."""
    text = re.sub(r"#[^\n]*", "", read("src", "grammar", "CMakeLists.txt"))
    pins = re.findall(r"nc_npm_package\(([\w-]+)\s+([0-9.]+)\s+([0-9a-f]{128})\s+(\w+)\)", text)
    grammars = {}
    for m in re.finditer(r"nc_grammar\((\w+)\s+\"\$\{(\w+)\}\"\s+(.*?)\)", text, re.S):
        files = [f.strip('"').replace("${%s}" % m.group(2), "") for f in m.group(3).split()]
        grammars[m.group(1)] = (m.group(2), [f.lstrip("/") for f in files])
    if not pins or "ts_python" not in grammars:
        fail("src/grammar/CMakeLists.txt: cannot read the pinned packages")
    return pins, grammars


def unpack_deps(dest):
    """The pinned npm tarballs, checked and unpacked under dest: {VAR: dir}."""
    deps = os.environ.get("NCREWRITE_DEPS_DIR") or os.path.join(ROOT, ".deps")
    pins, grammars = grammar_pins()
    dirs = {}
    for name, version, sha, var in pins:
        tgz = os.path.join(deps, "%s-%s.tgz" % (name, version))
        if not os.path.isfile(tgz):
            fail("%s missing: run `cmake -S %s -B build` once (it fetches the pinned tree-sitter "
                 "sources with npm into .deps/), or set NCREWRITE_DEPS_DIR" % (tgz, ROOT))
        with open(tgz, "rb") as f:
            have = hashlib.sha512(f.read()).hexdigest()
        if have != sha:
            fail("%s: SHA-512 mismatch (want %s..., got %s...)" % (tgz, sha[:16], have[:16]))
        out = os.path.join(dest, "%s-%s" % (name, version))
        stamp = os.path.join(out, ".sha512")
        if not (os.path.isfile(stamp) and open(stamp).read() == sha):
            shutil.rmtree(out, ignore_errors=True)
            with tarfile.open(tgz) as t:
                members = [m for m in t.getmembers() if m.isfile() or m.isdir()]
                for m in members:
                    if m.name.startswith("/") or ".." in m.name.split("/"):
                        fail("%s: unsafe path %s" % (tgz, m.name))
                t.extractall(out, members=members)
            with open(stamp, "w") as f:
                f.write(sha)
        dirs[var] = os.path.join(out, "package")
    return dirs, grammars


def pkg_config(*args):
    try:
        return subprocess.run(["pkg-config"] + list(args), check=True, capture_output=True,
                              text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return []


class BuildExt(build_ext):
    """Compiles the third-party tree-sitter code on its own (warnings off,
    -O2, as src/grammar does), in parallel, then the extension with the
    project's sources."""

    def build_extension(self, ext):
        if ext.name == "ncrewrite._engine":
            dirs, grammars = unpack_deps(os.path.join(self.build_temp, "deps"))
            core = os.path.join(dirs["TS_CORE_DIR"], "vendor", "tree-sitter", "lib")
            jobs = [([os.path.join(core, "src", "lib.c")], [os.path.join(core, "include"), os.path.join(core, "src")],
                     [("_POSIX_C_SOURCE", "200112L"), ("_DEFAULT_SOURCE", None)])]
            for target, (var, files) in sorted(grammars.items()):
                d = dirs[var]
                jobs += [([os.path.join(d, f)], [os.path.join(d, "src")], []) for f in files]
            out = os.path.join(self.build_temp, "ts")

            def compile_one(job):
                srcs, incs, macros = job
                return self.compiler.compile(srcs, output_dir=out, macros=macros, include_dirs=incs,
                                             extra_postargs=["-w", "-O2", "-fvisibility=hidden",
                                                             "-fno-semantic-interposition"])

            step("the parsers: tree-sitter and %d grammar files (the longest step)" % (len(jobs) - 1))
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                objs = [o for r in pool.map(compile_one, jobs) for o in r]
            step("the engine: %d files" % len(ext.sources))
            ext.extra_objects = objs + list(ext.extra_objects or [])
            ext.include_dirs = list(ext.include_dirs) + [os.path.join(core, "include")]
        super().build_extension(ext)

    def run(self):
        super().run()
        BuildRuntime(self).run()


def find_header(rel, extra_env):
    """The first of the CMake build's hint folders (and $extra_env) holding rel."""
    hints = [os.environ.get(extra_env, ""), "/usr/local/cuda/include", "/usr/local/cuda/targets/x86_64-linux/include",
             "/usr/local/cuda/extras/CUPTI/include", "/usr/include"]
    for d in hints:
        if d and os.path.isfile(os.path.join(d, rel)):
            return d
    return None


def runtime_sources():
    """libncrt's files from src/runtime/CMakeLists.txt's add_library(ncrt SHARED ...)."""
    text = re.sub(r"#[^\n]*", "", read("src", "runtime", "CMakeLists.txt"))
    m = re.search(r"add_library\(ncrt\s+SHARED\s+(.*?)\)", text, re.S)
    if not m:
        fail("src/runtime/CMakeLists.txt: cannot read libncrt's sources")
    return [os.path.join(ROOT, "src", "runtime", f) for f in m.group(1).split()]


def step(what):
    """A progress line (scripts/wheel shows these while pip builds quietly)."""
    print("ncrewrite setup: %s" % what, flush=True)


def interpreters():
    """The CPythons to build the ncrt module for: $NCREWRITE_PYTHONS (';' or
    ':' separated paths), else the one running this build."""
    want = os.environ.get("NCREWRITE_PYTHONS", "")
    pys = [p for p in re.split(r"[;:]", want) if p] or [sys.executable]
    out = []
    for py in pys:
        try:
            r = subprocess.run([py, "-c", "import sysconfig as s, sys; print(s.get_paths()['include']); "
                                "print(s.get_config_var('EXT_SUFFIX')); print(sys.implementation.name)"],
                               check=True, capture_output=True, text=True).stdout.split("\n")
        except (OSError, subprocess.CalledProcessError) as e:
            fail("NCREWRITE_PYTHONS: %s does not run: %s" % (py, e))
        if r[2] == "cpython" and os.path.isfile(os.path.join(r[0], "Python.h")):
            out.append((py, r[0], r[1]))
        else:
            print("ncrewrite setup: no ncrt module for %s (not a CPython with headers)" % py)
    return out


class BuildRuntime:
    """The collector for in-process recording, built beside the engine:
    ncrewrite/libncrt.so (libncrt's sources as the CMake build compiles
    them; NVTX and CUPTI headers only: CUPTI is dlopen()ed at run time) and
    the ncrt module (src/runtime/python/ncrtmodule.c; the marker module
    instrumented code imports) for each interpreter of interpreters(): it
    uses CPython's full API, so it is one file per minor version, named by
    EXT_SUFFIX, side by side. Without NVTX headers neither is built and the
    package says so when a profiler starts."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.cc = cmd.compiler

    def run(self):
        nvtx = find_header(os.path.join("nvtx3", "nvToolsExt.h"), "NCREWRITE_NVTX_INCLUDE")
        if not nvtx:
            print("ncrewrite setup: NVTX v3 headers not found (set NCREWRITE_NVTX_INCLUDE): "
                  "no in-process recording (libncrt, ncrt) in this build")
            return
        cupti = find_header("cupti.h", "NCREWRITE_CUPTI_INCLUDE")
        rt_inc = os.path.join(ROOT, "src", "runtime", "include")
        common = os.path.join(ROOT, "src", "common")  # rundir.h (header only)
        tls = ["-mtls-dialect=gnu2"] if os.uname().machine in ("x86_64", "AMD64") else []
        macros = [("_GNU_SOURCE", None)] + ([("NCRT_HAVE_CUPTI", None)] if cupti else [])
        step("libncrt, the collector")
        objs = self.cc.compile(runtime_sources(), output_dir=os.path.join(self.cmd.build_temp, "ncrt"),
                               macros=macros, include_dirs=[rt_inc, common, nvtx] + ([cupti] if cupti else []),
                               extra_postargs=["-std=gnu11", "-O2", "-fvisibility=hidden"] + tls)
        pkg = os.path.join(self.cmd.build_lib, "ncrewrite")
        os.makedirs(pkg, exist_ok=True)
        self.cc.link_shared_object(objs, os.path.join(pkg, "libncrt.so"), libraries=["z", "dl", "pthread"],
                                   extra_postargs=["-Wl,-z,nodelete", "-Wl,--no-undefined"])
        mod = os.path.join(ROOT, "src", "runtime", "python", "ncrtmodule.c")
        for py, inc, suffix in interpreters():
            step("the ncrt module for %s (%s)" % (py, suffix))
            tmp = os.path.join(self.cmd.build_temp, "ncrt" + suffix.replace(".", "_"))
            o = self.cc.compile([mod], output_dir=tmp, include_dirs=[inc, nvtx, rt_inc],
                                extra_postargs=["-O2", "-fvisibility=hidden", "-w"] + tls)
            self.cc.link_shared_object(o, os.path.join(self.cmd.build_lib, "ncrt" + suffix), libraries=["dl"])
        self.torch_writer(pkg)

    def torch_writer(self, pkg):
        """ncrewrite/ncrt_torch_events: the torch export's C++ trace writer,
        for a torch without Kineto (Debian's python3-torch 1.13), where
        torch's C++ headers are (libtorch-dev, pybind11-dev), for the
        interpreter running this build; ncrt_torch_events.lib beside it names
        the libtorch_cpu it was linked against (the export uses it only in a
        process that loaded that one). Optional: without it the export's
        Python path writes the same trace, slower."""
        src = os.path.join(ROOT, "src", "runtime", "python", "torch_backend", "ncrt_torch_events.cpp")
        cxx = os.environ.get("CXX", "c++")

        def lib_path(name):
            try:
                p = subprocess.run([cxx, "-print-file-name=" + name], capture_output=True, text=True).stdout.strip()
            except OSError:
                return None
            return os.path.realpath(p) if os.path.isabs(p) and os.path.exists(p) else None

        torch_cpu, c10 = lib_path("libtorch_cpu.so"), lib_path("libc10.so")
        heads = [os.path.join("/usr/include", h) for h in ("torch/csrc/autograd/profiler_kineto.h",
                                                          "pybind11/pybind11.h")]
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            return  # this interpreter has no torch to write traces of
        if not (torch_cpu and c10 and all(os.path.isfile(h) for h in heads)):
            print("ncrewrite setup: no C++ torch trace writer (apt-get install libtorch-dev pybind11-dev): "
                  "the torch export writes in Python")
            return
        import sysconfig

        step("the torch export's C++ trace writer, for %s" % torch_cpu)
        out = os.path.join(pkg, "ncrt_torch_events" + sysconfig.get_config_var("EXT_SUFFIX"))
        r = subprocess.run([cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-w",
                            "-I" + sysconfig.get_paths()["include"], "-I/usr/include/torch/csrc/api/include",
                            src, "-o", out, torch_cpu, c10], capture_output=True, text=True)
        if r.returncode:
            print("ncrewrite setup: the C++ torch trace writer did not build (the Python path writes):\n"
                  + r.stderr[-2000:])
            return
        with open(os.path.join(pkg, "ncrt_torch_events.lib"), "w") as f:
            f.write(torch_cpu + "\n")


class BuildPy(build_py):
    """Also puts ncrewrite-bootstrap.pth at the top of the install (site-packages):
    it re-enables the import hook in child processes (docs/python.md); and
    src/runtime's torch trace writer into the package."""

    def run(self):
        super().run()
        self.copy_file(os.path.join(HERE, "ncrewrite-bootstrap.pth"),
                       os.path.join(self.build_lib, "ncrewrite-bootstrap.pth"), preserve_mode=0)
        # the torch profiler's trace writer, one file for ncrun's torch backend and this package
        self.copy_file(os.path.join(ROOT, "src", "runtime", "python", "torch_backend", "_ncrt_torch_export.py"),
                       os.path.join(self.build_lib, "ncrewrite", "_ncrt_torch_export.py"), preserve_mode=0)


parts = rewrite_parts()
sources = ([os.path.join(HERE, "src", "engine.c"), os.path.join(ROOT, "src", "common", "ncbase.c")]
           + parts["ncrw_base"] + parts["ncrw_rules"] + parts["ncrw_core"] + parts["ncrw_driver"]
           + parts["ncrw_tools"] + trace_sources())
rw = os.path.join(ROOT, "src", "rewrite")
includes = [os.path.join(ROOT, "src", "common")] + [os.path.join(rw, d) for d in
                                                    ("base", "rules", "core", "core/python", "core/c",
                                                     "driver", "tools")]
includes += [os.path.join(ROOT, "src", "trace", d) for d in ("core", "cli")]
includes += [f[2:] for f in pkg_config("--cflags-only-I", "libcjson", "yaml-0.1")]

engine = Extension(
    "ncrewrite._engine",
    sources=sources,
    include_dirs=includes,
    define_macros=[("Py_LIMITED_API", LIMITED_API), ("_GNU_SOURCE", None), ("NC_VERSION", '"%s"' % VERSION)],
    libraries=["yaml", "cjson", "z", "m"],
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden"],
    py_limited_api=True,
)

setup(
    name="ncrewrite",
    version=VERSION,
    description="ncrewrite's import hook: NVTX ranges added to Python modules as they are imported",
    packages=["ncrewrite", "ncrewrite.trace", "ncrewrite.trace.profile"],
    ext_modules=[engine],
    cmdclass={"build_ext": BuildExt, "build_py": BuildPy},
    python_requires=">=3.9",
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
    zip_safe=False,
)
