"""Ranges laid out so that no line moves it does not have to."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
import os


def single(x):
    with __ncrt__.range("single"): return os.path.join(x, "a")


def documented(x):
    """A docstring, then a blank line: the range's line goes there."""
    with __ncrt__.range("documented"):
        y = x + 1
        return y

def drilled(x):
    with __ncrt__.range("drilled"):
        with __ncrt__.range("drilled:L17"): a = len(x)
        with __ncrt__.range("drilled:L18-21"): b = os.path.join(
            x,
            "b",
        )
        with __ncrt__.range("drilled:L22"): c = a; d = b
        return c, d


def inside(x):
    with __ncrt__.range("inside:L27-28"):
        a = 1
        b = a + 1
    c = b + 1
    return a + b + c


def after(x):
    with __ncrt__.range("after:L35-36"):
        p = 1
        q = p + 1
    return q

def untouched(x):
    s = x * 2
    return s


class K:
    def first(self):
        with __ncrt__.range("K.first"): return 1

    def second(self, x):
        total = 0
        with __ncrt__.range("K.second:L51-52"):
            for i in x:
                total += i
        return total
    def third(self):
        return 3


def folded_doc(x):
    """The docstring's last line break is written as an escape.

    Its value is the same; the row it frees holds the range.\n    """
    with __ncrt__.range("folded_doc"):
        y = x * 2
        return y


def folded_signature(first, second):
    with __ncrt__.range("folded_signature"):
        total = first + second
        return total

def raw_doc(x):
    r"""A raw docstring cannot take an escape: the def moves up.
    """
    with __ncrt__.range("raw_doc"):
        z = x - 1
        return z


def commented(x):
    with __ncrt__.range("commented"):  # A comment between header and body keeps its text after the range.
        w = x + 3
        return w
