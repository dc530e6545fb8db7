"""Ranges laid out so that no line moves it does not have to."""
import os


def single(x):
    return os.path.join(x, "a")


def documented(x):
    """A docstring, then a blank line: the range's line goes there."""

    y = x + 1
    return y


def drilled(x):
    a = len(x)
    b = os.path.join(
        x,
        "b",
    )
    c = a; d = b
    return c, d


def inside(x):
    a = 1
    b = a + 1
    c = b + 1

    return a + b + c


def after(x):
    p = 1
    q = p + 1
    return q


def untouched(x):
    s = x * 2
    return s


class K:
    def first(self):
        return 1

    def second(self, x):
        total = 0
        for i in x:
            total += i
        return total

    def third(self):
        return 3


def folded_doc(x):
    """The docstring's last line break is written as an escape.

    Its value is the same; the row it frees holds the range.
    """
    y = x * 2
    return y


def folded_signature(first,
                     second):
    total = first + second
    return total


def raw_doc(x):
    r"""A raw docstring cannot take an escape: the def moves up.
    """
    z = x - 1
    return z


def commented(x):
    # A comment between header and body keeps its text after the range.
    w = x + 3
    return w
