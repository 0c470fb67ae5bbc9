"""What monotone constraints cost or gain, on data where a feature's direction is known.

Data sets and directions (domain knowledge, not fitted):

- credit (``examples/plot_monotone.py``'s generator): income +1, debt ratio -1;
- monotone-4 (issue 21's case): 4 features, the class rises with feature 0 and falls
  with feature 1, plus a sine of feature 2 and noise, 5 classes; 600 training rows;
- synthetic 10 features (``benchmarks/_common.make_ordinal_synthetic``): its linear
  features 0, 3, 6 and 9 are +1 (the others are not monotone);
- winequality-red: alcohol +1, sulphates +1, volatile acidity -1 (the wine-quality
  literature);
- housing10 (Boston housing, the standard column order): RM (x6) +1, LSTAT (x13) -1,
  CRIM (x1) -1;
- machine10 (UCI CPU performance, standard order): MMIN (x2), MMAX (x3), CACH (x4) +1;
- abalone10: shell weight (x10) +1 (rings grow with size).

For each, OTreeBagger and the certified forest are fitted with their defaults,
unconstrained and with the constraints, on the same splits (the first 3 hold-out
splits of the shared sets; one split of the synthetic ones). Printed: test MAE, fit
time, how many unconstrained models break the direction (``is_monotone(cst)``), and
the share of steps along random lines parallel to a constrained feature where the
unconstrained model goes the wrong way. Every constrained model must be certified
monotone and consistent.

Run::

    python benchmarks/monotone.py
    python benchmarks/monotone.py --smoke     # seconds: monotone-4 on 300 + 500 rows, fewer trees
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import make_ordinal_synthetic, shared_splits  # noqa: E402

from ensemble import ConsistentForestClassifier, ConsistentGradientBoostingClassifier, OTreeBagger  # noqa: E402
from trees import OrdinalTreeClassifier  # noqa: E402
from ensemble.metrics import mean_absolute_error  # noqa: E402

DIRECTIONS = {
    "credit": {0: 1, 1: -1},
    "monotone-4": {0: 1, 1: -1},
    "synthetic-10": {0: 1, 3: 1, 6: 1, 9: 1},
    "winequality-red": {10: 1, 9: 1, 1: -1},
    "housing10": {5: 1, 12: -1, 0: -1},
    "machine10": {1: 1, 2: 1, 3: 1},
    "abalone10": {9: 1},
}
MODELS = {"OTreeBagger": OTreeBagger, "forest": ConsistentForestClassifier,
          "boosting": ConsistentGradientBoostingClassifier, "tree": OrdinalTreeClassifier}


def _credit():
    spec = importlib.util.spec_from_file_location("plot_monotone", HERE.parent / "examples" / "plot_monotone.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_credit(2200, random_state=0)


#: --smoke: fewer trees and iterations (the forest keeps n_estimators="auto").
SMOKE_SIZES = {"OTreeBagger": {"n_estimators": 6}, "boosting": {"max_iter": 30}}


def _splits(name, n_splits, smoke=False):
    if name == "credit":
        X, y = _credit()
        yield X, y, np.arange(200), np.arange(200, 2200)
    elif name == "monotone-4":
        n_train, n = (300, 800) if smoke else (600, 4600)
        rng = np.random.RandomState(0)
        X = rng.uniform(size=(n, 4))
        score = 2 * X[:, 0] - 1.5 * X[:, 1] + 0.5 * np.sin(6 * X[:, 2]) + 0.3 * rng.normal(size=n)
        y = np.digitize(score, np.quantile(score[:n_train], [0.2, 0.4, 0.6, 0.8])) + 1
        yield X, y, np.arange(n_train), np.arange(n_train, n)
    elif name == "synthetic-10":
        X, y = make_ordinal_synthetic(3000, 10, random_state=0)
        yield X, y, np.arange(1000), np.arange(1000, 3000)
    else:
        for _, X, y, train, test in shared_splits(name, n_splits):
            yield X, y, train, test


def _wrong_way(model, X, cst, rng, n_lines=30, n_steps=100):
    """Share of steps along random lines parallel to constrained features that go the wrong way."""
    wrong = total = 0
    for f in np.flatnonzero(cst):
        for _ in range(n_lines):
            line = np.repeat(X[rng.randint(X.shape[0])][None, :], n_steps, axis=0)
            line[:, f] = np.linspace(X[:, f].min(), X[:, f].max(), n_steps)
            steps = np.diff(np.searchsorted(model.classes_, model.predict(line)))
            wrong += int(np.sum(steps * cst[f] < 0))
            total += int(np.sum(steps != 0))
    return wrong / max(total, 1)


def _count(breaks: np.ndarray) -> str:
    if np.isnan(breaks).all():
        return "n/a (projected)"
    return f"{int(np.nansum(breaks))} of {int(np.sum(~np.isnan(breaks)))}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=list(DIRECTIONS))
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--smoke", action="store_true",
                        help="seconds: monotone-4 alone on 300 training and 500 test rows; 6 OTreeBagger trees, "
                             "30 boosting iterations")
    args = parser.parse_args(argv)
    if args.smoke:
        args.datasets, args.splits = ["monotone-4"], 1
    print("| data set | model | MAE free | MAE monotone | fit s free | fit s monotone | free models breaking "
          "the direction | wrong-way share of class steps (free) | monotone certified |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    summary = {}
    for name in args.datasets:
        for label, cls in ((label, MODELS[label]) for label in args.models):
            rows = []
            for X, y, train, test in _splits(name, args.splits, args.smoke):
                cst = np.zeros(X.shape[1], dtype=int)
                for f, sign in DIRECTIONS[name].items():
                    cst[f] = sign
                out = {}
                for key, value in (("free", None), ("mono", cst)):
                    start = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        extra = SMOKE_SIZES.get(label, {}) if args.smoke else {}
                        model = cls(monotonic_cst=value, random_state=0, **extra).fit(X[train], y[train])
                    out[key] = (model, time.perf_counter() - start,
                                mean_absolute_error(y[test], model.predict(X[test])))
                free, mono = out["free"][0], out["mono"][0]
                try:
                    breaks = not free.is_monotone(cst)
                except ValueError:
                    # A free OTreeBagger mixed the constrained features into a component that moves
                    # both ways along them (PLS weights of both signs, or additive curves that rise
                    # and fall): no direction of a component to check; the line probes still measure it.
                    breaks = np.nan
                rows.append((out["free"][2], out["mono"][2], out["free"][1], out["mono"][1],
                             breaks, _wrong_way(free, X[test], cst, np.random.RandomState(0)),
                             mono.is_monotone() and getattr(mono, "is_consistent", lambda: True)()))
            r = np.array(rows, dtype=float)
            summary.setdefault(label, []).append((r[:, 0].mean(), r[:, 1].mean()))
            print(f"| {name} | {label} | {r[:, 0].mean():.3f} | {r[:, 1].mean():.3f} | {r[:, 2].mean():.2f} | "
                  f"{r[:, 3].mean():.2f} | {_count(r[:, 4])} | {r[:, 5].mean():.1%} | "
                  f"{bool(r[:, 6].all())} |", flush=True)
    for label, values in summary.items():
        values = np.array(values)
        print(f"{label}: mean MAE free {values[:, 0].mean():.4f}, monotone {values[:, 1].mean():.4f}")


if __name__ == "__main__":
    main()
