"""Child-process bootstrap: ncrewrite-bootstrap.pth imports this module at
interpreter start-up when NCREWRITE_HOOK is set (enable_rewrites sets it,
so multiprocessing spawn workers, DataLoader workers started with spawn or
forkserver, and subprocesses get the same hook). It never raises: a child
that cannot enable the hook says why on stderr and runs uninstrumented."""
import os
import sys


def _start():
    spec = os.environ.get("NCREWRITE_HOOK")
    if not spec:
        return
    try:
        from . import _hook
        _hook.enable_from_env(spec)
    except Exception as e:  # noqa: BLE001 - a child must still run
        sys.stderr.write("ncrewrite: import hook not enabled in this process (pid %d): %s\n" % (os.getpid(), e))


_start()
