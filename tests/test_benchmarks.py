"""Every benchmark script has a --smoke size (.ci/smoke runs it) and imports public names only.

Read from the scripts' source (their syntax tree), without running them: cheap enough for
every test run, so that a new benchmark without --smoke, or one importing a private module
of the packages, fails the suite.
"""

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
PACKAGES = ("ensemble", "relabel", "trees")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def declares_smoke(tree: ast.Module) -> bool:
    """Whether the source declares a ``--smoke`` option (``add_argument("--smoke", ...)``)."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "add_argument" and node.args and isinstance(node.args[0], ast.Constant)
               and node.args[0].value == "--smoke" for node in ast.walk(tree))


def private_imports(tree: ast.Module) -> list[str]:
    """Imports of the packages' private modules or names (``ensemble._x``, ``from relabel import _y``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in modules:
            parts = name.split(".")
            if parts[0] in PACKAGES and any(part.startswith("_") for part in parts[1:]):
                found.append(f"line {node.lineno}: {name}")
    return found


def test_the_benchmarks_are_found():
    """Check that the glob finds the benchmark scripts (an empty list would pass every test below)."""
    assert len(SCRIPTS) >= 20
    assert (BENCHMARKS / "_common.py").exists() and BENCHMARKS / "_common.py" not in SCRIPTS


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_has_a_smoke_size(path):
    """Check that the script declares --smoke, which .ci/smoke runs (tiny sizes, in seconds)."""
    assert declares_smoke(_tree(path)), f"{path.name} has no --smoke option: add one (see .ci/smoke)"


@pytest.mark.parametrize("path", sorted(BENCHMARKS.glob("*.py")), ids=lambda p: p.stem)
def test_benchmark_imports_public_names_only(path):
    """Check that the script imports no private module or name of ensemble, relabel and trees."""
    assert private_imports(_tree(path)) == []


def test_the_checks_see_what_they_look_for():
    """Check both checks on small sources: a --smoke option and private imports of every form."""
    assert declares_smoke(ast.parse("p.add_argument('--smoke', action='store_true')"))
    assert not declares_smoke(ast.parse("p.add_argument('--quick')\nx = '--smoke'"))
    source = ("from ensemble.plots._grid import walk\nimport relabel._backends.graphcut\nfrom trees import _tree\n"
              "from ensemble import OTreeBagger\nimport relabel\nfrom sklearn._loss import x\nfrom . import _common\n")
    assert [line.split(": ")[1] for line in private_imports(ast.parse(source))] == [
        "ensemble.plots._grid", "ensemble.plots._grid.walk", "relabel._backends.graphcut", "trees._tree"]


def test_the_dask_benchmark_knows_the_sketch_size_of_the_fit():
    """Check that the benchmark's copy of the sketch size (it may import public names only) is the fit's."""
    from ensemble.boosting._dask import SKETCH_SIZE

    tree = _tree(BENCHMARKS / "consistent_boosting.py")
    copies = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
              and any(getattr(t, "id", None) == "SKETCH_SIZE" for t in node.targets)]
    assert copies == [SKETCH_SIZE]
