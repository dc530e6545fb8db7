_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def f():
    with _ncrt_range("f"):
        return 1
class C: pass
def g(x):
    "doc"
    with _ncrt_range("g"):
        y = x + 1; return y
def h(a, b):
    with _ncrt_range("h"):
        total = a + \
            b  # continued
        with _ncrt_range("h:L8"):
            if total: return total; # comment
        return 0
