# -*- coding: latin-1 -*-
def f():
    return "café"


def g():
    return 1
