"""Ranking Tree synthetic experiment (Xia et al. 2006, section 4.A) with our trees.

syntheticI-style data (docs/design.md section 6): x uniform on the unit square,
z = 10 (x1 - 0.5)(x2 - 0.5) + eps, eps ~ N(0, 0.125^2), y = 1 + #{b : z > b} for
b in (-1, -0.1, 0.25, 1), so K = 5. Each repetition draws 50,000 training and
1,000 test points, fits depth-9 trees and reports the mean absolute error
(the paper's "average rank loss"). Paper: Ranking Tree 0.16 +- 0.01,
classification (gini) tree 0.17 +- 0.01.

Run: ``nice -n 10 python benchmarks/trees_synthetic.py [--repeats 10]`` (``--smoke``: seconds, one
repetition of 2,000 training and 500 test points).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import t as student_t

from trees import OrdinalTreeClassifier

THRESHOLDS = np.array([-1.0, -0.1, 0.25, 1.0])


def synthetic_i(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw n syntheticI points: labels 1..5 from a noisy saddle."""
    X = rng.random((n, 2))
    z = 10.0 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) + rng.normal(0.0, 0.125, size=n)
    y = 1 + (z[:, None] > THRESHOLDS).sum(axis=1)
    return X, y


CONFIGS = [
    ("ranking", "median", "Ranking Tree (paper 0.16 +- 0.01)"),
    ("ranking", "mode", "Ranking Tree, mode leaves"),
    ("gini", "mode", "Gini classification tree (paper 0.17 +- 0.01)"),
    ("gini", "median", "Gini tree, median leaves"),
    ("ogini", "median", "OGini tree"),
    ("entropy", "mode", "Entropy tree"),
    ("wig", "median", "WIG tree"),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--n-train", type=int, default=50_000)
    parser.add_argument("--n-test", type=int, default=1_000)
    parser.add_argument("--depth", type=int, default=9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="seconds: one repetition, 2,000 train / 500 test points")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeats, args.n_train, args.n_test = 1, 2_000, 500

    rng = np.random.default_rng(args.seed)
    errors = {cfg: [] for cfg in CONFIGS}
    start = time.perf_counter()
    for _ in range(args.repeats):
        X, y = synthetic_i(args.n_train, rng)
        X_test, y_test = synthetic_i(args.n_test, rng)
        for cfg in CONFIGS:
            criterion, leaf_label, _ = cfg
            tree = OrdinalTreeClassifier(criterion=criterion, leaf_label=leaf_label, max_depth=args.depth)
            pred = tree.fit(X, y).predict(X_test)
            errors[cfg].append(np.abs(pred - y_test).mean())
    elapsed = time.perf_counter() - start

    print(
        f"syntheticI: {args.n_train} train / {args.n_test} test points, depth {args.depth}, "
        f"{args.repeats} repetitions (seed {args.seed}), {elapsed:.1f} s"
    )
    print(f"{'tree':48s} {'MAE mean':>9s} {'sd':>7s} {'95% CI half-width':>18s}")
    for cfg in CONFIGS:
        e = np.asarray(errors[cfg])
        sd = e.std(ddof=1) if e.size > 1 else 0.0
        half = student_t.ppf(0.975, e.size - 1) * sd / np.sqrt(e.size) if e.size > 1 else 0.0
        print(f"{cfg[2]:48s} {e.mean():9.4f} {sd:7.4f} {half:18.4f}")


if __name__ == "__main__":
    main()
