"""A tiny transformer block in plain Python (no dependencies)."""
