"""A whole-function range finds its line without moving a statement."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())


def documented(x):
    """A docstring, then a blank line: the range's line goes there."""
    with __ncrt__.range("documented"):
        y = x + 1
        return y


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


def commented(x):
    with __ncrt__.range("commented"):  # A comment between header and body keeps its text after the range.
        w = x + 3
        return w

def raw_doc(x):
    r"""A raw docstring cannot take an escape: the def moves up.
    """
    with __ncrt__.range("raw_doc"):
        z = x - 1
        return z


class Pair:
    def left(self, a, b):
        """Left."""
        with __ncrt__.range("Pair.left"): return a
    def right(self, a, b):
        with __ncrt__.range("Pair.right"):
            c = b
            return c
