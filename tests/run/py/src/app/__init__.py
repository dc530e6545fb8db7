"""app: a small program that exercises what instrumentation must not change."""
