"""Print a pip constraints file pinning the named dependencies to their lower bounds.

Usage: python .ci/lower_bounds.py pyproject.toml numpy scipy scikit-learn
       python .ci/lower_bounds.py pyproject.toml --requirements test

The bounds are read from [project] dependencies, so pyproject.toml stays their
one home: CI installs exactly the oldest versions it declares. ``--requirements
EXTRA`` prints the requirements themselves instead, the dependencies and those of
the optional extra EXTRA, one per line (what .ci/oldest installs before the project).
"""

import re
import sys

try:
    import tomllib
except ImportError:  # Python 3.10: pip vendors the same parser
    from pip._vendor import tomli as tomllib


def _project(pyproject: str) -> dict:
    with open(pyproject, "rb") as handle:
        return tomllib.load(handle)["project"]


def requirements(pyproject: str, extra: str) -> list[str]:
    project = _project(pyproject)
    return project["dependencies"] + project["optional-dependencies"][extra]


def lower_bounds(pyproject: str, names: list[str]) -> dict[str, str]:
    dependencies = _project(pyproject)["dependencies"]
    found = {}
    for requirement in dependencies:
        match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(?:\[[^\]]*\])?\s*(.*)", requirement)
        name = match.group(1).lower().replace("_", "-")
        bound = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", match.group(2))
        if name in names and bound:
            found[name] = bound.group(1)
    missing = [name for name in names if name not in found]
    if missing:
        sys.exit(f"lower_bounds.py: no '>=' lower bound for {missing} in {pyproject}")
    return found


if __name__ == "__main__":
    if sys.argv[2:3] == ["--requirements"]:
        print("\n".join(requirements(sys.argv[1], sys.argv[3])))
        sys.exit(0)
    for name, version in lower_bounds(sys.argv[1], [n.lower() for n in sys.argv[2:]]).items():
        print(f"{name}=={version}")
