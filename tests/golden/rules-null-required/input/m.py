class A:
    def f(self):
        return 1


def g():
    return 2


def h(x):
    y = x + 1
    z = y * 2
    return z
