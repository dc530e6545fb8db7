_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def a():
    with _ncrt_range("a.a"):
        return 1


class K:
    def m(self):
        with _ncrt_range("a.K.m"):
            return 2
