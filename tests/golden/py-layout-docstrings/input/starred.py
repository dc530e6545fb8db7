# Valid since Python 3.5; tree-sitter-python 0.25 does not parse the
# starred list operand: ncrewrite parses a masked copy.
def split(endpoint):
    host, *rest = endpoint, *[]
    return host, rest


def more(a):
    return [*a, *(a or [])], (*a, *[1, 2])
