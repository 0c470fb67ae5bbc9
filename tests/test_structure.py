"""The house rules of the library's code (issue 42): short modules and functions, no import cycle.

Read from the source with :mod:`ast`, nothing imported: a module over 800 lines, a
function over 100 lines of code (docstring, comments and blank lines left out) or two
modules of the packages importing each other (at module level or inside a function)
fails here, naming it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("trees", "relabel", "ensemble")
MODULES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _code_lines(node: ast.AST, lines: list[str]) -> int:
    body = lines[node.lineno - 1:node.end_lineno]
    n = sum(1 for line in body if line.strip() and not line.strip().startswith("#"))
    if ast.get_docstring(node, clean=False) is not None:
        doc = node.body[0]
        n -= sum(1 for line in lines[doc.lineno - 1:doc.end_lineno] if line.strip())
    return n


def _imports(path: Path) -> set[str]:
    """The package modules a module imports, anywhere in it (``from x import y`` of a submodule counts as x.y)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in PACKAGES:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] in PACKAGES)
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_functions_are_short(path):
    """Check the module is at most 800 lines and each of its functions at most 100 lines of code."""
    text = path.read_text()
    lines = text.splitlines()
    assert len(lines) <= 800, f"{path.name} has {len(lines)} lines"
    long = [(node.name, _code_lines(node, lines)) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node, lines) > 100]
    assert not long, f"functions over 100 lines of code in {path.name}: {long}"


def test_no_two_modules_import_each_other():
    """Check the import graph among the packages' modules (package __init__ files aside) has no cycle."""
    graph = {_name(p): {m for m in _imports(p) if "." in m} for p in MODULES if p.name != "__init__.py"}
    seen, on_path, cycles = set(), [], []

    def visit(node):
        seen.add(node)
        on_path.append(node)
        for nxt in graph.get(node, ()):
            if nxt in on_path:
                cycles.append(on_path[on_path.index(nxt):] + [nxt])
            elif nxt not in seen and nxt in graph:
                visit(nxt)
        on_path.pop()

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    assert not cycles, f"import cycles: {cycles}"
