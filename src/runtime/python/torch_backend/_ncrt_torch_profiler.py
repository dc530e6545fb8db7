"""`ncrun --backend torch`: the profiler side, loaded only once the program
imports torch (_ncrt_torch_backend.py's hook calls start()).

The contract with ncrun (docs/runtime.md, "Torch backend"):

    NCRT_OUTPUT_DIR     the run directory: traces go there
    NCRT_TRACE_NAME     <name> of <name>-rank<R>.<ms>.pt.trace.json.gz
    NCRT_ACTIVITIES     cpu,gpu,mem subset (default cpu,gpu)
    NCRT_SCHEDULE       wait=W,warmup=U,active=A,repeat=R (or W,U,A[,R])
    NCRT_STEP           fnmatch pattern: each opening of an ncrt range whose
                        name matches begins a step (ncrt.step() always does)
    NCRT_WITH_STACK=1, NCRT_RECORD_SHAPES=1
    NCRT_TORCH=1        ncrt.range also opens record_function
    NCRT_GZIP_LEVEL, NCRT_QUIET, NCRT_VERBOSE, NCRT_ROOT_PID   as for libncrt

- ncrt.step (and, with NCRT_STEP, the range factories) are replaced in the
  ncrt module's namespace by wrappers that also move the profiler; when ncrt
  was initialised without torch (NCRT_TORCH held back, see the hook),
  ncrt.range becomes ncrt.torch_range, which opens record_function.
- torch.profiler.profile(...) is made and started at once (with NCRT_STEP
  and a schedule: at the first step range), on the thread that imported
  torch: torch's profiler state is per thread, so steps and the stop must
  come from that thread.
- At exit (atexit; SIGTERM when the program left it at its default) the
  profiler stops and the last trace is written. Each trace is written to a
  hidden temporary file in the run directory, then linked to its final name
  (TensorBoard's <worker>.<ms>.pt.trace.json.gz). torch built without
  Kineto (Debian's) exports only its legacy layout: then the trace is
  written in Kineto's layout from the profiler's events here.

Errors print one line "ncrun (torch backend): ..." and the program carries on
unprofiled; nothing here raises into the program.
"""
import os
import sys

# one prefix and one formatter for both modules (_ncrt_torch_backend loads this one)
from _ncrt_torch_backend import _say as say, _why  # noqa: E402
import _ncrt_torch_export as _export  # noqa: E402
_FACTORIES = ("range", "span", "torch_range", "torch_span")

_backend = None  # the one _Backend of this process


# ---- configuration (no torch) ----

def parse_schedule(text):
    """'wait=W,warmup=U,active=A[,repeat=R]' (any order, missing keys 0, repeat 1)
    or 'W,U,A[,R]' -> (W, U, A, R); ValueError saying what is wrong."""
    if not text or not text.strip():
        return None
    parts = [p.strip() for p in text.replace(" ", ",").split(",") if p.strip()]
    v = {"wait": 0, "warmup": 0, "active": None, "repeat": 1}
    if all("=" in p for p in parts):
        for p in parts:
            k, _, n = p.partition("=")
            k = k.strip()
            if k not in v:
                raise ValueError("unknown key %r (keys: wait, warmup, active, repeat)" % k)
            v[k] = int(n)
    elif not any("=" in p for p in parts) and len(parts) in (3, 4):
        for k, n in zip(("wait", "warmup", "active", "repeat"), parts):
            v[k] = int(n)
    else:
        raise ValueError("want wait=W,warmup=U,active=A[,repeat=R] or W,U,A[,R]")
    if v["active"] is None or v["active"] < 1:
        raise ValueError("active must be at least 1")
    if min(v["wait"], v["warmup"], v["repeat"]) < 0:
        raise ValueError("counts must not be negative")
    return (v["wait"], v["warmup"], v["active"], v["repeat"])


class Config:
    def __init__(self, env):
        self.out_dir = os.path.abspath(env.get("NCRT_OUTPUT_DIR") or ".")
        self.name = env.get("NCRT_TRACE_NAME") or ""
        acts = [a.strip().lower() for a in (env.get("NCRT_ACTIVITIES") or "cpu,gpu").split(",") if a.strip()]
        bad = [a for a in acts if a not in ("cpu", "gpu", "mem")]
        if bad:
            raise ValueError("NCRT_ACTIVITIES=%s: unknown activity %r (cpu, gpu, mem)" % (env["NCRT_ACTIVITIES"], bad[0]))
        self.activities = set(acts)
        try:
            self.schedule = parse_schedule(env.get("NCRT_SCHEDULE"))
        except ValueError as e:
            raise ValueError("NCRT_SCHEDULE=%s: %s" % (env.get("NCRT_SCHEDULE"), e))
        self.step = env.get("NCRT_STEP") or ""
        self.with_stack = env.get("NCRT_WITH_STACK", "") not in ("", "0")
        self.record_shapes = env.get("NCRT_RECORD_SHAPES", "") not in ("", "0")
        self.torch_ranges = env.get("NCRT_TORCH", "") == "1"
        try:
            self.gzip_level = min(9, max(0, int(env.get("NCRT_GZIP_LEVEL") or 1)))
        except ValueError:
            self.gzip_level = 1
        self.quiet = env.get("NCRT_QUIET", "") not in ("", "0")
        self.verbose = env.get("NCRT_VERBOSE", "") not in ("", "0")
        self.root_pid = env.get("NCRT_ROOT_PID", "")
        self.rank, self.ranked = _export.rank_from_env(env)

    def schedule_text(self):
        if not self.schedule:
            return ""
        return "wait=%d warmup=%d active=%d repeat=%d" % self.schedule


def _argv():
    return list(getattr(sys, "orig_argv", None) or [sys.executable] + list(sys.argv))


def program_name():
    """The script's name without .py, the -m module, else the interpreter's
    (libncrt's rule, for when ncrun gives no NCRT_TRACE_NAME)."""
    argv = _argv()
    skip = False
    for i, a in enumerate(argv[1:-1], 1):
        if skip:
            skip = False
        elif a == "-m":
            return argv[i + 1]
        elif a in ("-W", "-X", "--check-hash-based-pycs"):
            skip = True  # their value is the next word
        elif a == "-c" or not a.startswith("-"):
            break  # the command, or the script: its own arguments follow
    a0 = sys.argv[0] if sys.argv else ""
    if a0 and a0 not in ("-c", "-m", "-"):
        n = os.path.basename(a0)
        return n[:-3] if n.endswith(".py") else n
    return os.path.basename(sys.executable or "") or "python"


def launcher_reason():
    """Processes that import torch without doing the program's work: a
    multiprocessing child while it starts, torchrun's agent. They record
    nothing (their workers are profiled in their own processes)."""
    argv = _argv()
    if "--multiprocessing-fork" in sys.argv or any("from multiprocessing." in a for a in argv):
        return "multiprocessing"
    if os.path.basename(sys.argv[0] if sys.argv else "") == "torchrun":
        return "torchrun"
    m = program_name()
    if m in ("torch.distributed.run", "torch.distributed.launch"):
        return m
    return ""


# ---- steps through ncrt ranges (NCRT_STEP) ----

class _StepRange:
    """An ncrt range whose name matches NCRT_STEP: its opening begins a step,
    its closing may end a cycle. Also a decorator, like the range it wraps."""
    __slots__ = ("_r", "_b")

    def __init__(self, r, backend):
        self._r, self._b = r, backend

    def __enter__(self):
        self._b.step_begin()
        return self._r.__enter__()

    def __exit__(self, *exc):
        try:
            return self._r.__exit__(*exc)
        finally:
            self._b.step_end()

    def __call__(self, fn):
        inner = self._r(fn)
        b = self._b

        def stepped(*a, **k):
            b.step_begin()
            try:
                return inner(*a, **k)
            finally:
                b.step_end()

        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            try:
                setattr(stepped, attr, getattr(fn, attr))
            except Exception:
                pass
        try:
            stepped.__dict__.update(getattr(fn, "__dict__", {}))
            stepped.__wrapped__ = fn
        except Exception:
            pass
        return stepped

    def __repr__(self):
        return "<step %r>" % (self._r,)


# ---- the backend ----

class _Backend:
    def __init__(self, cfg):
        self.cfg = cfg
        self.disabled = False
        self.done = False  # stopped for good (exit, signal, the program's own profiler)
        self.started = False
        self.advanced = False  # NCRT_STEP + schedule: the last active step's end already moved on
        self.inside = False  # one of our calls into the profiler is running
        self.prof = None
        self.lock = None
        self.owner = None  # thread that started the profiler
        self.pid = os.getpid()
        self.ncrt = None
        self.ncrt_plain = False  # ncrt was initialised with NCRT_TORCH unset (torch not imported then)
        self.orig = {}  # ncrt's own callables
        self.match_cache = {}
        self.cycles = 0
        self.written = []
        self.worker = ""
        self.t0_ns = 0
        self.thread_note = False
        self.off_main = ""  # the thread that imported torch, when not the main one
        self.torch = None

    # -- ncrt --

    def ncrt_loaded(self, mod):
        self.ncrt = mod
        for n in _FACTORIES + ("step",):
            f = getattr(mod, n, None)
            if f is not None:
                self.orig[n] = f
        if "step" in self.orig:
            orig_step, backend = self.orig["step"], self

            def step():
                orig_step()
                backend.step_begin()

            step.__name__ = step.__qualname__ = "step"
            step.__doc__ = getattr(orig_step, "__doc__", None)
            step.__wrapped__ = orig_step
            mod.step = step
        self.set_factories()

    def set_factories(self):
        if self.ncrt is None:
            return
        base = {n: self.orig[n] for n in _FACTORIES if n in self.orig}
        if self.ncrt_plain and self.torch is not None and "torch_range" in base:
            base["range"] = base["torch_range"]  # torch is here now: record_function too
        # step ranges only matter once there is a profiler to step
        stepping = bool(self.cfg.step) and self.prof is not None and not self.disabled
        for n, f in base.items():
            setattr(self.ncrt, n, self.step_factory(f) if stepping else f)

    def step_factory(self, f):
        match, backend = self.match, self

        def factory(name):
            r = f(name)
            return _StepRange(r, backend) if match(name) else r

        factory.__name__ = factory.__qualname__ = getattr(f, "__name__", "range")
        factory.__doc__ = getattr(f, "__doc__", None)
        factory.__wrapped__ = f
        return factory

    def match(self, name):
        key = name if type(name) is str else str(name)
        hit = self.match_cache.get(key)
        if hit is None:
            import fnmatch

            hit = fnmatch.fnmatchcase(key, self.cfg.step)
            if len(self.match_cache) < 10000:
                self.match_cache[key] = hit
        return hit

    # -- torch --

    def torch_loaded(self, torch):
        why = launcher_reason()
        if why:
            if self.cfg.verbose:
                say("not profiling this process (%s)" % why)
            return
        import threading
        import warnings

        self.lock = threading.RLock()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.prof = self.make_profiler(torch)
        except Exception as e:
            self.disabled = True
            say("cannot set up torch.profiler: %s; the program runs unprofiled" % _why(e))
            return
        if self.prof is None:
            self.disabled = True
            return
        self.torch = torch
        # the profiler lives on the main thread: atexit and signal handlers
        # run there, and torch's profiler state is per thread
        self.owner = threading.main_thread().ident
        self.worker = self.worker_name()
        self.guard_other_profilers()
        self.set_factories()
        import atexit

        atexit.register(self.at_exit)
        if threading.get_ident() != self.owner:
            self.off_main = threading.current_thread().name
            say("torch was first imported on thread %r, not the main thread: torch.profiler starts at the first "
                "ncrt.step() (or step range) on the main thread" % self.off_main)
        elif not (self.cfg.step and self.cfg.schedule):
            self.transition(self.start)
        # else: the first step range starts it

    def worker_name(self):
        name = self.cfg.name or program_name()
        if name.endswith(".py"):
            name = name[:-3]
        if self.cfg.root_pid and self.cfg.root_pid != str(os.getpid()) and not self.cfg.ranked:
            name += "-pid%d" % os.getpid()
        return "%s-rank%d" % (name, self.cfg.rank)

    def make_profiler(self, torch):
        import torch.profiler as tp

        acts = []
        if "cpu" in self.cfg.activities:
            acts.append(tp.ProfilerActivity.CPU)
        if "gpu" in self.cfg.activities and self.cuda_present(torch, tp):
            acts.append(tp.ProfilerActivity.CUDA)
        if not acts and "mem" in self.cfg.activities:
            acts.append(tp.ProfilerActivity.CPU)  # memory events come with an activity
        if not acts:
            say("nothing to record: activities %s, and CUDA is not available here; the program runs unprofiled"
                % ",".join(sorted(self.cfg.activities)))
            return None
        kw = dict(activities=acts, record_shapes=self.cfg.record_shapes, with_stack=self.cfg.with_stack,
                  profile_memory="mem" in self.cfg.activities, on_trace_ready=self.trace_ready)
        if self.cfg.schedule:
            w, u, a, r = self.cfg.schedule
            kw["schedule"] = tp.schedule(wait=w, warmup=u, active=a, repeat=r)
        cfg = self.all_threads_config(tp)
        if cfg is not None:
            kw["experimental_config"] = cfg
        backend = self

        class Profile(tp.profile):
            # the wall clock at each start (the converted layout's time base),
            # and our metadata in Kineto's trace
            def start_trace(self):
                import time

                backend.t0_ns = time.time_ns()
                super().start_trace()

            def stop_trace(self):
                backend.add_metadata(self)
                super().stop_trace()

        cls = Profile if hasattr(tp.profile, "start_trace") and hasattr(tp.profile, "stop_trace") else tp.profile
        return cls(**kw)

    @staticmethod
    def cuda_present(torch, tp):
        try:
            if tp.ProfilerActivity.CUDA not in tp.supported_activities():
                return False
            if not (getattr(torch.version, "cuda", None) or getattr(torch.version, "hip", None)):
                return False
            return torch.cuda.device_count() > 0  # NVML first in recent torch: no CUDA context
        except Exception:
            return False

    @staticmethod
    def all_threads_config(tp):
        """torch >= 2.7 can record every thread, not only the one that starts
        the profiler; older ones take no such option."""
        try:
            from torch._C._profiler import _ExperimentalConfig

            return _ExperimentalConfig(profile_all_threads=True)
        except Exception:
            return None

    def add_metadata(self, prof):
        if not self.kineto(prof):
            return  # torch without Kineto logs a warning instead (the converted layout has it)
        try:
            import json

            prof.add_metadata_json("ncrt", json.dumps(self.metadata()))
        except Exception:
            pass

    def metadata(self):
        return {"backend": "torch", "torch": getattr(self.torch, "__version__", "?"),
                "activities": sorted(self.cfg.activities), "schedule": self.cfg.schedule_text(),
                "step": self.cfg.step or "ncrt.step()", "steps": self.steps_begun()}

    def steps_begun(self):
        return (self.prof.step_num + 1) if (self.prof is not None and self.started) else 0

    def guard_other_profilers(self):
        """torch allows one profiler per thread: when the program starts its
        own, ours stops first (its trace so far is written), instead of the
        program's failing with "Profiler is already enabled on this thread"."""
        try:
            import torch.autograd.profiler as ap
        except Exception:
            return
        backend = self
        for n in ("_prepare_profiler", "_enable_profiler"):
            orig = getattr(ap, n, None)
            if orig is None or getattr(orig, "_ncrt_guard", False):
                continue

            def guard(*a, _orig=orig, **k):
                backend.other_profiler()
                return _orig(*a, **k)

            guard._ncrt_guard = True
            setattr(ap, n, guard)

    def other_profiler(self):
        import threading

        if self.inside or self.done or self.disabled or self.prof is None:
            return
        if threading.get_ident() != self.owner:
            return  # profilers are per thread: that one does not collide with ours
        say("the program starts its own torch profiler: ours stops here%s"
            % (" (what it recorded is written)" if self.started else ""))
        self.finish()

    # -- steps --

    def transition(self, fn):
        """Run one of our profiler calls; on error say so and stop profiling."""
        self.inside = True
        try:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
            return True
        except Exception as e:
            self.disabled = True
            say("torch.profiler failed: %s; the rest of the run is not profiled" % _why(e))
            return False
        finally:
            self.inside = False

    def start(self):
        self.prof.start()
        _export.skip_parse(self.prof)  # torch without Kineto: no per-event parse at stop (we export)
        self.started = True
        self.catch_sigterm()

    def usable(self):
        if self.prof is None or self.disabled or self.done or self.inside:
            return False
        import threading

        if threading.get_ident() != self.owner:
            if not self.thread_note:
                self.thread_note = True
                say("steps on threads other than the main one are ignored (torch.profiler runs on the main "
                    "thread: its state is per thread)")
            return False
        return os.getpid() == self.pid

    def step_begin(self):
        """ncrt.step(), or a step range opens: the next step begins."""
        if not self.usable():
            return
        with self.lock:
            if self.done or self.disabled:
                return
            if not self.started:
                self.transition(self.start)
            elif self.advanced:
                self.advanced = False
            else:
                self.transition(self.prof.step)

    def step_end(self):
        """A step range closes: after the last active step of a cycle, the
        cycle ends here (the time until the next step range is not in it)."""
        if not self.cfg.schedule or not self.started or self.advanced or not self.usable():
            return
        w, u, a, r = self.cfg.schedule
        n = w + u + a
        with self.lock:
            k = self.prof.step_num
            if k % n == n - 1 and (r == 0 or k // n < r) and not (self.done or self.disabled or self.advanced):
                if self.transition(self.prof.step):
                    self.advanced = True

    # -- the end --

    def finish(self):
        """Stop the profiler for good, writing what it holds."""
        if self.prof is None or self.done or os.getpid() != self.pid:
            return
        import threading

        if threading.get_ident() != self.owner:
            return  # only the main thread can stop it (atexit and signals run there)
        with self.lock:
            if self.done:
                return
            self.done = True
            if self.started and not self.disabled:
                self.transition(self.prof.stop)
        if self.off_main and not self.started and not self.cfg.quiet:
            say("nothing recorded: no step came on the main thread")
        self.report()

    def report(self):
        if self.cfg.quiet or not self.cfg.schedule:
            return
        w, u, a, r = self.cfg.schedule
        n = w + u + a
        steps = self.steps_begun()
        want = r if r else 1
        if self.cycles < want and r != 0:
            say("the run had %d step%s; the schedule %s needs %d; %d of %d cycle%s recorded%s"
                % (steps, "" if steps == 1 else "s", self.cfg.schedule_text(), n * want, self.cycles, want,
                   "" if want == 1 else "s",
                   "" if self.cfg.step else " (steps come from ncrt.step() or --step NAME)"))
        elif self.cycles == 0:
            say("the run had %d step%s; the schedule needs %d for one cycle: nothing recorded"
                % (steps, "" if steps == 1 else "s", n))

    def at_exit(self):
        try:
            self.finish()
        except Exception as e:
            say("internal error at exit: %s" % _why(e))

    def catch_sigterm(self):
        """SIGTERM, when the program left it at its default: write the trace,
        then die of SIGTERM as before. Only from the main thread, and only
        while no handler of the program's is installed."""
        try:
            import signal
            import threading

            if threading.current_thread() is not threading.main_thread():
                return
            if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
                return
        except Exception:
            return
        backend = self

        def on_term(signum, frame):
            try:
                if os.getpid() == backend.pid and not backend.inside:
                    backend.finish()
            finally:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)

        try:
            signal.signal(signal.SIGTERM, on_term)
        except Exception:
            pass

    # -- writing --

    def trace_ready(self, prof):
        try:
            path = self.write(prof)
            self.cycles += 1
            self.written.append(path)
            if self.cfg.verbose:
                say("trace: %s" % path)
        except Exception as e:
            say("cannot write the trace to %s: %s; it is lost, the program is not" % (self.cfg.out_dir, _why(e)))

    def write(self, prof):
        return _export.write(prof, self.cfg.out_dir, self.worker, self.cfg.gzip_level, self.export_options(),
                             ms_always=True)

    def export_options(self):
        return {"record_shapes": self.cfg.record_shapes, "with_stack": self.cfg.with_stack,
                "mem": "mem" in self.cfg.activities, "rank": self.cfg.rank, "t0_ns": self.t0_ns,
                "metadata": self.metadata()}

    @staticmethod
    def kineto(prof):
        return _export.kineto(prof)


def start(torch, ncrt=None, ncrt_plain=False):
    """The program has imported torch (_ncrt_torch_backend's hook calls this
    once per process, on the thread that imported it). `ncrt`: the ncrt
    module if imported already; `ncrt_plain`: it was initialised with
    NCRT_TORCH unset (its range does not open record_function by itself)."""
    global _backend
    if _backend is not None:
        return _backend
    try:
        cfg = Config(os.environ)
    except ValueError as e:
        say("%s; the program runs unprofiled" % e)
        _backend = False
        return _backend
    _backend = b = _Backend(cfg)
    b.ncrt_plain = ncrt_plain
    if ncrt is not None:
        b.ncrt_loaded(ncrt)
    b.torch_loaded(torch)
    return b


def ncrt_imported(ncrt):
    """ncrt imported after torch: wrap it too."""
    if _backend:
        _backend.ncrt_loaded(ncrt)
