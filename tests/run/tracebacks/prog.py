"""A program whose traceback goes through instrumented code."""
import sys


def parse(text):
    return int(text)


def load(items):
    """Docstring first: the whole-function range takes no line from below."""

    out = []
    for item in items:
        out.append(parse(item))
    return out


def total(items):
    values = load(items)
    s = sum(values)
    return s


class Report:
    def run(self, items):
        n = total(items)
        return n

    def show(self, items):
        print(self.run(items))


if __name__ == "__main__":
    Report().show(sys.argv[1:])
