#!/usr/bin/env python3
"""Crafted traces (issue 42, items 3, 4, 7, 9, 10): each read by nctrace
ends in a clear message or a right answer, never a signal, a sanitizer
report or memory out of proportion to the input.

  test_hostile_traces.py NCTRACE            run the cases
  test_hostile_traces.py --write DIR        write the crafted .pftrace files
                                            (fuzz/corpus/pftrace holds them)
"""
import gzip
import os
import resource
import shutil
import subprocess
import sys
import tempfile

GiB = 1 << 30


# ---- protobuf, as far as a Perfetto trace needs it ----

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def vfield(n, v):
    return varint(n << 3) + varint(v)


def lfield(n, data):
    return varint(n << 3 | 2) + varint(len(data)) + data


def packet(*fields):
    return lfield(1, b"".join(fields))


def track_event(type_, iid=None, name=None):
    te = vfield(9, type_)
    if iid is not None:
        te += vfield(10, iid)
    if name is not None:
        te += lfield(23, name.encode())
    return lfield(11, te)


def event_name(iid, name):
    return lfield(12, lfield(2, vfield(1, iid) + lfield(2, name.encode())))


BEGIN, END, INSTANT = 1, 2, 3

CRAFTED = {
    # item 3: a name_iid with bit 63 set was taken as a literal name's id
    "iid-bit63.pftrace": packet(vfield(8, 1), track_event(INSTANT, iid=(1 << 63) | 5), vfield(10, 1)),
    # item 3, the heap-buffer-overflow: a literal name exists, the id is past it
    "iid-bit63-lit.pftrace": packet(vfield(8, 1), track_event(INSTANT, name="a"), vfield(10, 1))
    + packet(vfield(8, 2), track_event(INSTANT, iid=(1 << 63) | 7), vfield(10, 1)),
    # item 4: an iid of 2^30 grew a table of 2^30 entries (6.3 GB)
    "iid-2p30.pftrace": packet(event_name(1 << 30, "a")),
    "iid-2p62.pftrace": packet(event_name(1 << 62, "b"), vfield(8, 5), track_event(INSTANT, iid=1 << 62), vfield(10, 1)),
    # item 10: a slice from ts -2^63 to 2^63-1 (its duration overflows)
    "dur-overflow.pftrace": packet(vfield(8, 1 << 63), track_event(BEGIN, name="wide"), vfield(10, 1))
    + packet(vfield(8, (1 << 63) - 1), track_event(END), vfield(10, 1)),
    # item 9: literal name 1 ("one") and interned iid 1 ("alpha") are two names
    "lit-vs-iid.pftrace": packet(vfield(8, 10), event_name(1, "alpha"), track_event(BEGIN, iid=1), vfield(10, 1))
    + packet(vfield(8, 20), track_event(END), vfield(10, 1))
    + packet(vfield(8, 30), track_event(BEGIN, name="zero"), vfield(10, 1))
    + packet(vfield(8, 40), track_event(END), vfield(10, 1))
    + packet(vfield(8, 50), track_event(BEGIN, name="one"), vfield(10, 1))
    + packet(vfield(8, 60), track_event(END), vfield(10, 1)),
    # a name given again while events of the first wait in the direct queue
    "iid-redefined.pftrace": packet(vfield(8, 10), event_name(1, "first"), track_event(BEGIN, iid=1), vfield(10, 1))
    + packet(vfield(8, 20), track_event(END), vfield(10, 1))
    + packet(vfield(8, 30), lfield(12, lfield(3, vfield(1, 1) + lfield(2, b'ncrt:"second"}'))),
             track_event(BEGIN, iid=1), vfield(10, 1))
    + packet(vfield(8, 40), track_event(END), vfield(10, 1)),
}


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    err = p.stderr
    assert p.returncode >= 0, "%s: killed by signal %d\n%s" % (what, -p.returncode, err[-3000:])
    for bad in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
        assert bad not in err, "%s: sanitizer report\n%s" % (what, err[-3000:])
    return p


def peak_child_rss():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def main():
    if sys.argv[1] == "--write":
        os.makedirs(sys.argv[2], exist_ok=True)
        for name, data in CRAFTED.items():
            with open(os.path.join(sys.argv[2], name), "wb") as f:
                f.write(data)
        return 0
    nctrace = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="nctrace-hostile-")
    paths = {}
    for name, data in CRAFTED.items():
        paths[name] = os.path.join(tmp, name)
        with open(paths[name], "wb") as f:
            f.write(data)

    # items 3 and 4: refused, or read, never a crash nor 6 GB
    for name in ("iid-bit63.pftrace", "iid-bit63-lit.pftrace"):
        for cmd in ("summary", "convert"):
            args = [nctrace, cmd, paths[name]] + (["-o", os.path.join(tmp, "o.json")] if cmd == "convert" else [])
            p = run(args, name + " " + cmd)
            assert p.returncode == 1 and "name_iid of 2^63 or more" in p.stderr, (name, cmd, p.returncode, p.stderr)
    for name in ("iid-2p30.pftrace", "iid-2p62.pftrace", "dur-overflow.pftrace", "iid-redefined.pftrace"):
        for cmd in ("summary", "convert"):
            args = [nctrace, cmd, paths[name]] + (["-o", os.path.join(tmp, "o.json")] if cmd == "convert" else [])
            p = run(args, name + " " + cmd)
            assert p.returncode == 0, (name, cmd, p.returncode, p.stderr)
    assert peak_child_rss() < GiB, "a 17-byte .pftrace took %d MB" % (peak_child_rss() >> 20)

    # a file cut one or two bytes into a packet (its tag, or the first byte
    # of a two-byte length) is "truncated", as a cut later in the packet is:
    # runtime/perfetto cuts a live trace in half and once landed there
    base = packet(vfield(8, 10), track_event(BEGIN, name="alpha"), vfield(10, 1))
    big = lfield(1, b"x" * 200)  # a packet whose length takes two bytes
    for what, data in (("tag", base + b"\x0a"), ("length", base + big[:2]), ("tag+length", base + big[:3])):
        path = os.path.join(tmp, "cut-%s.pftrace" % what)
        with open(path, "wb") as f:
            f.write(data)
        p = run([nctrace, "summary", path], "cut " + what)
        assert p.returncode == 1 and "truncated" in p.stderr, (what, p.returncode, p.stderr)

    # item 9: both readers (summary reads ranges directly, convert as JSON) see three names
    p = run([nctrace, "summary", paths["lit-vs-iid.pftrace"]], "lit-vs-iid summary")
    assert p.returncode == 0, p.stderr
    for nm in ("alpha", "zero", "one"):
        assert nm in p.stdout, (nm, p.stdout)
    out = os.path.join(tmp, "lit.json")
    p = run([nctrace, "convert", paths["lit-vs-iid.pftrace"], "-o", out], "lit-vs-iid convert")
    assert p.returncode == 0, p.stderr
    text = open(out).read()
    for nm in ('"alpha"', '"zero"', '"one"'):
        assert text.count(nm) == 1, (nm, text)
    p = run([nctrace, "summary", paths["iid-redefined.pftrace"]], "iid-redefined summary")
    assert "first" in p.stdout and "second" in p.stdout, p.stdout

    # item 7: a gzip bomb, one event holding one 256 MiB string (about 260 KB
    # compressed): refused at the reader's event limit, in bounded memory
    bomb = os.path.join(tmp, "bomb.json.gz")
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents":[{"ph":"X","name":"')
        chunk = b"a" * (1 << 20)
        for _ in range(256):
            f.write(chunk)
        f.write(b'","ts":1,"dur":1,"pid":1,"tid":1}]}')
    assert os.path.getsize(bomb) < (1 << 20)
    p = run([nctrace, "summary", bomb], "bomb")
    assert p.returncode == 1 and "more than 64 MiB (the reader's limit)" in p.stderr, (p.returncode, p.stderr)
    assert p.stderr.startswith(bomb + ":1:17: error:"), p.stderr
    assert peak_child_rss() < GiB, "the bomb took %d MB" % (peak_child_rss() >> 20)
    # and events just under the limit, each a distinct 60 MiB name (about
    # 490 KB compressed): read, the names cut to 64 KiB, in bounded memory
    # (they took 2.7 GB and 70 s; the window doubled only when full, each
    # refill rescanning the event)
    names = os.path.join(tmp, "names.json.gz")
    with gzip.open(names, "wb", compresslevel=6) as f:
        f.write(b'{"traceEvents":[')
        for i in range(8):
            f.write(b',' if i else b'')
            f.write(b'{"ph":"X","cat":"user_annotation","name":"')
            for _ in range(60):
                f.write(chunk)
            f.write(b'%d","ts":%d,"dur":1,"pid":1,"tid":1}' % (i, 10 * i))
        f.write(b"]}")
    assert os.path.getsize(names) < (1 << 20)
    p = run([nctrace, "summary", names], "60 MiB names")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "| 8 |" in p.stdout or " 8 events" in p.stdout, p.stdout[:2000]
    assert max(len(line) for line in p.stdout.splitlines()) < (1 << 20), "a name of more than 64 KiB in the summary"
    assert peak_child_rss() < GiB, "60 MiB names took %d MB" % (peak_child_rss() >> 20)
    # the same in a .pftrace.gz: 15 interned names of 60 MiB, each used once
    pf = os.path.join(tmp, "names.pftrace.gz")
    with gzip.open(pf, "wb", compresslevel=9) as f:
        for i in range(15):  # packet(ts, event_name(i + 1, NAME), instant of it), NAME written by the MiB
            tail = str(i).encode()
            n = (60 << 20) + len(tail)
            a = vfield(1, i + 1) + varint(2 << 3 | 2) + varint(n)
            b = varint(2 << 3 | 2) + varint(len(a) + n)
            c = varint(12 << 3 | 2) + varint(len(b) + len(a) + n)
            pre = vfield(8, 10 * i) + c + b + a
            post = track_event(INSTANT, iid=i + 1) + vfield(10, 1)
            f.write(varint(1 << 3 | 2) + varint(len(pre) + n + len(post)) + pre)
            for _ in range(60):
                f.write(chunk)
            f.write(tail + post)
    assert os.path.getsize(pf) < (1 << 20)
    for cmd in ("summary", "convert"):
        args = [nctrace, cmd, pf] + (["-o", os.path.join(tmp, "o.json")] if cmd == "convert" else [])
        p = run(args, "60 MiB names, .pftrace " + cmd)
        assert p.returncode == 0, p.stderr[-2000:]
    assert peak_child_rss() < GiB, "60 MiB .pftrace names took %d MB" % (peak_child_rss() >> 20)
    shutil.rmtree(tmp)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
