_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
class A:
    def f(self):
        with _ncrt_range(self.__class__.__name__):
            return 1
