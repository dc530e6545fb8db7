"""A launcher that does not record, as torchrun's agent or srun is to the
ranks it starts (tests/runtime/test_nodes.py): one node's share of a job.

    launch_ranks.py NODE NNODES NPROC PORT -- cmd args...

starts NPROC copies of cmd with RANK = NODE*NPROC + i, LOCAL_RANK,
GROUP_RANK (torchrun's node rank), WORLD_SIZE, LOCAL_WORLD_SIZE,
MASTER_ADDR=127.0.0.1 and MASTER_PORT, waits for them and exits with the
worst status. With NCRT_TEST_RANK_ARG=1 no rank variable is set: each copy
gets `--rank R --world W` instead (init_process_group(rank=R)). Debian's torch 1.13 torchrun does not run on Python 3.11, so
the tests use this instead.
"""
import os
import subprocess
import sys

node, nnodes, nproc, port = map(int, sys.argv[1:5])
cmd = sys.argv[6:]
by_arg = os.environ.get("NCRT_TEST_RANK_ARG") == "1"
ps = []
for lr in range(nproc):
    rank = node * nproc + lr
    if by_arg:  # no rank variable: the program passes --rank to init_process_group
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        argv = cmd + ["--rank", str(rank), "--world", str(nnodes * nproc)]
    else:
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(lr), GROUP_RANK=str(node),
                   WORLD_SIZE=str(nnodes * nproc), LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        argv = cmd
    ps.append(subprocess.Popen(argv, env=env))
sys.exit(max(p.wait() for p in ps))
