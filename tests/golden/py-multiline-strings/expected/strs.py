_ncrt_range = __import__("ncrt").range if __import__("importlib.util").util.find_spec("ncrt") else __import__("contextlib").nullcontext
def render(name, rows):
    with _ncrt_range("render"):
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
	with _ncrt_range("tabbed"):
	    x = """keep
	this"""
	    return x
