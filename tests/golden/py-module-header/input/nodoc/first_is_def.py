# comment at the top

def f():
    return 1
