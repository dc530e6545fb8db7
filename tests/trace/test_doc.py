#!/usr/bin/env python3
"""The summary document written twice: `nctrace summary` (Markdown) and the
tables under `nctrace report`'s pictures (HTML) come from one document
(src/trace/cli/doc.c), so they must say the same -- also for names with
Markdown's own characters in them ('*', '|', '`'), which the page once
took for markup when it re-parsed the Markdown.

Checked: every table of the page has the Markdown's cells (after '\\|' is
unescaped and cells are trimmed); the page's bold titles are exactly the
bottleneck titles of the JSON; the tricky names show in the page as they
are; the headings are the same."""
import html.parser
import json
import os
import subprocess
import sys
import tempfile

NAMES = {"range": "x**y|z", "other": "back`tick <t>&", "kernel": "void k<float**>(float**)"}


def trace():
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
          {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}]
    x = lambda cat, name, pid, tid, ts, dur, **args: ev.append(
        {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args})
    x("user_annotation", "ProfilerStep#1", 1, 1, 0, 150)
    x("user_annotation", NAMES["range"], 1, 1, 1, 100)
    x("cuda_runtime", "cudaLaunchKernel", 1, 1, 10, 5, correlation=1)
    x("cuda_runtime", "cudaLaunchKernel", 1, 1, 20, 5, correlation=2)
    x("kernel", NAMES["kernel"], 0, 7, 30, 80, correlation=1, stream=7)
    x("kernel", "small", 0, 7, 120, 5, correlation=2, stream=7)
    x("user_annotation", "ProfilerStep#2", 1, 1, 200, 60)
    x("user_annotation", NAMES["other"], 1, 1, 201, 50)
    return {"schemaVersion": 1, "traceEvents": ev}


def md_tables(md):
    """Each table as rows of cells, the alignment row left out."""
    tables, cur = [], None
    for line in md.split("\n"):
        if not line.startswith("|"):
            cur = None
            continue
        if cur is None:
            cur = []
            tables.append(cur)
        elif len(cur) == 1 and set(line) <= set("|-:"):
            continue
        cells, cell, i = [], "", 1
        while i < len(line):
            if line[i] == "\\" and line[i + 1:i + 2] == "|":
                cell, i = cell + "|", i + 2
                continue
            if line[i] == "|":
                cells.append(cell.strip(" "))
                cell = ""
            else:
                cell += line[i]
            i += 1
        cur.append(cells)
    return tables


class Summary(html.parser.HTMLParser):
    """The tables, headings and bold texts inside <div id="summary">."""

    def __init__(self):
        super().__init__()
        self.inside, self.tables, self.headings, self.bold = False, [], [], []
        self.text = None

    def handle_starttag(self, tag, attrs):
        if tag == "div" and ("id", "summary") in attrs:
            self.inside = True
        if not self.inside:
            return
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th", "h1", "h2", "b"):
            self.text = ""

    def handle_endtag(self, tag):
        if not self.inside:
            return
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.text)
        elif tag in ("h1", "h2"):
            self.headings.append(self.text)
        elif tag == "b":
            self.bold.append(self.text)
        if tag in ("td", "th", "h1", "h2", "b"):
            self.text = None

    def handle_data(self, data):
        if self.text is not None:
            self.text += data


def main():
    nctrace = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="nctrace-doc-")
    path = os.path.join(tmp, "trace.json")
    with open(path, "w") as f:
        json.dump(trace(), f)
    run = lambda *a: subprocess.run([nctrace, *a], capture_output=True, text=True, check=True).stdout
    md = run("summary", path)
    js = json.loads(run("summary", path, "--format", "json"))
    run("report", path, "-o", os.path.join(tmp, "report.html"))
    page = Summary()
    page.feed(open(os.path.join(tmp, "report.html")).read())

    want = md_tables(md)
    assert want and len(page.tables) == len(want), (len(page.tables), len(want))
    for got, exp in zip(page.tables, want):
        assert got == exp, "page table %r\nMarkdown table %r" % (got, exp)
    heads = [line.lstrip("#").strip() for line in md.split("\n") if line.startswith("#")]
    assert page.headings == heads, (page.headings, heads)
    titles = [b["title"] for b in js["structured"]["bottlenecks"]]
    assert len(titles) >= 2, titles
    assert page.bold == titles, (page.bold, titles)
    cells = {c for t in page.tables for row in t for c in row}
    for name in NAMES.values():
        assert name in cells, "%r is not a cell of the page" % name
    assert "x**y\\|z" in md, "the Markdown escapes '|' in a cell"
    print("ok: %d tables, %d headings, %d bottleneck titles alike in Markdown and HTML"
          % (len(want), len(heads), len(titles)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
