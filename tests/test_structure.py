"""The house rules of the library's code (issues 42 and 59): short modules and functions, floors, no cycle.

Read from the source with :mod:`ast`, nothing imported: a module over 800 lines, a
function over 100 lines of code (docstring, comments and blank lines left out), two
modules of the packages importing each other (at module level or inside a function),
or a sub-package of ``ensemble`` importing one on a higher floor (docs/design.md
section 1) fails here, naming it.
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


def _module_of(package: str, name: str) -> str:
    """``from package import name``: the submodule when ``name`` is one, else the package itself."""
    folder = ROOT.joinpath(*package.split("."))
    return f"{package}.{name}" if (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists() \
        else package


def _imports(path: Path) -> set[str]:
    """The package modules a module imports, anywhere in it (``from x import y`` of a submodule counts as x.y)."""
    here = _name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] in PACKAGES:
                out.update(_module_of(module, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] in PACKAGES)
    return out


#: The floors of ``ensemble`` (docs/design.md section 1): a sub-package imports its own
#: modules and those of lower floors only; siblings on one floor do not import each other.
#: ``_former`` (the former module paths) imports nothing of the packages.
FLOORS = {
    "base": 0, "metrics": 0, "datasets": 0, "plots": 0, "_former": 0,
    "certificates": 1,
    "spaces": 2,
    "otreebagger": 3, "forest": 3, "boosting": 3, "rankrules": 3,
    "model_files": 4, "audit": 4,
    "cli": 5, "__main__": 6,
}


def _graph() -> dict[str, set[str]]:
    return {_name(p): _imports(p) for p in MODULES}


def _upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports that break the floors: ``trees``/``relabel`` importing ``ensemble`` or each other, a sub-package
    importing a higher or sibling one or the ``ensemble`` package itself, a module of no floor."""
    bad = []
    for module, imported in graph.items():
        top, *rest = module.split(".")
        if top != "ensemble":
            bad += [f"{module} -> {m}" for m in imported if m.split(".")[0] != top]
            continue
        if not rest:  # the package itself: the public names, imported lazily from every floor
            continue
        if rest[0] not in FLOORS:
            bad.append(f"{module} is on no floor of FLOORS")
            continue
        for m in imported:
            parts = m.split(".")
            if parts[0] != "ensemble":
                continue
            if len(parts) == 1 or parts[1] not in FLOORS:
                bad.append(f"{module} -> {m}")
            elif parts[1] != rest[0] and FLOORS[parts[1]] >= FLOORS[rest[0]]:
                bad.append(f"{module} -> {m}")
    return sorted(bad)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles among modules (package ``__init__`` files aside: they import their own modules)."""
    graph = {m: {n for n in imported if n in graph} for m, imported in graph.items()}
    packages = {_name(p) for p in MODULES if p.name == "__init__.py"}
    graph = {m: imported - packages for m, imported in graph.items() if m not in packages}
    seen, on_path, cycles = set(), [], []

    def visit(node):
        seen.add(node)
        on_path.append(node)
        for nxt in sorted(graph[node]):
            if nxt in on_path:
                cycles.append(on_path[on_path.index(nxt):] + [nxt])
            elif nxt not in seen:
                visit(nxt)
        on_path.pop()

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    return cycles


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
    """Check the import graph among the packages' modules has no cycle, ``trees`` included."""
    cycles = _cycles(_graph())
    assert not cycles, f"import cycles: {cycles}"


def test_sub_packages_import_only_lower_floors():
    """Check the floors of ``ensemble``: command line -> model files, audit -> estimators -> spaces ->
    certificates -> base, metrics, data sets, plots -> ``trees``, ``relabel`` (which import no ``ensemble``)."""
    bad = _upward_imports(_graph())
    assert not bad, f"imports against the floors of docs/design.md section 1: {bad}"


def test_the_rules_catch_a_planted_upward_import_and_a_planted_cycle():
    """Check that the two checks above fail on what they forbid: an import planted from the lowest floor
    into the command line, one from ``trees`` into ``ensemble``, and a cycle of two modules of ``trees``."""
    graph = _graph()
    assert not _upward_imports(graph) and not _cycles(graph)
    planted = {**graph, "ensemble.base._kernels": graph["ensemble.base._kernels"] | {"ensemble.cli._main"},
               "trees._boxes": graph["trees._boxes"] | {"ensemble.base._voting"}}
    assert _upward_imports(planted) == ["ensemble.base._kernels -> ensemble.cli._main",
                                        "trees._boxes -> ensemble.base._voting"]
    planted = {**graph, "trees._compile": graph["trees._compile"] | {"trees._grower"}}
    assert any({"trees._compile", "trees._grower"} <= set(cycle) for cycle in _cycles(planted))
