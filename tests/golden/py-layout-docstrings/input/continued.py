"""Module docstring, then a backslash continuation over an empty line."""  \

def f():
    return 1
