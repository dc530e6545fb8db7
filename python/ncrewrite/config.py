"""RewriteConfig: a rule set as the import hook takes it.

The rules themselves are the engine's (docs/rules.md): a RewriteConfig only
holds their text, from a file or from a dict (the nCompass SDK's
RewriteConfig as a dict: `targets`, `full_trace_mode`, ...), and has the
engine check it. Nothing here interprets a rule.
"""
import hashlib
import json
import os

from . import _engine

RulesError = _engine.RulesError


class RewriteConfig:
    """A rule file's text and the name its diagnostics give it.

    RewriteConfig.from_file(path), RewriteConfig.from_dict(d) (the dict is
    written as JSON; errors then point into that JSON, named
    "<RewriteConfig>.json", with the line and a caret), or RewriteConfig(
    targets=..., full_trace_mode=..., ...) with the rule file's top-level
    keys as keyword arguments. validate() loads it through the engine:
    RulesError with the engine's file:line:col diagnostics.
    """

    def __init__(self, **keys):
        self.path = None
        self.data = (json.dumps(keys, indent=2) + "\n").encode()
        self.name = "<RewriteConfig>.json"

    @classmethod
    def from_file(cls, path):
        """The file's bytes, read now; diagnostics name it as given."""
        self = cls.__new__(cls)
        self.name = os.fsdecode(path)
        self.path = os.path.abspath(self.name)  # for child processes
        with open(self.path, "rb") as f:
            self.data = f.read()
        return self

    @property
    def text(self):
        return self.data.decode("utf-8", "replace")

    @classmethod
    def from_dict(cls, d):
        if not isinstance(d, dict):
            raise TypeError("RewriteConfig.from_dict wants a dict, not %s" % type(d).__name__)
        return cls(**d)

    @classmethod
    def coerce(cls, config):
        """A RewriteConfig from a path, a dict, an object with to_dict() or
        model_dump() (the nCompass SDK's), or a RewriteConfig."""
        if isinstance(config, cls):
            return config
        if isinstance(config, (str, bytes, os.PathLike)):
            return cls.from_file(os.fsdecode(config))
        if isinstance(config, dict):
            return cls.from_dict(config)
        for m in ("to_dict", "model_dump", "dict"):
            if callable(getattr(config, m, None)):
                return cls.from_dict(getattr(config, m)())
        raise TypeError("a rule file path, a dict or a RewriteConfig, not %s" % type(config).__name__)

    def load(self):
        """The engine's rules (_engine.Rules); RulesError if the text has errors."""
        return _engine.parse(self.data, self.name)

    def validate(self):
        """Check with the engine: the warnings (str) or RulesError."""
        return self.load().warnings

    # -- nCompass's attributes (seed 001: targets, ai_analysis_targets,
    # full_trace_mode), read from the rule text --

    def to_dict(self):
        """The rules as a dict (nCompass's configuration format)."""
        if self.path and not self.path.endswith(".json"):
            return _tree_to_py(_engine.yaml_tree(self.text, self.name)) or {}
        try:
            d = json.loads(self.text)
        except ValueError:
            d = _tree_to_py(_engine.yaml_tree(self.text, self.name))
        return d if isinstance(d, dict) else {}

    @property
    def targets(self):
        return self.to_dict().get("targets") or {}

    @property
    def ai_analysis_targets(self):
        return list(self.to_dict().get("ai_analysis_targets") or [])

    @property
    def full_trace_mode(self):
        return bool(self.to_dict().get("full_trace_mode", False))

    @property
    def digest(self):
        return hashlib.sha256(self.data).hexdigest()

    def __repr__(self):
        return "RewriteConfig(%s)" % (self.path or "%d bytes of JSON" % len(self.data))


def _tree_to_py(node):
    """An _engine.yaml_tree node as plain Python (null scalars: None; YAML
    scalars stay strings except true/false and whole numbers)."""
    if node is None:
        return None
    kind, _, _, v = node
    if kind == "map":
        return {_tree_to_py(k): _tree_to_py(x) for k, x in v}
    if kind == "seq":
        return [_tree_to_py(x) for x in v]
    text, quoted, null = v
    if null:
        return None
    if not quoted:
        if text in ("true", "True", "false", "False"):
            return text.lower() == "true"
        try:
            return int(text)
        except ValueError:
            pass
    return text
