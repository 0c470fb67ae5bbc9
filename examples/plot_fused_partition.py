"""
Two trees, their fused partition, and the relabelling that makes it consistent
==============================================================================

The oTreeBagger paper's Figures 2-4: two bootstrap trees, their leaves
intersected into one fused partition, the region labels before relabelling
(each region's median class, with adjacent regions more than one class apart
joined in red) and after the consistency ILP, with the adjacency graph (solid:
face contacts, dotted: corner contacts).

By default the data are the paper's syntheticI set (300 points, five classes),
built by the library, so the script runs offline. ``--data-home DIR`` draws two
features of the red wine quality data instead (alcohol and volatile acidity,
six quality classes), read from ``DIR/winequality-red.csv``.

Run: ``python examples/plot_fused_partition.py --output out/``
"""

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ensemble import OTreeBagger  # noqa: E402
from ensemble import PartitionDisplay  # noqa: E402
from ensemble.datasets import load_ordinal_csv, make_synthetic_i  # noqa: E402
from trees import leaf_boxes  # noqa: E402

WINE_FEATURES = (10, 1)  # alcohol, volatile acidity


def _data(data_home: str | None):
    """Features, classes and axis names: syntheticI, or the red wine data from a local folder."""
    if data_home is None:
        X, y = make_synthetic_i(300, random_state=0)
        return X, y, ("x1", "x2")
    # A local file only: an example must not reach for the network.
    X, y = load_ordinal_csv(Path(data_home) / "winequality-red.csv", target="y")
    return X[:, WINE_FEATURES], y, ("alcohol", "volatile acidity")


# %%
def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Fused partition of two trees before and after relabelling.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--max-depth", type=int, default=4)
    parser.add_argument("--data-home", default=None,
                        help="folder with winequality-red.csv: draw the red wine data instead of syntheticI")
    args = parser.parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    X, y, (xlabel, ylabel) = _data(args.data_home)
    model = OTreeBagger(n_estimators=2, group_size=2, max_depth=args.max_depth, random_state=3).fit(X, y)
    group = model.groups_[0]
    classes = model.classes_
    K = len(classes)
    # (xmin, ymin, xmax, ymax) with a small margin around the data
    bounds = np.r_[X.min(axis=0) - 0.02 * np.ptp(X, axis=0), X.max(axis=0) + 0.02 * np.ptp(X, axis=0)]

    costs = group.counts @ np.abs(np.arange(K)[:, None] - np.arange(K)[None, :])
    empty = group.counts.sum(axis=1) == 0
    # Before relabelling: each region's median class; an empty region takes the
    # lower of its two trees' leaf labels (what a median vote of the trees gives).
    tree_labels = np.column_stack([t.leaf_label_[group.partition.keys[:, j]] for j, t in enumerate(group.trees)])
    before = np.where(empty, tree_labels.min(axis=1), np.argmin(costs, axis=1))

    fig, axes = plt.subplots(2, 2, figsize=(12, 10), constrained_layout=True)
    for j, (ax, tree) in enumerate(zip(axes[0], group.trees)):
        boxes = leaf_boxes(tree)
        PartitionDisplay.from_partition(boxes, tree.leaf_label_[boxes.leaf_ids], classes=classes,
                                        bounds=bounds, ax=ax, show_edges=False, colorbar=j == 1)
        ax.set_title(f"bootstrap tree {j + 1}: {len(boxes.leaf_ids)} leaves (median labels)")
    disp = PartitionDisplay.from_partition(group.partition, before, classes=classes, bounds=bounds,
                                           ax=axes[1, 0], colorbar=False)
    axes[1, 0].set_title(f"fused partition: {group.partition.n_regions} regions, {int(empty.sum())} empty\n"
                         f"before relabelling: {len(disp.violations)} inconsistent contacts (red)")
    after = PartitionDisplay.from_partition(group.partition, group.labels, classes=classes, bounds=bounds,
                                            ax=axes[1, 1])
    axes[1, 1].set_title(f"after relabelling ({group.info['solver']}, {group.info['status']})\n"
                         f"{len(after.violations)} inconsistent contacts")
    for ax in axes.ravel():
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    path = out / "fused_partition.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
