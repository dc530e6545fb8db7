#!/usr/bin/env python3
"""The served report (`nctrace report --serve`, issue 35 item 1) against the
one-file page at N events: the browser test's big trace
(tests/trace/test_report_chromium.py, one rank, Kineto layout) made once,
then, in one headless Chromium:

  one-file: `nctrace report -o` time, page size, ready (time to first draw),
            JS heap, zoom step (24 steps, timed in the page);
  served:   time until the server prints its URL (trace loaded, page and
            window index built), the server's RSS (VmRSS and peak VmHWM),
            ready, JS heap, zoom step, and the time to show one event at
            deep zoom: from the timeline zoomed (whole run -> a 40 µs window
            at the run's middle) until every lane there is drawn from the
            server's answer (timed in the page with performance.now()),
            and the answer's own round trip.

    /usr/bin/python3 bench/bench_report_serve.py --events 10000000 build/bin/nctrace
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "trace"))
import test_report_chromium as T  # noqa: E402
import test_report_serve as S  # noqa: E402


def rss(pid):
    got = {}
    for line in open("/proc/%d/status" % pid):
        k = line.split(":")[0]
        if k in ("VmRSS", "VmHWM"):
            got[k] = int(line.split()[1]) * 1024
    return got["VmRSS"], got["VmHWM"]


def deep_event_ms(d, width=40000):
    """ms from the zoom to a drawn answer of the server (the page's clock), and the fetch's own ms."""
    return d.execute_async_script("""
        var done = arguments[arguments.length - 1], T = window.ncReport.timeline, c = 420000;
        var cv = document.getElementById('timeline-canvas');
        T.zoom(0, T.span);
        var asks = +cv.dataset.asks, t = performance.now();
        T.zoom(c - arguments[0] / 2, c + arguments[0] / 2);
        (function poll() {
          if (cv.dataset.full === '1') done([performance.now() - t, 0, 'the page holds every event there']);
          else if (+cv.dataset.asks > asks && +cv.dataset.live > 0) done([performance.now() - t, +cv.dataset.liveask, '']);
          else setTimeout(poll, 1);
        })();""", width)


def labels_at(d, width=40000):
    """(grouped, all) boxes drawn at a width-ns window in the first step's forward (after the server's answer, if any)."""
    deep_event_ms(d, width) if d.execute_script("return !!JSON.parse(document.getElementById('nc-data')"
                                                ".textContent).serve;") else \
        d.execute_script("var T = window.ncReport.timeline, c = 420000; T.zoom(c - arguments[0] / 2, "
                         "c + arguments[0] / 2);", width)
    return int(T.attr(d, "timeline-canvas", "grouped")), int(T.attr(d, "timeline-canvas", "boxes"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("nctrace")
    a = ap.parse_args()
    exe = os.path.abspath(a.nctrace)
    tmp = tempfile.mkdtemp(prefix="nctrace-serve-bench-")
    d = srv = None
    try:
        trace = os.path.join(tmp, "big.trace.json")
        n = T.big(trace, a.events)
        print("trace: %d events, %d bytes" % (n, os.path.getsize(trace)), flush=True)
        d = T.webdriver(os.path.join(tmp, "profile"))
        d.set_script_timeout(300)
        page = os.path.join(tmp, "one.html")
        secs = T.report(exe, [trace], page)
        for r in range(a.rounds):
            ready = T.open_page(d, page, "one-file")
            heap, pss = T.browser_memory(d, os.path.join(tmp, "profile"))
            med, mx = T.zoom_steps(d)
            print("one-file: report %.1f s, page %d bytes, ready %.2f s, JS heap %.0f MB, PSS %.0f MB, "
                  "zoom step %.1f ms median, %.1f ms max; %d of %d boxes grouped at a 40 µs window"
                  % ((secs, os.path.getsize(page), ready, heap / 1e6, pss / 1e6, med, mx) + labels_at(d)),
                  flush=True)
        t = time.time()
        srv, url, port = S.start_server(exe, [trace])
        up = time.time() - t
        print("served: URL after %.1f s; server RSS %.0f MB (peak %.0f MB); page %d bytes"
              % ((up,) + tuple(x / 1e6 for x in rss(srv.pid)) + (len(S.get(url)[1]),)), flush=True)
        for r in range(a.rounds):
            t = time.time()
            S.open_url(d, url, "served")
            ready = time.time() - t
            heap, pss = T.browser_memory(d, os.path.join(tmp, "profile"))
            med, mx = T.zoom_steps(d)
            deep = [deep_event_ms(d) for _ in range(5)]
            total = sorted(x[0] for x in deep)
            fetch = sorted(x[1] for x in deep)
            print("served: ready %.2f s, JS heap %.0f MB, PSS %.0f MB, zoom step %.1f ms median, %.1f ms max; "
                  "one event at a 40 µs window drawn %.1f ms after the zoom (median of 5, max %.1f; the server's "
                  "answer %.1f ms); server RSS now %.0f MB; %d of %d boxes grouped at a 40 µs window"
                  % ((ready, heap / 1e6, pss / 1e6, med, mx, total[2], total[-1], fetch[2], rss(srv.pid)[0] / 1e6)
                     + labels_at(d)), flush=True)
        S.stop_server(srv)
        srv = None
    finally:
        if srv is not None:
            srv.kill()
        if d is not None:
            d.quit()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
