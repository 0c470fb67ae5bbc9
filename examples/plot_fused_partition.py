"""
Two trees, their fused partition, and the relabelling that makes it consistent
==============================================================================

The oTreeBagger paper's Figures 2-4 on real data: two bootstrap trees grown on
two features of the red wine quality data (alcohol and volatile acidity, six
quality classes), their leaves intersected into one fused partition, the
region labels before relabelling (each region's median class, with adjacent
regions more than one class apart joined in red) and after the consistency
ILP, with the adjacency graph (solid: face contacts, dotted: corner contacts).

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
from ensemble.datasets import load_benchmark  # noqa: E402
from trees import leaf_boxes  # noqa: E402

FEATURES = (10, 1)  # alcohol, volatile acidity


# %%
def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Fused partition of two trees before and after relabelling.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--max-depth", type=int, default=4)
    parser.add_argument("--data-home", default=None, help="folder with winequality-red.csv")
    args = parser.parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    X, y = load_benchmark("winequality-red", data_home=args.data_home)
    X = X[:, FEATURES]
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
        ax.set_xlabel("alcohol")
        ax.set_ylabel("volatile acidity")
    path = out / "fused_partition.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
