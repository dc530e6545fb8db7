def f(x):
    """doc only"""


def g(x):
    y = x
    return y
