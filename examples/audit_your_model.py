"""
Audit your model: where does it jump two classes?
=================================================

``ensemble.audit`` reads the trees of a fitted model with its own code and either
finds two points, as close as the notion asks, that the model puts two or more classes
apart (re-checked with the model's own ``predict``), or proves that no such pair
exists. Here a scikit-learn ``HistGradientBoostingClassifier`` is fitted on the ERA
data set (four ordered features, nine ordered classes) and audited at the data's
resolution: moving one feature between two neighbouring training values must not
change the class by two. The left panel draws the witness: the two points and the
classes along the segment between them; the right panel the same line through the
whole range of the moved feature, for the same model and for this library's certified
``ConsistentGradientBoostingClassifier``, which the audit proves consistent.

Run: ``python examples/audit_your_model.py --output out/``
"""

# %%
from __future__ import annotations

import argparse
import os
from pathlib import Path

# One OpenMP thread: HistGradientBoosting's threads crawl on a shared machine (set it before sklearn loads).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402

from ensemble import ConsistentGradientBoostingClassifier, audit  # noqa: E402
from ensemble.datasets import load_benchmark  # noqa: E402


def classes_along(model, a: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The class index ``model`` predicts at ``a + s (b - a)`` for every s."""
    points = a[None, :] + s[:, None] * (b - a)[None, :]
    return np.searchsorted(model.classes_, model.predict(points))


def draw_segment(ax, model, report, names) -> None:
    """The two witness points and the classes along the segment between them."""
    a, b = report.witness
    s = np.unique(np.concatenate((np.linspace(0.0, 1.0, 801), [0.0, 1.0])))
    c = classes_along(model, a, b, s)
    f = int(np.flatnonzero(a != b)[0])
    pos = a[f] + s * (b[f] - a[f])
    ax.step(pos, c + 1, where="post", color="tab:blue", label="HistGradientBoosting")
    for p, label in ((a, "x"), (b, "x'")):
        k = int(np.searchsorted(model.classes_, model.predict(p[None, :]))[0])
        ax.scatter([p[f]], [k + 1], s=60, zorder=3, color="tab:red")
        ax.annotate(f"{label}: class {model.classes_[k]}", (p[f], k + 1), textcoords="offset points", xytext=(6, 6))
    ax.set_xlabel(f"{names[f]} (the other features fixed)")
    ax.set_ylabel("predicted class")
    ax.set_title(f"the witness: {report.status}, a jump of {report.largest_jump}\n"
                 f"found in {report.time_to_witness:.2f} s ({report.method})", fontsize=10)


def draw_context(ax, models: dict, report, X, names) -> None:
    """The same line through the whole range of the moved feature, for every model."""
    a, b = report.witness
    f = int(np.flatnonzero(a != b)[0])
    unit = (b - a) / (b[f] - a[f])  # one unit of feature f along the witness's direction
    lo, hi = X[:, f].min() - a[f], X[:, f].max() - a[f]
    s = np.linspace(lo, hi, 2001)
    for (label, (model, rep)), style in zip(models.items(), ("-", "--"), strict=True):
        c = classes_along(model, a, a + unit, s)
        ax.step(a[f] + s, c + 1, where="post", linestyle=style, label=f"{label}: {rep.status}")
    ax.axvline(a[f], color="tab:red", linewidth=0.8)
    others = [names[g] for g in np.flatnonzero(a != b) if g != f]
    ax.set_xlabel(names[f] + (f" ({', '.join(others)} moving with it, as in the witness)" if others else ""))
    ax.set_ylabel("predicted class")
    ax.legend(fontsize=8, loc="best")
    ax.set_title("the line through the witness", fontsize=10)


# %%
def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Audit a HistGradientBoosting model and a certified one.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--data", default="ERA", help="shared data set (default ERA)")
    parser.add_argument("--data-home", default=None, help="folder of the shared CSVs")
    parser.add_argument("--max-iter", type=int, default=100, help="boosting iterations of both models")
    parser.add_argument("--time-limit", type=float, default=30.0, help="seconds per audit")
    args = parser.parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    X, y = load_benchmark(args.data, args.data_home)
    names = [f"x{f}" for f in range(X.shape[1])]

    hgb = HistGradientBoostingClassifier(max_iter=args.max_iter, random_state=0).fit(X, y)
    report = audit(hgb, X, time_limit=args.time_limit)
    print(report.summary(names))
    cgb = ConsistentGradientBoostingClassifier(max_iter=args.max_iter, random_state=0).fit(X, y)
    ours = audit(cgb, X, time_limit=args.time_limit)
    print(ours.summary(names))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
    if report.witness is not None:
        draw_segment(axes[0], hgb, report, names)
        draw_context(axes[1], {"HistGradientBoosting": (hgb, report), "certified boosting": (cgb, ours)},
                     report, X, names)
    else:
        axes[0].set_title(f"HistGradientBoosting: {report.status}")
    fig.suptitle(f"{args.data}: HistGradientBoosting is {report.status} (largest jump {report.largest_jump}); "
                 f"ConsistentGradientBoostingClassifier is {ours.status} ({ours.method})", fontsize=11)
    path = out / "audit_your_model.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
