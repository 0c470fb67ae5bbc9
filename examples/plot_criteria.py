"""
The five splitting criteria on syntheticI
=========================================

One depth-limited :class:`trees.OrdinalTreeClassifier` per criterion (Gini,
entropy, ordinal Gini, weighted information gain, ranking impurity), fitted on
the same 500 syntheticI points; each panel shows the tree's decision regions,
its number of leaves, its test MAE and its jumps of more than one class between
neighbouring cells (red crosses; see ``ensemble.plots._grid.find_jumps``): a single
tree is not consistent, whatever its criterion.

Run: ``python examples/plot_criteria.py --output out/``
"""

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ensemble import RegionDisplay  # noqa: E402
from ensemble.datasets import make_synthetic_i  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402
from trees import CRITERIA, OrdinalTreeClassifier  # noqa: E402


# %%
def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Decision regions of the five criteria.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--max-depth", type=int, default=5)
    parser.add_argument("--grid-resolution", type=int, default=250)
    args = parser.parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    X, y = make_synthetic_i(500, random_state=0)
    X_test, y_test = make_synthetic_i(5000, random_state=1)
    fig, axes = plt.subplots(1, len(CRITERIA), figsize=(4.2 * len(CRITERIA), 4), constrained_layout=True)
    for i, (ax, criterion) in enumerate(zip(axes, CRITERIA)):
        tree = OrdinalTreeClassifier(criterion=criterion, max_depth=args.max_depth, random_state=0).fit(X, y)
        mae = mean_absolute_error(y_test, tree.predict(X_test), labels=tree.classes_)
        disp = RegionDisplay.from_estimator(tree, X, y=y, ax=ax, grid_resolution=args.grid_resolution,
                                            colorbar=i == len(CRITERIA) - 1)
        ax.set_title(f"{criterion}: {tree.get_n_leaves()} leaves, MAE {mae:.3f}\n{disp.summary}", fontsize=10)
    path = out / "criteria_synthetic_i.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
