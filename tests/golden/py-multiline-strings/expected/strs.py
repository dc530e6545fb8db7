__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
def render(name, rows):
    with __ncrt__.range("render"):
        header = """Report for %s
  indented line inside the string
""" % name
        body = f"""{name}:
    {len(rows)} rows
{'''nested
  string'''}
"""
        raw = r'''a\
b'''
        cont = "abc\
def"
        return header + body + raw + cont
def tabbed():
	with __ncrt__.range("tabbed"):
	    x = """keep
	this"""
	    return x
