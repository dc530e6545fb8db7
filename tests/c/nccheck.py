"""What the C-family run and differential tests share: the include path of
ncrt.h and NVTX, building the test-only NVTX counter (nvtx_counter.c), and
running an original and an instrumented program side by side.

Each test builds its own programs; this module only compares them.
"""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INC = ["-I", os.path.join(ROOT, "src/runtime/include"), "-I", "/usr/local/cuda/include"]


class Failed(Exception):
    """A check failed; the message says which and how."""


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def full_trace(ncrewrite, src, dst, rules_text="full_trace_mode: true\nfull_trace_inline: true\n"):
    """Instrument src into dst with the given rules (full trace by default,
    inline and small functions included: these tests check that everything
    instrumented still builds and behaves the same)."""
    rules = dst + ".rules.yaml"
    with open(rules, "w") as f:
        f.write(rules_text)
    r = sh([ncrewrite, "-q", "--config", rules, src, dst])
    if r.returncode:
        raise Failed("ncrewrite exited %d:\n%s" % (r.returncode, r.stderr))


def counter_lib(tmp):
    """Build the counting NVTX injection into tmp; return its path."""
    lib = os.path.join(tmp, "libnvtx_counter.so")
    r = sh(["gcc", "-shared", "-fPIC", "-O1"] + INC + [os.path.join(HERE, "nvtx_counter.c"), "-o", lib, "-lpthread"])
    if r.returncode:
        raise Failed("the NVTX counter does not build:\n" + r.stderr)
    return lib


def read_counts(log):
    """The counter's log as {range name: pushes}, plus 'unbalanced'; {} when
    no range ran (the counter writes no log then)."""
    if not os.path.exists(log):
        return {}
    return {k: int(v) for k, v in (line.rsplit(" ", 1) for line in open(log).read().splitlines())}


def run_pair(orig, inst, lib, log, args=(), what="the instrumented program"):
    """Run both programs; the instrumented one under the counter. They must
    print the same and exit the same, and every range must close. Returns
    (the original's result, the counts without 'unbalanced')."""
    want = sh([orig] + list(args))
    got = sh([inst] + list(args), env=dict(os.environ, NVTX_INJECTION64_PATH=lib, NVTX_COUNTER_LOG=log))
    if (got.returncode, got.stdout) != (want.returncode, want.stdout) or not want.stdout:
        raise Failed("%s behaves differently: %r vs %r" % (what, (got.returncode, got.stdout[-500:]),
                                                             (want.returncode, want.stdout[-500:])))
    counts = read_counts(log)
    if counts.pop("unbalanced", 0) != 0:
        raise Failed("%s left a range open or popped one twice" % what)
    return want, counts
