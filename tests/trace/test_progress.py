#!/usr/bin/env python3
"""nctrace's progress line: on a terminal, reading a trace of 64 MB or more
shows "nctrace: reading FILE: N% (a of b MB)" on stderr, rewritten in place
and erased at the end; nothing when stderr is not a terminal, nothing with
-q, and the command's output is the same in all three cases.

    test_progress.py NCTRACE"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "bench", "trace", "gen_trace.py")


def main():
    nct = sys.argv[1]
    if not shutil.which("script"):
        print("SKIPPED: no script(1) to give nctrace a terminal (apt-get install bsdutils)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "big.json")
        subprocess.run([sys.executable, GEN, trace, "70"], check=True, capture_output=True)
        outs, errs = [], []
        # on a terminal (script runs the command on a pseudo-terminal; its
        # transcript holds what the command wrote there)
        for quiet in (False, True):
            out = os.path.join(tmp, "tty%d.md" % quiet)
            cmd = "%s summary %s %s -o %s" % (nct, "-q" if quiet else "", trace, out)
            r = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True)
            if r.returncode:
                print("FAILED: %s exited %d: %r" % (cmd, r.returncode, r.stdout[-500:]))
                return 1
            outs.append(open(out).read())
            errs.append(r.stdout.decode("utf-8", "replace"))
        out = os.path.join(tmp, "pipe.md")
        r = subprocess.run([nct, "summary", trace, "-o", out], capture_output=True, text=True)
        outs.append(open(out).read())
        errs.append(r.stderr)
    lines = re.findall(r"nctrace: reading \S+: +(\d+)% \((\d+) of (\d+) MB\)", errs[0])
    if not lines or int(lines[0][2]) != 66 or not errs[0].endswith("\r\033[K"):
        print("FAILED: no progress line on the terminal (or not erased): %r" % errs[0][-300:])
        return 1
    pcts = [int(p) for p, _, _ in lines]
    if pcts != sorted(pcts) or pcts[-1] > 100:
        print("FAILED: progress not monotonic: %s" % pcts)
        return 1
    if errs[1] or errs[2]:
        print("FAILED: progress with -q (%r) or without a terminal (%r)" % (errs[1][:200], errs[2][:200]))
        return 1
    if not (outs[0] == outs[1] == outs[2]) or "# Trace summary" not in outs[0]:
        print("FAILED: the summary differs between the three runs")
        return 1
    print("ok: %d progress updates, %s%% .. %s%%" % (len(pcts), pcts[0], pcts[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
