"""The import hook: target modules rewritten by the engine as they are imported.

A sys.meta_path finder in front of the others. For each import it asks the
engine whether the rules name the module (Rules.lookup: targets.c's
resolver, as a tree run with SRC = the sys.path entry the module lives
under); if so it lets the other finders find the module and, when they found
a plain source file (SourceFileLoader), hands the spec a loader that
rewrites the source with the engine (Rules.rewrite: rewrite_run, the
core's per-file pipeline, as `ncrewrite --file`), compiles it with the original file's
name AND locations (_locate: every statement at its own line and column,
so tracebacks, inspect, pdb, coverage and TorchScript see the user's file
as it is) and caches the compiled code on disk, per interpreter (its magic
number), engine, rules and source, so a warm import costs about what a
.pyc import does. Everything else is left to the finders that would have
handled it anyway.
"""
import fnmatch
import hashlib
import importlib.util
import json
import marshal
import os
import site
import sys
import sysconfig
import tempfile
import threading
import warnings
from importlib.machinery import SourceFileLoader

from . import _engine
from . import _locate
from .config import RewriteConfig

ENV = "NCREWRITE_HOOK"


class NcrewriteWarning(UserWarning):
    """Rule misses, modules imported too early, cache problems."""


def default_cache_dir():
    """$NCREWRITE_CACHE, else $XDG_CACHE_HOME/ncrewrite, else ~/.cache/ncrewrite."""
    d = os.environ.get("NCREWRITE_CACHE")
    if d:
        return os.path.abspath(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ncrewrite")


_engine_id = None


def engine_id():
    """The engine's version and a digest of its binary: a rebuilt engine
    (even at the same version) never reads what another one cached."""
    global _engine_id
    if _engine_id is None:
        h = hashlib.sha256()
        with open(_engine.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _engine_id = "%s-%s" % (_engine.version, h.hexdigest()[:16])
    return _engine_id


def _rel(name, is_package):
    return name.replace(".", "/") + ("/__init__.py" if is_package else ".py")


def _root_of(name, is_package, origin):
    """The sys.path entry a module was found under (SRC, for the engine)."""
    rel = _rel(name, is_package).replace("/", os.sep)
    if origin and origin.endswith(os.sep + rel):
        return origin[: -len(rel) - 1] or os.sep
    return None


def _library_dirs():
    """Where the standard library and installed packages live: left out of
    a full trace unless modules= names them."""
    dirs = set()
    paths = sysconfig.get_paths()
    for k in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(k):
            dirs.add(paths[k])
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:
        pass
    if site.ENABLE_USER_SITE:
        dirs.add(site.getusersitepackages())
    for p in sys.path:
        if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages"):
            dirs.add(p)
    dirs.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # ncrewrite itself
    return sorted({os.path.realpath(d) for d in dirs if d} | {os.path.abspath(d) for d in dirs if d})


class Loader(SourceFileLoader):
    """A SourceFileLoader whose code is the engine's rewrite of the file.

    Instrumented code is compiled from the cached source under the original
    file name (tracebacks, __file__, inspect and linecache see the user's
    file) and never written to __pycache__: a .pyc there would be loaded
    without the hook. A module no rule changed gets the normal path (and
    its normal .pyc)."""

    def __init__(self, fullname, path, hook, is_package, root):
        super().__init__(fullname, path)
        self._nc = (hook, is_package, root)

    def get_code(self, fullname):
        hook, is_package, root = self._nc
        path = self.get_filename(fullname)
        data = self.get_data(path)
        code = hook.code(fullname, is_package, path, data, root)
        return code if code is not None else super().get_code(fullname)


class Hook:
    """One enabled rule set: the finder, the cache, the counters."""

    def __init__(self, config, rules, cache_dir=None, modules=None, exclude_modules=(), rules_file=None):
        self.config = config
        self.rules = rules
        self.cache_root = os.path.abspath(cache_dir) if cache_dir else default_cache_dir()
        self.cache_dir = os.path.join(self.cache_root, engine_id())
        self.loaded = {}  # module -> its cache record (ranges, line map), for ProfilingSession's drill
        self.modules = list(modules) if modules is not None else None
        self.exclude_modules = list(exclude_modules or ())
        self.rules_file = rules_file
        self.stats = {"rewritten": 0, "cache_hits": 0, "unchanged": 0}
        self.already_imported = []
        self._local = threading.local()
        self._has_file_paths = any(fp for _, fp, _, _ in rules.targets())
        self._library = _library_dirs()
        self._cache_warned = False

    # -- which modules --

    def _excluded(self, name):
        if name in ("ncrewrite", "ncrt") or name.startswith("ncrewrite."):
            return True
        parts = name.split(".")
        for g in self.exclude_modules:
            for i in range(1, len(parts) + 1):
                if fnmatch.fnmatchcase(".".join(parts[:i]), g):
                    return True
        return False

    def _full_trace_wants(self, name, origin):
        """Full trace with no target named: which modules count as the
        program's own (the engine would take every file of a tree)."""
        if self.modules is not None:
            return any(name == m or name.startswith(m + ".") for m in self.modules)
        # where it was found and where it really is: Debian's sitecustomize.py
        # lies in the standard library's folder as a link into /etc
        for p in {os.path.abspath(origin), os.path.realpath(origin)}:
            if any(p == d or p.startswith(d + os.sep) for d in self._library):
                return False
        return True

    def wants(self, name, is_package, origin):
        """Would the hook rewrite this module (found at origin)?"""
        if self._excluded(name):
            return False
        what = self.rules.lookup(name, is_package, _root_of(name, is_package, origin))
        return what == 1 or (what == 2 and self._full_trace_wants(name, origin))

    # -- the finder --

    def find_spec(self, fullname, path=None, target=None):
        if getattr(self._local, "busy", False) or self._excluded(fullname):
            return None
        if not self._has_file_paths and not (self.rules.lookup(fullname, False) or self.rules.lookup(fullname, True)):
            return None
        self._local.busy = True
        try:
            spec = None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._local.busy = False
        if spec is None or type(spec.loader) is not SourceFileLoader or not spec.has_location or not spec.origin:
            return spec
        is_package = spec.submodule_search_locations is not None
        if self.wants(fullname, is_package, spec.origin):
            spec.loader = Loader(fullname, spec.origin, self, is_package, _root_of(fullname, is_package, spec.origin))
        return spec

    def invalidate_caches(self):
        pass

    # -- rewriting, with the cache --

    def _key(self, name, is_package, data):
        key = hashlib.sha256(b"\0".join([engine_id().encode(), self.config.digest.encode(), name.encode(),
                                         b"package" if is_package else b"module", data])).hexdigest()
        return key, os.path.join(self.cache_dir, "%s.%s" % (name, key[:24]))

    def code(self, name, is_package, path, data, root):
        """The module's instrumented code object, compiled with the original
        locations (_locate), or None when no rule changed it (or its text
        does not compile: then a warning, and the module runs as it is).
        Cached as <name>.<key>.<magic>.code: marshal of (key, meta, code),
        per interpreter (importlib's MAGIC_NUMBER) like a .pyc."""
        key, base = self._key(name, is_package, data)
        codefile = "%s.%s.code" % (base, _MAGIC)
        try:
            with open(codefile, "rb") as f:
                k, meta, code = marshal.loads(f.read())
            if k == key:
                # the same source at another path (another checkout, venv or
                # interpreter's site) has the same key: the code takes this
                # file's name, as importlib does for a .pyc
                if code.co_filename != path:
                    _fix_co_filename(code, path)
                self.stats["cache_hits"] += 1
                self._say(name, meta)
                self.loaded[name] = meta if meta.get("path") == path else dict(meta, path=path)
                return code
        except (OSError, ValueError, EOFError, TypeError):
            pass
        text = self.instrument(name, is_package, path, data, root, (key, base))
        if text is None:
            return None
        meta = self.loaded[name]
        try:
            code = _locate.compile_mapped(text, data, meta.get("line_map") or [], path)
        except (SyntaxError, ValueError) as e:
            warnings.warn(NcrewriteWarning("%s: the instrumented source does not compile (%s); the module runs "
                                           "uninstrumented (please report)" % (path, e)), stacklevel=3)
            return None
        try:
            blob = marshal.dumps((key, meta, code))
        except ValueError:
            return code  # meta holds something marshal cannot keep: not cached
        try:
            _write_atomic(codefile, blob)
            _prune(self.cache_root)
        except OSError:
            pass  # the text cache already said so if the folder is not writable
        return code

    def instrument(self, name, is_package, path, data, root, keyed=None):
        """The instrumented source (bytes), or None when no rule changed it.
        keyed: (key, base) when the caller has hashed the source already."""
        key, base = keyed or self._key(name, is_package, data)
        meta = self._cache_get(base, key)
        if meta is not None:
            self.stats["cache_hits"] += 1
            self._say(name, meta)
            self.loaded[name] = {k: v for k, v in meta.items() if k != "_text"}
            self.loaded[name]["path"] = path  # the same source may sit at another path
            return meta.get("_text")
        self._local.busy = True
        try:
            text, warns, ranges, line_map = self.rules.rewrite(name, is_package, path, data, root)
        finally:
            self._local.busy = False
        self.stats["rewritten" if text is not None else "unchanged"] += 1
        meta = {
            "key": key, "module": name, "package": is_package, "path": path,
            "rules": self.config.path or self.config.name, "rules_sha256": self.config.digest,
            "engine": engine_id(), "unchanged": text is None,
            "sha256": hashlib.sha256(text).hexdigest() if text is not None else None,
            "ranges": [{"name": n, "kind": k, "lines": [a, b]} for n, k, a, b in ranges],
            "line_map": [list(x) for x in line_map], "warnings": warns,
        }
        self._cache_put(base, meta, text)
        self._say(name, meta)
        self.loaded[name] = meta
        return text

    def _cache_get(self, base, key):
        try:
            with open(base + ".json", encoding="utf-8") as f:
                meta = json.load(f)
            if meta.get("key") != key:
                return None
            if not meta["unchanged"]:
                with open(base + ".py", "rb") as f:
                    text = f.read()
                if hashlib.sha256(text).hexdigest() != meta["sha256"]:
                    return None  # edited or torn: rewrite again
                meta["_text"] = text
            return meta
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _cache_put(self, base, meta, text):
        try:
            os.makedirs(self.cache_dir, exist_ok=True)
            if text is not None:
                _write_atomic(base + ".py", text)
            _write_atomic(base + ".json", (json.dumps(meta, indent=1) + "\n").encode())
        except OSError as e:
            if not self._cache_warned:
                self._cache_warned = True
                warnings.warn(NcrewriteWarning("ncrewrite: cannot write the cache %s: %s (modules are rewritten "
                                               "again on each import)" % (self.cache_dir, e)), stacklevel=3)

    def _say(self, name, meta):
        if meta.get("warnings"):
            warnings.warn(NcrewriteWarning("ncrewrite: %s:\n%s" % (name, meta["warnings"].rstrip())), stacklevel=4)

    # -- on and off --

    def install(self, warn_imported=True):
        self.already_imported = self._imported_targets()
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        sys.meta_path.insert(0, self)
        os.environ[ENV] = json.dumps({
            "rules": self.rules_file, "cache": self.cache_root, "modules": self.modules,
            "exclude_modules": self.exclude_modules,
        })
        if warn_imported and self.already_imported:
            n = len(self.already_imported)
            warnings.warn(NcrewriteWarning(
                "ncrewrite: %d module%s the rules target %s imported before the import hook was enabled and "
                "%s not instrumented: %s (enable the hook before importing them)"
                % (n, "" if n == 1 else "s", "was" if n == 1 else "were", "is" if n == 1 else "are",
                   ", ".join(self.already_imported))), stacklevel=3)

    def uninstall(self):
        while self in sys.meta_path:
            sys.meta_path.remove(self)
        if os.environ.get(ENV) is not None:
            del os.environ[ENV]

    def _imported_targets(self):
        out = []
        for name, mod in sorted(list(sys.modules.items())):
            f = getattr(mod, "__file__", None)
            if not isinstance(f, str) or not f.endswith(".py") or name == "__mp_main__":
                continue
            if isinstance(getattr(mod, "__loader__", None), Loader):
                continue  # instrumented by an earlier hook
            is_package = hasattr(mod, "__path__")
            if name == "__main__":
                spec = getattr(mod, "__spec__", None)  # python -m pkg.mod: its own name
                if spec is None or not spec.name:
                    continue
                name = spec.name
            try:
                if self.wants(name, is_package, os.path.abspath(f)):
                    out.append(name)
            except ValueError:
                continue
        return out


_MAGIC = importlib.util.MAGIC_NUMBER.hex()
try:
    from _imp import _fix_co_filename  # what importlib uses for a .pyc found at another path
except ImportError:  # pragma: no cover - every CPython from 3.4 has it
    def _fix_co_filename(code, path):
        raise OSError("no _imp._fix_co_filename")
_PRUNE_EVERY = 0


def cache_limit():
    """The cache's size cap in bytes: $NCREWRITE_CACHE_MAX_MB, default 512."""
    try:
        return int(float(os.environ.get("NCREWRITE_CACHE_MAX_MB", "512")) * (1 << 20))
    except ValueError:
        return 512 << 20


def _prune(root):
    """Keep the cache under cache_limit(): past it, the least recently
    written entries go (every engine's and interpreter's alike) until it is
    at three quarters of the cap. Looked at on every 32nd write (a cold
    import of a big tree writes thousands) and on the first."""
    global _PRUNE_EVERY
    _PRUNE_EVERY += 1
    if _PRUNE_EVERY % 32 != 1:
        return
    files, total = [], 0
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            try:
                st = os.stat(p)
            except OSError:
                continue
            files.append((st.st_mtime, st.st_size, p))
            total += st.st_size
    cap = cache_limit()
    if total <= cap:
        return
    for _, size, p in sorted(files):
        if total <= cap * 3 // 4:
            break
        try:
            os.unlink(p)
            total -= size
        except OSError:
            pass


def _write_atomic(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_active = None
_lock = threading.Lock()


def _rules_file_for(hook_root, config):
    """A file holding the rules, for child processes (NCREWRITE_HOOK names it)."""
    if config.path:
        return config.path
    d = os.path.join(hook_root, "rules")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "%s.json" % config.digest[:24])
    if not os.path.isfile(p):
        _write_atomic(p, config.data)
    return p


_last_config = None


def last_config():
    """The RewriteConfig enabled last in this process (enable_rewrites()
    with no config enables it again), or None."""
    return _last_config


def enable(config, cache_dir=None, modules=None, exclude_modules=(), warn_imported=True):
    global _active, _last_config
    cfg = RewriteConfig.coerce(config)
    rules = cfg.load()  # RulesError with the engine's diagnostics
    if rules.warnings:
        warnings.warn(NcrewriteWarning("ncrewrite: %s" % rules.warnings.rstrip()), stacklevel=3)
    root = os.path.abspath(cache_dir) if cache_dir else default_cache_dir()
    try:
        rules_file = _rules_file_for(root, cfg)
    except OSError as e:
        rules_file = None
        warnings.warn(NcrewriteWarning("ncrewrite: cannot write the rules for child processes under %s: %s"
                                       % (root, e)), stacklevel=3)
    hook = Hook(cfg, rules, root, modules, exclude_modules, rules_file)
    with _lock:
        if _active is not None:
            _active.uninstall()
        hook.install(warn_imported)
        if rules_file is None:
            os.environ.pop(ENV, None)
        _active = hook
        if modules is None and not exclude_modules:
            _last_config = cfg
    return hook


def disable():
    global _active
    with _lock:
        hook, _active = _active, None
        if hook is not None:
            hook.uninstall()
    return hook


def active():
    return _active


def enable_from_env(spec):
    """The hook of a parent process, from NCREWRITE_HOOK (see _bootstrap)."""
    o = json.loads(spec)
    if not o.get("rules"):
        raise ValueError("NCREWRITE_HOOK names no rule file")
    return enable(RewriteConfig.from_file(o["rules"]), cache_dir=o.get("cache"), modules=o.get("modules"),
                  exclude_modules=o.get("exclude_modules") or (), warn_imported=False)
