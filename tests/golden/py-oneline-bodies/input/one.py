def f(): return 1
class C: pass
def g(x): "doc"; y = x + 1; return y

def h(a, b):
    total = a + \
        b  # continued
    if total: return total; # comment
    return 0
