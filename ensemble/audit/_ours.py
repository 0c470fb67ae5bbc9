"""The audit's reading of this library's own models, from their fitted trees.

Independent of the models' certificates: the forest and boosting are read as cut sums of
their trees' integer leaf values, OTreeBagger as the vote of its groups, each group's
label read on every raw region of its trees (``relabel.fuse(snap=False)``) by the group's
own lookup, so the snapped partition and its aliases are what is read, not assumed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ensemble.audit._grid import on_mesh
from ensemble.audit._read import Component, Reading, UnsupportedModel, _tree_component, inside_points
from ensemble.otreebagger._slabs import shifted_trees, slab_grid_labels

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
    return dict(n_features=d, categorical=categorical, grid=_kept_grid(model), name=type(model).__name__)


def _kept_grid(model: Any):
    """The training values the model kept, whose gaps are its data's resolution (None if it kept none).

    A model keeps the values bracketing its thresholds on the features' axes; OTreeBagger's
    groups in a rank-mapped space keep theirs in their rank maps (every training value of a
    mapped feature), and split no feature's own axis, so those are added.
    """
    grid = model.__dict__.get("_grid")
    if grid is None:
        return None
    values = list(grid.values)
    for group in getattr(model, "groups_", None) or []:
        ranks = getattr(getattr(group, "space", None), "ranks", None)
        if ranks is None:
            continue
        for f, v in zip(ranks.features, ranks.values, strict=True):
            if values[f] is not None:
                values[f] = np.union1d(values[f], np.asarray(v, dtype=np.float64))
    return type(grid)(tuple(values))


def _cut_sum(model: Any, trees: list, values: list, offset: int) -> Reading:
    common = _common(model)
    comps = [_tree_component(t.tree_, common["n_features"], v) for t, v in zip(trees, values, strict=True)]
    cuts = np.asarray(model._cuts, dtype=np.int64)
    return Reading(comps, "threshold", np.array([offset], dtype=np.int64), cuts.shape[0] + 1,
                   predict_rank=_predictor(model), classes=model.classes_, theta=cuts,
                   column=np.zeros(cuts.shape[0], dtype=np.intp), integer=True, **common)


def _voters(model: Any, components: list, labels_of: list, vote: str, **extra) -> Reading:
    """A vote of L voters with labels per box: lower median, rounded mean or majority."""
    common = dict(_common(model), **extra)
    K = int(model.classes_.shape[0])
    L = len(components)
    if vote == "mode":  # the most frequent class, lowest on ties: argmax of one-hot counts
        comps = [replace(c, values=np.eye(K, dtype=np.int64)[lab])
                 for c, lab in zip(components, labels_of, strict=True)]
        return Reading(comps, "argmax", np.zeros(K, dtype=np.int64), K, predict_rank=_predictor(model),
                       classes=model.classes_, ranks=np.arange(K), integer=True, vote=vote, labels=labels_of,
                       **common)
    if vote == "mean":  # floor(mean + 1/2) >= a  <=>  2 * sum >= L (2a - 1)
        comps = [replace(c, values=2 * lab[:, None].astype(np.int64))
                 for c, lab in zip(components, labels_of, strict=True)]
        theta = L * (2 * np.arange(1, K) - 1)
        column = np.zeros(K - 1, dtype=np.intp)
    else:  # the order statistic of rank ceil(L/2) is >= a when at least L - ceil(L/2) + 1 voters are
        comps = [replace(c, values=(lab[:, None] >= np.arange(1, K)[None, :]).astype(np.int64))
                 for c, lab in zip(components, labels_of, strict=True)]
        theta = np.full(K - 1, L - (L + 1) // 2 + 1)
        column = np.arange(K - 1)
    return Reading(comps, "threshold", np.zeros(comps[0].values.shape[1], dtype=np.int64), K,
                   predict_rank=_predictor(model), classes=model.classes_, theta=np.asarray(theta, dtype=np.int64),
                   column=column, integer=True, vote=vote, labels=labels_of, **common)


def _group_component(group: Any, d: int, categorical: np.ndarray) -> tuple[Component, np.ndarray, np.ndarray | None]:
    """A group as a component, its labels per box, and (projected groups) the movable axes of its space.

    On the features' own axes (or a subset of them) the boxes are in x. A projected group's
    boxes are in its space z (components, then kept features): the audit can then only use
    them for the per-voter pointwise proof, which carries to x because every map is continuous.
    """
    import relabel
    from trees import leaf_boxes

    space = group.space
    kept = None if space is None or not space.is_identity else np.asarray(space.kept, dtype=np.intp)
    projected = space is not None and kept is None
    dz = d if space is None else space.n_components + space.kept.shape[0]
    if getattr(group, "slabs", None) is not None:
        # A slab group's class is a function of the leaves of its shifted copies (design section 5,
        # Lemma 5.4): their unsnapped fusion, labelled by the group's own prediction at a point of each cell.
        copies = shifted_trees(group)
        if copies is None:
            raise UnsupportedModel("the audit reads OTreeBagger slab groups of at most 6 slab features "
                                   "(their own certificate is is_consistent())")
        boxes = relabel.fuse([leaf_boxes(t, dz) for t in copies], snap=False)
        copy_trees = [t.tree_ for t in copies]

        def located(Z, boxes=boxes, copy_trees=copy_trees):
            return boxes.locate(np.column_stack([t.apply(Z) for t in copy_trees]))

        labels = np.asarray(group.predict_index(inside_points(boxes.lower, boxes.upper)), dtype=np.int64)
        # The grid of the copies' thresholds is read through the group's own trees: its class is constant on each
        # fused box (Lemma 5.4), and P's classes on the grid with the slabs' corners taken feature by feature
        # cost one read of P a grid point, not 2^k copies of each tree, nor 2^s corners a point on s slab tops.

        def grid_labels(thresholds, axes):
            return slab_grid_labels(group.slabs, thresholds, axes, on_mesh(axes, group.partition_index))

        comp = Component(boxes.lower, boxes.upper, np.zeros((boxes.lower.shape[0], 1)),
                         lambda X: located(_coords(group, X)), None, grid_labels)
        return comp, labels, None
    trees = [t.tree_ for t in group.trees]
    part = None if group.partition is None else relabel.fuse([leaf_boxes(t, dz) for t in group.trees], snap=False)

    def where(Z, part=part, trees=trees):
        return trees[0].apply(Z) if part is None else part.locate(np.column_stack([t.apply(Z) for t in trees]))

    def lookup(Z):  # the group's own labels, read on points of its space as predict reads them
        if part is None:
            return np.asarray(group.labels[where(Z)], dtype=np.int64)
        # Through the group's own (perhaps snapped) partition: its labels are numbered by its regions,
        # not by the unsnapped regions the boxes above come from.
        return np.asarray(group.labels[group.partition.locate(np.column_stack([t.apply(Z) for t in trees]))],
                          dtype=np.int64)

    if part is None:
        boxes = leaf_boxes(trees[0], dz)
        lower, upper = boxes.lower, boxes.upper

        def own(Z, ids=boxes.leaf_ids):
            return _rows_of(ids, where(Z))
    else:
        lower, upper, own = part.lower, part.upper, where
    labels = lookup(inside_points(lower, upper))
    if kept is not None:  # a subset of the features: the boxes are unbounded on the others, in x
        lower_x, upper_x = np.full((lower.shape[0], d), -np.inf), np.full((lower.shape[0], d), np.inf)
        lower_x[:, kept], upper_x[:, kept] = lower, upper
        lower, upper = lower_x, upper_x
    comp = Component(lower, upper, np.zeros((lower.shape[0], 1)), lambda X: own(_coords(group, X)),
                     own if projected else None)
    movable = ~space.kept_mask(categorical).astype(bool) if projected else None
    return comp, labels, movable


def _coords(group: Any, X: np.ndarray) -> np.ndarray:
    return group.coordinates(np.asarray(X, dtype=np.float64))


def _rows_of(leaf_ids: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    row_of = np.full(int(leaf_ids.max()) + 1, -1, dtype=np.intp)
    row_of[leaf_ids] = np.arange(leaf_ids.shape[0])
    return row_of[nodes]


def read_ours(model: Any, classes: Any) -> Reading:
    """Read a fitted model of this library (see the module docstring)."""
    from sklearn.utils.validation import check_is_fitted

    from ensemble.boosting._boosting import ConsistentGradientBoostingClassifier
    from ensemble.forest._forest import ConsistentForestClassifier
    from ensemble.otreebagger._otreebagger import OTreeBagger
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
        categorical = _common(model)["categorical"]
        parts = [_group_component(g, d, categorical) for g in model.groups_]
        extra = {}
        if any(p[2] is not None for p in parts):
            # Boxes of a projected space are not boxes of x: only the per-voter proof reads them.
            extra = dict(projected=True, voter_movable=[~categorical if p[2] is None else p[2] for p in parts],
                         thresholds=[np.empty(0) for _ in range(d)])
            if all(g.space is None or g.space.is_identity or g.space.ranks is not None for g in model.groups_):
                # Rank-mapped spaces: the model's certificate covers the float evaluation of every map.
                extra["certify"] = lambda notion: bool(model.is_consistent(notion=notion))
        return _voters(model, [p[0] for p in parts], [p[1] for p in parts], model._vote, **extra)
    if isinstance(model, OrdinalTreeClassifier):
        d = int(model.n_features_in_)
        comp = _tree_component(model.tree_, d, np.zeros(model.tree_.children_left.shape[0]))
        labels = _predictor(model)(inside_points(comp.lower, comp.upper)).astype(np.int64)
        return _voters(model, [comp], [labels], "median")  # one voter: its own label
    raise UnsupportedModel(f"the audit does not read {type(model).__name__}")
