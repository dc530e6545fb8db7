#!/usr/bin/env python3
"""Outputs ending in .gz are ONE gzip stream (Perfetto reads only the first
member) holding valid JSON; inputs made of several gzip members (cat a.gz
b.gz) are read whole."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")


def single_member(path):
    data = open(path, "rb").read()
    d = zlib.decompressobj(16 + 15)
    text = d.decompress(data) + d.flush()
    assert d.eof, "%s: gzip stream not finished" % path
    assert d.unused_data == b"", "%s: %d bytes after the first gzip member" % (path, len(d.unused_data))
    return json.loads(text)


def main():
    nctrace = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="nctrace-gz-")
    gb = os.path.join(CASES, "gpu_basic", "trace.json")
    mr = [os.path.join(CASES, "multirank", f) for f in ("rank0.json", "rank1.json")]
    out = os.path.join(tmp, "f.json.gz")
    subprocess.run([nctrace, "filter", gb, "-o", out, "--include-cuda-kernels"], check=True)
    doc = single_member(out)
    # 3 metadata + 3 annotations + the 4 GPU ops launched under them
    # (correlations 1-4) + the gpu_user_annotation "forward" = 11
    assert doc["baseTimeNanoseconds"] == 1700000000000000000 and len(doc["traceEvents"]) == 11, len(doc["traceEvents"])
    out = os.path.join(tmp, "all.trace.json.gz")
    subprocess.run([nctrace, "merge"] + mr + ["-o", out], check=True)
    doc = single_member(out)
    pids = sorted({e["pid"] for e in doc["traceEvents"]})
    assert pids == [0, 1], pids
    # rank 1 started 50 us after rank 0: its events move 50 us later
    k = [e for e in doc["traceEvents"] if e.get("name") == "ncclKernel_AllReduce"]
    assert len(k) == 1 and k[0]["ts"] == 290.0, k
    # a two-member input
    two = os.path.join(tmp, "two.json.gz")
    text = open(gb, "rb").read()
    with open(two, "wb") as f:
        f.write(gzip.compress(text[:1000]) + gzip.compress(text[1000:]))
    a = subprocess.run([nctrace, "summary", gb], capture_output=True, text=True, check=True).stdout
    b = subprocess.run([nctrace, "summary", two], capture_output=True, text=True, check=True).stdout
    assert a.replace(gb, "X") == b.replace(two, "X"), "multi-member input read differently"
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
