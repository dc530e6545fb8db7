"""Started by torchrun or mpirun: each worker records its ranges; no process
group is needed for the collector (RANK/WORLD_SIZE come from the launcher).

Each worker prints one line, "rank <RANK>", in a single write(): a line
written piecewise (print() writes its parts one by one when stdout is
unbuffered, as under PYTHONUNBUFFERED or on mpirun's pty) can interleave
with the other ranks' on the launcher's stdout. With DIST_OUT_DIR set the
worker also writes that line to DIST_OUT_DIR/rank<N>.out (N: the launcher's
rank for it), so a test can check every rank's output on its own."""
import os

import ncrt

for i in range(3):
    with ncrt.range("worker.step"):
        pass
line = "rank %s\n" % os.environ.get("RANK")
out_dir = os.environ.get("DIST_OUT_DIR")
if out_dir:
    who = next((os.environ[k] for k in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "LOCAL_RANK") if k in os.environ),
               "pid%d" % os.getpid())
    with open(os.path.join(out_dir, "rank%s.out" % who), "x") as f:  # "x": two workers with one rank fail
        f.write(line)
os.write(1, line.encode())
