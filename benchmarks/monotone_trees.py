"""Monotone single trees and bagged trees: what each ``monotonic_method`` costs in accuracy.

On data monotone in the constrained features, a constrained tree should lose
nothing (issue target: test MAE at most 0.01 worse than the free tree). Data:

- ``sin-4``: 600 training rows, 4 uniform features, 5 balanced classes cut from
  ``x0 - x1 + 0.5 sin(2 pi x2) + noise`` (feature 3 is noise): +1 on x0, -1 on x1;
- ``synthetic-10``: 1,000 training rows of ``benchmarks/_common.make_ordinal_synthetic``
  (10 features; its linear features 0, 3, 6 and 9 are +1).

Each is drawn ``--repeats`` times (fresh training and 5,000 test rows from the same
generator). Models: the free tree (no constraint) and the constrained tree under each
rule (``basic``, ``intermediate``, ``isotonic``), each alone (default parameters and
``min_samples_leaf=10``) and bagged (``--trees`` bootstrap trees, lower median of
their predictions, a monotone vote). For reference, the peer a user would reach for:
scikit-learn's ``DecisionTreeRegressor`` on the class index, free and with the same
``monotonic_cst``, its prediction rounded (alone and bagged the same way). Printed:
mean test MAE and its difference to the free model of the same kind, the fit time,
and whether every constrained model is certified (``is_monotone()``, ours) and has
no wrong-way step along lines parallel to a constrained feature (an independent
probe of ``predict``, every constrained model).

Run from the repository root: ``PYTHONPATH=. python benchmarks/monotone_trees.py``
(``--smoke``: seconds, sin-4 alone on 200 training and 1,000 test rows, one repeat, 3 trees).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_ordinal_synthetic  # noqa: E402

from sklearn.tree import DecisionTreeRegressor  # noqa: E402

from trees import OrdinalTreeClassifier  # noqa: E402

METHODS = ("basic", "intermediate", "isotonic")


def sin_4(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.random((n, 4))
    z = X[:, 0] - X[:, 1] + 0.5 * np.sin(2 * np.pi * X[:, 2]) + 0.3 * rng.standard_normal(n)
    return X, np.digitize(z, np.quantile(z, [0.2, 0.4, 0.6, 0.8]))


def synthetic_10(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_ordinal_synthetic(n, 10, random_state=int(rng.integers(2**31)))
    return X, y - 1


DATA = {
    "sin-4": (sin_4, 600, np.array([1, -1, 0, 0])),
    "synthetic-10": (synthetic_10, 1000, np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1])),
}


def wrong_way_steps(predict, X: np.ndarray, cst: np.ndarray, rng: np.random.Generator, n_lines: int = 40) -> int:
    """Steps against the constraint of ``predict`` along lines parallel to each constrained feature."""
    bad = 0
    grid = np.linspace(-0.1, 1.1, 121)
    for f in np.flatnonzero(cst):
        base = X[rng.integers(0, X.shape[0], n_lines)]
        points = np.repeat(base, grid.size, axis=0)
        points[:, f] = np.tile(grid, n_lines)
        along = predict(points).reshape(n_lines, grid.size)
        bad += int(np.sum(np.diff(along, axis=1) * cst[f] < 0))
    return bad


class RoundedRegressor:
    """scikit-learn's regression tree on the class index, its prediction rounded to a class."""

    def __init__(self, **params):
        self.params = params

    def fit(self, X, y, sample_weight=None):
        self.tree = DecisionTreeRegressor(random_state=0, **self.params).fit(X, y.astype(float), sample_weight)
        return self

    def predict(self, X):
        return np.clip(np.floor(self.tree.predict(X) + 0.5), 0, 4).astype(int)

    def is_monotone(self):
        return True  # no certificate: the probe alone judges it


class Bagged:
    """Bootstrap trees voting by the lower median of their predicted class indices."""

    def __init__(self, n_trees: int, seed: int, make=None, **params):
        self.n_trees, self.seed, self.params = n_trees, seed, params
        self.make = make or (lambda **p: OrdinalTreeClassifier(classes=np.arange(5), **p))

    def fit(self, X, y):
        rng = np.random.default_rng(self.seed)
        self.trees = []
        for _ in range(self.n_trees):
            w = np.bincount(rng.integers(0, X.shape[0], X.shape[0]), minlength=X.shape[0]).astype(float)
            self.trees.append(self.make(**self.params).fit(X, y, sample_weight=w))
        return self

    def predict(self, X):
        votes = np.sort(np.column_stack([t.predict(X) for t in self.trees]), axis=1)
        return votes[:, (self.n_trees + 1) // 2 - 1]

    def is_monotone(self):
        return all(t.is_monotone() for t in self.trees)


def models(n_trees: int, seed: int):
    """(name, method or None, factory) of every model compared."""
    for kind, extra in (("tree", {}), ("tree msl=10", {"min_samples_leaf": 10})):
        yield kind, None, lambda cst, extra=extra: OrdinalTreeClassifier(**extra)
        for method in METHODS:
            yield kind, method, lambda cst, method=method, extra=extra: OrdinalTreeClassifier(
                monotonic_cst=cst, monotonic_method=method, **extra)
    yield f"bagged {n_trees}", None, lambda cst: Bagged(n_trees, seed)
    for method in METHODS:
        yield f"bagged {n_trees}", method, lambda cst, method=method: Bagged(
            n_trees, seed, monotonic_cst=cst, monotonic_method=method)
    yield "sklearn tree", None, lambda cst: RoundedRegressor()
    yield "sklearn tree", "sklearn", lambda cst: RoundedRegressor(monotonic_cst=cst)
    yield f"sklearn bag {n_trees}", None, lambda cst: Bagged(n_trees, seed, RoundedRegressor)
    yield f"sklearn bag {n_trees}", "sklearn", lambda cst: Bagged(n_trees, seed, RoundedRegressor, monotonic_cst=cst)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trees", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: sin-4 alone, 200 training and 1,000 test rows, one repeat, 3 trees")
    args = parser.parse_args(argv)
    data, n_test = DATA, 5000
    if args.smoke:
        args.repeats, args.trees, n_test = 1, 3, 1000
        data = {"sin-4": (DATA["sin-4"][0], 200, DATA["sin-4"][2])}

    print(f"{'data':13s} {'model':14s} {'rule':12s} {'test MAE':>9s} {'vs free':>8s} {'fit s':>7s} {'certified':>10s}")
    for name, (make, n_train, cst) in data.items():
        rows: dict[tuple, list] = {}
        for r in range(args.repeats):
            rng = np.random.default_rng(args.seed * 1000 + r)
            X, y = make(n_train + n_test, rng)
            X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
            for kind, method, factory in models(args.trees, args.seed + r):
                start = time.perf_counter()
                model = factory(cst).fit(X_train, y_train)
                elapsed = time.perf_counter() - start
                mae = float(np.mean(np.abs(model.predict(X_test) - y_test)))
                ok = True
                if method is not None:
                    ok = model.is_monotone() and wrong_way_steps(model.predict, X_test, cst, rng) == 0
                rows.setdefault((kind, method), []).append((mae, elapsed, ok))
        for (kind, method), values in rows.items():
            mae, elapsed, ok = (np.array(v) for v in zip(*values))
            free = np.mean([v[0] for v in rows[(kind, None)]])
            rule = method or "free"
            certified = "-" if method is None else f"{int(ok.sum())}/{ok.size}"
            print(f"{name:13s} {kind:14s} {rule:12s} {mae.mean():9.4f} {mae.mean() - free:+8.4f} "
                  f"{elapsed.mean():7.3f} {certified:>10s}")


if __name__ == "__main__":
    main()
