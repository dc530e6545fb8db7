def render(name, rows):
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
	x = """keep
	this"""
	return x
