__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span"), staticmethod(lambda *a: __ncrt__)), __enter__=staticmethod(bool), __exit__=staticmethod(lambda *a: None), __module__="ncrt"))())
def f(a):
    with __ncrt__.range("outer"):
        x = a + 1
        with __ncrt__.range("inner"):
            with __ncrt__.range("same lines, nested again"):
                y = x * 2
                z = y - 3
        w = z / 4
    return w
