import numba


@numba.njit
def fast_sum(a):
    s = 0.0
    for x in a:
        s += x
    return s


def plain(a):
    total = fast_sum(a)
    return total
