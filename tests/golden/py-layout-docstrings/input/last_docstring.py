import os


def f0():
    """d"""
    return 0
