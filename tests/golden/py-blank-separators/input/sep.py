"""Blank lines between definitions stay where another blank gives room."""
import os


class Store:
    """A class whose first method is wrapped whole."""

    def first(self):
        return os.sep

    def second(self):
        x = 1

        return x


def outer():
    def inner():
        return 2

    y = inner()
    return y


def tail():
    a = 1
    b = 2
    return a + b
