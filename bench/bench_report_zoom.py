#!/usr/bin/env python3
"""The report page's zoom step at N events (issue 35): the browser test's big
trace (tests/trace/test_report_chromium.py, one rank, Kineto layout) made
once, reported by each nctrace given, opened in headless Chromium; prints the
page's size, time to ready, JS heap and the zoom step (the timeline redrawn
at 0.8x the last view, 24 steps from the whole run down, timed in the page).

    /usr/bin/python3 bench/bench_report_zoom.py --events 7700000 build/bin/nctrace [/tmp/nctrace.before ...]
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "trace"))
import test_report_chromium as T  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=7700000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("nctrace", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="nctrace-zoom-")
    d = None
    try:
        trace = os.path.join(tmp, "big.trace.json")
        n = T.big(trace, a.events)
        print("trace: %d events, %d bytes" % (n, os.path.getsize(trace)), flush=True)
        d = T.webdriver(os.path.join(tmp, "profile"))
        for i, exe in enumerate(a.nctrace):
            page = os.path.join(tmp, "p%d.html" % i)
            secs = T.report(os.path.abspath(exe), [trace], page)
            for r in range(a.rounds):
                ready = T.open_page(d, page, exe)
                heap, pss = T.browser_memory(d, os.path.join(tmp, "profile"))
                med, mx = T.zoom_steps(d)
                print("%s: report %.1f s, page %d bytes, ready %.2f s, JS heap %.0f MB, PSS %.0f MB, "
                      "zoom step %.1f ms median, %.1f ms max" % (exe, secs, os.path.getsize(page), ready, heap / 1e6,
                                                                 pss / 1e6, med, mx), flush=True)
    finally:
        if d is not None:
            d.quit()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
