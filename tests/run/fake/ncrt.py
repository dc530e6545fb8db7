"""A stand-in for the ncrt runtime module, for tests only.

It records every range the instrumented code opens and checks the rules the
real collector relies on: push/pop ranges (range, torch_range) close in LIFO
order on their thread; start/end spans (span, torch_span) may interleave.
At exit it writes a JSON summary to $NCRT_FAKE_LOG.

Like the real (C) module it imports nothing written in Python at import time
(_thread and atexit are built in), so instrumenting the standard library
cannot create an import cycle through it.
"""
import _thread
import atexit

_lock = _thread.allocate_lock()
_counts = {}
_violations = []
_open_spans = set()
_tls = _thread._local()
_next_id = [0]


def _stack():
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s


class _Range:
    __slots__ = ("name", "kind")

    def __init__(self, name, kind):
        self.name = str(name)
        self.kind = kind

    def __enter__(self):
        with _lock:
            _counts[self.kind + ":" + self.name] = _counts.get(self.kind + ":" + self.name, 0) + 1
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        st = _stack()
        if not st or st[-1] is not self:
            _violations.append("push/pop range %r closed out of order" % self.name)
            if self in st:
                st.remove(self)
        else:
            st.pop()
        return False


class _Span:
    __slots__ = ("name", "kind", "id")

    def __init__(self, name, kind):
        self.name = str(name)
        self.kind = kind

    def __enter__(self):
        with _lock:
            _counts[self.kind + ":" + self.name] = _counts.get(self.kind + ":" + self.name, 0) + 1
            _next_id[0] += 1
            self.id = _next_id[0]
            _open_spans.add(self.id)
        return self

    def __exit__(self, *exc):
        with _lock:
            _open_spans.discard(self.id)
        return False


def range(name):
    return _Range(name, "range")


def torch_range(name):
    return _Range(name, "torch_range")


def span(name):
    return _Span(name, "span")


def torch_span(name):
    return _Span(name, "torch_span")


@atexit.register
def _dump():
    import json
    import os
    path = os.environ.get("NCRT_FAKE_LOG")
    if path:
        with open(path, "w") as f:
            json.dump({"counts": _counts, "violations": _violations,
                       "open_spans": len(_open_spans)}, f, sort_keys=True, indent=1)
