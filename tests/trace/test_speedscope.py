#!/usr/bin/env python3
"""Our traces in speedscope (issue 35, item 5): one function per range name.

speedscope (the npm package's web app, pinned in tests/trace/CMakeLists.txt)
keys and labels a trace event's function by its name plus the JSON of its
`args`. libncrt used to write `args.depth`, which varies per call, so a range
called at two depths became two functions. A C program that calls
`workload.spin` at depth 1 and at depth 3 runs under ncrun; its trace is
served, with speedscope's release files, from a local HTTP server on
127.0.0.1 and opened in headless Debian Chromium (chromium-driver,
python3-selenium) through speedscope's `#profileURL=`, gzip'ed as written. In the Sandwich view
every range name must be listed exactly once, and each one's Total must be
nctrace's inclusive time for it (to the two decimals speedscope shows).

The control: the same trace with each range's depth moved back into its
args, as the writer used to put it, must list `workload.spin` twice -- the
check above can fail. Every wait is for a condition, none for a time.
Without chromium, chromium-driver or selenium: 77 (skipped), saying which.

    test_speedscope.py NCTRACE NCRUN_DIR SPEEDSCOPE_PACKAGE_DIR
"""
import functools
import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from test_report_chromium import chromium_exe, webdriver  # noqa: E402

NVTX_INC = next((d for d in ("/usr/local/cuda/include", "/usr/local/cuda/targets/x86_64-linux/include")
                 if os.path.exists(os.path.join(d, "nvtx3"))), "/usr/include")

PROG = r'''
#include <ncrt.h>
static volatile long sink;
static void spin(int n) {
  NCRT_RANGE("workload.spin");
  for (long i = 0; i < n * 100000L; i++) sink += i;
}
static void inner(void) {
  NCRT_RANGE("workload.inner");
  {
    NCRT_RANGE("workload.deeper");
    spin(3);
  }
}
int main(void) {
  NCRT_RANGE("main.main");
  for (int i = 0; i < 5; i++) {
    spin(2);   /* depth 1 */
    inner();   /* spin at depth 3 */
  }
  return 0;
}
'''

UNITS = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
ROW = re.compile(r"([\d.]+)\s*(ns|µs|us|ms|s)\s*\([^)]*\)\s+([\d.]+)\s*(?:ns|µs|us|ms|s)\s*\([^)]*\)\s+(\S[^\n]*)")


def skip(why):
    print("SKIPPED: " + why)
    sys.exit(77)


def sandwich(d, url, label):
    """The Sandwich view's rows of the profile at url: [(total µs, shown, label)]."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    d.get(url)
    wait = WebDriverWait(d, 60)
    tab = wait.until(lambda d: [e for e in d.find_elements(By.XPATH, "//*[contains(text(),'Sandwich')]")
                                if e.is_displayed()] or None)
    tab[-1].click()
    text = wait.until(lambda d: (lambda t: t if "Symbol Name" in t and ROW.search(t.split("Symbol Name", 1)[1])
                                 else None)(d.execute_script("return document.body.innerText")))
    errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, "%s: console errors: %s" % (label, errors)
    rows = []
    for m in ROW.finditer(text.split("Symbol Name", 1)[1]):
        rows.append((float(m.group(1)) * UNITS[m.group(2)], m.group(1) + m.group(2), m.group(4).strip()))
    return rows


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    nctrace, ncrun_dir, ss_pkg = sys.argv[1:]
    release = os.path.join(ss_pkg, "dist", "release")
    if not os.path.exists(os.path.join(release, "index.html")):
        sys.exit("FAILED: no speedscope release in %s" % ss_pkg)
    if not chromium_exe():
        skip("no chromium (apt-get install chromium chromium-driver python3-selenium)")
    tmp = tempfile.mkdtemp(prefix="nc-speedscope-")
    failures = []
    d = None
    srv = None
    try:
        d = webdriver(os.path.join(tmp, "profile"))
        if d is None:
            skip("no chromium-driver or python3-selenium")
        src = os.path.join(tmp, "prog.c")
        with open(src, "w") as f:
            f.write(PROG)
        exe = os.path.join(tmp, "prog")
        subprocess.run(["gcc", "-O1", "-I", os.path.join(ROOT, "src/runtime/include"), "-I", NVTX_INC, src,
                        "-o", exe], check=True)
        run = os.path.join(tmp, "run")
        subprocess.run([os.path.join(ncrun_dir, "ncrun"), "--run-dir", run, "--", exe], check=True,
                       capture_output=True)
        trace = [os.path.join(run, f) for f in os.listdir(run) if f.endswith(".trace.json.gz")][0]
        p = subprocess.run([nctrace, "summary", "--format", "json", trace], check=True, capture_output=True, text=True)
        incl = {o["name"]: o["inclusive_us"] for o in json.loads(p.stdout)["structured"]["operations"]
                if o["kind"] == "user_annotation"}
        if set(incl) != {"main.main", "workload.spin", "workload.inner", "workload.deeper"}:
            failures.append("nctrace's ranges: %s" % sorted(incl))

        www = os.path.join(tmp, "www")
        shutil.copytree(release, os.path.join(www, "speedscope"))
        shutil.copy(trace, os.path.join(www, "now.json.gz"))  # as written: speedscope reads gzip
        with gzip.open(trace) as f:
            t = json.load(f)
        for e in t["traceEvents"]:  # the old writer: the depth inside args
            if e.get("cat") == "user_annotation" and "depth" in e:
                e.setdefault("args", {})["depth"] = e.pop("depth")
        with open(os.path.join(www, "old.json"), "w") as f:
            json.dump(t, f)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=www))
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        base = "http://127.0.0.1:%d/" % srv.server_address[1]

        def url(name):
            # the query differs per profile: a change of the fragment alone
            # would not load the page again
            return base + "speedscope/index.html?" + name + "#profileURL=" + urllib.parse.quote(base + name)

        rows = sandwich(d, url("now.json.gz"), "our trace")
        names = [r[2].split(" {", 1)[0] for r in rows]
        print("sandwich: %s" % ["%s %s" % (r[2], r[1]) for r in rows])
        for n in sorted(set(names) | set(incl)):
            if names.count(n) != 1:
                failures.append("%s listed %d times in the Sandwich view" % (n, names.count(n)))
        for total, shown, label in rows:
            n = label.split(" {", 1)[0]
            if n in incl:
                want = incl[n]
                unit = UNITS[re.sub(r"[\d.]", "", shown)]
                # speedscope shows two decimals of its unit
                if abs(total - want) > 0.0051 * unit + 1e-9:
                    failures.append("%s: speedscope's total %s, nctrace's inclusive %.3f µs" % (n, shown, want))

        old = sandwich(d, url("old.json"), "the old layout")
        spins = [r[2] for r in old if r[2].startswith("workload.spin")]
        print("old layout: workload.spin as %s" % spins)
        if len(spins) < 2:
            failures.append("control: with args.depth, workload.spin should be two functions; got %s" % spins)
    finally:
        if d is not None:
            d.quit()
        if srv is not None:
            srv.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("ok: every range name is one speedscope function, with nctrace's inclusive time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
