"""The collector inside this process: libncrt, driven from Python.

The package carries libncrt.so (the collector ncrun injects) and the ncrt
marker module. NVTX finds its tool through NVTX_INJECTION64_PATH when a
library's first NVTX call is made, once per library and for good; the ncrt
module makes its first call when it is imported. So `import ncrewrite`
points NVTX_INJECTION64_PATH at the package's libncrt, with NCRT_DORMANT=1
(capture off until a profiler starts it; no trace at exit unless a region is
still open), before anything imports ncrt: in-process recording then needs
no relaunch. Under ncrun or nsys the injection is already set: it is left
alone, and the profilers drive whichever collector is there (under ncrun:
they gate its capture, and ncrun writes the trace at exit).

CUPTI (GPU activity) is attached when a profiler with the gpu activity
starts: at once if the CUDA driver is already loaded (libncrt's
InitializeInjection, the entry the driver would call), else through
CUDA_INJECTION64_PATH for a cuInit still to come. Once attached it stays on
for the process (docs/python.md, "Limits").

Verbs to the collector go as NVTX marks in the control domain
(ncrt_protocol.h): start, stop, step, "write\\t<dir>\\t<name>",
"schedule\\t<w>\\t<u>\\t<a>\\t<r>\\t<dir>\\t<name>", "schedule_end".
"""
import ctypes
import glob
import os
import sys
import tempfile

PKG = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(PKG, "libncrt.so")
_CUPTI = ("/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
          "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13", "/usr/lib/x86_64-linux-gnu/libcupti.so.13")

_state = {"prepared": None, "cupti": None}


def prepare():
    """At `import ncrewrite`: make this process's NVTX calls reach libncrt
    (dormant). Returns how the process records: "in-process", "ncrun" (an
    ncrt collector injected from outside), "other" (another NVTX tool, e.g.
    nsys) or "none" (no libncrt in this build)."""
    if _state["prepared"] is not None:
        return _state["prepared"]
    cur = os.environ.get("NVTX_INJECTION64_PATH", "")
    if cur and os.path.realpath(cur) != os.path.realpath(LIB):
        how = "ncrun" if "ncrt" in os.path.basename(cur) else "other"
    elif not os.path.isfile(LIB):
        how = "none"
    else:
        how = "in-process"
        os.environ["NVTX_INJECTION64_PATH"] = LIB
        os.environ["NCRT_DORMANT"] = "1"
        # spill files (what a killed process leaves for `ncrun --finalize DIR`);
        # the folder is made when a profiler starts (nothing is spilled before)
        if not os.environ.get("NCRT_OUTPUT_DIR"):
            os.environ["NCRT_OUTPUT_DIR"] = spill_dir()
    _state["prepared"] = how
    return how


def spill_dir():
    return os.environ.get("NCREWRITE_SPILL_DIR") or os.path.join(tempfile.gettempdir(), "ncrewrite-%d" % os.getuid())


def make_spill_dir():
    """The spill folder libncrt was given, made before a region records."""
    d = os.environ.get("NCRT_OUTPUT_DIR")
    if d and prepare() == "in-process":
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
        except OSError:
            pass  # libncrt says it cannot spill; the region still runs


def mode():
    return prepare()


def ncrt():
    """The ncrt module, or None (not built for this Python)."""
    try:
        import ncrt as m
    except ImportError:
        return None
    return m


def unavailable():
    """Why this process cannot record in-process, or None."""
    how = prepare()
    if how == "none":
        return ("this ncrewrite was built without NVTX headers (no libncrt.so in %s): install it where the CUDA "
                "toolkit's nvtx3 headers are, or run under ncrun" % PKG)
    m = ncrt()
    if m is None:
        return ("the ncrt module is not built for this Python (%s): reinstall ncrewrite with it, or set "
                "NCREWRITE_PYTHONS when installing" % sys.version.split()[0])
    if how == "other":
        return None  # nsys & co.: the ranges reach them; nothing for us to write
    if not m._attached():
        return ("ncrt was imported before ncrewrite, so its NVTX calls found no collector: import ncrewrite "
                "first (or run under ncrun)")
    return None


def rank():
    """torch.distributed's rank once initialized, else the launcher's
    variables (one rule for both backends, and libncrt's order)."""
    from ._ncrt_torch_export import rank_now

    return rank_now(os.environ)


def control(msg):
    ncrt()._control(msg)


def attach_gpu():
    """CUPTI for this process (idempotent in libncrt): now if the CUDA
    driver is loaded, else at the cuInit to come. Returns a note or None."""
    if prepare() != "in-process" or _state["cupti"] is not None:
        return None
    if not os.environ.get("NCRT_CUPTI_LIB"):
        for c in _CUPTI:
            if os.path.isfile(c):
                os.environ["NCRT_CUPTI_LIB"] = c
                break
    try:
        ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        loaded = True
    except OSError:
        loaded = False
    if loaded:
        ctypes.CDLL(LIB).InitializeInjection()
        _state["cupti"] = "attached"
    else:
        os.environ.setdefault("CUDA_INJECTION64_PATH", LIB)
        _state["cupti"] = "at cuInit"
    return None


def traces(out_dir, name):
    """The files libncrt wrote for <name> in out_dir (its -cycle<K> and
    -pid<PID> forms included), sorted."""
    pat = [os.path.join(glob.escape(out_dir), glob.escape(name) + s)
           for s in ("-rank*.pt.trace.json.gz", "-cycle*-rank*.pt.trace.json.gz", "-pid*-rank*.pt.trace.json.gz",
                     "-pid*.pt.trace.json.gz")]  # a worker or subprocess: no rank of its own
    return sorted({p for g in pat for p in glob.glob(g)})
