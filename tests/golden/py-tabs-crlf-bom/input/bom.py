def f():
    return "bom"
