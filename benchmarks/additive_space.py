"""OTreeBagger's groups in the additive space (``projection="additive"``) against PLS and TreeBagger.

``otreebagger_levers.py --decompose`` shows where OTreeBagger's gap to TreeBagger lies:
in the groups' space (three PLS components of the features), not in the consistency
constraints. ``projection="additive"`` gives every group an additive score of the
continuous features as its first component (one cubic B-spline curve per feature,
fitted once by ridge regression of the class index) and two PLS directions of what
the score leaves; categorical columns keep their axes (docs/design.md section 5).

For each shared data set (its first ``--splits`` hold-out partitions) and synthetic
data (``make_ordinal_synthetic``, half the rows for training): test MAE and fit time
of TreeBagger, ``OTreeBagger()`` and ``OTreeBagger(projection="additive")``, with the
latter's certificate and an oracle for it in x (100 segments between test rows, their
categorical columns held at the first row's values, scanned in 2,000 steps: no step
may jump two classes).

Run::

    python benchmarks/additive_space.py                       # 12 sets + 20 x 20,000 (about 5 min on 2 cores)
    python benchmarks/additive_space.py --datasets LEV stock10 --synthetic
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_ordinal_synthetic, shared_names, shared_splits  # noqa: E402

from ensemble import OTreeBagger  # noqa: E402
from ensemble._grid import _walk_bisect  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

# The paper's TreeBagger: full-depth Gini trees on the features, majority vote.
BASELINE = {"relabel": False, "vote": "mode", "criterion": "gini", "projection": "none", "max_depth": None}


def _datasets(names, n_splits, synthetic):
    for name in names:
        for split, X, y, train, test in shared_splits(name, n_splits):
            yield name, split, X, y, train, test
    for n_features, n_samples in synthetic:
        X, y = make_ordinal_synthetic(n_samples, n_features, random_state=0)
        half = n_samples // 2
        yield f"synthetic-{n_features}x{n_samples}", 0, X, y, np.arange(half), np.arange(half, n_samples)


def _timed(fit):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fit()
    return out, time.perf_counter() - t0


def _compare(X, y, train, test, seed, n_jobs) -> tuple[dict, bool]:
    """Test MAE and fit seconds of the three models on one split; the additive model's certificate."""
    labels = np.arange(1, int(y.max()) + 1)
    row = {}
    tb, t_tb = _timed(lambda: OTreeBagger(**BASELINE, n_jobs=n_jobs, random_state=seed).fit(X[train], y[train]))
    row["TreeBagger"] = (mean_absolute_error(y[test], tb.predict(X[test]), labels=labels), t_tb)
    otb, t_otb = _timed(lambda: OTreeBagger(n_jobs=n_jobs, random_state=seed).fit(X[train], y[train]))
    row["OTreeBagger()"] = (mean_absolute_error(y[test], otb.predict(X[test]), labels=labels), t_otb)

    model, t_add = _timed(lambda: OTreeBagger(projection="additive", n_jobs=n_jobs,
                                              random_state=seed).fit(X[train], y[train]))
    row["additive space"] = (mean_absolute_error(y[test], model.predict(X[test]), labels=labels), t_add)
    certified = bool(model.is_consistent())
    jumps = _line_jumps(model, X[test], np.random.RandomState(seed))
    if certified and jumps:
        raise SystemExit(f"the certificate holds in z but {jumps} line steps in x jump two classes")
    return row, certified


def _line_jumps(model, X, rng, n_lines: int = 100, n_steps: int = 2000) -> int:
    """Jumps of two classes or more along segments between random test rows, in x (an oracle).

    Each scan step whose ends are two classes apart is bisected down to 1e-15 of the
    segment (a consistent model may pass through a thin band of the class between):
    a step left two classes apart there is a jump. The scan can miss a thin region,
    so it can only refute the certificate: it checks that consistency in z carries
    over to x. A change of category is not a small move (docs/design.md section 4b):
    the segments keep their categorical columns fixed.
    """
    categorical = model.categorical_features_
    a, b = X[rng.randint(len(X), size=n_lines)], X[rng.randint(len(X), size=n_lines)].copy()
    b[:, categorical] = a[:, categorical]
    t = np.linspace(0.0, 1.0, n_steps)[:, None]
    points = np.concatenate([a[i] + t * (b[i] - a[i]) for i in range(n_lines)])

    def rank(Z):
        # The bisection may ask for no point at all once every step is decided.
        return np.searchsorted(model.classes_, model.predict(Z)) if Z.shape[0] else np.empty(0, np.intp)

    ranks = rank(points).reshape(n_lines, n_steps)
    line, step = np.nonzero(np.abs(np.diff(ranks, axis=1)) > 1)
    if line.shape[0] == 0:
        return 0
    start, end = line * n_steps + step, line * n_steps + step + 1
    return int(_walk_bisect(points[start], points[end], ranks[line, step], ranks[line, step + 1], rank,
                            tol=1e-15).sum())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=None, help="shared CSV names (default: all)")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--synthetic", type=lambda s: tuple(int(v) for v in s.split("x")), nargs="*",
                        default=[(20, 20000)], help="FEATURESxROWS, half for training")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    names = shared_names() if args.datasets is None else args.datasets
    models = ("TreeBagger", "OTreeBagger()", "additive space")  # the last: projection="additive"
    results: dict = {}
    for name, split, X, y, train, test in _datasets(names, args.splits, args.synthetic):
        row, certified = _compare(X, y, train, test, split, args.n_jobs)
        results.setdefault(name, []).append(row)
        print(f"{name} split {split}: " + "  ".join(f"{m} {row[m][0]:.3f} ({row[m][1]:.1f}s)" for m in models)
              + f"  certified={certified}", flush=True)
        if not certified:
            raise SystemExit(f"{name}: the additive-space model is not certified")
    print("\n| data set | " + " | ".join(models) + " | fit s (additive) |")
    print("|---|" + "---:|" * (len(models) + 1))
    means = {m: [] for m in models}
    for name, rows in results.items():
        mae = {m: float(np.mean([r[m][0] for r in rows])) for m in models}
        shared = not name.startswith("synthetic")
        for m in models:
            if shared:
                means[m].append(mae[m])
        print(f"| {name} | " + " | ".join(f"{mae[m]:.3f}" for m in models)
              + f" | {np.mean([r['additive space'][1] for r in rows]):.1f} |")
    if means["TreeBagger"]:
        print("| mean (shared sets) | " + " | ".join(f"{np.mean(means[m]):.3f}" for m in models) + " | |")
        wins = sum(a < t for a, t in zip(means["additive space"], means["TreeBagger"], strict=True))
        print(f"\nadditive space better than TreeBagger on {wins} of {len(means['TreeBagger'])} shared sets")


if __name__ == "__main__":
    main()
