from typing import overload


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __repr__(self):
        return "Point(%r, %r)" % (self.x, self.y)

    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)

    @property
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5

    def scale(self, k):
        return Point(self.x * k, self.y * k)

    def _private_helper(self):
        return 0

    def stub(self):
        ...


@overload
def area(p: int) -> int: ...
def area(p):
    return p * p


def outer():
    def inner():
        return 1
    return inner()
