/* pyjit: what a Python file's compilers will do with its functions.
 *
 * Some functions never run as Python bytecode: a JIT compiles them from
 * their source (TorchScript, Triton) or their bytecode (numba, CuPy), or
 * traces them once (JAX). A `with` range inside them either breaks the
 * compile (numba: "Unsupported context manager", TorchScript: "Python
 * builtin ... is not supported", Triton) or times the tracing instead of
 * the run (JAX). pyjit finds them from one scan of a parsed module:
 *  - decorators (@torch.jit.script, @njit(cache=True), @partial(jax.jit,
 *    static_argnums=0), stacked @triton.autotune(...) @triton.jit), resolved
 *    through the file's imports (`from numba import njit as nj`,
 *    `import torch.jit as tj`, `from triton import *`);
 *  - class decorators (@torch.jit.interface, @torch.jit.script, @jitclass):
 *    every method of the class;
 *  - run-time compiles of a function of this file by name
 *    (`fast = numba.njit(f)`, `numba.vectorize(sig)(g)`, `jax.jit(loss)`);
 *  - everything nested in any of those.
 * It also tells whether the file is TorchScript territory (it imports torch,
 * or lies inside a `torch` package): there any function may be compiled
 * from elsewhere (torch.jit.script(module) compiles forward and every
 * function it reaches, in other files too), so pyrewrite emits a marker
 * TorchScript can compile.
 *
 * Contract: pyjit_scan reads the tree and the text only; the result lives
 * until pyjit_free. Relative imports are not followed (their targets are
 * not known from one file). */
#ifndef NC_PYJIT_H
#define NC_PYJIT_H

#include <stdbool.h>
#include <stddef.h>
#include <tree_sitter/api.h>

typedef struct PyJit PyJit;

/* origin: the file's path as given (for the "inside a torch package" test). */
PyJit *pyjit_scan(const char *src, TSNode root, const char *origin);
void pyjit_free(PyJit *j);

/* Why the function or class defined by `def` (a function_definition or
 * class_definition node; its decorated_definition parent is looked at) is
 * compiled, or by an enclosing definition: a static string such as
 * "compiled by numba (@numba.njit): numba cannot compile a with-range",
 * or NULL when it runs as Python. */
const char *pyjit_why(PyJit *j, TSNode def);

/* Does the file import torch (or sit inside a torch package)? */
bool pyjit_torch(const PyJit *j);

#endif
