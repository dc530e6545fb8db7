"""A torch.profiler's trace, written as ncrt writes it: TensorBoard's file
name, gzip, and Kineto's layout also from torch built without Kineto
(Debian's python3-torch exports only a legacy layout: the events are
converted here).

One module for both users: `ncrun --backend torch` (_ncrt_torch_profiler)
and the Python package's in-process torch profiler (ncrewrite.profiler,
which ships this file as ncrewrite/_ncrt_torch_export.py). Nothing here
imports torch at module level.
"""
import os

RANK_KEYS = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")  # libncrt's order (options.c)


def rank_now(env):
    """This process's rank: torch.distributed's once it is initialized (an
    mp.spawn child has no RANK variable), else rank_from_env's."""
    import sys

    d = sys.modules.get("torch.distributed")
    try:
        if d is not None and d.is_available() and d.is_initialized():
            return d.get_rank()
    except Exception:  # noqa: BLE001
        pass
    return rank_from_env(env)[0]


def rank_from_env(env):
    """(rank, ranked): the first of RANK_KEYS set (0 if not a number), and
    whether any was set (torchrun, Slurm, MPI)."""
    for k in RANK_KEYS:
        if k in env:
            try:
                return int(env[k]), True
            except ValueError:
                return 0, True
    return 0, False


def write(prof, out_dir, worker, gzip_level, opt, ms_always=False):
    """prof's trace as <out_dir>/<worker>.pt.trace.json.gz (TensorBoard's
    name), or <worker>.<ms>.pt.trace.json.gz when that is taken or with
    ms_always (ncrun's torch backend: its documented names, which tell its
    files from libncrt's) (never over another file: written to a hidden
    temporary file, then linked), Kineto's export or, for torch without Kineto, write_converted's;
    returns the path. opt: record_shapes, with_stack, mem, rank, t0_ns (wall
    clock at the start, the converted layout's time base), metadata (the
    trace's "ncrt" object)."""
    import gzip
    import shutil
    import time

    d = out_dir
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, ".ncrt-torch-%d" % os.getpid())
    try:
        if kineto(prof):
            prof.export_chrome_trace(tmp + ".json")
            with open(tmp + ".json", "rb") as src, gzip.open(tmp + ".gz", "wb", gzip_level) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        else:
            write_converted(prof, tmp + ".gz", worker, gzip_level, opt)
        ms = int(time.time() * 1000) if ms_always else None  # the plain name first, then <ms>
        while True:  # TensorBoard's name; never over another file
            path = os.path.join(d, "%s.pt.trace.json.gz" % worker if ms is None else
                                "%s.%d.pt.trace.json.gz" % (worker, ms))
            try:
                os.link(tmp + ".gz", path)
                break
            except FileExistsError:
                ms = int(time.time() * 1000) if ms is None else ms + 1
            except OSError:  # no hard links here
                if os.path.exists(path):
                    ms = int(time.time() * 1000) if ms is None else ms + 1
                    continue
                os.replace(tmp + ".gz", path)
                break
        return path
    finally:
        for t in (tmp + ".json", tmp + ".gz"):
            try:
                os.unlink(t)
            except OSError:
                pass


def kineto(prof):
    try:
        from torch.autograd import kineto_available

        return bool(kineto_available())
    except Exception:
        return True


def write_converted(prof, path, worker, gzip_level, opt):
    """torch built without Kineto (Debian's python3-torch) exports only
    its legacy layout (a bare list, no categories, no shapes). Write
    Kineto's layout from the same events instead: cpu_op and
    user_annotation (record_function, ProfilerStep#N) events with
    "Input Dims", "Call stack", and [memory] instants."""
    import gzip
    import json

    pid = os.getpid()
    results = getattr(getattr(prof, "profiler", None), "kineto_results", None)
    base_us = None
    try:
        base_us = results.trace_start_us()
    except Exception:
        pass
    if not base_us:
        base_us = opt["t0_ns"] // 1000
    events = []
    tids = set()
    raw = []  # (ts, the event's JSON text): the raw records, encoded as read
    fast = fast_writer() if getattr(prof, "_ncrt_raw", False) and results is not None and opt.get("fast", True) \
        else None
    if fast is not None:
        # the same texts, formatted in C++ from torch's own records (about
        # 0.5 us an event against 6 here): memory events included, sorted
        texts_sorted, fast_tids = fast.events_json(results, int(base_us), pid, bool(opt["record_shapes"]),
                                                   bool(opt["with_stack"]), bool(opt["mem"]))
        tids.update(fast_tids)
        raw = [(0, t) for t in texts_sorted]
    elif getattr(prof, "_ncrt_raw", False) and results is not None:
        # torch's own parse was skipped (skip_parse): the raw records, each
        # formatted straight to JSON (a dict per event, then json.dumps, cost
        # three times as much); names encoded once each
        names = {}
        shapes = opt["record_shapes"]
        stacks = opt["with_stack"]
        for e in results.events():
            try:
                name = e.name()
                if name == "[memory]":
                    continue
                nj = names.get(name)
                if nj is None:
                    nj = names[name] = json.dumps(name)
                user = int(e.scope()) == 7  # RecordScope.USER_SCOPE: record_function
                tid = e.start_thread_id()
                tids.add(tid)
                ts = e.start_us() - base_us
                text = '{"ph":"X","cat":"%s","name":%s,"pid":%d,"tid":%d,"ts":%d,"dur":%d,"args":{"External id":%d' % (
                    "user_annotation" if user else "cpu_op", nj, pid, tid, ts, max(0, e.duration_us()),
                    e.correlation_id())
                seq = e.sequence_nr()
                if seq >= 0:
                    text += ',"Sequence number":%d,"Fwd thread id":%d' % (seq, e.fwd_thread_id())
                if shapes and not user:
                    sh = e.shapes()
                    if sh:
                        text += ',"Input Dims":' + json.dumps(sh)
                if stacks:
                    st = e.stack()
                    if st:
                        text += ',"Call stack":' + json.dumps(";".join(st))
                raw.append((ts, text + "}}"))
            except Exception:
                continue
    for e in (() if getattr(prof, "_ncrt_raw", False) else prof.events()):
        try:
            start, end = e.time_range.start, e.time_range.end
            name = getattr(e, "trace_name", None) or e.name
            user = int(getattr(e, "scope", 0) or 0) == 7  # RecordScope.USER_SCOPE: record_function
            args = {"External id": e.id}
            if getattr(e, "sequence_nr", -1) >= 0:
                args["Sequence number"] = e.sequence_nr
                args["Fwd thread id"] = getattr(e, "fwd_thread", 0)
            if opt["record_shapes"] and not user and e.input_shapes is not None:
                args["Input Dims"] = e.input_shapes  # lists and tuples both encode as arrays
            if opt["with_stack"] and e.stack:
                args["Call stack"] = ";".join(e.stack)
            tid = e.thread
            tids.add(tid)
            events.append({"ph": "X", "cat": "user_annotation" if user else "cpu_op", "name": name, "pid": pid,
                           "tid": tid, "ts": start, "dur": max(0, end - start), "args": args})
        except Exception:
            continue
    if opt["mem"] and results is not None and fast is None:
        try:
            for e in results.events():
                if e.name() != "[memory]":
                    continue
                tid = e.start_thread_id()
                tids.add(tid)
                events.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": pid,
                               "tid": tid, "ts": e.start_us() - base_us,
                               "args": {"Bytes": e.nbytes(), "Device Type": int(e.device_type().value)
                                        if hasattr(e.device_type(), "value") else 0,
                                        "Device Id": e.device_index()}})
        except Exception:
            pass
    events.sort(key=lambda ev: ev["ts"])
    meta = [{"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0, "args": {"name": worker}},
            {"name": "process_labels", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
             "args": {"labels": "rank %d" % opt["rank"]}}]
    for t in sorted(tids):
        meta.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": t,
                     "args": {"name": "thread %s" % t}})
    doc = {"schemaVersion": 1, "deviceProperties": []}
    dist = dist_info()
    if dist:
        doc["distributedInfo"] = dist
    doc.update({"displayTimeUnit": "ms", "baseTimeNanoseconds": int(base_us) * 1000,
                "traceName": worker, "ncrt": dict(opt["metadata"], layout="converted from torch's "
                                                       "events (this torch has no Kineto)")})
    # json.dump encodes in Python, piece by piece (37 us an event, 6 M small
    # writes for 120 000 events); json.dumps of a chunk runs in C: the
    # events go out 20 000 at a time, traceEvents first as ncrt writes it
    say = opt.get("progress")
    if raw:  # the raw records and the dict-built events (memory), in time order
        if fast is None:
            raw.extend((ev["ts"], json.dumps(ev, separators=(",", ":"))) for ev in events)
            raw.sort(key=lambda x: x[0])
        texts = [json.dumps(ev, separators=(",", ":")) for ev in meta] + [t for _, t in raw]
    else:
        texts = None
        everything = meta + events
    with gzip.open(path, "wt", gzip_level, encoding="utf-8") as f:
        f.write('{"traceEvents":[')
        n = len(texts) if texts is not None else len(everything)
        for i in range(0, n, 20000):
            if texts is not None:
                chunk = ",".join(texts[i:i + 20000])
            else:
                chunk = json.dumps(everything[i:i + 20000], separators=(",", ":"))[1:-1]
            f.write(("," if i else "") + chunk)
            if say:
                say(min(i + 20000, n), n)
        f.write("]," + json.dumps(doc, separators=(",", ":"))[1:])


_fast = []  # the module, once found: a process writes many traces (cycles)


def fast_writer():
    """ncrt_torch_events, the C++ writer built beside this file (where
    torch's C++ headers were), or None: not built, or this process runs
    another torch than the libtorch_cpu it was linked against (named in
    ncrt_torch_events.lib; checked in /proc/self/maps before the import,
    which would load that library). Found once per process; a None is
    asked again (torch may not be loaded yet)."""
    if _fast:
        return _fast[0]
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(here, "ncrt_torch_events.lib")) as f:
            want = f.read().strip()
        with open("/proc/self/maps") as f:
            loaded = {os.path.realpath(line.split()[-1]) for line in f if "libtorch_cpu" in line}
        if loaded != {want}:
            return None
        import importlib.machinery
        import importlib.util

        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(here, "ncrt_torch_events" + suffix)
            if os.path.exists(path):  # by its path: neither this folder nor the name go on sys.path
                spec = importlib.util.spec_from_file_location("ncrt_torch_events", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                _fast.append(mod)
                return mod
    except Exception:  # noqa: BLE001
        pass
    return None


def skip_parse(prof):
    """A torch without Kineto parses every event into Python objects as its
    profiler stops (35-50 us an event: a half-million-event region spends
    tens of seconds there) only for its own summaries, which a profiler
    that exports the trace never shows: skip that parse on this profiler
    (write_converted then reads the raw records, about 4 us an event).
    Call after prof.start(); False where torch has Kineto or the hook is
    not there (nothing changed)."""
    if kineto(prof):
        return False

    def patch():
        inner = getattr(prof, "profiler", None)
        if inner is not None and hasattr(inner, "_parse_kineto_results"):
            inner._parse_kineto_results = lambda results: []

    prepare = getattr(prof, "prepare_trace", None)
    if prepare is None:
        return False

    def prepare_then_patch(*a, **k):  # a schedule makes a new inner profiler per cycle
        r = prepare(*a, **k)
        patch()
        return r

    prof.prepare_trace = prepare_then_patch
    patch()
    prof._ncrt_raw = True
    return True


def dist_info():
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return {"backend": dist.get_backend(), "rank": dist.get_rank(), "world_size": dist.get_world_size()}
    except Exception:
        pass
    return None
