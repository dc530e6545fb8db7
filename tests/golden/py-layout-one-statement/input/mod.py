"""Ranges over one simple statement sit on that statement's line."""
import os


def single(x):
    return os.path.join(x, "a")


def drilled(x):
    a = len(x)
    b = os.path.join(
        x,
        "b",
    )
    c = a; d = b
    return c, d


def loop(items):
    for item in items:
        print(item)
    if items: print(len(items))


class K:
    def first(self):
        return 1

    def second(self):
        return 2
