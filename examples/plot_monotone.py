"""
Monotone constraints for four ordered classes
=============================================

A credit grade (four ordered classes) rises with income and falls with the debt
ratio, and the training labels are noisy. Unconstrained models (TreeBagger and
OTreeBagger) learn pockets where a higher income gives a lower grade; the same
models with ``monotonic_cst=[+1, -1]`` cannot. Red crosses mark the grid cells
where a step to the right (more income) lowers the grade or a step up (more
debt) raises it. Titles give the test MAE, the number of such wrong-way steps on
the grid, and what ``is_monotone([1, -1])`` certifies.

Run: ``python examples/plot_monotone.py --output out/``
"""

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ensemble import ConsistentForestClassifier, OTreeBagger, RegionDisplay  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

CST = np.array([1, -1])


def make_credit(n: int, random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Income and debt ratio in [0, 1]; grades 1..4 from a noisy score rising with income, falling with debt."""
    rng = np.random.RandomState(random_state)
    X = rng.uniform(size=(n, 2))
    score = 2.0 * X[:, 0] - 1.2 * X[:, 1] + rng.normal(scale=0.35, size=n)
    return X, np.digitize(score, [-0.2, 0.4, 1.0]) + 1


def wrong_way(model, resolution: int = 200):
    """Grid cells where one step along income lowers, or along debt raises, the predicted grade."""
    xs = np.linspace(0, 1, resolution)
    grid = np.stack(np.meshgrid(xs, xs), axis=-1).reshape(-1, 2)
    grade = np.searchsorted(model.classes_, model.predict(grid)).reshape(resolution, resolution)
    down_in_income = np.diff(grade, axis=1) * CST[0] < 0  # rows: debt, columns: income
    up_in_debt = np.diff(grade, axis=0) * CST[1] < 0
    cells = [(xs[j], xs[i]) for i, j in zip(*np.nonzero(down_in_income))]
    cells += [(xs[j], xs[i]) for i, j in zip(*np.nonzero(up_in_debt))]
    return np.array(cells).reshape(-1, 2)


# %%
def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Unconstrained and monotone models on credit-like data.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--n-train", type=int, default=200)
    args = parser.parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    X, y = make_credit(args.n_train + 2000, random_state=0)
    X_tr, y_tr, X_te, y_te = X[: args.n_train], y[: args.n_train], X[args.n_train:], y[args.n_train:]
    models = {
        "TreeBagger": OTreeBagger(relabel=False, vote="mode", criterion="gini", max_depth=None, random_state=0),
        "OTreeBagger": OTreeBagger(random_state=0),
        "OTreeBagger, monotone": OTreeBagger(monotonic_cst=CST, random_state=0),
        # A monotone forest on its monotone index is certified pointwise (asked for the data's
        # resolution, its fit says so in a warning); OTreeBagger and boosting certify both.
        "Certified forest, monotone": ConsistentForestClassifier(monotonic_cst=CST, consistency="pointwise",
                                                                 random_state=0),
    }
    fig, axes = plt.subplots(1, len(models), figsize=(4.4 * len(models), 4.6), constrained_layout=True)
    for col, (label, model) in enumerate(models.items()):
        model.fit(X_tr, y_tr)
        ax = axes[col]
        # The red crosses here are wrong-way steps, not jumps: a grid step in the wrong
        # direction proves a violation by itself, so the grid count is exact.
        RegionDisplay.from_estimator(model, X_tr, y=y_tr, ax=ax, grid_resolution=200, mark_jumps=False,
                                     colorbar=col == len(models) - 1, xlabel="income", ylabel="debt ratio")
        cells = wrong_way(model)
        if cells.shape[0]:
            ax.scatter(cells[:, 0], cells[:, 1], marker="x", s=14, color="red", linewidths=0.8)
        mae = mean_absolute_error(y_te, model.predict(X_te), labels=[1, 2, 3, 4])
        ax.set_title(f"{label}\nMAE {mae:.3f}, wrong-way steps: {cells.shape[0]}\n"
                     f"is_monotone([1, -1]): {model.is_monotone(CST)}", fontsize=10)
    fig.suptitle("A grade that must rise with income and fall with debt "
                 f"({args.n_train} noisy training points)")
    path = out / "monotone.png"
    fig.savefig(path, dpi=90)
    # The panels' titles beside the picture: tests/test_examples.py checks the committed ones still come out.
    path.with_suffix(".titles.txt").write_text("\n".join(ax.get_title() for ax in fig.axes if ax.get_title()) + "\n")
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
