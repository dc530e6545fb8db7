# Valid since Python 3.5; tree-sitter-python 0.25 does not parse the
__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())  # starred list operand: ncrewrite parses a masked copy.
def split(endpoint):
    with __ncrt__.range("starred.split"):
        host, *rest = endpoint, *[]
        return host, rest

def more(a):
    with __ncrt__.range("starred.more"): return [*a, *(a or [])], (*a, *[1, 2])
