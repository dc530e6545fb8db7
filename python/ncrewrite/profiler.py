"""Profilers in the style of torch.profiler and cache-dit, on ncrewrite's collector.

    from ncrewrite.profiler import ProfilerContext, profile_function, create_profiler_from_args

    with ProfilerContext(output_dir="prof", profile_name="infer") as prof:
        for batch in loader:
            step(batch)
            prof.step()                      # only needed with a schedule
    print(prof.trace_path)                   # prof/infer-rank0.pt.trace.json.gz

Two backends, one interface:
  - "ncrt": libncrt, the collector ncrun injects, here inside the process
    (ncrewrite._runtime): the NVTX ranges of instrumented code, ncrt.range
    and any NVTX user, GPU kernels and copies through CUPTI when the gpu
    activity is on. The trace is written when the region ends, as
    <output_dir>/<profile_name>-rank<R>.pt.trace.json.gz (with a schedule, one
    file per cycle: -cycle<K> before -rank when repeat is not 1): the layout
    ncrun writes, read by nctrace, Perfetto, TensorBoard and HTA.
  - "torch": torch.profiler (Kineto): aten::* operators with shapes, stacks
    and memory, and our ranges as user_annotation events in the same trace
    (ncrt.range opens a record_function while the profiler runs), written by
    the same writer as `ncrun --backend torch` (TensorBoard's
    <profile_name>-rank<R>.<ms>.pt.trace.json.gz).
  "auto" (the default) is "torch" when the program has imported torch, else
  "ncrt".

A profiler never takes the program down: when it cannot record (no collector,
torch missing, CUDA absent for a GPU-only request) it says why in a warning
(ncrewrite.NcrewriteWarning) and the region runs unprofiled.
"""
import argparse
import datetime
import os
import threading
import time
import warnings

from . import _runtime
from ._hook import NcrewriteWarning

ENV_DIR = "NCREWRITE_PROFILE_DIR"       # the default output directory (cache-dit: CACHE_DIT_TORCH_PROFILER_DIR)
COMPAT_ENV_DIRS = ("CACHE_DIT_TORCH_PROFILER_DIR",)
ACTIVITIES = ("CPU", "GPU", "MEM")


def default_output_dir():
    """$NCREWRITE_PROFILE_DIR, else cache-dit's $CACHE_DIT_TORCH_PROFILER_DIR,
    else /tmp/ncrewrite_profiles."""
    for k in (ENV_DIR,) + COMPAT_ENV_DIRS:
        if os.environ.get(k):
            return os.environ[k]
    return "/tmp/ncrewrite_profiles"


def default_profile_name():
    return "profile-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


class Schedule:
    """torch.profiler.schedule's numbers: `skip_first` steps skipped once,
    then cycles of `wait` steps skipped, `warmup` steps run but not kept,
    `active` steps recorded, the cycle done `repeat` times (0: until the
    region ends). Steps come from prof.step()."""
    __slots__ = ("wait", "warmup", "active", "repeat", "skip_first")

    def __init__(self, wait=0, warmup=0, active=1, repeat=1, skip_first=0):
        for k, v in (("wait", wait), ("warmup", warmup), ("active", active), ("repeat", repeat),
                     ("skip_first", skip_first)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("schedule: %s must be a whole number >= 0, not %r" % (k, v))
        if active < 1:
            raise ValueError("schedule: active must be at least 1")
        self.wait, self.warmup, self.active, self.repeat = wait, warmup, active, repeat
        self.skip_first = skip_first

    @classmethod
    def coerce(cls, s):
        if s is None or isinstance(s, cls):
            return s
        if isinstance(s, dict):
            return cls(**s)
        if isinstance(s, (tuple, list)):
            return cls(*s)
        raise TypeError("schedule: a Schedule, a dict or (wait, warmup, active, repeat), not %s" % type(s).__name__)

    def steps_needed(self):
        """Steps for every cycle to complete (torch.profiler's count)."""
        return self.skip_first + (self.wait + self.warmup + self.active) * max(1, self.repeat)

    def __repr__(self):
        return "Schedule(wait=%d, warmup=%d, active=%d, repeat=%d%s)" % (
            self.wait, self.warmup, self.active, self.repeat,
            ", skip_first=%d" % self.skip_first if self.skip_first else "")


def _activities(acts):
    if isinstance(acts, str):
        acts = [acts]
    out = []
    for a in acts or ():
        u = str(getattr(a, "name", a)).upper()  # torch.profiler.ProfilerActivity.CUDA too
        u = {"CUDA": "GPU"}.get(u, u)
        if u not in ACTIVITIES:
            raise ValueError("activities: unknown %r (CPU, GPU, MEM)" % (a,))
        if u not in out:
            out.append(u)
    return out


def _say(msg):
    warnings.warn("ncrewrite profiler: " + msg, NcrewriteWarning, stacklevel=3)


class ProfilerContext:
    """Record a region of the program (a context manager; also start()/stop()).

    enabled: False makes it a no-op (the region runs as it is).
    activities: "CPU" (ranges; torch: operators), "GPU" (kernels, copies),
        "MEM" (allocations); default CPU and GPU.
    output_dir: default $NCREWRITE_PROFILE_DIR, $CACHE_DIT_TORCH_PROFILER_DIR,
        else /tmp/ncrewrite_profiles; created if missing.
    profile_name: file name prefix (default profile-<date>-<time>).
    with_stack, record_shapes, profile_memory: torch.profiler's (the ncrt
        backend records no stacks or shapes: it says so if asked).
    schedule: Schedule, dict or (wait, warmup, active, repeat): recording
        follows prof.step() as torch.profiler's schedule does; None records
        the whole region.
    backend: "auto", "ncrt" or "torch".

    After the region: trace_paths (every file written), trace_path (the last,
    a pathlib.Path as cache-dit has it), output_dir, steps.
    """

    def __init__(self, enabled=True, activities=("CPU", "GPU"), output_dir=None, profile_name=None,
                 with_stack=False, record_shapes=True, profile_memory=None, schedule=None, backend="auto",
                 gzip_level=1):
        self.enabled = bool(enabled)
        self.activities = _activities(activities)
        self.output_dir = os.path.abspath(output_dir or default_output_dir())
        self.profile_name = profile_name or default_profile_name()
        self.with_stack = bool(with_stack)
        self.record_shapes = bool(record_shapes)
        self.profile_memory = ("MEM" in self.activities) if profile_memory is None else bool(profile_memory)
        self.schedule = Schedule.coerce(schedule)
        if backend not in ("auto", "ncrt", "torch"):
            raise ValueError("backend: 'auto', 'ncrt' or 'torch', not %r" % (backend,))
        self.backend = backend
        self.gzip_level = gzip_level
        self.trace_paths = []
        self.steps = 0
        self.yielded = False  # the region's code started its own torch profiler, and ours gave way
        self._impl = None
        self._lock = threading.Lock()

    # -- cache-dit's names --
    @property
    def trace_path(self):
        import pathlib

        return pathlib.Path(self.trace_paths[-1]) if self.trace_paths else None

    @property
    def rank(self):
        return _runtime.rank()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if not self.enabled or self._impl is not None:
            return self
        backend = self.backend
        if backend == "auto":
            import sys

            backend = "torch" if "torch" in sys.modules else "ncrt"
        impl = (_TorchImpl if backend == "torch" else _NcrtImpl)(self)
        why = impl.unavailable()
        if why:
            _say("%s backend: %s; the region runs unprofiled" % (backend, why))
            return self
        os.makedirs(self.output_dir, exist_ok=True)
        self.steps = 0
        self._t0 = time.time()
        try:
            impl.start()
        except Exception as e:  # noqa: BLE001 - never the program's failure
            _say("%s backend could not start: %s; the region runs unprofiled" % (backend, e))
            return self
        self._impl = impl
        self.used_backend = backend
        return self

    def step(self):
        """A step boundary (torch.profiler's prof.step()): moves the schedule."""
        impl = self._impl
        if impl is not None:
            self.steps += 1
            impl.step()

    def stop(self):
        with self._lock:
            impl, self._impl = self._impl, None
        if impl is None:
            return self.trace_paths
        try:
            new = impl.stop()
        except Exception as e:  # noqa: BLE001
            _say("%s backend could not write the trace: %s" % (self.used_backend, e))
            new = []
        self.trace_paths.extend(p for p in new if p not in self.trace_paths)
        if not new and impl.writes:
            _say("nothing was recorded in the region%s" % (
                "" if not self.schedule else " (the schedule %r needs %d step()s; %d came)"
                % (self.schedule, self.schedule.steps_needed(), self.steps)))
        return self.trace_paths


class _Progress:
    """A callback (done, total) that says how far a long job is, every 2 s
    once it has run 2 s; silent for short ones."""

    def __init__(self, what):
        self.what = what
        self.t0 = time.monotonic()
        self.last = self.t0

    def __call__(self, done, total):
        now = time.monotonic()
        if now - self.t0 >= 2 and now - self.last >= 2:
            self.last = now
            _say("%s: %d of %d events" % (self.what, done, total))


def _stat(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class _NcrtImpl:
    """libncrt in this process (ncrewrite._runtime)."""

    def __init__(self, p):
        self.p = p
        self.writes = _runtime.mode() == "in-process"

    def unavailable(self):
        return _runtime.unavailable()

    def start(self):
        p = self.p
        if p.with_stack:
            _say("the ncrt backend records ranges and GPU work, not stacks: use backend='torch' for them")
        _runtime.make_spill_dir()
        if "GPU" in p.activities:
            _runtime.attach_gpu()
        self.before = {f: _stat(f) for f in _runtime.traces(p.output_dir, p.profile_name)}
        self.m = _runtime.ncrt()
        s = p.schedule
        if s is not None and self.writes:
            _runtime.control("schedule\t%d\t%d\t%d\t%d\t%d\t%s\t%s" % (s.wait, s.warmup, s.active, s.repeat,
                                                                       s.skip_first, p.output_dir, p.profile_name))
        else:
            self.m.start()

    def step(self):
        self.m.step()

    def stop(self):
        p = self.p
        tell = getattr(self.m, "_at_exit", None)  # torch.distributed's rank, if initialized: names the file
        if tell is not None:
            tell()
        if p.schedule is not None and self.writes:
            _runtime.control("schedule_end")
        else:
            self.m.stop()
            if self.writes:
                _runtime.control("write\t%s\t%s" % (p.output_dir, p.profile_name))
        if not self.writes:
            return []  # ncrun (it writes at exit) or another NVTX tool
        # this region's files: new or rewritten since it began (never an
        # older region's of the same name)
        return [f for f in _runtime.traces(p.output_dir, p.profile_name) if _stat(f) != self.before.get(f)]


class _TorchImpl:
    """torch.profiler, written by src/runtime's torch trace writer."""
    writes = True

    def __init__(self, p):
        self.p = p

    def unavailable(self):
        try:
            import torch  # noqa: F401
            import torch.profiler  # noqa: F401
        except Exception as e:  # noqa: BLE001
            return "torch cannot be imported (%s)" % e
        return None

    def start(self):
        import torch
        import torch.profiler as tp

        from . import _ncrt_torch_export as export

        p = self.p
        self.export = export
        acts = []
        if "CPU" in p.activities or (p.profile_memory and "GPU" not in p.activities):
            acts.append(tp.ProfilerActivity.CPU)
        if "GPU" in p.activities:
            if self._cuda(torch, tp):
                acts.append(tp.ProfilerActivity.CUDA)
            elif "CPU" not in p.activities:
                raise RuntimeError("GPU activity asked, and CUDA is not available here")
        kw = dict(activities=acts, record_shapes=p.record_shapes, with_stack=p.with_stack,
                  profile_memory=p.profile_memory, on_trace_ready=self._ready)
        if p.schedule is not None:
            s = p.schedule
            kw["schedule"] = tp.schedule(wait=s.wait, warmup=s.warmup, active=s.active, repeat=s.repeat,
                                         skip_first=s.skip_first)
        self.written = []
        self.t0_ns = time.time_ns()
        self.done = False
        m = _runtime.ncrt()
        self.bridge_was = m._torch_bridge(True) if m is not None else None
        self.prof = tp.profile(**kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.prof.start()
        export.skip_parse(self.prof)
        self._guard()

    def _guard(self):
        """torch allows one profiler per thread: when the region's code starts
        its own (seed 000's "Custom Integration", vLLM's profiler), ours
        stops first, writing what it recorded, and theirs runs, instead of
        the program's failing with "Profiler is already enabled on this
        thread". ProfilerContext.yielded says it happened."""
        self.guarded = []
        self.own = False
        try:
            import torch.autograd.profiler as ap
        except Exception:  # noqa: BLE001
            return
        impl = self
        for n in ("_prepare_profiler", "_enable_profiler"):
            orig = getattr(ap, n, None)
            if orig is None:
                continue

            def guard(*a, _orig=orig, **k):
                if not impl.own:  # our profiler's own next cycle (a schedule) is not another's
                    impl._yield()
                return _orig(*a, **k)

            setattr(ap, n, guard)
            self.guarded.append((ap, n, orig))

    def _unguard(self):
        for mod, n, orig in getattr(self, "guarded", ()):
            setattr(mod, n, orig)
        self.guarded = []

    def _yield(self):
        if self.done:
            return
        self.done = True
        self.p.yielded = True
        self._unguard()
        _say("the region's code started its own torch profiler: ours stopped first (its trace so far is written)")
        self._finish()

    @staticmethod
    def _cuda(torch, tp):
        try:
            return tp.ProfilerActivity.CUDA in tp.supported_activities() and torch.cuda.is_available()
        except Exception:  # noqa: BLE001
            return False

    def _ready(self, prof):
        p = self.p
        worker = "%s-rank%d" % (p.profile_name, _runtime.rank())
        opt = {"record_shapes": p.record_shapes, "with_stack": p.with_stack, "mem": p.profile_memory,
               "rank": _runtime.rank(), "t0_ns": self.t0_ns, "progress": _Progress("writing the trace"),
               "metadata": {"backend": "torch (in-process)", "activities": [a.lower() for a in p.activities],
                            "schedule": repr(p.schedule) if p.schedule else "", "steps": p.steps}}
        self.written.append(self.export.write(prof, p.output_dir, worker, p.gzip_level, opt))

    def step(self):
        if not self.done:
            self.own = True
            try:
                self.prof.step()
            finally:
                self.own = False

    def _finish(self):
        # torch parses its events as it stops (without Kineto, ~50 us an
        # event: half a million take tens of seconds): say so past 2 s
        notice = threading.Timer(2.0, _say, ["torch.profiler is processing the region's events (torch does this "
                                             "as it stops; then the trace is written)"])
        notice.daemon = True
        notice.start()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.prof.stop()
        finally:
            notice.cancel()
            m = _runtime.ncrt()
            if m is not None and self.bridge_was is not None:
                m._torch_bridge(self.bridge_was)
                self.bridge_was = None

    def stop(self):
        self._unguard()
        if not self.done:
            self.done = True
            self._finish()
        return self.written


def profile_function(enabled=True, profile_name=None, **kw):
    """Decorator: each call of the function is a profiled region
    (ProfilerContext's arguments; profile_name defaults to the function's
    qualified name)."""
    def deco(fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with ProfilerContext(enabled=enabled, profile_name=profile_name or fn.__qualname__, **kw):
                return fn(*a, **k)
        return wrapper
    return deco


# ---- command line (cache-dit's flags) ----

def _bool(text):
    t = str(text).strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError("want true or false, not %r" % text)


def _count(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("want a whole number, not %r" % text)
    if v < 0:
        raise argparse.ArgumentTypeError("want a number >= 0, not %d" % v)
    return v


def add_profiler_args(parser):
    """Add cache-dit's --profile* options to an argparse parser (in a group
    "profiling"); returns the group."""
    g = parser.add_argument_group("profiling")
    g.add_argument("--profile", action="store_true", help="record a trace of the profiled region")
    g.add_argument("--profile-name", default=None, help="trace file prefix (default: profile-<date>-<time>)")
    g.add_argument("--profile-dir", default=None,
                   help="output directory (default $%s, $CACHE_DIT_TORCH_PROFILER_DIR or /tmp/ncrewrite_profiles)"
                   % ENV_DIR)
    g.add_argument("--profile-activities", nargs="+", default=["CPU", "GPU"], type=str.upper,
                   choices=list(ACTIVITIES), help="what to record (default CPU GPU)")
    g.add_argument("--profile-with-stack", nargs="?", const=True, default=False, type=_bool,
                   help="record Python stacks (torch backend)")
    g.add_argument("--profile-record-shapes", nargs="?", const=True, default=True, type=_bool,
                   help="record tensor shapes (torch backend; default true)")
    for k, d in (("wait", 0), ("warmup", 1), ("active", 3), ("repeat", 1)):
        g.add_argument("--profile-" + k, type=_count, default=None,
                       help="schedule: %s steps (default %d when any schedule option is given; no schedule "
                       "otherwise: the whole region)" % (k, d))
    g.add_argument("--profile-backend", default="auto", choices=["auto", "ncrt", "torch"],
                   help="collector (default auto: torch when the program imported torch)")
    return g


def create_profiler_from_args(args, profile_name=None):
    """A ProfilerContext from add_profiler_args' options (enabled by
    --profile); profile_name overrides --profile-name."""
    v = vars(args)
    sched = [v.get("profile_" + k) for k in ("wait", "warmup", "active", "repeat")]
    schedule = None
    if any(x is not None for x in sched):
        schedule = Schedule(*[x if x is not None else d for x, d in zip(sched, (0, 1, 3, 1))])
    return ProfilerContext(enabled=bool(v.get("profile")), activities=v.get("profile_activities") or ["CPU", "GPU"],
                           output_dir=v.get("profile_dir"),
                           profile_name=profile_name or v.get("profile_name"),
                           with_stack=bool(v.get("profile_with_stack")),
                           record_shapes=v.get("profile_record_shapes", True) is not False,
                           schedule=schedule, backend=v.get("profile_backend") or "auto")


# ---- a `profiling:` section in a YAML config ----

class ConfigError(ValueError):
    """A configuration with errors; args[0]: the engine-rendered diagnostics
    (file:line:col: error: ..., the line, a caret)."""


_PROFILING_KEYS = {"wait": int, "warmup": int, "active": int, "repeat": int, "record_shapes": bool,
                   "profile_memory": bool, "with_stack": bool, "enabled": bool, "activities": list,
                   "output_dir": str, "profile_name": str, "backend": str}


def _scalar(node, want):
    kind, line, col, val = node
    if want is list:
        if kind == "seq":
            return [_scalar(n, str) for n in val]
        if kind == "scalar":
            return [x for x in val[0].replace(",", " ").split() if x]
        raise TypeError("a list")
    if kind != "scalar":
        raise TypeError("a " + {int: "whole number", bool: "true or false", str: "string"}[want])
    text, quoted, null = val
    if want is bool:
        if not quoted and text.lower() in ("true", "yes", "on"):
            return True
        if not quoted and text.lower() in ("false", "no", "off"):
            return False
        raise TypeError("true or false")
    if want is int:
        try:
            if quoted:
                raise ValueError
            n = int(text)
        except ValueError:
            raise TypeError("a whole number")
        if n < 0:
            raise TypeError("a whole number >= 0")
        return n
    return text


def load_profiling_config(path, epochs=None, epochs_key="training.epochs", text=None):
    """The `profiling:` section of a YAML (or JSON) configuration file as a
    ProfilerContext's keyword arguments (schedule as a Schedule), checked
    with positioned diagnostics (ConfigError). Keys: wait, warmup, active,
    repeat (defaults 3, 1, 3, 1, the training guide's), record_shapes,
    profile_memory, with_stack, and enabled, activities, output_dir,
    profile_name, backend. Returns None when the file has no profiling
    section.

    The schedule means what the training guide says: `wait` epochs skipped
    once, then the warmup + active cycle run repeat + 1 times (with repeat=1
    it runs twice), i.e. Schedule(skip_first=wait, wait=0, warmup, active,
    repeat + 1) -- unlike torch.profiler.schedule(repeat=N), which runs N
    cycles and waits in each. The epochs check: the run must have at least
    wait + (warmup + active) × (repeat + 1) epochs (steps), the same rule;
    `epochs` is given, or read from `epochs_key` in the same file."""
    from . import _engine

    if text is None:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    name = os.fspath(path)
    try:
        root = _engine.yaml_tree(text, name)
    except _engine.RulesError as e:
        raise ConfigError(str(e.args[0]).rstrip("\n")) from None
    errs = []

    def err(node, msg):
        errs.append(_engine.diagnostic(name, text, node[1] if node else 0, node[2] if node else 0, "error",
                                       msg).rstrip("\n"))

    def get(node, dotted):
        for part in dotted.split("."):
            if node is None or node[0] != "map":
                return None, None
            found = None
            for k, v in node[3]:
                if k[0] == "scalar" and k[3][0] == part:
                    found = (k, v)
            if not found:
                return None, None
            key, node = found
        return key, node

    if root is None or root[0] != "map":
        if root is not None:
            err(root, "the configuration should be a mapping with a `profiling:` section")
            raise ConfigError("\n".join(errs))
        return None
    pkey, sec = get(root, "profiling")
    if sec is None:
        return None
    if sec[0] == "scalar" and sec[3][2]:  # `profiling:` with nothing: the defaults
        sec = ("map", sec[1], sec[2], [])
    if sec[0] != "map":
        err(sec, "`profiling` should be a mapping (wait, warmup, active, repeat, ...)")
        raise ConfigError("\n".join(errs))
    vals, at = {}, {}
    for k, v in sec[3]:
        key = k[3][0] if k[0] == "scalar" else None
        if key not in _PROFILING_KEYS:
            import difflib

            close = difflib.get_close_matches(str(key), list(_PROFILING_KEYS), n=1)
            err(k, "unknown key '%s' in profiling (expected one of: %s)%s"
                % (key, ", ".join(_PROFILING_KEYS), " (did you mean '%s'?)" % close[0] if close else ""))
            continue
        if v[0] == "scalar" and v[3][2]:
            continue  # null / ~ / empty: not written
        try:
            vals[key] = _scalar(v, _PROFILING_KEYS[key])
            at[key] = v
        except TypeError as e:
            err(v, "profiling.%s should be %s" % (key, e))
    sched = {k: vals.pop(k, d) for k, d in (("wait", 3), ("warmup", 1), ("active", 3), ("repeat", 1))}
    if "active" in at and sched["active"] < 1:
        err(at["active"], "profiling.active should be at least 1")
    if "activities" in vals:
        try:
            vals["activities"] = _activities(vals["activities"])
        except ValueError as e:
            err(at["activities"], str(e))
    if "backend" in vals and vals["backend"] not in ("auto", "ncrt", "torch"):
        err(at["backend"], "profiling.backend should be auto, ncrt or torch")
    need = sched["wait"] + (sched["warmup"] + sched["active"]) * (sched["repeat"] + 1)
    ekey = enode = None
    if epochs is None and epochs_key:
        ekey, enode = get(root, epochs_key)
        if enode is not None:
            try:
                epochs = _scalar(enode, int)
            except TypeError as e:
                err(enode, "%s should be %s" % (epochs_key, e))
    if epochs is not None and not errs and epochs < need:
        msg = ("%d epochs are fewer than the schedule needs: wait + (warmup + active) * (repeat + 1) = "
               "%d + (%d + %d) * %d = %d" % (epochs, sched["wait"], sched["warmup"], sched["active"],
                                            sched["repeat"] + 1, need))
        err(enode or pkey, msg if enode is not None else msg + " (epochs=%d given)" % epochs)
    if errs:
        raise ConfigError("\n".join(errs))
    if sched["active"] >= 1:
        # The section's own meaning (the training guide's): `wait` epochs
        # skipped once, then the warmup + active cycle run repeat + 1 times
        # (repeat=1: twice). torch.profiler.schedule's repeat counts cycles
        # and waits in each: this is skip_first=wait, wait=0, repeat+1.
        vals["schedule"] = Schedule(wait=0, warmup=sched["warmup"], active=sched["active"],
                                    repeat=sched["repeat"] + 1, skip_first=sched["wait"])
    return vals
