_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def f(a):
    with _ncrt_range("outer"):
        x = a + 1
        with _ncrt_range("inner"):
            with _ncrt_range("same lines, nested again"):
                y = x * 2
                z = y - 3
        w = z / 4
    return w
