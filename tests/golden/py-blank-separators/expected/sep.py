"""Blank lines between definitions stay where another blank gives room."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
import os


class Store:
    """A class whose first method is wrapped whole."""

    def first(self):
        with __ncrt__.range("Store.first"): return os.sep
    def second(self):
        with __ncrt__.range("Store.second"):
            x = 1

            return x


def outer():
    def inner():
        return 2
    with __ncrt__.range("outer:L21-22"):
        y = inner()
        return y


def tail():
    a = 1
    with __ncrt__.range("tail:L27-28"):
        b = 2
        return a + b
