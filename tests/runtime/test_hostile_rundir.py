#!/usr/bin/env python3
"""A run directory written by someone else (issue 42, items 1, 2, 8, 11):
what ncrun and its finalizer read there never makes them touch a file
outside it, follow a planted symlink, or read past a line.

    test_hostile_rundir.py NCRUN_DIR

Each check states the attack, then what must hold. Exit 0 passed, 1 failed.
"""
import glob
import os
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_runtime as rt  # noqa: E402  (Ctx, check, Fail)

check = rt.check


def dead_pid():
    """A pid no process has (the finalizer only touches the sets of dead ones)."""
    for pid in range(4000000, 4100000, 997):
        if not os.path.exists("/proc/%d" % pid):
            return pid
    raise rt.Fail("no free pid")


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def no_report(p, what):
    for bad in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
        check(bad not in p.stderr, "%s: sanitizer report\n%s" % (what, p.stderr[-3000:]))
    check(p.returncode >= 0, "%s: killed by signal %d" % (what, -p.returncode))


def finalize(c, d, *opts):
    p = subprocess.run([c.ncrun, "--finalize", d] + list(opts), capture_output=True, text=True, timeout=120)
    no_report(p, "ncrun --finalize")
    return p


def rundir(c, name):
    d = os.path.join(c.tmp, "a", "b", name)
    os.makedirs(d, mode=0o700)
    return d


def done_marker(c):
    """Item 1: a .done marker's two lines went to rename() unchecked."""
    d, out = rundir(c, "done"), os.path.join(c.tmp, "outside")
    os.makedirs(out)
    write(os.path.join(out, "precious"), "keep")
    write(os.path.join(out, "payload"), "evil")
    pid = dead_pid()
    write(os.path.join(d, ".ncrt-%d.done" % pid), "%s/payload\n%s/precious\n" % (out, out))
    p = finalize(c, d)
    check(read(os.path.join(out, "precious")) == "keep", "the marker replaced a file outside the run directory")
    check(os.path.exists(os.path.join(out, "payload")), "the marker moved a file outside the run directory")
    check("left as is" in p.stderr, "a foreign marker not reported: %s" % p.stderr)
    check(os.path.exists(os.path.join(d, ".ncrt-%d.done" % pid)), "a foreign marker was not left")
    # a path that only looks inside: dir/../outside
    pid2 = dead_pid() + 1
    trace = "x.pt.trace.json.gz"
    write(os.path.join(out, "%s.tmp%d" % (trace, pid2)), "evil")
    write(os.path.join(d, ".ncrt-%d.done" % pid2), "%s/../../../outside/%s.tmp%d\n%s/../../../outside/%s\n"
          % (d, trace, pid2, d, trace))
    finalize(c, d)
    check(not os.path.exists(os.path.join(out, trace)), "a marker's ../ path was followed")
    # a marker within the rules (the process died between the marker and the
    # rename) is still followed
    pid3 = dead_pid() + 2
    write(os.path.join(d, "good.pt.trace.json.gz.tmp%d" % pid3), "trace")
    write(os.path.join(d, ".ncrt-%d.done" % pid3), "%s/good.pt.trace.json.gz.tmp%d\n%s/good.pt.trace.json.gz\n"
          % (d, pid3, d))
    finalize(c, d)
    check(read(os.path.join(d, "good.pt.trace.json.gz")) == "trace", "a good marker was not followed")
    check(not os.path.exists(os.path.join(d, ".ncrt-%d.done" % pid3)), "a good marker was not removed")


def info(pid, *lines):
    return "ncrt-info 1\npid %d\nrank 0\nworld 1\nclock 0 0 0 0 0\nopen 0 1 100 0 0\n%s\n" % (pid, "\n".join(lines))


def trace_name_escape(c):
    """Item 2: .info's trace "../../escaped" wrote two levels up."""
    d = rundir(c, "escape")
    pid = dead_pid()
    write(os.path.join(d, ".ncrt-%d.info" % pid), info(pid, 'trace "../../escaped"'))
    p = finalize(c, d)
    found = glob.glob(os.path.join(c.tmp, "**", "*escaped*"), recursive=True)
    check(not found, "the finalizer wrote outside the run directory: %s" % found)
    check(glob.glob(os.path.join(d, "ncrt*.pt.trace.json.gz")), "no trace in the run directory: %s" % p.stderr)


def unjson_tail(c):
    """Item 8: .info or .hand ending in "\\u read past the NUL (ASan)."""
    d = rundir(c, "unjson")
    pid = dead_pid()
    write(os.path.join(d, ".ncrt-%d.info" % pid), info(pid, 'trace "t"', 'name "ab\\u').rstrip("\n"))
    finalize(c, d)
    pid = dead_pid() + 1
    write(os.path.join(d, ".ncrt-%d.info" % pid), info(pid, 'trace "t\\u00', 'cupti "\\u0"').rstrip("\n"))
    finalize(c, d)


def json_injection(c):
    """Suspected: .info's thread, domain and category lines went into the
    trace as they were: JSON of anyone's making."""
    d = rundir(c, "inject")
    pid = dead_pid()
    write(os.path.join(d, ".ncrt-%d.info" % pid),
          info(pid, 'trace "inj"', 'thread 1 "a"},{"name":"injected","ph":"M","pid":9,"tid":9,"args":{"x":"y"',
               'domain 0 "d"},"injected2":{"', 'cat 0 "c"},"injected3":{"',
               'process {"pid": 1}, "injected4": {"x": 1}'))
    finalize(c, d)
    out = glob.glob(os.path.join(d, "inj*.pt.trace.json.gz"))
    check(out, "no trace written")
    import gzip
    import json
    text = gzip.open(out[0]).read().decode()
    json.loads(text)
    check("injected" not in text, "a line's JSON went into the trace as it was")
    # a process line cut short (or of anyone's making) that is not one JSON
    # object would leave the trace unreadable
    pid = dead_pid() + 2
    write(os.path.join(d, ".ncrt-%d.info" % pid), info(pid, 'trace "cut"', 'process {"pid": 1, "host": {"name": "a"'))
    finalize(c, d)
    out = glob.glob(os.path.join(d, "cut*.pt.trace.json.gz"))
    check(out, "no trace written for the cut process line")
    json.loads(gzip.open(out[0]).read().decode())


def names_big_id(c):
    """Suspected: a one-line .names with id 2^24-1 cost 128 MB."""
    import resource
    d = rundir(c, "bigid")
    pid = dead_pid()
    write(os.path.join(d, ".ncrt-%d.info" % pid), info(pid, 'trace "big"'))
    write(os.path.join(d, ".ncrt-%d.names" % pid), '16777215 "big"\n')
    finalize(c, d)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10
    check(rss < 100, "ncrun --finalize of a one-line .names took %d MB" % rss)


def planted_symlinks(c):
    """Item 2: spill and marker names are predictable; a symlink planted at
    one redirected an O_CREAT|O_TRUNC, a pwritev or the mmap'ed counter."""
    exe = c.cc("basic.c")
    victim = os.path.join(c.tmp, "victim")
    write(victim, "x")
    d = rundir(c, "planted")
    os.symlink(victim, os.path.join(d, ".ncrt-budget"))  # the run's counter (mmap'ed)
    os.symlink(victim, os.path.join(d, "basic_c-rank0.pt.trace.json.gz"))  # the trace's name
    p = subprocess.run([c.ncrun, "--run-dir", d, "--", exe], capture_output=True, text=True, timeout=120)
    no_report(p, "ncrun basic.c")
    check(read(victim) == "x", "a planted symlink redirected a write: victim now %r" % read(victim)[:40])
    check(p.returncode == 3, "basic.c under ncrun: %d %s" % (p.returncode, p.stderr))


def untrusted_dir(c):
    """Item 1: --run-dir took a directory anyone may write into."""
    exe = c.cc("basic.c", out="basic2")
    d = rundir(c, "shared")
    os.chmod(d, 0o777)
    p = subprocess.run([c.ncrun, "--run-dir", d, "--", exe], capture_output=True, text=True, timeout=120)
    check(p.returncode == 2 and "writable by other users" in p.stderr and "--trust-run-dir" in p.stderr,
          "a world-writable run directory was used: %d %s" % (p.returncode, p.stderr))
    check(not os.listdir(d), "something was written into the refused directory: %s" % os.listdir(d))
    p = finalize(c, d)
    check(p.returncode == 2 and "writable by other users" in p.stderr, "--finalize of a shared directory: %s" % p.stderr)
    p = subprocess.run([c.ncrun, "--run-dir", d, "--trust-run-dir", "--", exe], capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 3 and glob.glob(os.path.join(d, "*.pt.trace.json.gz")),
          "--trust-run-dir: %d %s" % (p.returncode, p.stderr))
    # a run directory ncrun makes itself is never left writable by others
    old = os.umask(0)
    try:
        d2 = os.path.join(c.tmp, "made", "run")
        p = subprocess.run([c.ncrun, "--run-dir", d2, "--", exe], capture_output=True, text=True, timeout=120)
    finally:
        os.umask(old)
    check(p.returncode == 3 and not os.stat(d2).st_mode & stat.S_IWOTH, "ncrun's own run directory: %o %s"
          % (os.stat(d2).st_mode, p.stderr))


def main():
    ncrun_dir = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="ncrt-hostile-")
    c = rt.Ctx(ncrun_dir, tmp)
    failed = 0
    for t in (names_big_id, done_marker, trace_name_escape, unjson_tail, json_injection, planted_symlinks,
              untrusted_dir):
        try:
            t(c)
            print("ok   %s" % t.__name__)
        except (rt.Fail, AssertionError, ValueError, subprocess.CalledProcessError) as e:
            failed += 1
            print("FAIL %s: %s" % (t.__name__, e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
