"""
Which features matter to an ordinal model, and how the expected class follows them
=================================================================================

The certified forest on the red wine data (11 physico-chemical features, quality
classes 3..8). Left: the impurity importances of the forest's trees
(``feature_importances_``) beside scikit-learn's permutation importance measured
in test MAE with :func:`ensemble.metrics.ordinal_scorer` (how much the error grows
when a feature is shuffled; unbiased, and it sees the model's cut points, which
impurity importances do not). Right: partial dependence of the *expected class*
``sum_k k P(class = k)`` on the two most important features, from
:func:`sklearn.inspection.partial_dependence` with a small wrapper that exposes
the expected class as a regression output.

Without the wine data (``--data-home``), the script runs on synthetic data of 8
features of which 2 matter.

Run: ``python examples/plot_importances.py --output out/``
"""

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.base import BaseEstimator, RegressorMixin  # noqa: E402
from sklearn.inspection import partial_dependence, permutation_importance  # noqa: E402

from ensemble import ConsistentForestClassifier  # noqa: E402
from ensemble.metrics import ordinal_scorer  # noqa: E402


class ExpectedClass(RegressorMixin, BaseEstimator):
    """A fitted ordinal classifier seen as a regressor of its expected class index.

    scikit-learn's partial dependence averages a model's output over the data; for
    an ordinal model the natural output is ``sum_k k P(class = k)``.
    """

    def __init__(self, model=None):
        self.model = model

    def fit(self, X, y=None):
        self.fitted_ = True
        return self

    def predict(self, X):
        proba = self.model.predict_proba(X)
        return proba @ np.arange(proba.shape[1])


def load(data_home):
    """The red wine data (train split 0) if available, else synthetic data of 8 features."""
    if data_home:
        from ensemble.datasets import load_benchmark

        X, y, train, test = load_benchmark("winequality-red", data_home, split=0)
        names = ["fixed acidity", "volatile acidity", "citric acid", "residual sugar", "chlorides",
                 "free SO2", "total SO2", "density", "pH", "sulphates", "alcohol"]
        return X[train], y[train], X[test], y[test], names[: X.shape[1]]
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(1200, 8))
    y = np.digitize(2 * X[:, 0] - X[:, 3] + 0.3 * rng.normal(size=1200), [-0.3, 0.3, 0.9, 1.5]) + 1
    return X[:800], y[:800], X[800:], y[800:], [f"x{j}" for j in range(8)]


# %%
def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description="Importances and partial dependence of an ordinal model.")
    parser.add_argument("--output", default="out", help="folder for the PNG")
    parser.add_argument("--data-home", default=None, help="folder holding winequality-red.csv")
    parser.add_argument("--n-repeats", type=int, default=5, help="shuffles per feature")
    args = parser.parse_args(argv)
    X, y, X_test, y_test, names = load(args.data_home)

    model = ConsistentForestClassifier(random_state=0).fit(X, y)
    permuted = permutation_importance(model, X_test, y_test, scoring=ordinal_scorer("mae"),
                                      n_repeats=args.n_repeats, random_state=0)
    order = np.argsort(permuted.importances_mean)[::-1]
    top = order[:2]

    fig, axes = plt.subplots(1, 3, figsize=(16, 5), gridspec_kw={"width_ratios": [2, 1, 1]})
    ax_imp = axes[0]
    pos = np.arange(len(names))
    impurity = model.feature_importances_[order]
    ax_imp.barh(pos - 0.2, impurity / max(impurity.max(), 1e-12) * permuted.importances_mean.max(), height=0.4,
                label="impurity importance (scaled)")
    ax_imp.barh(pos + 0.2, permuted.importances_mean[order], height=0.4, xerr=permuted.importances_std[order],
                label="permutation importance (test MAE increase)")
    ax_imp.set_yticks(pos, [names[j] for j in order])
    ax_imp.invert_yaxis()
    ax_imp.legend(loc="lower right")
    ax_imp.set_title(f"certified forest ({model.n_estimators_} trees, consistent: {model.is_consistent()})")

    expected = ExpectedClass(model).fit(X)
    low = model.classes_[0]
    for ax_pd, j in zip(axes[1:], top, strict=True):
        pd = partial_dependence(expected, X_test, [j], grid_resolution=40, kind="average")
        ax_pd.plot(pd["grid_values"][0], pd["average"][0] + low)
        ax_pd.set_xlabel(names[j])
        ax_pd.set_ylabel("expected class")
        ax_pd.set_title(f"partial dependence on {names[j]}")
    fig.tight_layout()
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "importances.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main())
