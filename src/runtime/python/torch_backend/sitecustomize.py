"""`ncrun --backend torch`: the startup hook (docs/runtime.md, "Torch backend").

ncrun puts this directory first on PYTHONPATH, so every Python process of the
run imports this file at startup (site.py's `import sitecustomize`). It does
two things, and costs a process that never imports torch about 0.3 ms (2-3 ms
where no .pyc can be written):

- when NCRT_BACKEND=torch, installs _ncrt_torch_backend (beside this file):
  a post-import hook that starts torch.profiler once the program itself
  imports torch (never importing torch on its own);
- runs the next `sitecustomize` on sys.path (a distribution's, a virtual
  environment's, the user's), exactly as Python would have without this one:
  it becomes sys.modules["sitecustomize"], and its errors reach site.py, which
  reports them as usual. When there is none, this file ends with the
  ImportError(name="sitecustomize") that site.py passes over in silence, so
  that no `sitecustomize` module is left, as without this file.

Installed as <libdir>/ncrewrite/python/torch_backend/sitecustomize.py, beside
the ncrt module (src/runtime/CMakeLists.txt copies it there in the build tree).
"""
import os as _os
import sys as _sys


def _ncrt_torch_start():
    if _os.environ.get("NCRT_BACKEND") != "torch":
        return
    try:
        import _ncrt_torch_backend

        _ncrt_torch_backend.install()
    except Exception as e:  # never stop the program: it runs unprofiled
        try:
            _sys.stderr.write("ncrun (torch backend): cannot set up: %s: %s; the program runs unprofiled\n"
                              % (type(e).__name__, e))
        except Exception:
            pass


def _ncrt_chain():
    """Import the next sitecustomize on sys.path (one not in a directory of
    this hook: a nested ncrun's copy is skipped too) under the name
    `sitecustomize`, as site.py would have."""
    def ours(p):
        try:
            return _os.path.isfile(_os.path.join(p or ".", "_ncrt_torch_backend.py"))
        except Exception:
            return False

    path = [p for p in _sys.path if isinstance(p, str) and not ours(p)]
    bootstrap = _sys.modules.get("_frozen_importlib")
    external = _sys.modules.get("_frozen_importlib_external")
    if bootstrap is not None and external is not None:
        find, from_spec = external.PathFinder.find_spec, bootstrap.module_from_spec
    else:  # not CPython's frozen importlib: the public names (a little slower to import)
        import importlib.machinery
        import importlib.util

        find, from_spec = importlib.machinery.PathFinder.find_spec, importlib.util.module_from_spec
    spec = find("sitecustomize", path)
    if spec is None or spec.loader is None:
        # none: leave the state a run without this file has (no
        # "sitecustomize" in sys.modules): site.py passes over an ImportError
        # for this very name in silence, and importlib forgets the module
        raise ImportError("no other sitecustomize", name="sitecustomize")
    module = from_spec(spec)
    # importlib keeps whatever sys.modules holds once this file has run: the
    # chained module; if it raises, importlib removes the name as for any
    # failed import and site.py prints its usual "Error in sitecustomize" line
    _sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_ncrt_torch_start()
_ncrt_chain()
