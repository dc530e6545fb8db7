#!/usr/bin/env python3
"""The report's comparison view shows nctrace diff's noise verdicts and sorts
by them (issue 35 item 4, issue 30 finding 6).

The runs of noise_traces.single (B's `slow_fn` +91 % with a small spread;
`train_step` with a larger change inside a huge spread) as `nctrace report
A --compare B`:
  - the page's data carries each row's verdict as `nctrace diff --format
    json` computes it (one implementation), in diff's order;
  - the HTML tables under the picture say "significant" / "within noise";
  - in headless Chromium (selenium), the comparison canvas draws `slow_fn`
    first and labels `train_step` "within noise", for inclusive and for
    exclusive time (the verdict, of inclusive time, still leads the order).
Without Chromium, chromium-driver or selenium: 77 (skipped) after the
checks that need no browser.

usage: test_report_compare_noise.py NCTRACE"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import noise_traces  # noqa: E402
from test_report_chromium import attr, chromium_exe, open_page, page_data, webdriver  # noqa: E402

VERDICT = {0: "unknown", 1: "within noise", 2: "significant"}


def check_data(nctrace, a, b, page):
    p = subprocess.run([nctrace, "report", a, "-o", page, "--compare", b], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc, data = page_data(page)
    rows = data["compare"]["ranges"]
    got = [(r[0], VERDICT[r[10]]) for r in rows]
    dj = json.loads(subprocess.run([nctrace, "diff", a, b, "--format", "json"], capture_output=True, text=True,
                                   check=True).stdout)
    want = [(r["name"], r["significance"].replace("_", " ")) for r in dj["ranges"]["rows"]]
    assert got == want, "the page's verdicts are not diff's:\n%s\n%s" % (got, want)
    assert got[0] == ("slow_fn", "significant") and ("train_step", "within noise") in got, got
    text = open(page, encoding="utf-8").read()
    tables = text[text.index('id="compare-tables"'):text.index('id="summary"')]
    assert "within noise" in tables and "significant" in tables, "the comparison tables carry no verdicts"


def check_browser(page, profile):
    driver = webdriver(profile)
    if driver is None:
        return False
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    try:
        open_page(driver, page, "compare")
        for metric in ("0", "1"):  # inclusive, exclusive time
            Select(driver.find_element(By.CSS_SELECTOR, "#compare select")).select_by_value(metric)
            order = json.loads(attr(driver, "compare-canvas", "order"))
            verdicts = dict(zip(order, json.loads(attr(driver, "compare-canvas", "verdicts"))))
            assert order[0] == "slow_fn", (metric, order)
            assert verdicts["slow_fn"] == "significant" and verdicts["train_step"] == "within noise", verdicts
        help_text = driver.find_element(By.ID, "compare").text
        assert "within noise" in help_text and "significant changes first" in help_text, help_text
    finally:
        driver.quit()
    return True


def main():
    nctrace = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        a, b = noise_traces.single(tmp)
        page = os.path.join(tmp, "page.html")
        check_data(nctrace, a, b, page)
        if not chromium_exe():
            print("skipped: no chromium (the page's data and tables were checked)")
            return 77
        if not check_browser(page, os.path.join(tmp, "profile")):
            print("skipped: no chromium-driver or selenium (the page's data and tables were checked)")
            return 77
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
