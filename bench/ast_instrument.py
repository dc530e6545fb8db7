#!/usr/bin/env python3
"""The import-hook approach, done ahead of time, as a baseline: for each .py
file, ast.parse, wrap every function body (after its docstring) in
`with _ncrt_range("<module>.<qualname>"):`, add the import, ast.unparse, and
write the result. This is what nCompass-style rewriting costs per file.

    ast_instrument.py SRC OUT     prints: files bytes seconds
"""
import ast
import os
import sys
import time

PRELUDE = ast.parse('_ncrt_range = getattr(__import__("sys").modules.get("ncrt"), "range", None)').body


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
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            doc, body = body[:1], body[1:]
        if body:
            call = ast.Call(ast.Name("_ncrt_range", ast.Load()), [ast.Constant(self.module + "." + qual)], [])
            node.body = doc + [ast.With([ast.withitem(call)], body)]
        return node

    visit_FunctionDef = _func
    visit_AsyncFunctionDef = _func


def main():
    src, out = sys.argv[1], sys.argv[2]
    files = nbytes = 0
    t0 = time.perf_counter()
    for base, dirs, names in os.walk(src):
        dirs.sort()
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, src)
            data = open(path, "rb").read()
            try:
                tree = ast.parse(data, path)
            except (SyntaxError, ValueError):
                continue
            mod = rel[:-3].replace(os.sep, ".")
            tree = Wrap(mod).visit(tree)
            tree.body[:0] = PRELUDE
            ast.fix_missing_locations(tree)
            text = ast.unparse(tree)
            dst = os.path.join(out, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w") as f:
                f.write(text)
            files += 1
            nbytes += len(data)
    print(files, nbytes, "%.6f" % (time.perf_counter() - t0))


if __name__ == "__main__":
    main()
