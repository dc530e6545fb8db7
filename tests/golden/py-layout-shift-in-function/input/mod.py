"""A range that needs a line takes it inside its function or right after it."""


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
    def second(self, x):
        total = 0
        for i in x:
            total += i
        return total

    def third(self):
        return 3


def nested(x):
    def inner(y):
        u = y + 1
        return u * 2

    return inner(x)
