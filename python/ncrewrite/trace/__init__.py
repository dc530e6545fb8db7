"""nCompass SDK names (ncompass.trace): porting a script is changing its imports.

    from ncrewrite.trace import ProfilingSession, enable_rewrites, RewriteConfig
"""
from .. import (RewriteConfig, disable_rewrites, enable_full_trace_mode, enable_rewrites,  # noqa: F401
                ProfilingSession)

__all__ = ["ProfilingSession", "RewriteConfig", "enable_rewrites", "enable_full_trace_mode", "disable_rewrites"]
