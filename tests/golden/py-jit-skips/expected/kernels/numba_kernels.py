"""numba: decorators through every import form, and run-time compiles."""; __ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))())
import numba
import numba as nb
from numba import njit as nj, vectorize, guvectorize
from numba.experimental import jitclass
from numba.extending import register_jitable


@numba.njit
def add1(x):
    return x + 1


@nb.jit(nopython=True, cache=False)
def outer(x):
    def inner(y):
        return y * 2
    return inner(x)


@nj
def aliased(x):
    return x


@vectorize(["float64(float64)"])
def twice(x):
    return x * 2


@guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
def copy(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i]


@register_jitable
def helper(x):
    return x - 1


@jitclass([("v", numba.float64)])
class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


def slow(x):
    return x * 3


fast = numba.njit(slow)
fast_parallel = nb.njit(parallel=False)(aliased)

def plain(x):
    with __ncrt__.range("kernels.numba_kernels.plain"):
        y = add1(x)
        return y


@numba.cfunc("float64(float64)")
def cb(x):
    return x


@numba.stencil
def smooth(a):
    return (a[-1] + a[0] + a[1]) / 3


@numba.cuda.jit
def gpu_kernel(out):
    out[0] = 1
