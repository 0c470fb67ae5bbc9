"""The audit's own reading of a tree ensemble: box partitions with values, and how they make a class.

Every supported model predicts a function of its trees' leaves. The audit reads each
tree (or each relabelled group of trees) as a *component*: a partition of R^d into
half-open boxes ``lower < x <= upper`` (:func:`trees.leaf_boxes`, the single home of box
extraction) with a value vector per box. The class is then made in one of two ways:

* ``"threshold"``: class >= a exactly when ``S_col(a)(x) >= theta_a`` for a = 1..K-1,
  where ``S_c`` is the offset plus the sum of the components' values in column c. Cut
  sums (our forest and boosting, regressors rounded to classes), lower medians (a
  class is >= a when enough voters say so) and rounded means all take this form.
* ``"argmax"``: the output column with the largest sum, lowest on ties (scikit-learn's
  classifiers), mapped to its ordinal rank.

Nothing here reads :mod:`ensemble.certificates._certificates`: the audit cross-checks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from trees import leaf_boxes
from trees.utils import warn_text_order

__all__ = ["Component", "Reading", "inside_points", "read_sklearn", "UnsupportedModel"]


class UnsupportedModel(NotImplementedError):
    """A model the audit cannot read exactly (it may still be probed through ``predict``)."""


def inside_points(lower: NDArray, upper: NDArray) -> NDArray[np.float64]:
    """A float64 point inside every half-open box ``lower < x <= upper``, however thin."""
    above = np.where(np.isfinite(lower), np.nextafter(lower, np.inf), 0.0)
    return np.where(np.isfinite(upper), upper, above)


@dataclass
class Component:
    """One voter: a box partition (rows) with a value vector per box and a map from points to boxes."""

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    values: NDArray  # (n_boxes, n_columns), int64 or float64
    apply: Callable[[NDArray[np.float64]], NDArray[np.intp]]
    # The box of points given in the component's own space (a projected group's), when that is not x.
    own_apply: Callable[[NDArray[np.float64]], NDArray[np.intp]] | None = None
    # The voter's classes on a whole grid (thresholds and a point of each cell, per feature), where
    # reading it at once costs less than point by point (a slab group's corners, feature by feature).
    grid_labels: Callable[[list, list], NDArray[np.int64]] | None = None


@dataclass
class Reading:
    """A model as the audit reads it (see the module docstring)."""

    components: list
    kind: str  # "threshold" or "argmax"
    offset: NDArray  # (n_columns,)
    n_classes: int
    n_features: int
    predict_rank: Callable[[NDArray[np.float64]], NDArray[np.intp]]
    classes: NDArray
    theta: NDArray | None = None  # threshold kind: theta_a for a = 1..K-1
    column: NDArray | None = None  # threshold kind: the column S of level a
    ranks: NDArray | None = None  # argmax kind: ordinal rank of every column
    integer: bool = False
    categorical: NDArray[np.bool_] | None = None
    grid: Any = None
    name: str = ""
    thresholds: list = field(default_factory=list)
    vote: str | None = None  # a vote of voters: "median", "mean" or "mode"
    labels: list | None = None  # a vote: every voter's class index per box
    # Voters in spaces of their own (projected OTreeBagger groups): their boxes are in those spaces,
    # with these movable axes, and ``thresholds`` are unknown in x (empty).
    projected: bool = False
    voter_movable: list | None = None
    # Projected voters read through rank maps: the model's own certificate of a notion, exact in
    # floats (docs/design.md section 13, Theorem 13.3); None where no such certificate exists.
    certify: Callable[[str], bool] | None = None

    def __post_init__(self):
        if self.categorical is None:
            self.categorical = np.zeros(self.n_features, dtype=bool)
        if not self.thresholds:
            self.thresholds = _thresholds(self.components, self.n_features)

    @property
    def n_leaves(self) -> int:
        return int(sum(c.values.shape[0] for c in self.components))

    def sums(self, X: NDArray[np.float64]) -> NDArray:
        """The offset plus every component's values at the rows of X (this reading's own evaluation)."""
        total = np.tile(np.asarray(self.offset, dtype=np.float64 if not self.integer else np.int64), (X.shape[0], 1))
        for comp in self.components:
            total = total + comp.values[comp.apply(X)]
        return total

    def evaluate(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """The class rank of every row of X as this reading computes it (tests compare it with predict)."""
        S = self.sums(X)
        if self.kind == "argmax":
            return self.ranks[np.argmax(S, axis=1)]
        levels = S[:, self.column] >= self.theta[None, :]
        return levels.sum(axis=1).astype(np.intp)


def _thresholds(components: list, n_features: int) -> list:
    out = []
    for f in range(n_features):
        bounds = np.concatenate([np.concatenate((c.lower[:, f], c.upper[:, f])) for c in components]) \
            if components else np.empty(0)
        out.append(np.unique(bounds[np.isfinite(bounds)]))
    return out


def _tree_component(structure: Any, n_features: int, values: NDArray) -> Component:
    """A tree (``tree_``-like) as a component; ``values`` indexed by node id."""
    boxes = leaf_boxes(structure, n_features)
    leaf_ids = boxes.leaf_ids
    row_of = np.full(np.asarray(structure.children_left).shape[0], -1, dtype=np.intp)
    row_of[leaf_ids] = np.arange(leaf_ids.shape[0])
    values = np.asarray(values)
    values = values.reshape(values.shape[0], -1)[leaf_ids]
    left = np.asarray(structure.children_left, dtype=np.intp)
    right = np.asarray(structure.children_right, dtype=np.intp)
    feature = np.asarray(structure.feature, dtype=np.intp)
    threshold = np.asarray(structure.threshold, dtype=np.float64)

    def apply(X):
        node = np.zeros(X.shape[0], dtype=np.intp)
        active = left[node] != -1
        while active.any():
            idx = np.flatnonzero(active)
            n = node[idx]
            go_left = X[idx, feature[n]] <= threshold[n]
            node[idx] = np.where(go_left, left[n], right[n])
            active[idx] = left[node[idx]] != -1
        return row_of[node]

    return Component(boxes.lower, boxes.upper, values, apply)


def float32_routing(threshold: NDArray) -> NDArray[np.float64]:
    """The float64 threshold T with ``float32(x) <= t`` exactly when ``x <= T``, for every float64 x.

    scikit-learn's ``DecisionTree*``, forests and ``GradientBoosting*`` cast ``X`` to
    float32 (round to nearest, ties to even) before comparing with their float64
    thresholds. With t32 the largest float32 <= t and u the next float32, the float64
    values rounding to t32 or below are those below the midpoint m of t32 and u, and m
    itself when t32 is even. Non-finite thresholds (leaves) are kept.

    Examples
    --------
    >>> t = np.array([0.35000000894069672])
    >>> T = float32_routing(t)
    >>> bool(np.float32(T[0]) <= t[0]), bool(np.float32(np.nextafter(T[0], 1.0)) <= t[0])
    (True, False)
    """
    t = np.asarray(threshold, dtype=np.float64)
    out = t.copy()
    big = np.finfo(np.float32).max
    ok = np.isfinite(t) & (np.abs(t) < big)
    with np.errstate(over="ignore"):
        t32 = t[ok].astype(np.float32)
    t32 = np.where(t32.astype(np.float64) > t[ok], np.nextafter(t32, np.float32(-np.inf)), t32)
    u = np.nextafter(t32, np.float32(np.inf)).astype(np.float64)
    m = (t32.astype(np.float64) + u) / 2.0  # exact: a float32 midpoint needs 25 bits
    even = (t32.view(np.uint32) & 1) == 0
    out[ok] = np.where(even, m, np.nextafter(m, -np.inf))
    return out


class _Float32Tree:
    """A scikit-learn ``tree_`` with its thresholds moved to the float64 values routing as its float32 ``predict``."""

    def __init__(self, tree_):
        self.children_left = tree_.children_left
        self.children_right = tree_.children_right
        self.feature = tree_.feature
        leaf = np.asarray(tree_.children_left) == -1
        self.threshold = np.where(leaf, tree_.threshold, float32_routing(np.where(leaf, 0.0, tree_.threshold)))
        if hasattr(tree_, "missing_go_to_left"):
            self.missing_go_to_left = tree_.missing_go_to_left


class _HistTree:
    """A HistGradientBoosting predictor's nodes as a ``tree_``-like structure."""

    def __init__(self, nodes):
        if np.any(nodes["is_categorical"][~nodes["is_leaf"].astype(bool)]):
            raise UnsupportedModel("the audit does not read categorical splits of HistGradientBoosting")
        leaf = nodes["is_leaf"].astype(bool)
        # The node ids are unsigned there: cast before marking the leaves with -1.
        self.children_left = np.where(leaf, -1, nodes["left"].astype(np.intp))
        self.children_right = np.where(leaf, -1, nodes["right"].astype(np.intp))
        self.feature = np.where(leaf, -2, nodes["feature_idx"]).astype(np.intp)
        self.threshold = np.where(leaf, -2.0, nodes["num_threshold"]).astype(np.float64)
        self.missing_go_to_left = nodes["missing_go_to_left"].astype(np.uint8)
        self.value = np.where(leaf, nodes["value"], 0.0)


def _ranks_of(model_classes: NDArray, classes: Any) -> tuple[NDArray, NDArray]:
    """Ordinal rank of each of the model's classes: the user's order, or the model's own.

    A model of another library knows no order of text classes (its ``classes_`` are sorted): read
    so, poor < fair < good became fair < good < poor and a consistent tree showed jumps of two.
    The sorted order is kept, with the warning the estimators of this package give.
    """
    if classes is None:
        warn_text_order(model_classes, stacklevel=5)
        return np.arange(model_classes.shape[0]), model_classes
    order = list(classes)
    missing = [c for c in model_classes.tolist() if c not in order]
    if missing or len(order) != len(model_classes):
        raise ValueError(f"classes must list the model's classes {model_classes.tolist()} in their order; "
                         f"got {order}")
    return np.array([order.index(c) for c in model_classes.tolist()]), np.asarray(order)


def _rank_predictor(model: Any, ranks: NDArray, model_classes: NDArray) -> Callable:
    lookup = {c: r for c, r in zip(model_classes.tolist(), ranks.tolist(), strict=True)}

    def predict_rank(X):
        pred = model.predict(X)
        return np.fromiter((lookup[p] for p in pred.tolist()), dtype=np.intp, count=len(pred))

    return predict_rank


def _cut_predictor(predict: Callable, theta: NDArray) -> Callable:
    def predict_rank(X):
        out = np.asarray(predict(X), dtype=np.float64).ravel()
        return np.searchsorted(theta, out, side="right").astype(np.intp)

    return predict_rank


def _regressor_cuts(components: list, offset: float, classes: Any, cuts: Any) -> tuple[NDArray, NDArray]:
    """Cut points of a regressor: the user's, half-way between numeric classes, or half-integers."""
    if cuts is not None:
        theta = np.asarray(cuts, dtype=np.float64).ravel()
        if theta.shape[0] < 1 or np.any(np.diff(theta) <= 0) or not np.all(np.isfinite(theta)):
            raise ValueError("cuts must be finite and strictly increasing")
        labels = np.arange(theta.shape[0] + 1) if classes is None else np.asarray(classes)
        if labels.shape[0] != theta.shape[0] + 1:
            raise ValueError(f"classes must have one more entry than cuts ({theta.shape[0] + 1}); got {labels.shape[0]}")
        return theta, labels
    if classes is not None:
        labels = np.asarray(classes, dtype=np.float64)
        if labels.shape[0] < 2 or np.any(np.diff(labels) <= 0):
            raise ValueError("classes of a regressor must be increasing numbers (the values it is rounded to)")
        return (labels[1:] + labels[:-1]) / 2.0, labels
    low = offset + sum(float(c.values.min()) for c in components)
    high = offset + sum(float(c.values.max()) for c in components)
    labels = np.arange(np.floor(low + 0.5), np.floor(high + 0.5) + 1.0)
    if labels.shape[0] < 2:
        labels = np.array([labels[0], labels[0] + 1.0])
    return (labels[1:] + labels[:-1]) / 2.0, labels


def _offset(model: Any, components: list, raw: Callable, n_features: int) -> NDArray[np.float64]:
    """The constant part of a sum of trees: its raw output at one point minus the trees' values there."""
    x0 = np.zeros((1, n_features))
    total = sum(c.values[c.apply(x0)] for c in components)
    return np.asarray(raw(x0), dtype=np.float64).reshape(1, -1)[0] - np.asarray(total, dtype=np.float64)[0]


def read_sklearn(model: Any, classes: Any, cuts: Any) -> Reading:
    from sklearn.base import is_classifier
    from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
                                  GradientBoostingRegressor, HistGradientBoostingClassifier,
                                  HistGradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor)
    from sklearn.tree import BaseDecisionTree

    d = int(model.n_features_in_)
    name = type(model).__name__
    if isinstance(model, BaseDecisionTree):
        trees, scale = [model], 1.0
    elif isinstance(model, (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier, ExtraTreesRegressor)):
        trees, scale = list(model.estimators_), 1.0 / len(model.estimators_)
    else:
        trees = None
    if trees is not None:
        if getattr(model, "n_outputs_", 1) != 1:
            raise UnsupportedModel(f"the audit reads single-output models; {name} has {model.n_outputs_} outputs")
        comps = []
        for t in trees:
            value = np.asarray(t.tree_.value, dtype=np.float64)[:, 0, :]
            if is_classifier(model):  # the class shares each tree votes with (predict_proba's normalisation)
                total = value.sum(axis=1, keepdims=True)
                value = value / np.where(total > 0, total, 1.0)
            comps.append(_tree_component(_Float32Tree(t.tree_), d, value * scale))
        if is_classifier(model):
            ranks, labels = _ranks_of(np.asarray(model.classes_), classes)
            return Reading(comps, "argmax", np.zeros(comps[0].values.shape[1]), len(labels), d,
                           _rank_predictor(model, ranks, np.asarray(model.classes_)), labels, ranks=ranks, name=name)
        offset = np.zeros(1)
        return _regressor_reading(model, comps, offset, classes, cuts, d, name)
    if isinstance(model, (GradientBoostingClassifier, GradientBoostingRegressor)):
        init = getattr(model, "init_", "zero")
        if not (isinstance(init, str) or type(init).__module__.startswith("sklearn.dummy")):
            raise UnsupportedModel(f"the audit reads gradient boosting with a constant start (init=None, 'zero' or a "
                                   f"Dummy estimator); this one starts from a {type(init).__name__}")
        lr = float(model.learning_rate)
        est = model.estimators_
        comps = [_tree_component(_Float32Tree(est[i, k].tree_), d, np.asarray(est[i, k].tree_.value)[:, 0, 0] * lr)
                 for i in range(est.shape[0]) for k in range(est.shape[1])]
        comps = _columns(comps, est.shape[1])
        raw = model.decision_function if is_classifier(model) else model.predict
    elif isinstance(model, (HistGradientBoostingClassifier, HistGradientBoostingRegressor)):
        preds = model._predictors
        k_out = len(preds[0]) if preds else 1
        comps = [_tree_component(_HistTree(p.nodes), d, _HistTree(p.nodes).value) for it in preds for p in it]
        comps = _columns(comps, k_out)
        if not is_classifier(model) and model.loss not in ("squared_error", "absolute_error", "quantile"):
            raise UnsupportedModel(f"the audit reads HistGradientBoostingRegressor with an identity link; "
                                   f"loss={model.loss!r} is not")
        raw = model.decision_function if is_classifier(model) else model.predict
    else:
        raise UnsupportedModel(f"the audit does not read {name}")
    offset = _offset(model, comps, raw, d)
    if is_classifier(model):
        ranks, labels = _ranks_of(np.asarray(model.classes_), classes)
        if offset.shape[0] == 1:  # binary: one raw score, class 1 when it is > 0
            return _binary(model, comps, offset, ranks, labels, d, name)
        return Reading(comps, "argmax", offset, len(labels), d,
                       _rank_predictor(model, ranks, np.asarray(model.classes_)), labels, ranks=ranks, name=name)
    return _regressor_reading(model, comps, offset, classes, cuts, d, name)


def _columns(comps: list, n_columns: int) -> list:
    """Spread the trees of a multi-output boosting model (tree i*K + k adds to column k) into K columns."""
    if n_columns == 1:
        return comps
    out = []
    for i, c in enumerate(comps):
        values = np.zeros((c.values.shape[0], n_columns))
        values[:, i % n_columns] = c.values[:, 0]
        out.append(Component(c.lower, c.upper, values, c.apply))
    return out


def _binary(model, comps, offset, ranks, labels, d, name, predict_rank=None) -> Reading:
    # Class 1 when the raw score is > 0: two columns (0, score), argmax lowest on ties.
    two = [Component(c.lower, c.upper, np.column_stack((np.zeros(c.values.shape[0]), c.values[:, 0])), c.apply)
           for c in comps]
    predict_rank = predict_rank or _rank_predictor(model, ranks, np.asarray(model.classes_))
    return Reading(two, "argmax", np.array([0.0, offset[0]]), 2, d, predict_rank, labels, ranks=ranks, name=name)


def _regressor_reading(model, comps, offset, classes, cuts, d, name, predict=None) -> Reading:
    theta, labels = _regressor_cuts(comps, float(offset[0]), classes, cuts)
    predict_rank = _cut_predictor(predict or model.predict, theta)
    return Reading(comps, "threshold", offset, theta.shape[0] + 1, d, predict_rank, labels,
                   theta=theta, column=np.zeros(theta.shape[0], dtype=np.intp), name=name)
