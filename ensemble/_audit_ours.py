"""The audit's reading of this library's own models, from their fitted trees.

Independent of the models' certificates: the forest and boosting are read as cut sums of
their trees' integer leaf values, OTreeBagger as the vote of its groups, each group's
label read on every raw region of its trees (``relabel.fuse(snap=False)``) by the group's
own lookup, so the snapped partition and its aliases are what is read, not assumed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensemble._audit_read import Component, Reading, UnsupportedModel, _tree_component, inside_points

__all__ = ["read_ours"]


def _ranks(model: Any, classes: Any) -> np.ndarray:
    if classes is not None and list(classes) != model.classes_.tolist():
        raise ValueError(f"classes must be the model's own order {model.classes_.tolist()} (its classes_ are "
                         "ordered); omit it")
    return np.arange(model.classes_.shape[0])


def _predictor(model: Any):
    lookup = {c: r for r, c in enumerate(model.classes_.tolist())}

    def predict_rank(X):
        pred = model.predict(X)
        return np.fromiter((lookup[p] for p in pred.tolist()), dtype=np.intp, count=len(pred))

    return predict_rank


def _common(model: Any) -> dict:
    d = int(model.n_features_in_)
    categorical = np.zeros(d, dtype=bool)
    cats = getattr(model, "categorical_features_", None)
    if cats is not None:
        categorical[np.asarray(cats, dtype=np.intp)] = True
    return dict(n_features=d, categorical=categorical, grid=model.__dict__.get("_grid"), name=type(model).__name__)


def _cut_sum(model: Any, trees: list, values: list, offset: int) -> Reading:
    common = _common(model)
    comps = [_tree_component(t.tree_, common["n_features"], v) for t, v in zip(trees, values, strict=True)]
    cuts = np.asarray(model._cuts, dtype=np.int64)
    return Reading(comps, "threshold", np.array([offset], dtype=np.int64), cuts.shape[0] + 1,
                   predict_rank=_predictor(model), classes=model.classes_, theta=cuts,
                   column=np.zeros(cuts.shape[0], dtype=np.intp), integer=True, **common)


def _voters(model: Any, components: list, labels_of: list, vote: str) -> Reading:
    """A vote of L voters with labels per box: lower median, rounded mean or majority."""
    common = _common(model)
    K = int(model.classes_.shape[0])
    L = len(components)
    if vote == "mode":  # the most frequent class, lowest on ties: argmax of one-hot counts
        comps = [Component(c.lower, c.upper, np.eye(K, dtype=np.int64)[lab], c.apply)
                 for c, lab in zip(components, labels_of, strict=True)]
        return Reading(comps, "argmax", np.zeros(K, dtype=np.int64), K, predict_rank=_predictor(model),
                       classes=model.classes_, ranks=np.arange(K), integer=True, vote=vote, labels=labels_of,
                       **common)
    if vote == "mean":  # floor(mean + 1/2) >= a  <=>  2 * sum >= L (2a - 1)
        comps = [Component(c.lower, c.upper, 2 * lab[:, None].astype(np.int64), c.apply)
                 for c, lab in zip(components, labels_of, strict=True)]
        theta = L * (2 * np.arange(1, K) - 1)
        column = np.zeros(K - 1, dtype=np.intp)
    else:  # the order statistic of rank ceil(L/2) is >= a when at least L - ceil(L/2) + 1 voters are
        comps = [Component(c.lower, c.upper, (lab[:, None] >= np.arange(1, K)[None, :]).astype(np.int64), c.apply)
                 for c, lab in zip(components, labels_of, strict=True)]
        theta = np.full(K - 1, L - (L + 1) // 2 + 1)
        column = np.arange(K - 1)
    return Reading(comps, "threshold", np.zeros(comps[0].values.shape[1], dtype=np.int64), K,
                   predict_rank=_predictor(model), classes=model.classes_, theta=np.asarray(theta, dtype=np.int64),
                   column=column, integer=True, vote=vote, labels=labels_of, **common)


def _group_component(group: Any, d: int) -> tuple[Component, np.ndarray]:
    import relabel
    from trees import leaf_boxes

    if group.space is not None:
        raise UnsupportedModel("the audit reads groups on the features' own axes; this OTreeBagger's groups split "
                               "a projected space (fit it with projection='none')")
    if group.partition is None:
        comp = _tree_component(group.trees[0].tree_, d, np.zeros(group.trees[0].tree_.children_left.shape[0]))
    else:
        part = relabel.fuse([leaf_boxes(t, d) for t in group.trees], snap=False)
        trees = [t.tree_ for t in group.trees]

        def apply(X, part=part, trees=trees):
            return part.locate(np.column_stack([t.apply(X) for t in trees]))

        comp = Component(part.lower, part.upper, np.zeros((part.lower.shape[0], 1)), apply)
    labels = np.asarray(group.predict_index(inside_points(comp.lower, comp.upper)), dtype=np.int64)
    return comp, labels


def read_ours(model: Any, classes: Any) -> Reading:
    """Read a fitted model of this library (see the module docstring)."""
    from sklearn.utils.validation import check_is_fitted

    from ensemble._boosting import ConsistentGradientBoostingClassifier
    from ensemble._forest import ConsistentForestClassifier
    from ensemble._otreebagger import OTreeBagger
    from trees import OrdinalTreeClassifier

    check_is_fitted(model)
    _ranks(model, classes)
    if isinstance(model, ConsistentForestClassifier):
        if model.space_ is not None or model._envelope is not None:
            raise UnsupportedModel("the audit reads forests whose trees split the features with plain leaf values; "
                                   "this one uses a monotone index or monotone envelopes")
        return _cut_sum(model, model.estimators_, [v.value for v in model._voters], 0)
    if isinstance(model, ConsistentGradientBoostingClassifier):
        return _cut_sum(model, model.estimators_, [t.value for t in model.estimators_], int(model._f0))
    if isinstance(model, OTreeBagger):
        if len(getattr(model, "missing_features_", ())):
            raise UnsupportedModel("the audit does not read OTreeBagger models fitted with missing values")
        d = int(model.n_features_in_)
        pairs = [_group_component(g, d) for g in model.groups_]
        return _voters(model, [p[0] for p in pairs], [p[1] for p in pairs], model._vote)
    if isinstance(model, OrdinalTreeClassifier):
        d = int(model.n_features_in_)
        comp = _tree_component(model.tree_, d, np.zeros(model.tree_.children_left.shape[0]))
        labels = _predictor(model)(inside_points(comp.lower, comp.upper)).astype(np.int64)
        return _voters(model, [comp], [labels], "median")  # one voter: its own label
    raise UnsupportedModel(f"the audit does not read {type(model).__name__}")
