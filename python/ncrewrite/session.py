"""ProfilingSession: the nCompass SDK's iterative workflow, on ncrewrite's engine.

    from ncrewrite.trace import ProfilingSession     # was: from ncompass.trace import ...

    session = ProfilingSession(trace_output_dir="./traces", cache_dir="./cache", session_name="opt")
    path = session.run_profile(run_inference, trace_name_suffix="initial")
    summary = session.get_trace_summary(path)         # {"markdown", "structured": {...}}
    session.submit_feedback("why is attention slow?", "model.attention", 150, 300)
    session.apply_targeted_markers()
    path = session.run_profile(run_inference, trace_name_suffix="targeted")

Everything is done by the same engine as the commands, in this process:
recording by libncrt or torch.profiler (ncrewrite.profiler), summaries by
`nctrace summary --format json`'s code, filtering by `nctrace filter`'s,
rule edits by `ncrewrite feedback` / `drill` / `config`'s (ncrewrite._engine
.run_tool), rewriting by the import hook. Nothing goes to a remote service:
base_url is accepted for compatibility and unused; the "AI analysis" is
nctrace's bottlenecks and recommendations.

The session's rules live in one rule file, <cache_dir>/<session_name>.rules.json
(JSON, the layout of nCompass's configs: targets, ai_analysis_targets,
full_trace_mode); feedback edits it in place and keeps its history
(<file>.history.jsonl, `ncrewrite feedback --undo`).
"""
import copy
import json
import os
import sys
import time

from . import _engine
from . import _hook
from .config import RewriteConfig, RulesError, _tree_to_py
from .profiler import ProfilerContext


class ToolError(RuntimeError):
    """An nctrace / ncrewrite command failed; args[0]: its messages."""


def run_tool(*argv):
    """(stdout, stderr) of one nctrace / ncrewrite command run in-process;
    ToolError with its messages if it fails."""
    status, out, err = _engine.run_tool([os.fspath(a) for a in argv])
    if status != 0:
        raise ToolError(err.strip() or "%s %s failed (status %d)" % (argv[0], argv[1], status))
    return out, err


def _module_root(module):
    """(sys.path entry, source file) of a module, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise ValueError("target_module %r: no such module on sys.path" % module)
    origin = os.path.abspath(spec.origin)
    depth = module.count(".") + (1 if os.path.basename(origin) == "__init__.py" else 0)
    root = os.path.dirname(origin)
    for _ in range(depth):
        root = os.path.dirname(root)
    return root, origin


_TRACE_ENDS = (".trace.json.gz", ".trace.json", ".pt.trace.json.gz")


def _trace_files(d):
    """{path: (mtime_ns, size, inode)} of the trace files under d."""
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            if f.endswith(_TRACE_ENDS):
                p = os.path.join(root, f)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out[p] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def _new_trace_files(d, before):
    """Trace files under d that are new or changed since the snapshot
    `before`, oldest first."""
    now = _trace_files(d)
    new = [p for p, v in now.items() if before.get(p) != v]
    return sorted(new, key=lambda p: (now[p][0], p))


def _defs_of(mod):
    """{qualified name: function} of the functions and methods a module
    defines (its own classes' too, staticmethods, classmethods and
    properties included), to update in place after a reload."""
    import types

    out = {}
    name = mod.__name__

    def add(qual, f):
        if isinstance(f, types.FunctionType) and f.__module__ == name:
            out[qual] = f

    def walk(obj, prefix, depth):
        for k, v in list(vars(obj).items()):
            if isinstance(v, (staticmethod, classmethod)):
                add(prefix + k, v.__func__)
            elif isinstance(v, property):
                for part, f in (("fget", v.fget), ("fset", v.fset), ("fdel", v.fdel)):
                    add("%s%s.%s" % (prefix, k, part), f)
            elif isinstance(v, type):
                if v.__module__ == name and v.__qualname__ == prefix + k and depth < 4:
                    walk(v, prefix + k + ".", depth + 1)
            else:
                add(prefix + k, v)

    walk(mod, "", 0)
    return out


def _python_words(msg):
    """The feedback command's diagnostics in submit_feedback's terms: its
    arguments, not the command's flags (positions and carets are kept)."""
    import re

    msg = re.sub(r"give --lines (\d+)-(\d+), or --snap", r"give start_line=\1, end_line=\2, or snap=True", msg)
    return msg.replace("--lines", "start_line/end_line")


class ProfilingSession:
    """An iterative profiling session (nCompass's ProfilingSession).

    trace_output_dir: where traces go. cache_dir: the session's files
    (rules, summaries' index, saved configs, history; default
    <trace_output_dir>/.ncrewrite). session_name: prefix of trace names.
    base_url: unused (no analysis service). config: the starting rules
    (a rule file path, a dict such as nCompass's config, a RewriteConfig).
    backend, activities: the profiler's (ncrewrite.profiler)."""

    def __init__(self, trace_output_dir, cache_dir=None, session_name=None, base_url=None, config=None,
                 backend="auto", activities=("CPU", "GPU")):
        self.trace_output_dir = os.path.abspath(trace_output_dir)
        self.cache_dir = os.path.abspath(cache_dir or os.path.join(self.trace_output_dir, ".ncrewrite"))
        self.session_name = session_name or "session"
        self.base_url = base_url
        self.backend = backend
        self.activities = activities
        os.makedirs(self.trace_output_dir, exist_ok=True)
        os.makedirs(self.cache_dir, exist_ok=True)
        self.rules_path = os.path.join(self.cache_dir, "%s.rules.json" % self.session_name)
        self._initial = self._config_dict(config) if config is not None else {"targets": {}}
        self.iterations = []
        self.feedback_history = []
        self.latest_trace = None
        self._instrumented = {}  # module -> the hook's record of it, as the latest run ran it
        self._write_rules(self._initial)
        self._load_history()

    # ---- the rules ----

    @staticmethod
    def _config_dict(config):
        rc = RewriteConfig.coerce(config)
        rc.validate()
        if rc.path and not rc.path.endswith(".json"):
            # YAML: read through the engine's reader so the dict is what the engine sees
            tree = _engine.yaml_tree(rc.text, rc.name)
            return _tree_to_py(tree) or {}
        return json.loads(rc.text)

    def _write_rules(self, d):
        tmp = self.rules_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(d, f, indent=2)
            f.write("\n")
        os.replace(tmp, self.rules_path)

    @property
    def config(self):
        """The session's rules as a dict (nCompass's configuration format)."""
        with open(self.rules_path) as f:
            return json.load(f)

    def _history_path(self):
        return os.path.join(self.cache_dir, "%s.iterations.json" % self.session_name)

    def _load_history(self):
        try:
            with open(self._history_path()) as f:
                self.iterations = json.load(f)
        except (OSError, ValueError):
            self.iterations = []

    def _save_history(self):
        tmp = self._history_path() + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.iterations, f, indent=2)
        os.replace(tmp, self._history_path())

    # ---- profiling ----

    def run_profile(self, user_code, trace_name_suffix=None, filter_trace=False, filter_trace_args=None):
        """Run user_code() under the profiler; returns the trace's path. If
        user_code raises, the trace of what ran is written, then the
        exception propagates. When the profiler wrote nothing but user_code
        saved a trace of its own into trace_output_dir (vLLM's profiler, a
        custom one), that file is returned."""
        n = len(self.iterations) + 1
        name = "%s_%s" % (self.session_name, trace_name_suffix or "iter%d" % n)
        before = _trace_files(self.trace_output_dir)
        prof = ProfilerContext(output_dir=self.trace_output_dir, profile_name=name, backend=self.backend,
                               activities=self.activities)
        with prof:
            user_code()
        paths = [str(p) for p in prof.trace_paths]
        # a trace the user's code saved itself (vLLM's profiler, a custom
        # one) in this run: new or rewritten since it began, never an older
        # run's; it wins over ours when another profiler took over from ours
        theirs = [p for p in _new_trace_files(self.trace_output_dir, before) if p not in paths]
        if theirs and (not paths or getattr(prof, "yielded", False)):
            path = theirs[-1]
        else:
            path = paths[-1] if paths else None
        if path is None:
            from . import _runtime

            why = {"ncrun": "under ncrun the profiler only gates ncrun's capture, and ncrun writes the trace into "
                            "its run directory at exit: run the session without ncrun",
                   "other": "another NVTX tool (%s) takes the ranges" % os.environ.get("NVTX_INJECTION64_PATH")
                   }.get(_runtime.mode(), "see the warnings above")
            raise RuntimeError("run_profile: no trace was written to %s (%s)" % (self.trace_output_dir, why))
        if filter_trace:
            path = self.filter_trace(path, **(filter_trace_args or {}))
        self.latest_trace = path
        hook = _hook.active()
        self._instrumented = dict(hook.loaded) if hook is not None else {}
        self.iterations.append({"iteration": n, "name": name, "trace": path, "traces": paths or [path],
                                "config": copy.deepcopy(self.config), "feedback": list(self.feedback_history),
                                "summary": None, "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
        self._save_history()
        return path

    def _trace(self, trace_path):
        p = trace_path or self.latest_trace
        if p is None:
            raise ValueError("no trace: run run_profile() first or pass trace_path")
        return os.path.abspath(os.fspath(p))

    # ---- summaries ----

    def _summary_paths(self, trace):
        base = os.path.basename(trace)
        for ext in (".gz", ".json"):
            if base.endswith(ext):
                base = base[: -len(ext)]
        d = os.path.dirname(trace)
        return os.path.join(d, "summary_%s.json" % base), os.path.join(d, "summary_%s.md" % base)

    def get_trace_summary(self, trace_path=None, feedback_context=None):
        """nctrace's summary of a trace: {"markdown": str, "structured":
        {"operations", "bottlenecks", "recommendations", ...}}, as `nctrace
        summary --format json` gives it, cached beside the trace as
        summary_<trace>.json and .md (reused while the trace is unchanged).
        feedback_context is kept in the result (no service reads it)."""
        trace = self._trace(trace_path)
        jpath, mpath = self._summary_paths(trace)
        st = os.stat(trace)
        key = {"trace": trace, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "engine": _engine.version}
        try:
            with open(jpath) as f:
                cached = json.load(f)
            if cached.get("source") == key:
                s = cached["summary"]
                if feedback_context is not None:
                    s["feedback_context"] = feedback_context
                return s
        except (OSError, ValueError, KeyError):
            pass
        out, _ = run_tool("nctrace", "summary", trace, "--format", "json")
        s = json.loads(out)
        for path, text in ((jpath, json.dumps({"source": key, "summary": s}, indent=1)), (mpath, s["markdown"])):
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, path)
        for it in self.iterations:
            if it["trace"] == trace:
                it["summary"] = jpath
        self._save_history()
        if feedback_context is not None:
            s["feedback_context"] = feedback_context
        return s

    def load_trace_summary(self, trace_name_filter=None):
        """The newest cached summary whose trace name contains
        trace_name_filter (any, when None); None when there is none."""
        best = None
        dirs = {self.trace_output_dir} | {os.path.dirname(it["trace"]) for it in self.iterations}
        for d in dirs:
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for f in names:
                if not (f.startswith("summary_") and f.endswith(".json")):
                    continue
                if trace_name_filter and trace_name_filter not in f[len("summary_"):]:
                    continue
                p = os.path.join(d, f)
                m = os.path.getmtime(p)
                if best is None or m > best[0]:
                    best = (m, p)
        if best is None:
            return None
        with open(best[1]) as f:
            return json.load(f)["summary"]

    # ---- feedback and markers ----

    def submit_feedback(self, feedback_text, target_module, start_line, end_line, trace_path=None, drill_top=3,
                        snap=False):
        """Add lines start_line..end_line of target_module to the session's
        rules, with feedback_text as the range's reasoning (`ncrewrite
        feedback`: checked against the module's source, RulesError with the
        engine's diagnostics if the range is not valid there). Then, when
        a trace is known, `ncrewrite drill --top drill_top` adds ranges one
        level inside its costliest ranges (shadow-tree runs only: with the
        import hook there is no manifest to trace ranges back; its message
        is kept in the history). Returns the updated configuration.

        Bad input raises, and leaves the rules as they were: TypeError (a
        line that is not an int), ValueError (a line under 1, start_line
        after end_line, a module not on sys.path), RulesError (the range is
        not valid in the module: file:line:col, the line and a caret; e.g.
        lines that split a statement -- snap=True takes the whole
        statements -- or that start on a docstring). Lines that are a whole
        function, from its `def` (or decorator) to its end, time each call:
        the function's body is wrapped, not the `def` statement."""
        for what, v in (("start_line", start_line), ("end_line", end_line)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("submit_feedback: %s must be a line number (int), not %r" % (what, v))
            if v < 1:
                raise ValueError("submit_feedback: %s must be 1 or more (lines count from 1), not %d" % (what, v))
        root, origin = _module_root(target_module)
        if start_line > end_line:
            raise ValueError("submit_feedback: start_line %d is after end_line %d in %s (%s)"
                             % (start_line, end_line, target_module, origin))
        argv = ["ncrewrite", "feedback", "--config", self.rules_path, "--src", root, "--module", target_module,
                "--lines", "%d-%d" % (start_line, end_line), "--text", feedback_text]
        if snap:
            argv.append("--snap")
        status, out, err = _engine.run_tool(argv)
        if status != 0:
            raise RulesError(_python_words(err.strip()))
        entry = {"feedback_text": feedback_text, "target_module": target_module, "start_line": int(start_line),
                 "end_line": int(end_line), "message": err.strip()}
        trace = trace_path or self.latest_trace
        if trace and drill_top:
            argv = ["ncrewrite", "drill", "--config", self.rules_path, "--src", root, "--trace", os.fspath(trace),
                    "--top", str(int(drill_top))]
            out_root = self._drill_manifest(root)
            if out_root:
                argv += ["--out", out_root]
            st, o, e = _engine.run_tool(argv)
            entry["drill"] = {"status": st, "message": (e or o).strip()}
        self.feedback_history.append(entry)
        return self.config

    def _drill_manifest(self, root):
        """drill traces ranges back to their source through a shadow tree's
        manifest; with the import hook there is none, so write one from the
        hook's records of the modules under `root` the latest run used
        (<cache_dir>/drill/.ncrewrite/manifest.json, manifest.c's layout)."""
        files = []
        for name, meta in sorted(self._instrumented.items()):
            path = os.path.abspath(meta.get("path") or "")
            if meta.get("unchanged") or not path.startswith(root.rstrip(os.sep) + os.sep):
                continue
            lmap = sorted(meta.get("line_map") or [])

            def out_line(n):
                d = 0
                for at, delta in lmap:
                    if at <= n:
                        d = delta
                return n + d

            files.append({"path": os.path.relpath(path, root), "ranges": [
                {"name": r["name"], "kind": r["kind"], "lines": r["lines"],
                 "out_lines": [out_line(r["lines"][0]) - 1, out_line(r["lines"][1])]} for r in meta["ranges"]]})
        if not files:
            return None
        d = os.path.join(self.cache_dir, "drill")
        os.makedirs(os.path.join(d, ".ncrewrite"), exist_ok=True)
        tmp = os.path.join(d, ".ncrewrite", "manifest.json.tmp")
        with open(tmp, "w") as f:
            json.dump({"files": files}, f, indent=1)
        os.replace(tmp, os.path.join(d, ".ncrewrite", "manifest.json"))
        return d

    def apply_targeted_markers(self):
        """Enable the import hook with the session's rules; modules already
        imported that these rules target, or that earlier rules instrumented,
        are re-imported (importlib.reload) so the next run_profile runs the
        code these rules make. The functions and methods those modules had
        before are updated in place (their code objects take the new code),
        so objects made before -- a model built before the feedback, a
        function kept elsewhere by `from m import f` -- run the new ranges
        too (nCompass leaves them as they were). self.updated lists what was
        updated, self.not_updated what could not be (a function whose new
        form is a wrapper or closes over other names: only objects made from
        now on have its ranges); a warning names the latter. Returns the
        configuration."""
        import importlib
        import warnings

        hook = _hook.enable(RewriteConfig.from_file(self.rules_path), warn_imported=False)
        reloaded, updated, not_updated = [], [], []
        for name, mod in sorted(list(sys.modules.items())):
            f = getattr(mod, "__file__", None)
            if not isinstance(f, str) or not f.endswith(".py") or name in ("__main__", "__mp_main__"):
                continue
            earlier = isinstance(getattr(mod, "__loader__", None), _hook.Loader)  # markers of earlier rules
            try:
                wanted = hook.wants(name, hasattr(mod, "__path__"), os.path.abspath(f))
            except ValueError:
                wanted = False
            if not (earlier or wanted):
                continue
            before = _defs_of(mod)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.reload(mod)
            reloaded.append(name)
            after = _defs_of(mod)
            for qual, old_fn in sorted(before.items()):
                new_fn = after.get(qual)
                if new_fn is None or new_fn is old_fn or new_fn.__code__ == old_fn.__code__:
                    continue
                oc, nc = old_fn.__code__, new_fn.__code__
                if oc.co_freevars == nc.co_freevars and oc.co_name == nc.co_name:
                    old_fn.__code__ = nc
                    updated.append("%s.%s" % (name, qual))
                else:
                    not_updated.append("%s.%s" % (name, qual))
        self.reloaded = reloaded
        self.updated, self.not_updated = updated, not_updated
        if not_updated:
            warnings.warn(_hook.NcrewriteWarning(
                "ncrewrite: apply_targeted_markers could not update %d function(s) already imported: %s (objects "
                "made from now on have the new ranges)" % (len(not_updated), ", ".join(not_updated))), stacklevel=2)
        return self.config

    # ---- traces ----

    def filter_trace(self, trace_path=None, output_path=None, include_cuda_kernels=True,
                     include_direct_children=False, min_duration_us=0.0):
        """Keep the user annotations (our ranges, record_function), optionally
        the GPU work they launched and their direct children, dropping events
        shorter than min_duration_us (`nctrace filter`). Returns the path
        (default: <trace>.filtered.trace.json.gz beside it, with the
        settings in the name when they are not the defaults:
        .filtered-nokernels-children-min5us.trace.json.gz)."""
        trace = self._trace(trace_path)
        if output_path is None:
            # named by its settings: two filters of one trace never share
            # a file unless they keep the same events
            base = trace
            for ext in (".gz", ".json", ".trace", ".pt"):
                if base.endswith(ext):
                    base = base[: -len(ext)]
            tag = ("" if include_cuda_kernels else "-nokernels") + ("-children" if include_direct_children else "")
            if float(min_duration_us) > 0:
                tag += "-min%gus" % float(min_duration_us)
            output_path = base + ".filtered%s.trace.json.gz" % tag
        argv = ["nctrace", "filter", trace, "-o", os.path.abspath(os.fspath(output_path)),
                "--min-dur-us", repr(float(min_duration_us))]
        if include_cuda_kernels:
            argv.append("--include-cuda-kernels")
        if include_direct_children:
            argv.append("--include-direct-children")
        run_tool(*argv)
        return os.path.abspath(os.fspath(output_path))

    # ---- configurations ----

    def save_config(self, name):
        """Keep the session's rules under `name` (`ncrewrite config save`)."""
        run_tool("ncrewrite", "config", "save", name, "--config", self.rules_path)
        return self.config

    def load_config(self, name):
        """Make the rules saved as `name` the session's (`ncrewrite config
        load`); apply_targeted_markers() then uses them."""
        run_tool("ncrewrite", "config", "load", name, "--config", self.rules_path)
        return self.config

    def reset(self):
        """Back to the starting rules, no feedback, no iterations; the import
        hook is disabled (instrumented modules stay as they are)."""
        _hook.disable()
        self._write_rules(self._initial)
        self.feedback_history = []
        self.iterations = []
        self.latest_trace = None
        self._save_history()

    def get_iteration_history(self):
        """[{iteration, name, trace, traces, config, feedback, summary, time}]."""
        return copy.deepcopy(self.iterations)


