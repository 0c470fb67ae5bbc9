"""Print a pip constraints file pinning the named dependencies to their lower bounds.

Usage: python .ci/lower_bounds.py pyproject.toml numpy scipy scikit-learn

The bounds are read from [project] dependencies, so pyproject.toml stays their
one home: CI installs exactly the oldest versions it declares.
"""

import re
import sys

try:
    import tomllib
except ImportError:  # Python 3.10: pip vendors the same parser
    from pip._vendor import tomli as tomllib


def lower_bounds(pyproject: str, names: list[str]) -> dict[str, str]:
    with open(pyproject, "rb") as handle:
        dependencies = tomllib.load(handle)["project"]["dependencies"]
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
    for name, version in lower_bounds(sys.argv[1], [n.lower() for n in sys.argv[2:]]).items():
        print(f"{name}=={version}")
