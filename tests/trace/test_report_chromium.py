#!/usr/bin/env python3
"""The HTML report: structure (self-contained, the expected pictures and
tables), then what a browser shows: headless Chromium renders the page,
its DOM after rendering is checked for the pictures and figures, and a
screenshot is decoded to check that the pictures are really painted
(coloured pixels in the timeline area). Skips (77) after the structural
checks when Chromium is not installed."""
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tags, self.external = {}, {}, []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        if "id" in a:
            self.ids[a["id"]] = tag
        for k in ("src", "href"):
            if k in a:
                self.external.append(a[k])

    def handle_data(self, data):
        self.text.append(data)


def check_structure(page_text):
    p = Page()
    p.feed(page_text)
    for want in ("timeline", "flame", "steps", "ranks", "summary"):
        assert want in p.ids, "missing #%s" % want
    assert "script" not in p.tags, "the page must not need scripts"
    assert not p.external, "external resources: %s" % p.external
    bad = re.findall(r"(?:url\(|@import|https?://(?!www\.w3\.org/2000/svg))", page_text)
    assert not bad, "network references: %s" % bad
    text = " ".join(p.text)
    for want in ("Bottlenecks", "Recommendations", "gemm", "Slow rank: rank 1", "Imbalance"):
        assert want in text, "report lacks %r" % want
    return p


def png_pixels(path):
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) to rows of tuples."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return rows


def chromium_cmd(profile):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        return None
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + profile]


def main():
    nctrace = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="nctrace-report-")
    try:
        out = os.path.join(tmp, "report.html")
        p = subprocess.run([nctrace, "report", os.path.join(CASES, "multirank", "rank0.json"),
                            os.path.join(CASES, "multirank", "rank1.json"), "-o", out], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        page = open(out).read()
        check_structure(page)
        cmd = chromium_cmd(os.path.join(tmp, "profile"))
        if not cmd:
            print("skipped: chromium is not installed (structural checks passed)")
            return 77
        url = "file://" + out
        dom = subprocess.run(cmd + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
        assert dom.returncode == 0 and "<svg" in dom.stdout, dom.stderr[-2000:]
        d = Page()
        d.feed(dom.stdout)
        assert d.tags.get("rect", 0) >= 20, "rendered DOM has %d rects" % d.tags.get("rect", 0)
        assert d.tags.get("table", 0) >= 5, "rendered DOM has %d tables" % d.tags.get("table", 0)
        text = " ".join(d.text)
        assert "rank 1" in text and "ProfilerStep#3" in text
        shot = os.path.join(tmp, "shot.png")
        s = subprocess.run(cmd + ["--window-size=1300,900", "--screenshot=" + shot, url],
                           capture_output=True, text=True, timeout=120)
        assert s.returncode == 0 and os.path.exists(shot), s.stderr[-2000:]
        rows = png_pixels(shot)
        coloured = sum(1 for row in rows[100:500] for (r, g, b) in row if max(r, g, b) - min(r, g, b) > 60)
        assert coloured > 5000, "only %d coloured pixels where the pictures should be" % coloured
        print("ok: %d rects, %d tables in the rendered DOM; %d coloured pixels in the pictures"
              % (d.tags["rect"], d.tags["table"], coloured))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
