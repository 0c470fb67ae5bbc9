"""Fit and predict time of OTreeBagger against scikit-learn's BaggingClassifier, in one run.

OTreeBagger with B = 100 trees in groups of M = 5 on syntheticI (1,000 points)
against ``BaggingClassifier(DecisionTreeClassifier(), n_estimators=100)`` on the
same data; both single-process (``n_jobs=1``) unless ``--n-jobs`` says otherwise.
Targets (docs/design.md section 7): fit within 3x, predict within 1.5x.

Run::

    python benchmarks/ensemble_speed.py
    python benchmarks/ensemble_speed.py --smoke    # seconds: 200 points, B = 10, one repeat
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.ensemble import BaggingClassifier
from sklearn.tree import DecisionTreeClassifier

from ensemble import OTreeBagger
from ensemble.datasets import make_synthetic_i


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--group-size", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="seconds: 200 points, B=10, 1,000 test points, 1 repeat")
    args = parser.parse_args(argv)
    n_test = 10_000
    if args.smoke:
        args.n_samples, args.n_estimators, args.repeats, n_test = 200, 10, 1, 1_000

    X, y = make_synthetic_i(args.n_samples, random_state=0)
    X_test, _ = make_synthetic_i(n_test, random_state=1)
    ours = OTreeBagger(n_estimators=args.n_estimators, group_size=args.group_size, random_state=0,
                       n_jobs=args.n_jobs)
    theirs = BaggingClassifier(DecisionTreeClassifier(), n_estimators=args.n_estimators, random_state=0,
                               n_jobs=args.n_jobs)
    fit_ours = _best(lambda: ours.fit(X, y), args.repeats)
    fit_theirs = _best(lambda: theirs.fit(X, y), args.repeats)
    pred_ours = _best(lambda: ours.predict(X_test), args.repeats)
    pred_theirs = _best(lambda: theirs.predict(X_test), args.repeats)
    info = ours.groups_info_
    print(f"syntheticI n={args.n_samples}, B={args.n_estimators}, M={args.group_size}, n_jobs={args.n_jobs}")
    print(f"groups: {len(info)}, regions per group {np.mean([i['n_regions'] for i in info]):.0f}, "
          f"edges {np.mean([i['n_edges'] for i in info]):.0f}, "
          f"solve {np.sum([i['solve_time'] for i in info]):.2f} s in all, consistent: {ours.is_consistent()}")
    print(f"{'':<10}{'OTreeBagger':>12}{'Bagging':>12}{'ratio':>8}{'target':>8}")
    print(f"{'fit s':<10}{fit_ours:>12.3f}{fit_theirs:>12.3f}{fit_ours / fit_theirs:>8.2f}{'<= 3':>8}")
    print(f"{'predict s':<10}{pred_ours:>12.3f}{pred_theirs:>12.3f}{pred_ours / pred_theirs:>8.2f}{'<= 1.5':>8}"
          f"   ({len(X_test)} points)")


if __name__ == "__main__":
    main()
