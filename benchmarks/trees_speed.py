"""Fit and predict time of OrdinalTreeClassifier relative to scikit-learn's DecisionTreeClassifier.

Both are timed in the same run on the same data and depth, best of a few
repeats, interleaved (docs/design.md section 7 targets: fit and predict within 1x, every criterion).
The baseline for ``entropy`` is scikit-learn with ``criterion="entropy"``; for
every other criterion it is scikit-learn's ``gini`` (it has no ordinal
criterion). Predict times include input validation on both sides.

Run from the repository root: ``PYTHONPATH=. nice -n 10 python benchmarks/trees_speed.py
[--repeats 3] [--clock cpu]`` (``PYTHONPATH=.``: a script's own folder, not the current
one, comes first on ``sys.path``, so without it an installed copy of ``trees`` is timed).
``--clock cpu`` times the process's CPU time instead of the wall clock: both sides are
single-threaded, and on a machine shared with other jobs the CPU time is the steadier
measure of the work done. ``--smoke``: seconds, 2,000 rows per data set, one repeat.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from trees import CRITERIA, OrdinalTreeClassifier

FIT_TARGET, PREDICT_TARGET = 1.0, 1.0


def dense_ordinal(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n x d uniform features; 5 ordered classes from a noisy function of four of them."""
    X = rng.random((n, d))
    z = X[:, 0] + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.3 * rng.standard_normal(n)
    y = 1 + np.searchsorted(np.quantile(z, [0.2, 0.4, 0.6, 0.8]), z)
    return X, y


def synthetic_i(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """syntheticI (docs/design.md section 6): 2 features, 5 classes."""
    X = rng.random((n, 2))
    z = 10.0 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) + rng.normal(0.0, 0.125, size=n)
    return X, 1 + (z[:, None] > np.array([-1.0, -0.1, 0.25, 1.0])).sum(axis=1)


def best_times(funcs, repeats: int, clock=time.perf_counter) -> list[float]:
    """Best time of each function, the functions interleaved in every repeat.

    Interleaving keeps the ratio fair when the machine's load drifts.
    """
    best = [np.inf] * len(funcs)
    for _ in range(repeats):
        for i, func in enumerate(funcs):
            start = clock()
            func()
            best[i] = min(best[i], clock() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--criteria", nargs="*", default=list(CRITERIA))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--smoke", action="store_true", help="seconds: 2,000 rows per data set, one repeat")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    n_dense, n_syn = (2_000, 2_000) if args.smoke else (20_000, 50_000)
    if args.smoke:
        args.repeats = 1

    rng = np.random.default_rng(args.seed)
    datasets = [
        (f"{n_dense}x10 full depth", *dense_ordinal(n_dense, 10, rng), *dense_ordinal(n_dense, 10, rng)[:1], None),
        (f"{n_syn}x2 depth 9", *synthetic_i(n_syn, rng), *synthetic_i(n_syn, rng)[:1], 9),
    ]
    header = (
        f"{'data':22s} {'criterion':9s} {'fit ours':>9s} {'fit sk':>8s} {'ratio':>6s} "
        f"{'pred ours':>10s} {'pred sk':>8s} {'ratio':>6s} {'depth':>9s} {'leaves':>11s}"
    )
    print(header)
    worst_fit = worst_pred = 0.0
    for name, X, y, X_test, depth in datasets:
        for criterion in args.criteria:
            sk_criterion = "entropy" if criterion == "entropy" else "gini"
            sk = DecisionTreeClassifier(criterion=sk_criterion, max_depth=depth, random_state=0)
            ours = OrdinalTreeClassifier(criterion=criterion, max_depth=depth)
            fit, sk_fit = best_times([partial(ours.fit, X, y), partial(sk.fit, X, y)], args.repeats, clock)
            pred, sk_pred = best_times([partial(ours.predict, X_test), partial(sk.predict, X_test)],
                                       3 * args.repeats, clock)
            worst_fit = max(worst_fit, fit / sk_fit)
            worst_pred = max(worst_pred, pred / sk_pred)
            print(
                f"{name:22s} {criterion:9s} {fit:8.3f}s {sk_fit:7.3f}s {fit / sk_fit:6.2f} "
                f"{pred * 1e3:8.2f}ms {sk_pred * 1e3:6.2f}ms {pred / sk_pred:6.2f} "
                f"{ours.get_depth():4d}/{sk.get_depth():<4d} {ours.get_n_leaves():5d}/{sk.get_n_leaves():<5d}"
            )
    print(
        f"worst fit ratio {worst_fit:.2f} (target {FIT_TARGET}), "
        f"worst predict ratio {worst_pred:.2f} (target {PREDICT_TARGET})"
    )


if __name__ == "__main__":
    main()
