#!/usr/bin/env python3
"""The HTML report in a real browser.

Structure first (one self-contained file: no external resource, the views'
containers, the summary's tables, the pictures' data and script inline).
Then three pages -- a small trace (tests/trace/cases/multirank), a 4-rank
run directory with env.json and a big trace (>= 400 000 events), both
generated here -- are opened in headless Debian Chromium through
chromium-driver (python3-selenium) and must load with no console error.
On the pages, a wheel zoom over the timeline must narrow its view and
change what it draws, a search must highlight some boxes and not others
and change the pixels, a click in the flame chart must zoom it to that
node, and labels must be drawn. Screenshots of each view are decoded to
check that they are painted; NCTRACE_SCREENSHOTS=DIR saves them there
(docs/img is made that way). Without chromium: 77 (skipped) after the
structural checks; with chromium but no chromium-driver/selenium, a
--dump-dom check of the small page, then 77."""
import html.parser
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tags, self.external = {}, {}, []
        self.text, self.scripts = [], []
        self._in_script = None

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        if "id" in a:
            self.ids[a["id"]] = tag
        for k in ("src", "href"):
            if k in a:
                self.external.append(a[k])
        if tag == "script":
            self._in_script = a.get("type", "text/javascript")
            self.scripts.append([self._in_script, ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1][1] += data
        else:
            self.text.append(data)


def check_structure(page_text):
    p = Page()
    p.feed(page_text)
    for want in ("runhdr", "timeline", "flame", "steps", "ranks", "summary", "nc-data"):
        assert want in p.ids, "missing #%s" % want
    assert not p.external, "external resources: %s" % p.external
    bad = re.findall(r"(?:url\(|@import|https?://|<link\b|\bimport\(|XMLHttpRequest|fetch\()", page_text)
    assert not bad, "network references: %s" % bad
    kinds = [k for k, _ in p.scripts]
    assert kinds.count("text/javascript") == 1 and "application/json" in kinds, kinds
    data = json.loads([v for k, v in p.scripts if k == "application/json"][0])
    for k in ("timeline", "flame", "steps", "ranks", "names", "name_total"):
        assert k in data, "page data lacks %r" % k
    text = " ".join(p.text)
    for want in ("Bottlenecks", "Recommendations", "gemm", "Slow rank: rank 1", "Imbalance"):
        assert want in text, "report lacks %r" % want
    return data


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


def coloured(path):
    return sum(1 for row in png_pixels(path) for (r, g, b) in row if max(r, g, b) - min(r, g, b) > 60)


# ---- synthetic traces ----

LAYERS = ["Embedding.forward", "Attention.forward", "MLP.forward", "LayerNorm.forward"]
KERNELS = {"Embedding.forward": ["indexSelectLargeIndex"],
           "Attention.forward": ["ampere_sgemm_128x64_tn", "softmax_warp_forward", "ampere_sgemm_64x64_nn"],
           "MLP.forward": ["ampere_sgemm_128x128_nn", "vectorized_elementwise_kernel<gelu>"],
           "LayerNorm.forward": ["layer_norm_kernel"]}


class Gen:
    """Kineto-layout events of one rank, written as text (fast enough for
    half a million events)."""

    def __init__(self, rank, world):
        self.rank, self.world, self.ev, self.corr = rank, world, [], 1
        pid = 1000 + rank
        self.pid = pid
        self.meta(pid, 0, "process_name", "python3 rank %d" % rank)
        self.meta(pid, 1, "thread_name", "MainThread")
        self.meta(pid, 2, "thread_name", "DataLoader")
        self.meta(rank, 0, "process_name", "GPU %d" % rank)

    def meta(self, pid, tid, what, name):
        self.ev.append('{"ph":"M","name":"%s","pid":%d,"tid":%d,"args":{"name":"%s"}}' % (what, pid, tid, name))

    def x(self, cat, name, tid, ts, dur, pid=None, extra=""):
        self.ev.append('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f%s}'
                       % (cat, name, self.pid if pid is None else pid, tid, ts, dur, extra))

    def launch(self, ts, kernel, kts, kdur, stream=7):
        c = self.corr
        self.corr += 1
        self.x("cuda_runtime", "cudaLaunchKernel", 1, ts, 4.0, extra=',"args":{"correlation":%d}' % c)
        self.x("kernel", kernel, stream, kts, kdur, pid=self.rank,
               extra=',"args":{"correlation":%d,"stream":%d,"device":%d}' % (c, stream, self.rank))

    def step(self, n, t, slow=1.0, layers=4, kernels_per_op=1, small=False):
        """One training step from t (µs); returns its end."""
        t0 = t
        self.x("user_annotation", "DataLoader.__next__", 2, t, 300 * slow)
        t += 320 * slow
        body_start = t
        self.x("user_annotation", "forward", 1, t, 0)  # patched below
        fwd_i = len(self.ev) - 1
        gpu_t = t + 20
        for li in range(layers):
            for lname in LAYERS:
                lt = t
                ops = KERNELS[lname] * kernels_per_op
                for k in ops:
                    dur = (2.0 if small else 60.0 * slow) * (1 + (hash(k) % 5) / 4)
                    self.x("cpu_op", "aten::" + k.split("_")[0][:12], 1, t + 1, 10)
                    self.launch(t + 3, k, max(gpu_t, t + 8), dur)
                    gpu_t = max(gpu_t, t + 8) + dur + 1
                    t += 12
                self.x("user_annotation", lname, 1, lt, t - lt)
                t += 2
        fwd_end = t
        self.ev[fwd_i] = self.ev[fwd_i].replace('"ts":%.3f,"dur":0.000' % body_start,
                                                '"ts":%.3f,"dur":%.3f' % (body_start, fwd_end - body_start))
        bt = t
        for k in ("ampere_sgemm_128x64_nt", "softmax_warp_backward", "ampere_sgemm_128x128_tn") * layers:
            dur = (2.0 if small else 90.0 * slow)
            self.launch(t + 2, k, max(gpu_t, t + 6), dur)
            gpu_t = max(gpu_t, t + 6) + dur + 1
            t += 10
        self.x("user_annotation", "backward", 1, bt, t - bt)
        if self.world > 1:
            self.launch(t + 1, "ncclKernel_AllReduce_RING_LL_Sum_float", gpu_t + 5, 200.0 * (2 - slow) + 50,
                        stream=13)
            gpu_t += 260
        t += 8
        ot = t
        self.x("user_annotation", "Optimizer.step#AdamW.step", 1, t, 150)
        self.launch(t + 10, "multi_tensor_apply_kernel", max(gpu_t, t + 15), 40)
        t += 160
        self.x("user_annotation", "async_generator.next", 1, ot - 30, 200,
               extra=',"args":{"start/end":true}')
        end = max(t, gpu_t) + 10
        self.x("user_annotation", "ProfilerStep#%d" % n, 1, t0, end - t0)
        return end + 30

    def write(self, path, base):
        with open(path, "w") as f:
            self.begin(f, base)
            self.end(f)

    def begin(self, f, base):
        f.write('{"schemaVersion":1,"distributedInfo":{"rank":%d,"world_size":%d},"baseTimeNanoseconds":%d,'
                '"traceEvents":[\n' % (self.rank, self.world, base))
        self.written = 0
        self.flush(f)

    def flush(self, f):
        if self.ev:
            f.write((",\n" if self.written else "") + ",\n".join(self.ev))
            self.written += len(self.ev)
            self.ev = []

    def end(self, f):
        self.flush(f)
        f.write("\n]}\n")


def four_ranks(d, steps=8, straggler=1.35):
    os.makedirs(d)
    for r in range(4):
        g = Gen(r, 4)
        t = 100.0 + 37 * r
        for n in range(1, steps + 1):
            t = g.step(n, t, slow=straggler if r == 3 else 1.0 + 0.03 * r)
        g.write(os.path.join(d, "train-rank%d.trace.json" % r), 1700000000000000000 + 250000 * r)
    env = {"backend": "ncrt", "host": "gpu-node-07", "kernel": "Linux 6.1.0 x86_64",
           "started": "2026-11-24T09:12:44+0000", "cwd": "/home/me/model",
           "command": ["torchrun", "--nproc-per-node", "4", "out/train.py", "--steps", "8"],
           "options": {"schedule": "wait=1,warmup=1,active=8", "rules": "rules/model.yaml"},
           "shadow": {"dir": "/home/me/model/out", "manifest": "5d1c0f3e9a7b2c41", "rules_digest": "a9f03c"},
           "stages": [{"name": "collect", "status": 0, "seconds": 41.2}]}
    with open(os.path.join(d, "env.json"), "w") as f:
        json.dump(env, f)
    return [os.path.join(d, "train-rank%d.trace.json" % r) for r in range(4)]


def big(path, want):
    g = Gen(0, 1)
    t, n = 100.0, 1
    with open(path, "w") as f:
        g.begin(f, 1700000000000000000)
        while g.written + len(g.ev) < want:
            t = g.step(n, t, layers=24, kernels_per_op=3, small=True)
            n += 1
            if len(g.ev) > 100000:
                g.flush(f)
        g.end(f)
    return g.written


# ---- the browser ----

def chromium_exe():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def webdriver(profile):
    try:
        from selenium import webdriver as wd
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    drv = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not os.path.exists(drv):
        return None
    o = wd.ChromeOptions()
    o.binary_location = chromium_exe()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--no-first-run", "--hide-scrollbars", "--enable-precise-memory-info", "--window-size=1400,1000", "--force-device-scale-factor=1",
              "--user-data-dir=" + profile):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return wd.Chrome(service=Service(drv), options=o)


def attr(d, el_id, name):
    return d.execute_script("return document.getElementById(arguments[0]).dataset[arguments[1]];", el_id, name)


def pixels(d, el_id):
    return d.execute_script("return document.getElementById(arguments[0]).toDataURL();", el_id)


def open_page(d, path, label):
    t = time.time()
    d.get("file://" + path)
    for _ in range(600):
        if d.execute_script("return document.body && document.body.dataset.ready === '1';"):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("%s: the page's script never finished" % label)
    secs = time.time() - t
    errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, "%s: console errors: %s" % (label, errors)
    return secs


def browser_memory(d, profile):
    """(JS heap used, memory of every Chromium process of this profile), bytes: the
    processes' proportional set sizes (PSS), so pages they share count once."""
    heap = d.execute_script("return performance.memory ? performance.memory.usedJSHeapSize : 0;")
    rss = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read()
            if profile.encode() not in cmd:
                continue
            for line in open("/proc/%s/smaps_rollup" % pid):
                if line.startswith("Pss:"):
                    rss += int(line.split()[1]) * 1024
        except OSError:
            pass
    return heap, rss


def exercise(d, label, shots=None):
    """Zoom, search, flame click; returns a description."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By
    cv = d.find_element(By.ID, "timeline-canvas")
    view0, sig0, px0 = attr(d, "timeline-canvas", "view"), attr(d, "timeline-canvas", "sig"), pixels(d, "timeline-canvas")
    boxes0 = int(attr(d, "timeline-canvas", "boxes"))
    assert boxes0 > 0, "%s: timeline drew nothing" % label
    if shots:
        d.find_element(By.ID, "timeline").screenshot(os.path.join(shots, "report-timeline.png"))
    # a zoom: the wheel over the middle of the track area
    ActionChains(d).scroll_from_origin(ScrollOrigin.from_element(cv, 150, 0), 0, -600).perform()
    time.sleep(0.2)
    a0, a1 = map(float, view0.split(","))
    b0, b1 = map(float, attr(d, "timeline-canvas", "view").split(","))
    assert b1 - b0 < (a1 - a0) * 0.8, "%s: the wheel did not zoom (%s -> %s)" % (label, view0, (b0, b1))
    assert attr(d, "timeline-canvas", "sig") != sig0 and pixels(d, "timeline-canvas") != px0, \
        "%s: zooming changed nothing drawn" % label
    zoomed_boxes = int(attr(d, "timeline-canvas", "boxes"))
    for _ in range(15):  # closer: boxes wide enough for their names
        if int(attr(d, "timeline-canvas", "labels")) > 0:
            break
        ActionChains(d).scroll_from_origin(ScrollOrigin.from_element(cv, 150, 0), 0, -600).perform()
        time.sleep(0.1)
    assert int(attr(d, "timeline-canvas", "labels")) > 0, "%s: no labels on the timeline" % label
    if shots:
        d.find_element(By.ID, "timeline").screenshot(os.path.join(shots, "report-timeline-zoom.png"))
    d.find_element(By.XPATH, "//button[text()='whole run']").click()
    # a search: a kernel name fragment
    px1 = pixels(d, "timeline-canvas")
    box = d.find_element(By.ID, "tl-search")
    box.send_keys("gemm")
    time.sleep(0.2)
    matched, boxes = int(attr(d, "timeline-canvas", "matched")), int(attr(d, "timeline-canvas", "boxes"))
    assert 0 < matched < boxes, "%s: search highlighted %d of %d boxes" % (label, matched, boxes)
    assert pixels(d, "timeline-canvas") != px1, "%s: the search changed nothing drawn" % label
    if shots:
        d.find_element(By.ID, "timeline").screenshot(os.path.join(shots, "report-search.png"))
    box.clear()
    box.send_keys(" ")
    d.execute_script("var s=document.getElementById('tl-search'); s.value=''; s.dispatchEvent(new Event('input'));")
    # the flame chart: click the first box of the second row (a child of the root)
    fl = d.find_element(By.ID, "flame-canvas")
    root0 = attr(d, "flame-canvas", "root")
    w = fl.size["width"]
    if shots:
        d.find_element(By.ID, "flame").screenshot(os.path.join(shots, "report-flame.png"))
    ActionChains(d).move_to_element_with_offset(fl, -w // 2 + 5, -fl.size["height"] // 2 + 17 + 8).click().perform()
    time.sleep(0.1)
    root1 = attr(d, "flame-canvas", "root")
    assert root1 != root0, "%s: clicking the flame chart did not zoom (%s)" % (label, root0)
    if shots:
        d.find_element(By.ID, "flame").screenshot(os.path.join(shots, "report-flame-zoom.png"))
        d.find_element(By.ID, "steps").screenshot(os.path.join(shots, "report-steps.png"))
        d.find_element(By.ID, "ranks").screenshot(os.path.join(shots, "report-ranks.png"))
        d.find_element(By.ID, "runhdr").screenshot(os.path.join(shots, "report-header.png"))
    return "boxes %d -> %d zoomed, search %d/%d, flame root %r -> %r" % (boxes0, zoomed_boxes, matched, boxes,
                                                                        root0, root1)


def report(nctrace, files, out, extra=(), cwd=None):
    t = time.time()
    p = subprocess.run([nctrace, "report"] + list(files) + ["-o", out] + list(extra), capture_output=True,
                       text=True, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return time.time() - t


def main():
    nctrace = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="nctrace-report-")
    driver = None
    try:
        small = os.path.join(tmp, "small.html")
        report(nctrace, [os.path.join(CASES, "multirank", "rank0.json"),
                         os.path.join(CASES, "multirank", "rank1.json")], small)
        data = check_structure(open(small).read())
        assert data["timeline"]["levels"][-1]["full"], "a small trace is drawn in full"
        assert len(data["timeline"]["ranks"]) == 2
        # the flame chart's steps are one row, not one column per step
        flame_names = [data["names"][data["flame"]["nodes"][i + 1]] for i in range(0, len(data["flame"]["nodes"]), 3)]
        assert "ProfilerStep#* (3 steps)" in flame_names and "ProfilerStep#1" not in flame_names, flame_names
        exe = chromium_exe()
        if not exe:
            print("skipped: chromium is not installed (structural checks passed)")
            return 77
        driver = webdriver(os.path.join(tmp, "profile"))
        if driver is None:
            dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" +
                                  os.path.join(tmp, "p2"), "--dump-dom", "file://" + small],
                                 capture_output=True, text=True, timeout=120)
            assert dom.returncode == 0 and 'data-ready="1"' in dom.stdout, dom.stderr[-2000:]
            print("skipped: selenium / chromium-driver not installed (scripts/setup-deps python3-selenium "
                  "chromium-driver); the small page's script ran in --dump-dom")
            return 77
        shots_env = os.environ.get("NCTRACE_SCREENSHOTS")
        shots = os.path.join(tmp, "shots")
        os.makedirs(shots)
        lines = []
        # small
        secs = open_page(driver, small, "small")
        heap, rss = browser_memory(driver, os.path.join(tmp, "profile"))
        lines.append("small: %d bytes, ready in %.2f s, JS heap %.0f MB, Chromium PSS %.0f MB; %s"
                     % (os.path.getsize(small), secs, heap / 1e6, rss / 1e6, exercise(driver, "small")))
        # odd inputs: CPU only (legacy layout), start/end spans, no events at all
        empty = os.path.join(tmp, "empty.json")
        with open(empty, "w") as f:
            f.write('{"traceEvents": []}')
        for name, trace in (("legacy", os.path.join(CASES, "nesting", "trace.json")),
                            ("spans", os.path.join(CASES, "spans", "trace.json")), ("empty", empty)):
            page = os.path.join(tmp, name + ".html")
            report(nctrace, [trace], page)
            open_page(driver, page, name)
        # four ranks, a run directory with env.json
        run = os.path.join(tmp, "run")
        files = four_ranks(run)
        four = os.path.join(tmp, "four.html")
        # compared with a run of 10 steps where rank 3 keeps up
        run_b = os.path.join(tmp, "run-b")
        four_ranks(run_b, steps=10, straggler=1.05)
        report(nctrace, ["run"], four, ["--compare", "run-b"], cwd=tmp)  # short paths in the screenshots
        d4 = check_structure_loose(open(four).read())
        assert len(d4["timeline"]["ranks"]) == 4
        secs = open_page(driver, four, "4 ranks")
        hdr = driver.find_element("id", "runhdr").text
        for want in ("torchrun", "gpu-node-07", "2026-11-24", "wait=1,warmup=1,active=8", "a9f03c"):
            assert want in hdr, "run header lacks %r: %r" % (want, hdr)
        # GPU streams sit under the thread that launched their work
        labels = [t["label"] for t in d4["timeline"]["ranks"][0]["tracks"]]
        assert labels[0].endswith("(MainThread)") and labels[1].startswith("GPU"), labels
        lines.append("4 ranks: %d events, %d bytes, ready in %.2f s; %s"
                     % (d4["timeline"]["events"], os.path.getsize(four), secs, exercise(driver, "4 ranks", shots)))
        # the comparison: paired bars, ranges then kernels
        assert int(attr(driver, "compare-canvas", "rows")) > 0
        first = attr(driver, "compare-canvas", "first")
        driver.find_element("id", "compare").screenshot(os.path.join(shots, "report-compare.png"))
        driver.find_element("xpath", "//div[@id='compare']//button[text()='kernels']").click()
        assert attr(driver, "compare-canvas", "mode").startswith("kernels") and \
            attr(driver, "compare-canvas", "first") != first, "the comparison did not switch to kernels"
        assert "per step" in driver.find_element("id", "compare").text
        for f in sorted(os.listdir(shots)):
            if f == "report-header.png":  # a table: black on white
                continue
            c = coloured(os.path.join(shots, f))
            assert c > 500, "%s: only %d coloured pixels" % (f, c)
        # big
        bigtrace = os.path.join(tmp, "big.trace.json")
        nev = big(bigtrace, int(os.environ.get("NCTRACE_REPORT_BIG_EVENTS", "420000")))
        bigpage = os.path.join(tmp, "big.html")
        rsecs = report(nctrace, [bigtrace], bigpage)
        db = check_structure_loose(open(bigpage).read())
        assert db["timeline"]["events"] >= 400000, db["timeline"]["events"]
        secs = open_page(driver, bigpage, "big")
        heap, rss = browser_memory(driver, os.path.join(tmp, "profile"))
        lines.append("big: %d events (%d bytes), report in %.1f s, page %d bytes (%d boxes over %d levels), ready in "
                     "%.2f s, JS heap %.0f MB, Chromium PSS %.0f MB"
                     % (nev, os.path.getsize(bigtrace), rsecs, os.path.getsize(bigpage), db["timeline"]["boxes"],
                        len(db["timeline"]["levels"]), secs, heap / 1e6, rss / 1e6))
        print(lines[-1], flush=True)
        lines[-1] += "; " + exercise(driver, "big")
        if shots_env:
            os.makedirs(shots_env, exist_ok=True)
            for f in sorted(os.listdir(shots)):
                shutil.copy(os.path.join(shots, f), os.path.join(shots_env, f))
        print("ok:\n  " + "\n  ".join(lines))
        return 0
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(tmp, ignore_errors=True)


def check_structure_loose(page_text):
    """Self-contained, with its data; the content checks are the small page's."""
    p = Page()
    p.feed(page_text)
    assert not p.external, p.external
    return json.loads([v for k, v in p.scripts if k == "application/json" and v.startswith('{"step_glob"')][0])


if __name__ == "__main__":
    sys.exit(main())
