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
node, and labels must be drawn. On the 4-rank page, real key, mouse and
wheel input (issue 35): Enter / Shift+Enter step through every match of a
search in time order, wrapping, each centred and zoomed ("k of n" in the
status line); W/S and the up/down arrows zoom, A/D and left/right pan; a
drag measures an interval (not a pan; Esc or a click clears it; shift+drag
still pans); the axis labels are offsets from the view's start ("+5 µs");
flame and timeline boxes carry "name · time" when it fits; on the
instrumented page hovering a range shows its file:line in the user's source
and what its events' args say (the page keeps, per name, the args that are
the same on every call and names those that differ).
Every wait is for a condition (WebDriverWait), none for a time. Screenshots of each view are decoded to
check that they are painted; NCTRACE_SCREENSHOTS=DIR saves them there
(docs/img is made that way). Without chromium: 77 (skipped) after the
structural checks; with chromium but no chromium-driver/selenium, a
--dump-dom check of the small page, then 77.

The source view: a small Python program instrumented by ncrewrite (its
path and ncrun's folder are the second and third arguments; without them
that part is left out, saying so) and run under `ncrun --shadow`; a click
on a range name in the operations table, on "source" after a click in the
flame chart, and on "source of" after a click in the timeline must show
that range's file and lines with a time. Hand-made manifests cover the
rest: no shadow tree (no source view), a missing and a malformed manifest
(a note, no error), one from an older ncrewrite (no "source": the shadow
copies), a source file changed after the shadow tree was made, paths
leaving the tree, bytes that are not UTF-8, and the cap on the embedded
text. Nothing depends on how long the program ran: only that its ranges
have some time, and their call counts."""
import glob
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
    # the one network use: the served mode's window question to the page's own server
    # (`nctrace report --serve`, D.serve), never made by a page written to a file
    assert page_text.count("fetch(SERVE.api + ") == 1, "the served mode's fetch"
    bad = re.findall(r"(?:url\(|@import|https?://|<link\b|\bimport\(|XMLHttpRequest|fetch\()",
                     page_text.replace("fetch(SERVE.api + ", ""))
    assert not bad, "network references: %s" % bad
    kinds = [k for k, _ in p.scripts]
    assert kinds.count("text/javascript") == 1 and "application/json" in kinds, kinds
    data = json.loads([v for k, v in p.scripts if k == "application/json"][0])
    for k in ("timeline", "flame", "steps", "ranks", "names", "name_total"):
        assert k in data, "page data lacks %r" % k
    assert "serve" not in data, "a page written to a file asks no server"
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


# ---- the source view ----

ATTN = '''"""A toy attention: pure Python, no GPU."""


def matmul(a, b):
    return [[sum(x * y for x, y in zip(r, c)) for c in zip(*b)] for r in a]


def softmax(row):
    m = max(row)
    e = [2.718281828 ** (v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


class Attention:
    def __init__(self, n):
        self.wq = [[(i + j) % 3 - 1 for j in range(n)] for i in range(n)]
        self.wk = [[(i * j) % 5 - 2 for j in range(n)] for i in range(n)]

    def forward(self, x):
        q = matmul(x, self.wq)
        k = matmul(x, self.wk)
        scores = matmul(q, list(zip(*k)))

        probs = [softmax(r) for r in scores]
        return matmul(probs, x)
'''

TRAIN = '''"""Five steps of a toy attention."""
from model.attn import Attention


def main():
    a = Attention(24)
    x = [[(i + j) % 7 / 7 for j in range(24)] for i in range(24)]
    for _ in range(5):
        y = a.forward(x)
    print("done", round(y[0][0], 3))


if __name__ == "__main__":
    main()
'''

# forward as a whole, a line range inside it and its matmul calls (four
# sites, one name): ranges nested three deep
RULES = """targets:
  model.attn:
    func_context_wrappings:
      softmax: {}
      Attention.forward: {}
    class_func_context_wrappings:
      Attention:
        forward:
          wrap_calls:
            - call_pattern: matmul
    func_line_range_wrappings:
      - function: Attention.forward
        start_line: 21
        end_line: 23
  train:
    func_context_wrappings:
      main: {}
"""

TIME_RE = re.compile(r"\d+(\.\d+)? (s|ms|µs|ns)")


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def page_data(path):
    text = open(path, encoding="utf-8").read()  # not UTF-8: an exception here
    p = Page()
    p.feed(text)
    return p, json.loads([v for k, v in p.scripts if k == "application/json" and v.startswith('{"step_glob"')][0])


def instrumented(tmp, ncrewrite, ncrun_dir, nctrace):
    """The program instrumented, run under ncrun --shadow, reported: (page, manifest)."""
    base = os.path.join(tmp, "inst")
    src, out, run = os.path.join(base, "src"), os.path.join(base, "out"), os.path.join(base, "run")
    write(os.path.join(src, "model", "__init__.py"), "")
    write(os.path.join(src, "model", "attn.py"), ATTN)
    write(os.path.join(src, "train.py"), TRAIN)
    write(os.path.join(base, "rules.yaml"), RULES)
    r = subprocess.run([ncrewrite, "-q", "--config", os.path.join(base, "rules.yaml"), src, out], capture_output=True,
                       text=True)
    assert r.returncode == 0, "ncrewrite: %s" % r.stderr
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "WORLD_SIZE", "NCRT_OUTPUT_DIR")}
    r = subprocess.run([os.path.join(ncrun_dir, "ncrun"), "--run-dir", run, "--shadow", out, "--", sys.executable,
                        os.path.join(out, "train.py")], capture_output=True, text=True, cwd=base, env=env)
    assert r.returncode == 0 and r.stdout.startswith("done"), "ncrun: %s %s" % (r.stdout, r.stderr)
    # the trace's name is ncrun's business (it is about to change): any trace in the run directory
    assert glob.glob(os.path.join(run, "*.trace.json.gz")), "no trace in %s: %s" % (run, os.listdir(run))
    page = os.path.join(tmp, "inst.html")
    report(nctrace, [run], page)
    manifest = json.load(open(os.path.join(out, ".ncrewrite", "manifest.json")))
    return page, manifest


def check_instrumented_data(data, manifest):
    S = data["source"]
    assert S["ok"] and S["origin"] == manifest["source"] and not S["notes"], S["notes"]
    files = {f["path"]: f for f in S["files"]}
    assert set(files) == {"model/attn.py", "train.py"}, list(files)
    attn = files["model/attn.py"]
    assert attn["from"] == "source" and attn["text"] == ATTN and attn["time"] > 0, (attn["from"], attn["why"])
    # every range of the manifest, on the user's lines, with its calls
    want = [[r["name"], r["kind"], r["lines"][0], r["lines"][1]] for m in manifest["files"]
            if m["path"] == "model/attn.py" for r in m.get("ranges", [])]
    got = [r[:4] for r in attn["ranges"]]
    assert got == want, (got, want)
    calls = {r[0]: r[4] for f in S["files"] for r in f["ranges"]}
    assert calls == {"main": 1, "Attention.forward": 5, "Attention.forward:L21-23": 5,
                     "Attention.forward:matmul": 20, "softmax": 120}, calls
    # the file that holds forward's work comes first: main keeps only its own time
    assert S["files"][0]["path"] == "model/attn.py", [f["path"] for f in S["files"]]


def exercise_source(d, manifest, shots=None):
    """Clicks that open the source view; returns a description."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    fwd = [r for m in manifest["files"] for r in m.get("ranges", []) if r["name"] == "Attention.forward"][0]["lines"]

    def links():
        return {a.text: a for a in d.find_elements(By.CSS_SELECTOR, "#summary a.srclink")}
    assert {"main", "Attention.forward", "softmax"} <= set(links()), list(links())
    links()["Attention.forward"].click()  # one click, from the operations table
    time.sleep(0.1)
    assert attr(d, "source-code", "file") == "model/attn.py", attr(d, "source-code", "file")
    assert attr(d, "source-code", "range") == "Attention.forward"
    assert attr(d, "source-code", "lines") == "%d-%d" % tuple(fwd), attr(d, "source-code", "lines")
    label = attr(d, "source-code", "label")
    assert TIME_RE.search(label) and "5 calls" in label, label
    rows = d.execute_script("return Array.prototype.map.call(document.querySelectorAll('#source-code .sl.sel'),"
                            "function (r) { return [+r.dataset.l, r.querySelector('.sc').textContent]; });")
    assert [r[0] for r in rows] == list(range(fwd[0], fwd[1] + 1)), rows
    assert [r[1] for r in rows] == ATTN.splitlines()[fwd[0] - 1:fwd[1]], rows
    assert int(attr(d, "source-code", "selected")) == fwd[1] - fwd[0] + 1
    # the label shows on the page, and the page scrolled to the view
    lab = d.find_element(By.CSS_SELECTOR, "#source-code .sa.sel .lab")
    assert lab.text.startswith("Attention.forward · ") and lab.is_displayed(), lab.text
    top = d.execute_script("return document.getElementById('source-h').getBoundingClientRect().top;")
    assert abs(top) < 5, "the page did not scroll to the source view (%s)" % top
    if shots:
        d.find_element(By.ID, "source").screenshot(os.path.join(shots, "report-source.png"))
    # a shared name (four call sites): its first site
    links()["Attention.forward:matmul"].click()
    time.sleep(0.1)
    assert attr(d, "source-code", "lines") == "21-21" and "4 ranges share this name" in attr(d, "source-code", "label")
    # the flame chart: zoom to main (the root's only child), then "source"
    fl = d.find_element(By.ID, "flame-canvas")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", fl)
    ActionChains(d).move_to_element_with_offset(fl, -fl.size["width"] // 2 + 5, -fl.size["height"] // 2 + 17 + 8) \
        .click().perform()
    time.sleep(0.1)
    assert attr(d, "flame-canvas", "root") == "main", attr(d, "flame-canvas", "root")
    btn = d.find_element(By.ID, "flame-source")
    assert btn.is_displayed()
    btn.click()
    time.sleep(0.1)
    assert attr(d, "source-code", "file") == "train.py" and attr(d, "source-code", "range") == "main"
    # the timeline: a click in the middle of the first lane (main's), then "source of main"
    cv = d.find_element(By.ID, "timeline-canvas")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", cv)
    tb = d.find_element(By.ID, "timeline-source")
    assert not tb.is_displayed()
    ActionChains(d).move_to_element_with_offset(cv, 120, 24 + 20 + 7 - cv.size["height"] // 2).click().perform()
    time.sleep(0.1)
    assert tb.is_displayed() and tb.text == "source of main", tb.text
    tb.click()
    time.sleep(0.1)
    assert attr(d, "source-code", "range") == "main", attr(d, "source-code", "range")
    return "source: Attention.forward at model/attn.py:%d-%d (%s); main from the flame chart and the timeline" % (
        fwd[0], fwd[1], label)


def simple_run(d, names, env=None):
    """A run directory with one trace: [(name, ts us, dur us)] on one thread."""
    os.makedirs(d)
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}}]
    ev += [{"ph": "X", "cat": "user_annotation", "name": n, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}}
           for n, ts, dur in names]
    with open(os.path.join(d, "x-rank0.trace.json"), "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)
    if env is not None:
        with open(os.path.join(d, "env.json"), "w") as f:
            json.dump(env, f)
    return d


def manifest_text(source, files):
    m = {"tool": "ncrewrite", "version": "0.1.0", "rules": "r.yaml", "rules_digest": "0", "options": "", "files": files}
    if source is not None:
        m["source"] = source
    return json.dumps(m, indent=2)


def source_cases(nctrace, tmp):
    """Hand-made shadow trees and manifests; returns [(label, page)] to open in a browser."""
    base = os.path.join(tmp, "sv")
    pages = []

    def rng(name, lines, out_lines=None, kind="function"):
        return {"name": name, "kind": kind, "lines": lines, "out_lines": out_lines or lines}

    def case(label, shadow, extra=()):
        run = simple_run(os.path.join(base, label + "-run"),
                         [("outer", 0, 1000), ("inner", 100, 300), ("other", 2000, 50)],
                         {"shadow": {"dir": shadow, "manifest": "0"}} if shadow else {"backend": "ncrt"})
        page = os.path.join(base, label + ".html")
        p = subprocess.run([nctrace, "report", run, "-o", page] + list(extra), capture_output=True, text=True)
        assert p.returncode == 0, "%s: %s" % (label, p.stderr)
        parsed, data = page_data(page)
        pages.append((label, page))
        return parsed, data, p.stderr

    # no shadow tree: no source view at all
    parsed, data, err = case("none", None)
    assert "source" not in parsed.ids and "source" not in data and not err, (parsed.ids, err)
    # a shadow tree without a manifest, and one with a broken manifest: a note, a warning
    os.makedirs(os.path.join(base, "empty"))
    parsed, data, err = case("missing", os.path.join(base, "empty"))
    S = data["source"]
    assert "source" in parsed.ids and not S["ok"] and "could not be read" in S["notes"][0], S
    assert "warning: report: no source view" in err, err
    write(os.path.join(base, "bad", ".ncrewrite", "manifest.json"), '{"files": [\n  {"path": "a.py",,}\n]}\n')
    parsed, data, err = case("bad", os.path.join(base, "bad"))
    S = data["source"]
    assert not S["ok"] and "manifest.json:2:" in S["notes"][0] and "not valid JSON" in S["notes"][0], S["notes"]
    # an older manifest (no "source"): the shadow copies, on their own lines; a byte that is
    # not UTF-8 (a Latin-1 comment) comes out as U+FFFD; paths out of the tree are refused
    old = os.path.join(base, "old")
    write(os.path.join(old, "m.py"), b"# caf\xe9\n\ndef outer():\n    with r('outer'):\n        inner()\n"
          b"        with r('inner'):\n            pass\n", "wb")
    write(os.path.join(old, ".ncrewrite", "manifest.json"), manifest_text(None, [
        {"path": "m.py", "action": "rewritten",
         "ranges": [rng("outer", [4, 6], [5, 7]), rng("inner", [6, 6], [7, 7], "lines")]},
        {"path": "../escape.py", "action": "rewritten", "ranges": [rng("other", [1, 1])]},
        {"path": "quiet.py", "action": "rewritten", "ranges": [rng("never_ran", [1, 2])]}]))
    parsed, data, err = case("old", old)
    S = data["source"]
    assert S["ok"] and S["origin"] is None and "older" in S["notes"][1] and "outside the tree" in S["notes"][2], S
    assert [f["path"] for f in S["files"]] == ["m.py"] and S["untimed_files"] == 1, S
    f = S["files"][0]
    assert f["from"] == "shadow" and f["text"].startswith("# caf\ufffd\n"), f
    assert [r[:6] for r in f["ranges"]] == [["outer", "function", 5, 7, 1, 1000000],
                                            ["inner", "lines", 7, 7, 1, 300000]], f["ranges"]
    assert f["time"] == 1000000, f["time"]  # outer's own 700 us and inner's 300 us
    # the source tree named, one file changed after the shadow tree was made, one
    # over the cap (the file with the most time: listed, without its text), and
    # --shadow given on the command line
    src, sh = os.path.join(base, "src"), os.path.join(base, "shadow")
    big_text = "x = 1\n" * ((5 << 20) // 6 + 1)
    write(os.path.join(src, "big.py"), big_text)
    write(os.path.join(sh, "big.py"), big_text)
    write(os.path.join(src, "small.py"), "def inner():\n    pass\n")
    write(os.path.join(sh, "small.py"), "def inner():\n    with r('inner'):\n        pass\n")
    write(os.path.join(src, "late.py"), "def other():\n    pass\n")
    write(os.path.join(sh, "late.py"), "def other():\n    with r('other'):\n        pass\n")
    write(os.path.join(sh, ".ncrewrite", "manifest.json"), manifest_text(src, [
        {"path": "big.py", "action": "rewritten", "ranges": [rng("outer", [1, 3])]},
        {"path": "late.py", "action": "rewritten", "ranges": [rng("other", [2, 2], [3, 3])]},
        {"path": "small.py", "action": "rewritten", "ranges": [rng("inner", [2, 2], [3, 3])]}]))
    t = os.stat(os.path.join(sh, ".ncrewrite", "manifest.json")).st_mtime
    os.utime(os.path.join(src, "late.py"), (t + 10, t + 10))
    parsed, data, err = case("cap", "/no/such/shadow", ["--shadow", sh])
    S = data["source"]
    assert S["ok"] and S["via"] == "--shadow" and S["origin"] == src, S["notes"]
    assert [f["path"] for f in S["files"]] == ["big.py", "small.py", "late.py"], [f["path"] for f in S["files"]]
    big, small, late = S["files"]
    assert big["text"] is None and big["capped"] and S["left_out"] == {"files": 1, "bytes": len(big_text)}, big
    assert small["from"] == "source" and small["text"] == "def inner():\n    pass\n" and small["ranges"][0][2:4] == [2, 2]
    assert late["from"] == "shadow" and "changed after the shadow tree was made" in late["why"], late
    assert late["ranges"][0][2:4] == [3, 3] and late["text"].count("\n") == 3, late
    assert os.path.getsize(os.path.join(base, "cap.html")) < (5 << 20), "the cap did not hold"
    return pages


def check_source_pages(d, pages):
    """The hand-made cases in the browser: no console error, the notes shown."""
    from selenium.webdriver.common.by import By
    for label, page in pages:
        open_page(d, page, "source " + label)
        has = d.execute_script("return !!document.getElementById('source');")
        assert has == (label != "none"), label
        links = {a.text: a for a in d.find_elements(By.CSS_SELECTOR, "#summary a.srclink")}
        if label in ("none", "missing", "bad"):
            assert not links, (label, list(links))
            assert label == "none" or "No source view" in d.find_element(By.ID, "source").text
        elif label == "cap":
            assert "listed without their text" in d.find_element(By.ID, "source").text
            links["outer"].click()
            assert attr(d, "source-code", "file") == "big.py" and "left out" in \
                d.find_element(By.ID, "source-code").text
            links["other"].click()
            assert attr(d, "source-code", "from") == "shadow" and attr(d, "source-code", "lines") == "3-3"


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


def view(d):
    a, b = attr(d, "timeline-canvas", "view").split(",")
    return float(a), float(b)


def wait_for(d, cond, what, timeout=10):
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        return WebDriverWait(d, timeout, poll_frequency=0.02).until(lambda _: cond())
    except Exception:
        raise AssertionError("timed out waiting for: %s" % what)


AXIS_RE = re.compile(r"^\+\d+(\.\d+)? (ns|µs|ms|s)$")


def exercise_interactions(d, label, n_match, shots=None):
    """Search stepping (Enter / Shift+Enter), W/A/S/D and the arrows, drag to
    measure, relative axis labels, times in boxes: real key, mouse and wheel
    input, asserting on what the page exposes (data-* of the canvases, the
    status line, the measure panel). `n_match`: how many "forward" ranges the
    page holds."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    cv = d.find_element(By.ID, "timeline-canvas")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", cv)
    d.find_element(By.XPATH, "//button[text()='whole run']").click()
    span = d.execute_script("return window.ncReport.timeline.span;")
    st = d.find_element(By.CSS_SELECTOR, "#timeline .bar .st")
    box = d.find_element(By.ID, "tl-search")
    box.clear()
    box.send_keys("=forward")
    wait_for(d, lambda: int(attr(d, "timeline-canvas", "matched")) > 0, "the search to highlight")
    # Enter: every match in time order, each centred and wide enough to read, then wrap
    seen = []
    for k in range(1, n_match + 1):
        prev = attr(d, "timeline-canvas", "view")
        box.send_keys(Keys.ENTER)
        want = "%d of %d" % (k, n_match)
        wait_for(d, lambda: attr(d, "timeline-canvas", "match") == want, "match %s (got %r)"
                 % (want, attr(d, "timeline-canvas", "match")))
        assert ("match " + want) in st.text, st.text
        v = view(d)
        assert attr(d, "timeline-canvas", "view") != prev or n_match == 1, "Enter %d did not move the view" % k
        assert v[1] - v[0] < span / 4, "match %d is not zoomed to: %s of %s" % (k, v, span)
        labels = json.loads(attr(d, "timeline-canvas", "labeltexts"))
        assert any(t.startswith("forward · ") and TIME_RE.search(t) for t in labels), \
            "match %d: no 'forward · time' label: %s" % (k, labels[:20])
        seen.append(v)
        if shots and k == 3:
            d.find_element(By.ID, "timeline").screenshot(os.path.join(shots, "report-search-step.png"))
    centres = [(a + b) / 2 for a, b in seen]
    assert centres == sorted(centres) and len(set(centres)) == n_match, "matches not in time order: %s" % centres
    box.send_keys(Keys.ENTER)  # wraps to the first
    wait_for(d, lambda: attr(d, "timeline-canvas", "match") == "1 of %d" % n_match, "the wrap to the first match")
    assert view(d) == seen[0], (view(d), seen[0])
    box.send_keys(Keys.SHIFT, Keys.ENTER)  # and back, wrapping to the last
    wait_for(d, lambda: attr(d, "timeline-canvas", "match") == "%d of %d" % (n_match, n_match),
             "Shift+Enter to the last match (got %r)" % attr(d, "timeline-canvas", "match"))
    assert view(d) == seen[-1], (view(d), seen[-1])
    box.send_keys(Keys.SHIFT, Keys.ENTER)
    wait_for(d, lambda: attr(d, "timeline-canvas", "match") == "%d of %d" % (n_match - 1, n_match),
             "Shift+Enter to the one before")
    # the case: from the whole run, matches before the view's middle are found too
    d.find_element(By.XPATH, "//button[text()='whole run']").click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("=forward")
    box.send_keys(Keys.ENTER)
    wait_for(d, lambda: attr(d, "timeline-canvas", "match") == "1 of %d" % n_match, "a fresh search to start at 1")
    assert view(d) == seen[0], (view(d), seen[0])
    # the axis: offsets from the view's start in units of the zoom
    ticks = json.loads(attr(d, "timeline-canvas", "ticks"))
    assert ticks and all(AXIS_RE.match(t) for t in ticks), ticks
    d.execute_script("var s=document.getElementById('tl-search'); s.value=''; s.dispatchEvent(new Event('input'));")
    d.execute_script("document.activeElement.blur();")
    # keys: W/S zoom, A/D pan, and the arrows alike (the pointer away from the plot: at the middle)
    ActionChains(d).move_to_element_with_offset(cv, -cv.size["width"] // 2 + 20, 0).perform()

    def key_changes(k, check, what):
        before = view(d)
        ActionChains(d).send_keys(k).perform()
        wait_for(d, lambda: view(d) != before, "%r to change the view" % k)
        after = view(d)
        assert check(before, after), "%r: %s -> %s is not %s" % (k, before, after, what)
    wid = lambda v: v[1] - v[0]
    mid = lambda v: (v[0] + v[1]) / 2
    for k in ("w", Keys.ARROW_UP):
        key_changes(k, lambda a, b: wid(b) < wid(a) * 0.9 and abs(mid(b) - mid(a)) < wid(a) * 0.01, "a zoom in")
    for k in ("s", Keys.ARROW_DOWN):
        key_changes(k, lambda a, b: wid(b) > wid(a) * 1.1, "a zoom out")
    for k in ("w", "w", "w"):
        key_changes(k, lambda a, b: wid(b) < wid(a), "a zoom in")
    for k in ("a", Keys.ARROW_LEFT):
        key_changes(k, lambda a, b: b[0] < a[0] and abs(wid(b) - wid(a)) < 2, "a pan left")
    for k in ("d", Keys.ARROW_RIGHT):
        key_changes(k, lambda a, b: b[0] > a[0] and abs(wid(b) - wid(a)) < 2, "a pan right")
    # deep zoom: the axis in µs from the view's start, not absolute 7-digit times
    for _ in range(60):
        if wid(view(d)) < 50000:
            break
        before = view(d)
        ActionChains(d).scroll_from_origin(ScrollOrigin.from_element(cv, 150, 0), 0, -300).perform()
        wait_for(d, lambda: view(d) != before, "the wheel to zoom")
    assert 1000 < wid(view(d)) < 50000, view(d)
    ticks = json.loads(attr(d, "timeline-canvas", "ticks"))
    assert ticks and all(AXIS_RE.match(t) for t in ticks) and any(t.endswith(" µs") for t in ticks), ticks
    # drag: measure, not pan
    d.find_element(By.XPATH, "//button[text()='whole run']").click()
    v = view(d)
    plot = cv.size["width"] - 240
    x0 = -cv.size["width"] // 2 + 240 + plot // 4
    ActionChains(d).move_to_element_with_offset(cv, x0, 0).click_and_hold().move_by_offset(40, 0) \
        .move_by_offset(plot // 4 - 40, 0).release().perform()
    meas = d.find_element(By.ID, "tl-measure")
    wait_for(d, lambda: meas.is_displayed() and attr(d, "timeline-canvas", "measure"), "the measurement to show")
    assert view(d) == v, "the drag panned (%s -> %s)" % (v, view(d))
    a, b = map(float, attr(d, "timeline-canvas", "measure").split(","))
    npp = (v[1] - v[0]) / plot
    assert abs((b - a) - (plot // 4) * npp) <= 3 * npp, ((a, b), plot // 4 * npp)
    assert abs(a - (v[0] + (plot // 4) * npp)) <= 3 * npp, (a, v)
    text = meas.text
    assert text.startswith("measured ") and TIME_RE.search(text) and int(attr(d, "timeline-canvas", "measured")) > 0 \
        and "the most time, summed over the tracks, in " in text, text
    if shots:
        d.find_element(By.ID, "timeline").screenshot(os.path.join(shots, "report-measure.png"))
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    wait_for(d, lambda: not meas.is_displayed() and not attr(d, "timeline-canvas", "measure"), "Esc to clear it")
    ActionChains(d).move_to_element_with_offset(cv, x0, 0).click_and_hold().move_by_offset(60, 0).release().perform()
    wait_for(d, lambda: meas.is_displayed(), "a second measurement")
    ActionChains(d).move_to_element_with_offset(cv, x0 + 100, 0).click().perform()
    wait_for(d, lambda: not meas.is_displayed(), "a click to clear it")
    # shift+drag still pans
    ActionChains(d).move_to_element_with_offset(cv, x0, 0).key_down(Keys.SHIFT).click_and_hold() \
        .move_by_offset(-80, 0).release().key_up(Keys.SHIFT).perform()
    wait_for(d, lambda: view(d)[0] > v[0], "shift+drag to pan")
    assert not meas.is_displayed()
    # the flame chart: name and time in the boxes that fit them
    fl = json.loads(attr(d, "flame-canvas", "labeltexts"))
    assert any(" · " in t and TIME_RE.search(t) for t in fl), fl[:20]
    d.find_element(By.XPATH, "//button[text()='whole run']").click()
    return "search stepped through %d matches and wrapped both ways; W/A/S/D/arrows; %s; axis %s" % (
        n_match, text.split(":")[0], ticks[:2])


def zoom_steps(d, n=24):
    """The time of a zoom step in the page (the timeline redrawn for a view 0.8x the last, at the run's middle,
    from the whole run down), timed in the page with performance.now(): (median, max) ms."""
    ms = d.execute_script("""
        var T = window.ncReport.timeline, c = T.span / 2, w = T.span, out = [];
        for (var i = 0; i < arguments[0]; i++) {
          w *= 0.8;
          var t = performance.now();
          T.zoom(c - w / 2, c + w / 2);
          out.push(performance.now() - t);
        }
        T.zoom(0, T.span);
        return out;""", n)
    ms.sort()
    return ms[len(ms) // 2], ms[-1]


def exercise_hover(d):
    """Hover on the instrumented run: the range's file:line in the user's source."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    tip = d.find_element(By.ID, "nc-tip")
    fl = d.find_element(By.ID, "flame-canvas")
    d.find_element(By.XPATH, "//div[@id='flame']//button[text()='whole tree']").click()
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", fl)
    ActionChains(d).move_to_element_with_offset(fl, -fl.size["width"] // 2 + 5, -fl.size["height"] // 2 + 17 + 8) \
        .perform()
    wait_for(d, lambda: tip.is_displayed() and "source: train.py:" in tip.text, "the flame tooltip's source")
    flame_tip = tip.text
    assert flame_tip.startswith("main\n") and re.search(r"source: train\.py:\d+", flame_tip), flame_tip
    cv = d.find_element(By.ID, "timeline-canvas")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", cv)
    box = d.find_element(By.ID, "tl-search")
    box.clear()
    box.send_keys("=Attention.forward", Keys.ENTER)
    wait_for(d, lambda: attr(d, "timeline-canvas", "match") == "1 of 5", "the first of 5 forward calls "
             "(%r)" % attr(d, "timeline-canvas", "match"))
    # the centre of the plot: the match; find its lane by moving down the rows until the tooltip names it
    for y in range(24 + 20 + 7, 24 + 20 + 15 * 8, 15):
        ActionChains(d).move_to_element_with_offset(cv, 120, y - cv.size["height"] // 2).perform()
        try:
            wait_for(d, lambda: tip.is_displayed() and tip.text.startswith("Attention.forward\n"), "", timeout=1)
            break
        except AssertionError:
            pass
    text = tip.text
    assert text.startswith("Attention.forward\n") and re.search(r"source: model/attn\.py:\d+–\d+", text), text
    # and what its events' args say (ncrt writes the user's file and line)
    assert re.search(r'args: file="[^"]*model/attn\.py", line=\d+', text), text
    d.execute_script("var s=document.getElementById('tl-search'); s.value=''; s.dispatchEvent(new Event('input'));")
    return "hover: %r" % text.replace("\n", " | ")


def report(nctrace, files, out, extra=(), cwd=None):
    t = time.time()
    p = subprocess.run([nctrace, "report"] + list(files) + ["-o", out] + list(extra), capture_output=True,
                       text=True, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return time.time() - t


def main():
    nctrace = sys.argv[1]
    ncrewrite = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    ncrun_dir = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    tmp = tempfile.mkdtemp(prefix="nctrace-report-")
    driver = None
    try:
        source_pages = source_cases(nctrace, tmp)
        inst = manifest = None
        if ncrewrite and ncrun_dir:
            inst, manifest = instrumented(tmp, ncrewrite, ncrun_dir, nctrace)
            check_instrumented_data(page_data(inst)[1], manifest)
        else:
            print("note: no ncrewrite and ncrun given (a runtime-only build): the instrumented run is left out")
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
        # what the hover says of a name's args: a kernel's stream is the same
        # on every call, its correlation differs per call (so does its
        # device across the four ranks): only the first is shown with a value
        ka = {k[0]: k for k in d4["name_args"][str(d4["names"].index("ampere_sgemm_128x64_nt"))]}
        assert ka["stream"][1:3] == ["7", 0] and ka["correlation"][2] == 1 and ka["device"][2] == 1, ka
        assert str(d4["names"].index("forward")) not in d4["name_args"], "a range without args has args"
        secs = open_page(driver, four, "4 ranks")
        hdr = driver.find_element("id", "runhdr").text
        for want in ("torchrun", "gpu-node-07", "2026-11-24", "wait=1,warmup=1,active=8", "a9f03c"):
            assert want in hdr, "run header lacks %r: %r" % (want, hdr)
        # GPU streams sit under the thread that launched their work
        labels = [t["label"] for t in d4["timeline"]["ranks"][0]["tracks"]]
        assert labels[0].endswith("(MainThread)") and labels[1].startswith("GPU"), labels
        lines.append("4 ranks: %d events, %d bytes, ready in %.2f s; %s"
                     % (d4["timeline"]["events"], os.path.getsize(four), secs, exercise(driver, "4 ranks", shots)))
        lines.append("4 ranks: " + exercise_interactions(driver, "4 ranks", 8 * 4, shots))
        # the comparison: paired bars, ranges then kernels
        assert int(attr(driver, "compare-canvas", "rows")) > 0
        first = attr(driver, "compare-canvas", "first")
        driver.find_element("id", "compare").screenshot(os.path.join(shots, "report-compare.png"))
        driver.find_element("xpath", "//div[@id='compare']//button[text()='kernels']").click()
        assert attr(driver, "compare-canvas", "mode").startswith("kernels") and \
            attr(driver, "compare-canvas", "first") != first, "the comparison did not switch to kernels"
        assert "per step" in driver.find_element("id", "compare").text
        # the source view: an instrumented run, then the hand-made cases
        if inst:
            open_page(driver, inst, "instrumented")
            lines.append(exercise_source(driver, manifest, shots))
            lines.append(exercise_hover(driver))
        check_source_pages(driver, source_pages)
        lines.append("source cases: %s" % ", ".join(label for label, _ in source_pages))
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
        zmed, zmax = zoom_steps(driver)
        lines[-1] += ", zoom step %.1f ms median, %.1f ms max" % (zmed, zmax)
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
