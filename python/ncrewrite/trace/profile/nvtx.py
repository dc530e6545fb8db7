"""ncompass.trace.profile.nvtx: an NVTX range (ncrt.range, which libncrt,
nsys and the in-process profilers record)."""


class NvtxContext:
    """with NvtxContext(name="model_forward"): ... -- one NVTX push/pop range.
    Subclasses pick another ncrt factory (_factory: its name in ncrt)."""
    _factory = "range"

    def __init__(self, name):
        import ncrt

        self._r = getattr(ncrt, self._factory)(name)

    def __enter__(self):
        return self._r.__enter__()

    def __exit__(self, *exc):
        return self._r.__exit__(*exc)
