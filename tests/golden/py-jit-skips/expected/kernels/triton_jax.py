__ncrt__ = __import__("sys").modules.get("ncrt") or (__import__("ncrt") if any(hasattr(f, "find_spec") and f.find_spec("ncrt", None) for f in __import__("sys").meta_path) else type("ncrt_nop", (), dict(dict.fromkeys(("range", "span", "torch_range", "torch_span", "__exit__"), staticmethod(lambda *a: __ncrt__)), __enter__=bool, __bool__=bool, __module__="ncrt"))()); import functools
from functools import partial

import jax
import triton
import triton.language as tl
from triton import jit as tjit
from cupyx import jit as cjit
import cupy as cp


@triton.autotune(configs=[], key=["n"])
@triton.heuristics({"BLOCK": lambda a: 128})
@triton.jit
def add_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, pid)


@tjit
def aliased_kernel(x_ptr):
    tl.store(x_ptr, 1)


@jax.jit
def loss(x):
    return (x * x).sum()


@partial(jax.jit, static_argnums=0)
def scaled(n, x):
    return x * n


@functools.partial(jax.vmap, in_axes=0)
def per_row(r):
    return r + 1


@cp.fuse()
def fused(x, y):
    return x + y


@cjit.rawkernel()
def raw(x):
    x[0] = 1


grad_loss = jax.grad(loss)
compiled = jax.jit(scaled)

def launch(x):
    with __ncrt__.range("kernels.triton_jax.launch"):
        add_kernel[(1,)](x, 1)
        return x


@jax.pmap
def replicated(x):
    return x * 2
