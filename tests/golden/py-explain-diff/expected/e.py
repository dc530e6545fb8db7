_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def f(x):
    """doc only"""

def g(x):
    with _ncrt_range("g"):
        y = x
        return y
