_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def f(x):
    with _ncrt_range("f"):
        y = x + 1
        return y

def g():
    with _ncrt_range("g"):
        return """a
b"""
