#!/usr/bin/env python3
"""Golden test runner: one case = one folder.

    <case>/input/          the source tree (SRC)
    <case>/rules.yaml      the rules (or rules.json; none: no --config)
    <case>/args            extra command-line flags, one line (optional)
    <case>/expected/       the expected OUT tree, byte for byte (.ncrewrite/ excluded)
    <case>/expected.stderr diagnostics, then "exit status: N"
    <case>/expected.stdout what ncrewrite printed (--explain, --diff, --check), if anything

Besides the byte-for-byte comparison, every case checks that:
  - every output file that is Python, C, C++ or CUDA compiles wherever its
    input compiles (compile() and tokenize; gcc/g++ -fsyntax-only; nvcc host syntax);
  - the output is the same with -j 1 as with -j 4 (determinism);
  - instrumenting the output again changes nothing (no double instrumentation);
  - --check on the fresh OUT reports it up to date.
NC_UPDATE_GOLDEN=1 rewrites the expected files instead (review the diff!).
"""
import argparse
import difflib
import filecmp
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDES = ["-I", os.path.join(ROOT, "src/runtime/include"), "-I", "/usr/local/cuda/include"]


def tree(d):
    out = {}
    for base, dirs, files in os.walk(d):
        dirs[:] = sorted(x for x in dirs if x != ".ncrewrite")
        for name in sorted(files + [x for x in dirs if os.path.islink(os.path.join(base, x))]):
            p = os.path.join(base, name)
            rel = os.path.relpath(p, d)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read(), os.stat(p).st_mode & 0o111 != 0)
    return out


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def compiles(path, lang):
    if lang == "py":
        # compiles, and tokenize reads it too (inspect.getsource and
        # TorchScript use tokenize, which is stricter about where a
        # backslash continuation may end)
        r = subprocess.run([sys.executable, "-c",
                            "import sys, tokenize; compile(open(sys.argv[1],'rb').read(), sys.argv[1], 'exec'); "
                            "list(tokenize.tokenize(open(sys.argv[1],'rb').readline))", path],
                           capture_output=True)
    elif lang in ("c", "h"):
        r = subprocess.run(["gcc", "-std=gnu11", "-fsyntax-only"] + INCLUDES + ["-x", "c", path], capture_output=True)
    elif lang in ("cc", "cpp", "cxx", "hpp", "hh"):
        r = subprocess.run(["g++", "-std=gnu++17", "-fsyntax-only"] + INCLUDES + ["-x", "c++", path], capture_output=True)
    elif lang in ("cu", "cuh"):
        if not shutil.which("nvcc"):
            return None
        r = subprocess.run(["nvcc", "-std=c++17", "-x", "cu", "-c", "-o", "/dev/null"] + INCLUDES + [path],
                           capture_output=True)
    else:
        return None
    return r.returncode == 0, r.stderr.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncrewrite", required=True)
    ap.add_argument("case")
    a = ap.parse_args()
    case = os.path.abspath(a.case)
    update = os.environ.get("NC_UPDATE_GOLDEN") == "1"
    failures = []
    rules = [f for f in ("rules.yaml", "rules.yml", "rules.json") if os.path.exists(os.path.join(case, f))]
    extra = []
    if os.path.exists(os.path.join(case, "args")):
        extra = shlex.split(open(os.path.join(case, "args")).read())
    with tempfile.TemporaryDirectory(prefix="ncgolden-") as tmp:
        out = os.path.join(tmp, "out")
        base = [a.ncrewrite] + (["--config", rules[0]] if rules else []) + extra
        rc, so, se = run(base + ["-j", "4", "input", out], case)
        se = se.replace(tmp, "TMP")
        so = so.replace(tmp, "TMP")
        got_err = se + "exit status: %d\n" % rc
        if update:
            exp = os.path.join(case, "expected")
            shutil.rmtree(exp, ignore_errors=True)
            if os.path.isdir(out):  # (no OUT: no expected/, which git could not keep empty)
                shutil.copytree(out, exp, symlinks=True, ignore=shutil.ignore_patterns(".ncrewrite"))
            open(os.path.join(case, "expected.stderr"), "w").write(got_err)
            sp = os.path.join(case, "expected.stdout")
            if so:
                open(sp, "w").write(so)
            elif os.path.exists(sp):
                os.remove(sp)
            print("updated", os.path.basename(case))
        exp_err = open(os.path.join(case, "expected.stderr")).read()
        if got_err != exp_err:
            failures.append("stderr differs:\n" + "".join(difflib.unified_diff(
                exp_err.splitlines(True), got_err.splitlines(True), "expected.stderr", "got")))
        sp = os.path.join(case, "expected.stdout")
        exp_out = open(sp).read() if os.path.exists(sp) else ""
        if so != exp_out:
            failures.append("stdout differs:\n" + "".join(difflib.unified_diff(
                exp_out.splitlines(True), so.splitlines(True), "expected.stdout", "got")))
        want = tree(os.path.join(case, "expected"))
        got = tree(out) if os.path.isdir(out) else {}
        for rel in sorted(set(want) | set(got)):
            if rel not in got:
                failures.append("missing from OUT: " + rel)
            elif rel not in want:
                failures.append("unexpected in OUT: " + rel)
            elif want[rel] != got[rel]:
                w, g = want[rel][1], got[rel][1]
                if w == g:
                    failures.append("%s: executable bit differs" % rel)
                    continue
                if isinstance(w, bytes):
                    w, g = w.decode("utf-8", "replace"), g.decode("utf-8", "replace")
                failures.append("%s differs:\n%s" % (rel, "".join(difflib.unified_diff(
                    w.splitlines(True), g.splitlines(True), "expected/" + rel, "got/" + rel))))
        if os.path.isdir(out):
            # compiles wherever the input compiles
            for rel, (kind, *_) in got.items():
                if kind != "file":
                    continue
                ext = rel.rsplit(".", 1)[-1] if "." in rel else ""
                src = os.path.join(case, "input", rel)
                if not os.path.exists(src):
                    continue
                r_in = compiles(src, ext)
                if r_in is None or not r_in[0]:
                    continue
                r_out = compiles(os.path.join(out, rel), ext)
                if r_out is not None and not r_out[0]:
                    failures.append("%s: input compiles, output does not:\n%s" % (rel, r_out[1]))
            # deterministic whatever the job count
            out1 = os.path.join(tmp, "out-j1")
            run(base + ["-j", "1", "input", out1], case)
            if tree(out1) != got:
                failures.append("output with -j 1 differs from -j 4")
            m1 = open(os.path.join(out1, ".ncrewrite/manifest.json"), "rb").read()
            m4 = open(os.path.join(out, ".ncrewrite/manifest.json"), "rb").read()
            if m1 != m4:
                failures.append("manifest with -j 1 differs from -j 4")
            # --check on a fresh OUT: up to date
            rc2, so2, se2 = run(base + ["--check", "input", out], case)
            if rc2 != 0 and rc == 0:
                failures.append("--check right after a run says out of date:\n" + so2 + se2)
            # idempotent: rewriting the output changes nothing
            out2 = os.path.join(tmp, "out-again")
            rules_again = [os.path.join(case, rules[0])] if rules else []
            run([a.ncrewrite] + (["--config"] + rules_again if rules else []) + extra + [out, out2], tmp)
            again = tree(out2) if os.path.isdir(out2) else {}
            for rel, v in got.items():
                if v[0] == "file" and again.get(rel) != v:
                    failures.append("instrumenting the output again changed " + rel)
    if failures:
        print("\n".join(failures))
        print("FAILED:", os.path.basename(case))
        return 1
    print("ok:", os.path.basename(case))
    return 0


if __name__ == "__main__":
    sys.exit(main())
