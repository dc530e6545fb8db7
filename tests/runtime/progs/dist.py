"""Started by torchrun: each worker records its ranges; no process group
is needed for the collector (RANK/WORLD_SIZE come from torchrun)."""
import os

import ncrt

for i in range(3):
    with ncrt.range("worker.step"):
        pass
print("rank", os.environ.get("RANK"))
