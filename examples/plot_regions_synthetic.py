"""
Decision regions of TreeBagger and OTreeBagger on the paper's synthetic data
============================================================================

TreeBagger (Gini trees, majority vote) against OTreeBagger with groups of
M = 1, 3 and 5 relabelled trees, on syntheticI and syntheticII with 10% of the
1,000 points for training (the small-sample case the paper targets). Titles
give the test MAE and the jumps of the drawn grid: pairs of neighbouring cells
(sides and diagonals) whose class changes by more than one at a single point
of the segment between them (red crosses), walked exactly through the trees'
thresholds, and apart from them the pairs whose intermediate classes lie in a
band thinner than a cell (magenta diamonds). The relabelled models have no
jump.

Run: ``python examples/plot_regions_synthetic.py --output out/``
"""

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from ensemble import OTreeBagger, RegionDisplay  # noqa: E402
from ensemble.datasets import make_synthetic_i, make_synthetic_ii  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402


# %%
def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Decision regions on syntheticI and syntheticII.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--n-estimators", type=int, default=30)
    parser.add_argument("--grid-resolution", type=int, default=300)
    parser.add_argument("--train-size", type=float, default=0.1)
    args = parser.parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    data = {"syntheticI": make_synthetic_i(1000, random_state=0),
            "syntheticII": make_synthetic_ii(1000, random_state=0)}
    B = args.n_estimators
    models = {
        "TreeBagger": dict(relabel=False, vote="mode", criterion="gini", max_depth=None),
        "OTreeBagger M=1": dict(group_size=1),
        "OTreeBagger M=3": dict(group_size=3),
        "OTreeBagger M=5": dict(group_size=5),
    }
    fig, axes = plt.subplots(len(data), len(models), figsize=(4.2 * len(models), 4 * len(data)),
                             constrained_layout=True)
    for row, (name, (X, y)) in enumerate(data.items()):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=args.train_size, random_state=0, stratify=y)
        for col, (label, params) in enumerate(models.items()):
            model = OTreeBagger(n_estimators=B, random_state=0, **params).fit(X_tr, y_tr)
            mae = mean_absolute_error(y_te, model.predict(X_te), labels=np.unique(y))
            ax = axes[row, col]
            # The title counts the jumps of the grid it draws (ensemble.plots._grid.find_jumps).
            disp = RegionDisplay.from_estimator(model, X_tr, y=y_tr, ax=ax, grid_resolution=args.grid_resolution,
                                                colorbar=col == len(models) - 1)
            ax.set_title(f"{name}: {label}\nMAE {mae:.3f}, {disp.summary}", fontsize=10)
    path = out / "regions_synthetic.png"
    fig.savefig(path, dpi=90)
    # The panels' titles beside the picture: tests/test_examples.py checks the committed ones still come out.
    path.with_suffix(".titles.txt").write_text("\n".join(ax.get_title() for ax in fig.axes if ax.get_title()) + "\n")
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
