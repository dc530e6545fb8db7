"""Ranges over one simple statement sit on that statement's line."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
import os


def single(x):
    with __ncrt__.range("single"): return os.path.join(x, "a")

def drilled(x):
    with __ncrt__.range("drilled"):
        with __ncrt__.range("drilled:L10"): a = len(x)
        with __ncrt__.range("drilled:L11-14"): b = os.path.join(
            x,
            "b",
        )
        with __ncrt__.range("drilled:L15"): c = a; d = b
        return c, d


def loop(items):
    for item in items:
        with __ncrt__.range("loop:L21"): print(item)
    with __ncrt__.range("header-row"):
        if items: print(len(items))

class K:
    def first(self):
        with __ncrt__.range("K.first"): return 1

    def second(self):
        return 2
