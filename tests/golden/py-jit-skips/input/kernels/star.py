from numba import *


@njit
def starred(x):
    return x


def plain(x):
    return starred(x)
