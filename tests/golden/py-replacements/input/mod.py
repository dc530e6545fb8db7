import os


class Slow:
    """Replaced by a faster class."""

    def run(self):
        return "slow"


class Keep:
    def run(self):
        return "keep"

    def other(self):
        return 1
