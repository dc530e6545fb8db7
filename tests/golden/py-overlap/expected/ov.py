__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
def f(a):
    with __ncrt__.range("outer"):
        x = a + 1
        with __ncrt__.range("inner"):
            with __ncrt__.range("same lines, nested again"):
                y = x * 2
                z = y - 3
        w = z / 4
    return w
