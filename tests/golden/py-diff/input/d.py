def g(x):
    y = x
    return y
