"""OTreeBagger's groups in the additive space: PLS or interaction axes beside the score, against TreeBagger.

``otreebagger_levers.py --decompose`` shows where OTreeBagger's gap to TreeBagger lies:
in the groups' space (three PLS components of the features), not in the consistency
constraints. ``projection="additive"`` gives every group an additive score of the
continuous features as its first component (one cubic B-spline curve per feature,
fitted once by ridge regression of the class index) and two PLS directions of what
the score leaves; categorical columns keep their axes (docs/design.md section 5).

What the score leaves is interaction between features, which PLS directions (linear)
cannot see: ``residual_axes="features"`` puts instead the features a regression tree of
the residual uses most on their own axes, and ``residual_axes="auto"`` (the default)
chooses between the two on held-out rows. ``score_model="kernel"`` replaces the
additive score by kernel ridge regression on landmark rows, which follows interactions
itself, and ``score_model="auto"`` (the default) chooses the score on held-out rows too.

For each shared data set (its first ``--splits`` hold-out partitions), synthetic data
(``make_ordinal_synthetic``, half the rows for training) and interaction data
(``--interaction``: 4 classes of a function of two of the features, the others noise;
1,000 training and 1,000 test rows): test MAE and fit time of TreeBagger, the additive
space with each kind of residual axes, the kernel score with PLS axes, and
``OTreeBagger()`` with the choices it made (score and axes),
with the default's certificate and an oracle for it in x (100 segments between test
rows, their categorical columns held at the first row's values, scanned in 2,000 steps:
no step may jump two classes).

Run::

    python benchmarks/additive_space.py                       # 12 sets, 20 x 20,000, interactions (about 20 min on 2 cores)
    python benchmarks/additive_space.py --datasets none --interaction xor product
    python benchmarks/additive_space.py --smoke               # seconds: ESL, 6 x 400, xor-5; 6 trees
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_ordinal_synthetic, shared_names, shared_splits, smoke_shared  # noqa: E402

from ensemble import OTreeBagger, segment_jumps  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

# The paper's TreeBagger: full-depth Gini trees on the features, majority vote.
BASELINE = {"relabel": False, "vote": "mode", "criterion": "gini", "projection": "none", "max_depth": None}


def interaction_data(kind: str, n_samples: int = 2000, n_features: int = 5, seed: int = 0):
    """Classes 1..4 of a function of x_0 and x_1 that no sum of curves of single features follows."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n_samples, n_features))
    a, b = X[:, 0] - 0.5, X[:, 1] - 0.5
    if kind == "xor":  # classes 1 and 3 (two apart) on a chequer of four squares
        y = 1 + 2 * ((a > 0) ^ (b > 0))
    elif kind == "checker":
        y = 1 + (np.floor(3 * X[:, 0]) + np.floor(3 * X[:, 1])) % 4
    elif kind == "product":
        y = 1 + np.digitize(a * b, [-0.05, 0.0, 0.05])
    elif kind == "radial":
        y = 1 + np.digitize(np.hypot(a, b), [0.15, 0.3, 0.45])
    else:
        raise ValueError(f"unknown interaction {kind!r}")
    return X, y.astype(np.int64)


INTERACTIONS = ("xor", "checker", "product", "radial")


def _datasets(names, n_splits, synthetic, interactions, interaction_shape=(2000, (5, 20))):
    for name in names:
        for split, X, y, train, test in shared_splits(name, n_splits):
            yield name, split, X, y, train, test
    for n_features, n_samples in synthetic:
        X, y = make_ordinal_synthetic(n_samples, n_features, random_state=0)
        half = n_samples // 2
        yield f"synthetic-{n_features}x{n_samples}", 0, X, y, np.arange(half), np.arange(half, n_samples)
    n_rows, widths = interaction_shape
    for kind in interactions:
        for n_features in widths:
            X, y = interaction_data(kind, n_rows, n_features)
            half = n_rows // 2
            yield f"{kind}-{n_features}", 0, X, y, np.arange(half), np.arange(half, n_rows)


def _timed(fit):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fit()
    return out, time.perf_counter() - t0


def _compare(X, y, train, test, seed, n_jobs, n_estimators=None, lines=(100, 2000)) -> tuple[dict, bool, str]:
    """Test MAE and fit seconds of the models on one split; the default's certificate and choice.

    ``n_estimators``: every model's (None: OTreeBagger's default); ``lines``: the oracle's
    segments and steps per segment.
    """
    size = {} if n_estimators is None else {"n_estimators": n_estimators}
    labels = np.arange(1, int(y.max()) + 1)
    row = {}
    def additive(score: str, axes: str) -> dict:
        return {"projection": "additive", "space_params": {"score_model": score, "residual_axes": axes}}

    fits = {"TreeBagger": BASELINE, "additive + PLS": additive("additive", "pls"),
            "additive + features": additive("additive", "features"),
            "kernel + PLS": additive("kernel", "pls"),
            "OTreeBagger()": {}}
    for label, params in fits.items():
        model, seconds = _timed(lambda p=params: OTreeBagger(**p, **size, n_jobs=n_jobs, random_state=seed)
                                .fit(X[train], y[train]))
        row[label] = (mean_absolute_error(y[test], model.predict(X[test]), labels=labels), seconds)
    certified = bool(model.is_consistent())
    jumps = _line_jumps(model, X[test], np.random.RandomState(seed), *lines)
    if certified and jumps:
        raise SystemExit(f"the certificate holds in z but {jumps} line steps in x jump two classes")
    return row, certified, f"{model.score_model_}/{model.residual_axes_}"


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
    return int(segment_jumps(points[start], points[end], ranks[line, step], ranks[line, step + 1], rank,
                            tol=1e-15).sum())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=None,
                        help="shared CSV names (default: all; 'none' for none)")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--synthetic", type=lambda s: tuple(int(v) for v in s.split("x")), nargs="*",
                        default=[(20, 20000)], help="FEATURESxROWS, half for training")
    parser.add_argument("--interaction", nargs="*", default=list(INTERACTIONS), choices=INTERACTIONS,
                        help="interaction data, in 5 and 20 features")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: ESL's first split (if the shared folder is there), 6 x 400 synthetic rows, "
                             "xor on 5 features and 400 rows; 6 trees, one process, 20 oracle lines of 200 steps")
    args = parser.parse_args(argv)
    names = shared_names() if args.datasets is None else [n for n in args.datasets if n != "none"]
    extra, shape = {}, (2000, (5, 20))
    if args.smoke:
        names = smoke_shared(["ESL"]) if args.datasets is None else names
        args.splits, args.synthetic, args.interaction, args.n_jobs = 1, [(6, 400)], ["xor"], 1
        extra, shape = {"n_estimators": 6, "lines": (20, 200)}, (400, (5,))
    models = ("TreeBagger", "additive + PLS", "additive + features", "kernel + PLS", "OTreeBagger()")
    results: dict = {}
    for name, split, X, y, train, test in _datasets(names, args.splits, args.synthetic, args.interaction, shape):
        row, certified, chosen = _compare(X, y, train, test, split, args.n_jobs, **extra)
        results.setdefault(name, []).append((row, chosen))
        print(f"{name} split {split}: " + "  ".join(f"{m} {row[m][0]:.3f} ({row[m][1]:.1f}s)" for m in models)
              + f"  chose {chosen}  certified={certified}", flush=True)
        if not certified:
            raise SystemExit(f"{name}: OTreeBagger() is not certified")
    print("\n| data set | " + " | ".join(models) + " | score/axes chosen | fit s (default) |")
    print("|---|" + "---:|" * len(models) + "---|---:|")
    means: dict = {m: [] for m in models}
    for name, rows in results.items():
        mae = {m: float(np.mean([r[m][0] for r, _ in rows])) for m in models}
        if name in names:
            for m in models:
                means[m].append(mae[m])
        chosen = ", ".join(c for _, c in rows)
        print(f"| {name} | " + " | ".join(f"{mae[m]:.3f}" for m in models)
              + f" | {chosen} | {np.mean([r['OTreeBagger()'][1] for r, _ in rows]):.1f} |")
    if means["TreeBagger"]:
        print("| mean (shared sets) | " + " | ".join(f"{np.mean(means[m]):.3f}" for m in models) + " | | |")
        wins = sum(a < t for a, t in zip(means["OTreeBagger()"], means["TreeBagger"], strict=True))
        print(f"\nOTreeBagger() better than TreeBagger on {wins} of {len(means['TreeBagger'])} shared sets")


if __name__ == "__main__":
    main()
