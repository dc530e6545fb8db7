"""ncrewrite in-process: NVTX ranges added to Python modules as they are imported.

    import ncrewrite
    ncrewrite.enable_rewrites("rules.yaml")     # before importing the targets
    import model                                # instrumented by the C engine

The rules are ncrewrite's rule files (docs/rules.md); the rewriting is done
by the same C compiler core as the `ncrewrite` command (ncrewrite._engine),
one call per module, inside this process. The package also records in this
process (ProfilerContext, ProfilingSession: the collector ncrun uses, or
torch.profiler), and summarises, filters and edits rules with the nctrace and
ncrewrite commands' own code. See docs/python.md.
"""
from . import _runtime

_runtime.prepare()  # first: NVTX must find the collector before anything imports ncrt (_runtime.py)

from . import _engine  # noqa: E402
from ._hook import NcrewriteWarning, default_cache_dir, engine_id
from . import _hook
from .config import RewriteConfig, RulesError  # noqa: E402
from .profiler import (ProfilerContext, Schedule, ConfigError, add_profiler_args,  # noqa: E402
                       create_profiler_from_args, load_profiling_config, profile_function)
from .session import ProfilingSession, ToolError  # noqa: E402

EngineError = _engine.EngineError
__version__ = _engine.version

__all__ = [
    "enable_rewrites", "disable_rewrites", "enable_full_trace_mode", "RewriteConfig", "RulesError",
    "EngineError", "NcrewriteWarning", "stats", "default_cache_dir", "engine_id",
    "ProfilingSession", "ToolError", "ProfilerContext", "Schedule", "profile_function", "add_profiler_args",
    "create_profiler_from_args", "load_profiling_config", "ConfigError", "recording",
]


def recording():
    """How this process records: "in-process" (the package's libncrt, driven
    by the profilers), "ncrun" (a collector injected by ncrun: the profilers
    gate it, ncrun writes at exit), "other" (another NVTX tool such as
    nsys) or "none" (this build has no libncrt)."""
    return _runtime.mode()


def enable_rewrites(config=None, cache_dir=None, warn_imported=True):
    """Rewrite the modules `config` targets as they are imported from now on.

    config: a rule file's path (YAML or JSON), a dict with a rule file's
    keys (the nCompass SDK's RewriteConfig as a dict), an object with
    to_dict()/model_dump(), or a RewriteConfig. Raises RulesError (the
    engine's file:line:col diagnostics) if the rules have errors. None (the
    seed's Optional config): the configuration enabled last in this process
    (after disable_rewrites(), the same rules again); if none was, ValueError
    naming what to pass.
    cache_dir: where instrumented sources are kept (default
    $NCREWRITE_CACHE or ~/.cache/ncrewrite). Target modules already imported
    are listed in an NcrewriteWarning (and in the returned hook's
    already_imported): they stay as they were. Child processes started from
    now on (multiprocessing spawn, DataLoader workers, subprocesses of this
    Python) enable the same hook at start-up, through NCREWRITE_HOOK and the
    installed ncrewrite-bootstrap.pth. Replaces a hook enabled before.
    Returns the hook (stats, already_imported, cache_dir)."""
    if config is None:
        config = _hook.last_config()
        if config is None:
            raise ValueError("enable_rewrites(): no config given and none enabled before in this process: pass "
                             "a RewriteConfig, a dict of rules or a rule file's path")
    return _hook.enable(config, cache_dir=cache_dir, warn_imported=warn_imported)


def enable_full_trace_mode(excludes=(), modules=None, exclude_functions=(), cache_dir=None, warn_imported=True):
    """Every function of the program's own modules gets a range.

    The program's own modules: those imported from outside the standard
    library and site-/dist-packages; modules=["pkg", ...] names the packages
    to trace instead (installed ones too). excludes: module names or globs
    (fnmatch) left alone, with their submodules ("tests", "myapp.vendored.*").
    exclude_functions: qualified-name globs the engine never instruments
    (a rule file's `exclude`, docs/rules.md). Same hook, cache and
    propagation as enable_rewrites."""
    if isinstance(excludes, str):
        excludes = [excludes]
    if isinstance(modules, str):
        modules = [modules]
    keys = {"full_trace_mode": True}
    if exclude_functions:
        keys["exclude"] = [exclude_functions] if isinstance(exclude_functions, str) else list(exclude_functions)
    return _hook.enable(RewriteConfig(**keys), cache_dir=cache_dir, modules=modules,
                        exclude_modules=list(excludes), warn_imported=warn_imported)


def disable_rewrites():
    """Stop rewriting imports (and stop passing the hook to new child
    processes). Modules already instrumented stay instrumented. Returns the
    hook that was active, or None."""
    return _hook.disable()


def stats():
    """Counters of the active hook: rewritten (engine calls that changed a
    module), unchanged (engine calls that did not), cache_hits; None when
    no hook is enabled."""
    h = _hook.active()
    return dict(h.stats) if h is not None else None
