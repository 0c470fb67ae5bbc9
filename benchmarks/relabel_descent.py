"""The graph cut's descent against its one cut, on the problems OTreeBagger solves (issue 58).

Fits ``OTreeBagger(n_estimators=30)`` (default parameters otherwise, one core) on the
training part of split 0 of each data set, keeps every consistency problem its groups
solve (lazy rounds included, each with the labels the fit started it from), and solves
each again twice: by one cut over every threshold (:func:`relabel.graph_cut`) and by
the descent of docs/design.md section 4 (what :func:`relabel.solve` runs). Reports the CPU seconds of both over
all problems, their ratio, the mean number of the descent's cuts, and whether every
labelling is the same (it must be: both return the smallest optimum).

Run::

    python benchmarks/relabel_descent.py                  # six shared sets of 3 to 9 classes
    python benchmarks/relabel_descent.py --datasets ESL --trees 60
    python benchmarks/relabel_descent.py --smoke          # seconds: a synthetic lattice, 6 trees
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import relabel
from ensemble import OTreeBagger

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import shared_splits, smoke_shared  # noqa: E402

def problems_of_a_fit(X, y, n_trees: int) -> list:
    """Every (problem, start) an OTreeBagger fit hands to :func:`relabel.solve`."""
    seen = []
    original = relabel.solve

    def keep(problem, *args, **kwargs):
        seen.append((problem, kwargs.get("start")))
        return original(problem, *args, **kwargs)

    relabel.solve = keep
    try:
        OTreeBagger(n_estimators=n_trees, random_state=0, n_jobs=1).fit(X, y)
    finally:
        relabel.solve = original
    return seen


def compare(problems: list) -> dict:
    """CPU seconds of the one cut and of the descent over ``problems``, the descent's cuts, and agreement."""
    one_cut = descent = 0.0
    cuts, same = [], True
    for problem, start in problems:
        t = time.process_time()
        a = relabel.graph_cut(problem)
        one_cut += time.process_time() - t
        t = time.process_time()
        b = relabel.solve(problem, start=start)
        descent += time.process_time() - t
        same &= bool(np.array_equal(a.labels, b.labels) and a.bound == b.bound and a.status == b.status.name)
        if b.message.startswith("descent by"):
            cuts.append(int(b.message.split()[2]))
    return {"one_cut": one_cut, "descent": descent, "cuts": float(np.mean(cuts)) if cuts else float("nan"),
            "same": same}


def lattice(n: int = 300, seed: int = 0):
    """A small integer lattice of five classes (for --smoke)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 3)).astype(np.float64)
    y = np.clip(X[:, 0] + (X[:, 1] > 2) - (X[:, 2] > 3), 0, 4).astype(int) + 1
    return X, y


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=["ESL", "winequality-red", "LEV", "SWD", "balance-scale",
                                                           "tae"])
    parser.add_argument("--trees", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="a synthetic lattice and 6 trees: seconds")
    args = parser.parse_args(argv)
    runs = []
    if args.smoke:
        runs.append(("lattice", *lattice()))
        runs += [(name, X[train], y[train]) for name in smoke_shared(["ESL"])
                 for _, X, y, train, _ in shared_splits(name, 1)]
        args.trees = 6
    else:
        runs += [(name, X[train], y[train]) for name in args.datasets for _, X, y, train, _ in shared_splits(name, 1)]
    # Compile every kernel once before timing.
    compare(problems_of_a_fit(*lattice(60), 3))
    print("| data set | classes | problems | one cut s | descent s | ratio | cuts per descent | same labels |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    ok = True
    for name, X, y in runs:
        problems = problems_of_a_fit(X, y, args.trees)
        r = compare(problems)
        ok &= r["same"]
        print(f"| {name} | {len(np.unique(y))} | {len(problems)} | {r['one_cut']:.3f} | {r['descent']:.3f} | "
              f"{r['one_cut'] / max(r['descent'], 1e-9):.1f}x | {r['cuts']:.1f} | {r['same']} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
