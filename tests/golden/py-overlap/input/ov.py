def f(a):
    x = a + 1
    y = x * 2
    z = y - 3
    w = z / 4
    return w
