"""`ncrun --backend torch`: the post-import hook, installed at startup by this
directory's sitecustomize.py when NCRT_BACKEND=torch.

Kept small: every Python process of the run imports it (and compiles it
where no .pyc can be written). Nothing else is imported until the program
itself imports torch; then _ncrt_torch_profiler (beside this file) starts
torch.profiler. A process that never imports torch gets no other module.

A finder first on sys.meta_path waits for `torch` and `ncrt`. For that one
import it wraps the module's loader (the module's __loader__ and
__spec__.loader are the original from exec_module on), and once both are
imported it takes itself out of sys.meta_path.

- ncrt imported before torch: ncrt reads NCRT_TORCH=1 once, at its
  initialisation, and would then import torch at its first range. It is
  initialised with NCRT_TORCH held back (the environment is as before right
  after), so a process that uses ncrt but not torch never imports torch;
  once torch is imported, ncrt.range becomes ncrt.torch_range.
- torch imported: _ncrt_torch_profiler.start(). An error there prints one
  "ncrun (torch backend):" line and the program goes on unprofiled.
"""
import os
import sys

_ncrt = None  # the ncrt module, once imported
_ncrt_plain = False  # it was initialised with NCRT_TORCH held back
_torch_seen = False
_installed = False


def _say(msg):
    try:
        sys.stderr.write("ncrun (torch backend): " + msg + "\n")
        sys.stderr.flush()
    except Exception:
        pass


def _why(e):
    s = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, s[0]) if s else type(e).__name__


def _ncrt_pre():
    global _ncrt_plain
    if "torch" in sys.modules or os.environ.get("NCRT_TORCH") != "1":
        return None
    del os.environ["NCRT_TORCH"]
    _ncrt_plain = True

    def undo():
        os.environ["NCRT_TORCH"] = "1"

    return undo


def _ncrt_post(module):
    global _ncrt
    _ncrt = module
    if _torch_seen:
        import _ncrt_torch_profiler

        _ncrt_torch_profiler.ncrt_imported(module)


def _torch_post(module):
    global _torch_seen
    _torch_seen = True
    try:
        import _ncrt_torch_profiler
    except Exception as e:
        _say("cannot load the profiler side: %s; the program runs unprofiled" % _why(e))
        return
    _ncrt_torch_profiler.start(module, _ncrt, _ncrt_plain)


class _Loader:
    def __init__(self, loader, name, finder):
        self._loader, self._name, self._finder = loader, name, finder

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        undo = self._finder.pre(self._name)
        try:
            return create(spec) if create is not None else None
        finally:
            if undo:
                undo()

    def exec_module(self, module):
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        self._loader.exec_module(module)
        self._finder.post(self._name, module)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _Finder:
    def __init__(self, hooks, pres):
        self.hooks = hooks  # name -> post(module)
        self.pres = pres  # name -> pre() returning an undo callable or None
        self.busy = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.hooks or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None) if finder is not self else None
                if find is not None:
                    spec = find(fullname, path, target)
                    if spec is not None:
                        break
        finally:
            self.busy.discard(fullname)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, fullname, self)
        return spec

    def find_module(self, fullname, path=None):  # for old callers of Python < 3.12's API
        return None

    def pre(self, name):
        f = self.pres.get(name)
        try:
            return f() if f is not None else None
        except Exception as e:
            _say("internal error before importing %s: %s" % (name, _why(e)))
            return None

    def post(self, name, module):
        hook = self.hooks.pop(name, None)
        self.pres.pop(name, None)
        if not self.hooks:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
        if hook is not None:
            try:
                hook(module)
            except Exception as e:  # the program's import goes on
                _say("internal error after importing %s: %s; the program runs unprofiled" % (name, _why(e)))


def install():
    """Once per process (a nested ncrun's copy of the hook finds it done)."""
    global _installed
    if _installed:
        return
    _installed = True
    hooks, pres = {}, {}
    if "ncrt" in sys.modules:
        _ncrt_post(sys.modules["ncrt"])
    else:
        hooks["ncrt"], pres["ncrt"] = _ncrt_post, _ncrt_pre
    if "torch" not in sys.modules:
        hooks["torch"] = _torch_post
    if hooks:
        sys.meta_path.insert(0, _Finder(hooks, pres))
    if "torch" in sys.modules:  # imported before this (a .pth file, another sitecustomize)
        try:
            _torch_post(sys.modules["torch"])
        except Exception as e:
            _say("internal error: %s; the program runs unprofiled" % _why(e))
