"""torch.jit.trace of a module instrumented with ncrt: the traced graph is
the graph of the uninstrumented module (record_function must not be traced
into it). MODE: plain (no ncrt), torch_range, torch_span, range (run with
NCRT_TORCH=1). The model is one source text whose marked lines change with
the mode and keep their line numbers, so graphs compare as text. Prints the
graph, then a line PROFILED with what torch.profiler saw in an eager run
after tracing (the bridge is still on outside tracing)."""
import sys

import torch
import torch.profiler

import ncrt

MODE = sys.argv[1]
SRC = '''
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    DECORATOR
    def act(self, y):
        return torch.relu(y) * 2

    def forward(self, x):
        WITH:
            y = self.lin(x)
        return self.act(y) + 1
'''
if MODE == "plain":
    SRC = SRC.replace("DECORATOR", "# no decorator").replace("WITH", "if True")
else:
    SRC = SRC.replace("DECORATOR", '@ncrt.%s("Block.act")' % MODE).replace(
        "WITH", 'with ncrt.%s("Block.forward")' % MODE)
g = {"torch": torch, "ncrt": ncrt}
exec(compile(SRC, "model.py", "exec"), g)
torch.manual_seed(0)
m = g["Block"]()
x = torch.randn(4, 8)
traced = torch.jit.trace(m, x)
print(str(traced.graph))
check = torch.allclose(traced(x), m(x))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
    m(x)
names = {e.key for e in prof.key_averages()}
print("PROFILED", check, sorted(n for n in names if n.startswith("Block.")))
