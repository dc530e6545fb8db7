"""ncrt.torch_range opens torch.profiler.record_function when torch is in
the program: torch's own profiler sees the range."""
import torch
import torch.profiler

import ncrt

with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
    for i in range(3):
        with ncrt.torch_range("bridged"):
            torch.ones(4).sum()
    with ncrt.torch_span("bridged.span"):
        pass
names = {e.key: e.count for e in prof.key_averages()}
print("bridged", names.get("bridged"), names.get("bridged.span"))
