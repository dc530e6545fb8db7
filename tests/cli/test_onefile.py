#!/usr/bin/env python3
"""ncrewrite's per-file mode (--file) and rule validation (--validate).

    test_onefile.py NCREWRITE GOLDEN_DIR

1. Same output as the tree mode: for every golden case that succeeds, each
   input file instrumented alone (--file input/REL --as REL, run from the
   case folder so #line directives name the same path) equals the case's
   expected/REL byte for byte.
2. The depfile, atomic replacement, nothing written on errors, usage errors.
3. --validate: valid files pass; each broken one is reported at file:line:col
   with its source line, and all files are checked.
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)


def nc(*args, cwd=None):
    p = subprocess.run([NC] + list(args), cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def golden_equivalence(golden, tmp):
    n = 0
    for case in sorted(os.listdir(golden)):
        d = os.path.join(golden, case)
        exp_err = os.path.join(d, "expected.stderr")
        if not os.path.isdir(os.path.join(d, "expected")) or not os.path.exists(exp_err):
            continue
        if not open(exp_err).read().rstrip().endswith("exit status: 0"):
            continue
        args = shlex.split(open(os.path.join(d, "args")).read()) if os.path.exists(os.path.join(d, "args")) else []
        args = [a for i, a in enumerate(args) if a in ("--full-trace", "--strict", "--languages")
                or (i and args[i - 1] == "--languages")]
        rules = [r for r in ("rules.yaml", "rules.json") if os.path.exists(os.path.join(d, r))]
        cfg = ["--config", rules[0]] if rules else []
        # paths the tree mode left out of OUT (--explain says so): --file has
        # nothing to be equivalent to there
        out_txt = os.path.join(d, "expected.stdout")
        left_out = [l.split(": left out:")[0] for l in (open(out_txt).read().splitlines()
                                                        if os.path.exists(out_txt) else []) if ": left out:" in l]
        for base, dirs, files in os.walk(os.path.join(d, "input")):
            dirs.sort()
            for name in sorted(files):
                src = os.path.join(base, name)
                if os.path.islink(src):
                    continue
                rel = os.path.relpath(src, os.path.join(d, "input"))
                if any(rel == x or (x.endswith("/") and rel.startswith(x)) for x in left_out):
                    continue
                out = os.path.join(tmp, "eq", case, rel)
                rc, _, err = nc(*cfg, *args, "-q", "--file", os.path.join("input", rel), "--as", rel, "-o", out, cwd=d)
                check(rc == 0, "%s/%s: --file exit %d\n%s" % (case, rel, rc, err))
                if rc:
                    continue
                with open(out, "rb") as f, open(os.path.join(d, "expected", rel), "rb") as g:
                    check(f.read() == g.read(), "%s/%s: --file output differs from the tree mode's" % (case, rel))
                n += 1
    check(n > 30, "only %d files compared: the golden cases were not found" % n)


def build_action(tmp):
    w = os.path.join(tmp, "w")
    os.makedirs(os.path.join(w, "src"))
    with open(os.path.join(w, "src/k.cu"), "w") as f:
        f.write("void host(float *p) {\n  p[0] = 1;\n}\n")
    with open(os.path.join(w, "r.yaml"), "w") as f:
        f.write('targets:\n  "src/*.cu":\n    func_context_wrappings:\n      host: {}\n')
    out, dep = "gen dir/k.cu", "gen dir/k.cu.d"
    rc, _, err = nc("--config", "r.yaml", "--file", "src/k.cu", "-o", out, "--depfile", dep, cwd=w)
    check(rc == 0, "build action: exit %d\n%s" % (rc, err))
    check(open(os.path.join(w, dep)).read() == "gen\\ dir/k.cu: src/k.cu r.yaml\n",
          "depfile: %r" % open(os.path.join(w, dep)).read())
    text = open(os.path.join(w, out)).read()
    check('NCRT_RANGE("host")' in text and '#line 1 "src/k.cu"' in text, "build action output:\n" + text)
    check(sorted(os.listdir(os.path.join(w, "gen dir"))) == ["k.cu", "k.cu.d"], "temporary files left behind")
    # a rerun replaces the file by rename (a reader never sees half of it)
    ino = os.stat(os.path.join(w, out)).st_ino
    rc, _, _ = nc("--config", "r.yaml", "--file", "src/k.cu", "-o", out, cwd=w)
    check(rc == 0 and os.stat(os.path.join(w, out)).st_ino != ino, "rerun did not replace OUT atomically")
    # a file no rule names is copied unchanged (the rules match by --as)
    rc, _, _ = nc("--config", "r.yaml", "--file", "src/k.cu", "--as", "other/k.cu", "-o", "plain.cu", cwd=w)
    check(rc == 0 and open(os.path.join(w, "plain.cu")).read() == open(os.path.join(w, "src/k.cu")).read(),
          "a file no target names must be copied unchanged")
    # errors write nothing and leave an existing OUT as it was
    before = open(os.path.join(w, out)).read()
    with open(os.path.join(w, "bad.yaml"), "w") as f:
        f.write("targets: [\n")
    rc, _, err = nc("--config", "bad.yaml", "--file", "src/k.cu", "-o", out, "--depfile", "new.d", cwd=w)
    check(rc == 1 and "bad.yaml:2:1: error:" in err, "bad rules: exit %d\n%s" % (rc, err))
    check(open(os.path.join(w, out)).read() == before and not os.path.exists(os.path.join(w, "new.d")),
          "bad rules changed OUT or wrote a depfile")
    rc, _, err = nc("--config", "r.yaml", "--file", "src/missing.cu", "-o", "m.cu", cwd=w)
    check(rc == 1 and "src/missing.cu: error: cannot read" in err and not os.path.exists(os.path.join(w, "m.cu")),
          "missing input: exit %d\n%s" % (rc, err))
    # never written: the input itself (also through a link), nor -o as depfile
    os.symlink("src/k.cu", os.path.join(w, "link.cu"))
    src_before = open(os.path.join(w, "src/k.cu")).read()
    for args in (["-o", "src/k.cu"], ["-o", "link.cu"], ["-o", "x.cu", "--depfile", "src/k.cu"],
                 ["-o", "x.cu", "--depfile", "x.cu"]):
        rc, _, err = nc("--config", "r.yaml", "--file", "src/k.cu", *args, cwd=w)
        check(rc == 1 and "never writes into sources" in err, "%s: exit %d\n%s" % (args, rc, err))
    check(open(os.path.join(w, "src/k.cu")).read() == src_before and not os.path.exists(os.path.join(w, "x.cu")),
          "the input was written, or output appeared after a refusal")
    # usage
    for args in (["--file", "src/k.cu"], ["--file", "src/k.cu", "-o", "x", "src", "out"],
                 ["-o", "x", "src", "out"], ["--file", "src/k.cu", "-o", "x", "--check"], ["--validate"]):
        rc, _, _ = nc(*args, cwd=w)
        check(rc == 2, "usage %s: exit %d, want 2" % (args, rc))


def validate(tmp):
    v = os.path.join(tmp, "v")
    os.makedirs(v)
    files = {
        "good.yaml": "targets:\n  m:\n    func_context_wrappings:\n      f: {}\n",
        "good.json": '{"targets": {"m": {"func_context_wrappings": {"f": {}}}}}\n',
        "unknown.yaml": "targets:\n  m:\n    func_context_wrapings:\n      f: {}\n",
        "syntax.json": '{"targets": {"m": }\n',
    }
    for name, text in files.items():
        with open(os.path.join(v, name), "w") as f:
            f.write(text)
    rc, out, err = nc("--validate", "good.yaml", "good.json", cwd=v)
    check(rc == 0 and "2 rule files checked, 0 with errors" in err, "valid files: exit %d\n%s" % (rc, err))
    rc, out, err = nc("--validate", "good.yaml", "unknown.yaml", "syntax.json", cwd=v)
    check(rc == 1, "broken files: exit %d, want 1" % rc)
    check("unknown.yaml:3:5: error:" in err and "\n        func_context_wrapings:\n        ^" in err,
          "unknown key not reported at its place with a caret:\n" + err)
    check("syntax.json:1:" in err and "3 rule files checked, 2 with errors" in err,
          "every file must be checked:\n" + err)
    rc, out, err = nc("-q", "--validate", "good.yaml", cwd=v)
    check(rc == 0 and err == "", "--quiet --validate printed: " + err)


def main():
    global NC
    NC, golden = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="nconefile-")
    try:
        golden_equivalence(golden, tmp)
        build_action(tmp)
        validate(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in FAILS:
        print("FAIL:", f)
    print("%s (%d failures)" % ("ok" if not FAILS else "FAILED", len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
