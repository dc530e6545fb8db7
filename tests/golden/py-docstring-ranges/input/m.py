"""Module doc: it must stay first (a range over it left __ncrt__ unbound)."""
import os


def f(x):
    """f's doc: f.__doc__ stays."""
    y = x + 1
    return y


class C:
    """C's doc."""

    def g(self):
        return os.sep
