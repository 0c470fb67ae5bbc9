"""Prototype: OTreeBagger's groups in an additive spline space instead of PLS components.

``otreebagger_levers.py --decompose`` shows where OTreeBagger's gap to TreeBagger lies:
in the groups' space (three PLS components of the features), not in the consistency
constraints. This prototype measures one alternative before it becomes a
``projection`` option. The space, fitted once on the training rows:

- ``s(x) = sum_f g_f(x_f)``: a ridge regression (``RidgeCV``) of the class index on cubic
  B-splines of every continuous feature (``SplineTransformer``, 8 knots at the
  features' quantiles), an additive score with one smooth curve per feature;
- the first two PLS components of the continuous features against the residual
  class index ``y - s(x)``;
- every categorical column (``categorical_features="auto"``: two-valued columns,
  bool and categorical dtypes) as it is, declared categorical to the model.

The map x -> z is continuous (splines and affine maps), so a labelling consistent
in z is consistent in x: ``OTreeBagger(projection="none")`` is fitted on z and its
``is_consistent()`` certifies the model in x (docs/design.md section 5 argues the
same for the affine PLS map). Monotone constraints and r-consistency are not
carried over by this prototype.

For each shared data set (its first ``--splits`` hold-out partitions) and synthetic
data (``make_ordinal_synthetic``, half the rows for training): test MAE and fit time
of TreeBagger, ``OTreeBagger()`` and the prototype, with the prototype's certificate
and an oracle for it in x (100 segments between test rows scanned in 2,000 steps: no
step may jump two classes).

Run::

    python benchmarks/additive_space.py                       # 12 sets + 20 x 20,000 (about 10 min on 2 cores)
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
from ensemble.metrics import mean_absolute_error  # noqa: E402

# The paper's TreeBagger: full-depth Gini trees on the features, majority vote.
BASELINE = {"relabel": False, "vote": "mode", "criterion": "gini", "projection": "none", "max_depth": None}


class AdditiveSpace:
    """``z = [s(x), PLS_1, PLS_2 of the residual, categorical columns]``, fitted on training rows."""

    def __init__(self, categorical: np.ndarray, n_knots: int = 8, n_pls: int = 2) -> None:
        self.categorical = np.asarray(categorical, dtype=np.intp)
        self.n_knots, self.n_pls = n_knots, n_pls

    def fit(self, X: np.ndarray, y: np.ndarray) -> "AdditiveSpace":
        from sklearn.cross_decomposition import PLSRegression
        from sklearn.linear_model import RidgeCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import SplineTransformer, StandardScaler

        self.continuous = np.setdiff1d(np.arange(X.shape[1]), self.categorical)
        self.score = self.pls = None
        if self.continuous.shape[0] == 0:
            return self
        Xc, target = X[:, self.continuous], y.astype(np.float64)
        self.score = make_pipeline(StandardScaler(), SplineTransformer(n_knots=self.n_knots, knots="quantile"),
                                   RidgeCV(alphas=np.logspace(-3, 3, 13))).fit(Xc, target)
        self.scaler = StandardScaler().fit(Xc)
        n_pls = min(self.n_pls, self.continuous.shape[0])
        self.pls = PLSRegression(n_components=n_pls, scale=False).fit(
            self.scaler.transform(Xc), target - self.score.predict(Xc))
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        parts = []
        if self.score is not None:
            Xc = X[:, self.continuous]
            parts += [self.score.predict(Xc)[:, None], self.pls.transform(self.scaler.transform(Xc))]
        return np.column_stack(parts + [X[:, self.categorical]])

    @property
    def categorical_in_z(self) -> np.ndarray:
        k = 0 if self.score is None else 1 + self.pls.n_components
        return np.arange(k, k + self.categorical.shape[0])


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
    """Test MAE and fit seconds of the three models on one split; the prototype's certificate."""
    labels = np.arange(1, int(y.max()) + 1)
    row = {}
    tb, t_tb = _timed(lambda: OTreeBagger(**BASELINE, n_jobs=n_jobs, random_state=seed).fit(X[train], y[train]))
    row["TreeBagger"] = (mean_absolute_error(y[test], tb.predict(X[test]), labels=labels), t_tb)
    otb, t_otb = _timed(lambda: OTreeBagger(n_jobs=n_jobs, random_state=seed).fit(X[train], y[train]))
    row["OTreeBagger()"] = (mean_absolute_error(y[test], otb.predict(X[test]), labels=labels), t_otb)

    def fit_additive():
        # The same categorical columns as OTreeBagger() found (categorical_features="auto").
        space = AdditiveSpace(otb.categorical_features_).fit(X[train], y[train])
        model = OTreeBagger(projection="none", categorical_features=space.categorical_in_z,
                            n_jobs=n_jobs, random_state=seed).fit(space.transform(X[train]), y[train])
        return space, model

    (space, model), t_add = _timed(fit_additive)
    row["additive space"] = (mean_absolute_error(y[test], model.predict(space.transform(X[test])), labels=labels),
                             t_add)
    certified = bool(model.is_consistent())
    jumps = _line_jumps(lambda Xq: model.predict(space.transform(Xq)), X[test], np.random.RandomState(seed))
    if certified and jumps:
        raise SystemExit(f"the certificate holds in z but {jumps} line steps in x jump two classes")
    return row, certified


def _line_jumps(predict, X, rng, n_lines: int = 100, n_steps: int = 2000) -> int:
    """Steps of two classes or more along segments between random test rows, in x (an oracle).

    A fine scan can miss a thin region, so it can only refute the certificate,
    never confirm it: it checks that consistency in z carries over to x.
    """
    a, b = X[rng.randint(len(X), size=n_lines)], X[rng.randint(len(X), size=n_lines)]
    t = np.linspace(0.0, 1.0, n_steps)[:, None]
    points = np.concatenate([a[i] + t * (b[i] - a[i]) for i in range(n_lines)])
    classes = predict(points).reshape(n_lines, n_steps)
    return int(np.sum(np.abs(np.diff(classes, axis=1)) > 1))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=None, help="shared CSV names (default: all)")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--synthetic", type=lambda s: tuple(int(v) for v in s.split("x")), nargs="*",
                        default=[(20, 20000)], help="FEATURESxROWS, half for training")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    names = shared_names() if args.datasets is None else args.datasets
    models = ("TreeBagger", "OTreeBagger()", "additive space")
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
