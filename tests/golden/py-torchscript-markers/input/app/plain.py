"""No torch here: the plain ncrt marker."""


def work(x):
    return x + 1
