"""Instrumented code that carries the user's own locations.

The engine's text of a module differs from the file on disk: a `with`
line inserted above a range (or written on the statement's own line), a
block indented one level deeper, blank lines taken for room, the prelude
on the first statement's line. Compiling that text under the file's name
would pair the file's name with the text's line numbers: tracebacks,
inspect.getsource, linecache, pdb, coverage, warnings and TorchScript
(which reads the source through inspect) would show the wrong lines.

compile_mapped() parses the instrumented text and moves every node of its
syntax tree to where that code is in the original file, through the
engine's line map (original line -> instrumented line) and a per-line
column shift (the extra indentation, or the `with ...:` written before a
statement on its line), then compiles the tree. Code the engine inserted
(a `with` and its range call, a decorator) takes the location of the first
original line after it: the statement it wraps. So every original
statement keeps its line and column, co_firstlineno is the original `def`
(or first decorator) line, and the file on disk is the source of every
code object: inspect.getsource returns the user's text (TorchScript then
compiles the original code, without our ranges).

Contract: compile_mapped(text, original, line_map, path) -> code object;
raises SyntaxError/ValueError like compile() when the text does not
compile (the caller falls back to the original module). Pure Python, no
state; the cost is one ast.parse and one walk more than compile(text).
"""
import ast


def _lines(b):
    return b.split(b"\n")


def _indent(line):
    return len(line) - len(line.lstrip(b" \t"))


def _significant(line):
    s = line.strip()
    return bool(s) and not s.startswith(b"#")


class _Map:
    """Instrumented (line, col) -> original (line, col)."""

    def __init__(self, text, original, line_map):
        self.out = _lines(text)
        self.orig = _lines(original)
        marks = sorted(tuple(x) for x in line_map)
        # original line n is at instrumented line n + delta (the last mark at or before n)
        self.to_orig = {}   # instrumented line -> original line
        d, k = 0, 0
        for n in range(1, len(self.orig) + 1):
            while k < len(marks) and marks[k][0] <= n:
                d = marks[k][1]
                k += 1
            o = n + d
            prev = self.to_orig.get(o)
            # several original lines on one instrumented line (blank lines
            # taken for room): the one with code wins
            if prev is None or (_significant(self.orig[n - 1]) and not _significant(self.orig[prev - 1])):
                self.to_orig[o] = n
        # the column shift of each mapped line: where the original text starts now
        self.shift = {}
        for o, n in self.to_orig.items():
            if o < 1 or o > len(self.out):
                continue
            src = self.orig[n - 1]
            body = src.strip()
            at = self.out[o - 1].rfind(body) if body else -1  # after any inserted prefix
            self.shift[o] = at - _indent(src) if at >= 0 else 0
        self._next = {}
        self.override = {}  # an inserted `with` line -> the line of the first statement it runs

    def inserted(self, o):
        n = self.to_orig.get(o)
        return n is None or not _significant(self.orig[n - 1])

    def line(self, o):
        """The original line of instrumented line o: its own, else (inserted
        code) the first statement it wraps, else the first mapped line
        after it with code, else before it."""
        if o in self.override:
            return self.line(self.override[o])[0], False
        n = self.to_orig.get(o)
        if n is not None and (_significant(self.orig[n - 1]) or o not in self._nexts()):
            return n, True
        nxt = self._nexts().get(o)
        if nxt is not None:
            return nxt, False
        if n is not None:
            return n, True
        for p in range(o - 1, 0, -1):
            if p in self.to_orig:
                return self.to_orig[p], False
        return 1, False

    def _nexts(self):
        """For every instrumented line, the original line of the first line
        at or after it that holds original code (computed once)."""
        if not self._next:
            following = None
            for o in range(len(self.out), 0, -1):
                n = self.to_orig.get(o)
                if n is not None and _significant(self.orig[n - 1]):
                    following = n
                if following is not None:
                    self._next[o] = following
            self._next[0] = following
        return self._next


def compile_mapped(text, original, line_map, path):
    tree = ast.parse(text, path)
    m = _Map(text, original, line_map)
    nodes = [n for n in ast.walk(tree) if "lineno" in n._attributes]
    # an inserted `with` runs where its first statement with code does: a
    # `nonlocal` or `global` declaration opening the block has no code (its
    # line starts nothing in the original function)
    for node in nodes:
        if type(node) in (ast.With, ast.AsyncWith) and m.inserted(node.lineno):
            first = next((x for x in node.body if not isinstance(x, (ast.Global, ast.Nonlocal))), None)
            if first is not None and first.lineno != node.lineno:
                m.override[node.lineno] = first.lineno
    # per instrumented line, once: (original line, column shift or None for
    # inserted code, that line's indentation, its length)
    table = [None] * (len(m.out) + 2)
    for o in range(1, len(m.out) + 1):
        ln, exact = m.line(o)
        src = m.orig[ln - 1] if ln <= len(m.orig) else b""
        table[o] = (ln, m.shift.get(o, 0) if exact else None, _indent(src), len(src))
    for node in nodes:
        o = node.lineno
        ln, sh, ind, _ = table[o] if o < len(table) else table[-2] or (1, None, 0, 0)
        col = ind if sh is None else max(0, node.col_offset - sh)
        eo = node.end_lineno
        if eo is not None:
            el, esh, _, elen = table[eo] if eo < len(table) else (ln, None, 0, col)
            ec = elen if esh is None else max(0, (node.end_col_offset or 0) - esh)
            if el < ln or (el == ln and ec < col):  # never a range that ends before it starts
                el, ec = ln, col
            node.end_lineno, node.end_col_offset = el, ec
        node.lineno, node.col_offset = ln, col
    return compile(tree, path, "exec", dont_inherit=True, optimize=-1)
