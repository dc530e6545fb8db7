__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(getattr(f, "find_spec", lambda *a: None)("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span"), staticmethod(lambda *a: __ncrt__)), __enter__=staticmethod(bool), __exit__=staticmethod(lambda *a: None), __module__="ncrt"))())
def f(x):
    with __ncrt__.range("pkg.a.f"):
        return x + 1
