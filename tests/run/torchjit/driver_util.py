"""Driver side of tests/run/torchjit: run cases, turn tensors into plain
Python values, pickle the results (the test side needs no torch)."""
import importlib.util
import os
import pickle
import sys
import traceback


def plain(x):
    import torch
    if isinstance(x, torch.Tensor):
        t = x.detach().cpu()
        return {"dtype": str(t.dtype), "shape": list(t.shape), "data": t.tolist()}
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, (int, float, str, bool)) or x is None:
        return x
    return repr(x)


class Runner:
    def __init__(self, result_path):
        self.result_path = result_path
        self.cases = {}
        self.info = {"ncrt_spec": bool(importlib.util.find_spec("ncrt")), "sys_path0": sys.path[:3]}

    def case(self, name, fn):
        """Run fn in a forked child: a failed TorchScript compile leaves
        classes half-defined in the process ("Can't redefine method"), which
        would make later cases fail for the wrong reason."""
        sys.stdout.flush()
        sys.stderr.flush()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            res = self._run(name, fn)
            sys.stdout.flush()
            with os.fdopen(w, "wb") as f:
                pickle.dump(res, f)
            os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        if data:
            self.cases[name] = pickle.loads(data)
        else:
            self.cases[name] = {"ok": False, "value": None,
                                "error": "the case's process died (wait status %d)\n--- traceback ---\n" % status}
            print("%-28s FAILED: process died (wait status %d)" % (name, status), flush=True)

    def note(self, key, value):
        """Something to report about a case (not compared): kept with its result."""
        self.notes[key] = value

    def graph_note(self, scripted):
        """How many record_function calls TorchScript compiled into a scripted module or function."""
        g = str(getattr(scripted, "inlined_graph", None) or scripted.graph)
        self.note("record_function calls in the scripted graph", g.count("record_function"))

    def _run(self, name, fn):
        self.notes = {}
        try:
            v = fn()
            print("%-28s ok%s" % (name, "  (%s)" % ", ".join("%s: %s" % kv for kv in self.notes.items())
                                  if self.notes else ""), flush=True)
            return {"ok": True, "value": plain(v), "error": "", "notes": self.notes}
        except BaseException as e:  # noqa: B902 -- any failure is a result
            tb = traceback.format_exc()
            print("%-28s FAILED: %s: %s" % (name, type(e).__name__, str(e).strip().splitlines()[0:1]), flush=True)
            # the exception's own text first: TorchScript puts the useful part there
            return {"ok": False, "value": None, "error": "%s: %s\n--- traceback ---\n%s" % (type(e).__name__, e, tb)}

    def module_info(self, modname):
        """Where a module came from and what its instrumentation marker is."""
        m = sys.modules.get(modname)
        if m is None:
            return None
        marker = getattr(m, "__ncrt__", None)
        return {"file": getattr(m, "__file__", None),
                "marker_type": None if marker is None else type(marker).__name__,
                "marker_file": getattr(marker, "__file__", None) if marker is not None else None}

    def save(self):
        self.info["ncrt_loaded"] = "ncrt" in sys.modules
        self.info["ncrt_file"] = getattr(sys.modules.get("ncrt"), "__file__", None)
        with open(self.result_path, "wb") as f:
            pickle.dump({"info": self.info, "cases": self.cases}, f)
