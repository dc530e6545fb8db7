"""ncompass.trace.profile.torch: TorchRecordContext (a range that is also a
torch record_function, ncrt.torch_range) and TorchProfilerContext (a whole
torch.profiler session written to output_dir, ncrewrite.profiler with the
torch backend)."""
from ...profiler import ProfilerContext
from .nvtx import NvtxContext


class TorchRecordContext(NvtxContext):
    """with TorchRecordContext(name="attention_step"): ... -- a marker inside
    a running profiler (user_annotation in torch's trace, NVTX range too)."""
    _factory = "torch_range"


class TorchProfilerContext(ProfilerContext):
    """with TorchProfilerContext(name="my_operation", output_dir="./traces"): ..."""

    def __init__(self, name=None, output_dir=None, **kw):
        kw.setdefault("backend", "torch")
        super().__init__(profile_name=name, output_dir=output_dir, **kw)
