def f(x):
    return x + 1

def _hidden():
    return 0
