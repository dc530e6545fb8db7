"""A whole-function range finds its line without moving a statement."""


def documented(x):
    """A docstring, then a blank line: the range's line goes there."""

    y = x + 1
    return y


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


def commented(x):
    # A comment between header and body keeps its text after the range.
    w = x + 3
    return w


def raw_doc(x):
    r"""A raw docstring cannot take an escape: the def moves up.
    """
    z = x - 1
    return z


class Pair:
    def left(self, a, b):
        """Left."""
        return a

    def right(self, a, b):
        c = b
        return c
