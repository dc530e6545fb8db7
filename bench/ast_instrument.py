#!/usr/bin/env python3
"""The import-hook approach, done ahead of time, as a baseline: for each .py
file, ast.parse, wrap every function body (after its docstring) in
`with __ncrt__.range("<module>.<qualname>"):` (`__ncrt__.span` for async
functions and generators, as ncrewrite does), add the module header after the
docstring and `from __future__` imports, ast.unparse, and write the result.
One file at a time, as an import hook works. This is the same instrumentation
ncrewrite --full-trace does; only comments and layout are lost.

    ast_instrument.py SRC OUT     prints: files bytes seconds
"""
import ast
import os
import sys
import time

# the module global ncrewrite defines (shorter: its cost is one assignment)
HEADER = ast.parse('__ncrt__ = __import__("sys").modules.get("ncrt") or __import__("ncrt")').body


def is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


class Yields(ast.NodeVisitor):
    """Does a function body yield (not counting nested functions, classes, lambdas)?"""
    found = False

    def visit_Yield(self, node):
        self.found = True

    visit_YieldFrom = visit_Yield

    def visit_FunctionDef(self, node):
        pass

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef


class Wrap(ast.NodeTransformer):
    def __init__(self, module):
        self.module = module
        self.stack = []

    def visit_ClassDef(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()
        return node

    def _func(self, node):
        qual = ".".join(self.stack + [node.name])
        self.stack += [node.name, "<locals>"]
        self.generic_visit(node)
        self.stack[-2:] = []
        body = node.body
        doc = []
        if body and is_docstring(body[0]):
            doc, body = body[:1], body[1:]
        if body:
            y = Yields()
            for s in body:
                y.visit(s)
            kind = "span" if isinstance(node, ast.AsyncFunctionDef) or y.found else "range"
            call = ast.Call(ast.Attribute(ast.Name("__ncrt__", ast.Load()), kind, ast.Load()),
                            [ast.Constant(self.module + "." + qual)], [])
            node.body = doc + [ast.With([ast.withitem(call)], body)]
        return node

    visit_FunctionDef = _func
    visit_AsyncFunctionDef = _func


def instrument(data, path, module):
    tree = ast.parse(data, path)
    tree = Wrap(module).visit(tree)
    body = tree.body
    i = 1 if body and is_docstring(body[0]) else 0
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
        i += 1
    body[i:i] = HEADER
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def main():
    src, out = sys.argv[1], sys.argv[2]
    files = nbytes = skipped = 0
    t0 = time.perf_counter()
    for base, dirs, names in os.walk(src):
        dirs.sort()
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, src)
            with open(path, "rb") as f:
                data = f.read()
            module = rel[:-3].replace(os.sep, ".")
            if module.endswith(".__init__"):
                module = module[:-len(".__init__")]
            try:
                text = instrument(data, path, module)
            except (SyntaxError, ValueError):
                skipped += 1
                continue
            dst = os.path.join(out, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w", encoding="utf-8") as f:
                f.write(text)
            files += 1
            nbytes += len(data)
    if skipped:
        print("ast_instrument: %d files not valid Python 3.11, skipped" % skipped, file=sys.stderr)
    print(files, nbytes, "%.6f" % (time.perf_counter() - t0))


if __name__ == "__main__":
    main()
