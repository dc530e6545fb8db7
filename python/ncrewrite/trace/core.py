"""nCompass's `ncompass.trace.core` (seed 001: the home of RewriteConfig):
`from ncrewrite.trace.core import RewriteConfig` works as the SDK's does."""
from ..config import RewriteConfig, RulesError  # noqa: F401

__all__ = ["RewriteConfig", "RulesError"]
