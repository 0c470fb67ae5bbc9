"""Which splitting criterion the certified forest should grow its trees with.

Every criterion of ``ConsistentForestClassifier`` (``squared_error``: scikit-learn's
regression tree on the class index; the others: ``trees.OrdinalTreeClassifier``
whose leaf value is the mean class index) on the shared data sets (3 hold-out
splits each) and synthetic data, all with ``n_estimators="auto"``. Prints test MAE
per data set, the mean, the median of the paired differences against
``squared_error``, mean fit time, and the size of the pickled model on
winequality-red against ``RandomForestRegressor`` with the same number of trees
(the forest's memory target is 2x that regressor). Every model must certify.

Run::

    python benchmarks/forest_criteria.py
    python benchmarks/forest_criteria.py --synthetic 20x4000 50x10000
    python benchmarks/forest_criteria.py --smoke        # seconds: two criteria on 6 x 150 synthetic rows
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, make_ordinal_synthetic, shared_names, shared_splits  # noqa: E402

from ensemble import ConsistentForestClassifier  # noqa: E402
from ensemble.datasets import load_benchmark  # noqa: E402

CRITERIA = ["squared_error", "ogini", "ranking", "gini", "entropy", "wig"]


def _sets(args):
    for name in args.datasets:
        for _, X, y, train, test in shared_splits(name, args.splits):
            yield name, X, y, train, test
    for spec in args.synthetic:
        d, n = (int(v) for v in spec.split("x"))
        X, y = make_ordinal_synthetic(n, d, random_state=0)
        yield f"synthetic-{spec}", X, y, np.arange(n // 2), np.arange(n // 2, n)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--synthetic", nargs="*", default=["20x4000", "50x10000"], help="DxN synthetic data sets")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--criteria", nargs="+", default=CRITERIA, choices=CRITERIA)
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: squared_error and ogini on 6 x 150 synthetic rows (no shared set; the model "
                             "size on them too), one process")
    args = parser.parse_args(argv)
    args.datasets, size_set = shared_names(), "winequality-red"
    if args.smoke:
        args.datasets, args.synthetic, args.n_jobs, args.criteria = [], ["6x150"], 1, ["squared_error", "ogini"]
        size_set = "synthetic-6x150"
    criteria = [c for c in CRITERIA if c in args.criteria]
    if "squared_error" not in criteria:
        parser.error("--criteria must include squared_error (the differences are against it)")

    mae = {c: {} for c in criteria}
    fit = {c: {} for c in criteria}
    for name, X, y, train, test in _sets(args):
        for c in criteria:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                model = ConsistentForestClassifier(criterion=c, n_jobs=args.n_jobs, random_state=0).fit(X[train], y[train])
            fit[c].setdefault(name, []).append(time.perf_counter() - start)
            mae[c].setdefault(name, []).append(float(np.abs(model.predict(X[test]) - y[test]).mean()))
            if not model.is_consistent():
                raise AssertionError(f"{c} on {name}: not certified")
        print(name, " ".join(f"{c} {mae[c][name][-1]:.3f}" for c in criteria), flush=True)

    names = list(mae["squared_error"])
    means = {c: np.array([np.mean(mae[c][n]) for n in names]) for c in criteria}
    print("\ntest MAE, mean over splits; every model certified")
    print("| criterion | " + " | ".join(names) + " | mean | median paired diff. vs squared_error | mean fit s |")
    print("|---|" + "---:|" * (len(names) + 3))
    for c in criteria:
        diff = np.median(means[c] - means["squared_error"])
        seconds = np.mean([np.mean(fit[c][n]) for n in names])
        print(f"| {c} | " + " | ".join(f"{v:.3f}" for v in means[c])
              + f" | {means[c].mean():.4f} | {diff:+.4f} | {seconds:.2f} |")

    if size_set.startswith("synthetic-"):
        d, n = (int(v) for v in size_set[len("synthetic-"):].split("x"))
        X, y = make_ordinal_synthetic(n, d, random_state=0)
        train = np.arange(n // 2)
    else:
        X, y, train, _ = load_benchmark(size_set, DATA_DIR, split=0)
    print(f"\npickled model size on {size_set} against RandomForestRegressor with the same trees (target 2x):")
    for c in criteria:
        model = ConsistentForestClassifier(criterion=c, random_state=0).fit(X[train], y[train])
        peer = RandomForestRegressor(n_estimators=model.n_estimators_, random_state=0).fit(X[train], y[train])
        ours, theirs = len(pickle.dumps(model)), len(pickle.dumps(peer))
        print(f"  {c:<14} {ours / 1e6:6.2f} MB ({model.n_estimators_} trees), regressor {theirs / 1e6:5.2f} MB, "
              f"ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
