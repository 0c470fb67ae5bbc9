"""Monotone constraints: scikit-learn's ``monotonic_cst`` resolved to one int8 per feature."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trees._boxes import _node_boxes
from trees._compile import compiled
from trees._isotonic import isotonic_labels, isotonic_regression

__all__ = [
    "MONOTONIC_METHODS",
    "bound_children",
    "face_order",
    "monotone_leaf_labels",
    "neighbour_bounds",
    "project_leaf_means",
    "resolve_monotonic_cst",
    "tree_leaf_order",
]

#: The rules of ``monotonic_method``: how growth respects the constraints.
MONOTONIC_METHODS = ("basic", "intermediate", "isotonic")


def _is_constraint_value(value: Any) -> bool:
    return isinstance(value, (Integral, Real)) and not isinstance(value, (bool, np.bool_)) and value in (-1, 0, 1)


def resolve_monotonic_cst(
    monotonic_cst: Any, n_features: int, feature_names: NDArray | None = None
) -> NDArray[np.int8]:
    """The monotone constraints as an int8 array of -1 / 0 / +1 per feature.

    scikit-learn's convention (``DecisionTreeRegressor``, ``HistGradientBoosting*``):
    +1 means the model must not decrease when the feature grows, -1 not increase,
    0 no constraint.

    Parameters
    ----------
    monotonic_cst : None, array-like of int of shape (n_features,) or dict
        ``None`` (no constraint), one value in {-1, 0, 1} per feature, or a dict
        ``{feature name: -1/0/1}`` whose missing features are unconstrained (only
        when ``X`` had string column names, i.e. ``feature_names`` is given).
    n_features : int
        Number of features of ``X``.
    feature_names : ndarray of str, optional
        ``feature_names_in_`` of the estimator.

    Returns
    -------
    ndarray of shape (n_features,), int8

    Raises
    ------
    ValueError
        Naming ``monotonic_cst``: wrong length or shape, values outside {-1, 0, 1}
        (booleans included), a dict without feature names, or a dict naming an
        unknown feature.

    Examples
    --------
    >>> import numpy as np
    >>> from trees import resolve_monotonic_cst
    >>> resolve_monotonic_cst([1, 0, -1], 3).tolist()
    [1, 0, -1]
    >>> resolve_monotonic_cst({"age": -1}, 2, np.array(["income", "age"])).tolist()
    [0, -1]
    >>> resolve_monotonic_cst([1, 2], 2)
    Traceback (most recent call last):
    ...
    ValueError: monotonic_cst must hold only -1, 0 or +1 per feature; got [1, 2]
    """
    cst = np.zeros(n_features, dtype=np.int8)
    if monotonic_cst is None:
        return cst
    if isinstance(monotonic_cst, dict):
        if feature_names is None:
            raise ValueError(
                "monotonic_cst is a dict by feature name but X has no feature names (fit on a "
                "DataFrame with string column names, or pass an array of -1, 0, +1 per feature)"
            )
        index = {str(name): i for i, name in enumerate(feature_names)}
        unknown = sorted(str(name) for name in monotonic_cst if str(name) not in index)
        if unknown:
            raise ValueError(f"monotonic_cst names unknown features: {unknown}; known: {list(index)}")
        for name, value in monotonic_cst.items():
            if not _is_constraint_value(value):
                raise ValueError(f"monotonic_cst[{name!r}] must be -1, 0 or +1; got {value!r}")
            cst[index[str(name)]] = int(value)
        return cst
    if isinstance(monotonic_cst, (str, bytes)):
        raise ValueError(
            f"monotonic_cst must be an array-like of -1, 0, +1 per feature or a dict by feature name; "
            f"got {monotonic_cst!r}"
        )
    values = np.asarray(monotonic_cst)
    if values.ndim != 1 or values.shape[0] != n_features:
        raise ValueError(
            f"monotonic_cst must have one entry per feature (length {n_features}); got shape {values.shape}"
        )
    if values.dtype.kind not in "iuf":
        raise ValueError(f"monotonic_cst must hold -1, 0 or +1 per feature; got dtype {values.dtype}")
    if not np.all(np.isin(values, (-1, 0, 1))):
        raise ValueError(f"monotonic_cst must hold only -1, 0 or +1 per feature; got {values.tolist()}")
    cst[:] = values
    return cst


def bound_children(child_value: NDArray, split_cst: NDArray, lower: NDArray, upper: NDArray) -> None:
    """Narrow, in place, the bounds of the children of splits on constrained features.

    ``child_value`` holds the (left, right) class counts of every split, ``lower`` /
    ``upper`` the bounds inherited from the parents (two per split, left first).
    For +1 the left child's upper and the right child's lower bound become the
    middle of the two children's mean class indices (mirrored for -1); the middle
    is clipped into the parent's bounds so that bounds always nest. This is
    scikit-learn's rule for monotone regression trees, with the mean class index
    as the value.
    """
    w = child_value.sum(axis=1)
    mean = (child_value @ np.arange(child_value.shape[1])) / w
    mid = mean[0::2] / 2.0 + mean[1::2] / 2.0
    mid = np.minimum(np.maximum(mid, lower[0::2]), upper[0::2])
    up, down = split_cst == 1, split_cst == -1
    # Strided views: the assignments below write into ``lower`` and ``upper``.
    left_lower, right_lower = lower[0::2], lower[1::2]
    left_upper, right_upper = upper[0::2], upper[1::2]
    left_upper[up] = mid[up]
    right_lower[up] = mid[up]
    left_lower[down] = mid[down]
    right_upper[down] = mid[down]


@compiled
def _touching(lower, upper, missing, a, b, f):
    """Whether nodes ``a`` and ``b`` overlap on every feature but ``f``: their open
    intervals intersect, or both hold the missing values of that feature."""
    for g in range(lower.shape[1]):
        if g != f and not (max(lower[a, g], lower[b, g]) < min(upper[a, g], upper[b, g])
                           or (missing[a, g] and missing[b, g])):
            return False
    return True


@compiled
def _face_pairs(left, feature, threshold, lower, upper, missing, cst):
    """Leaf pairs ``(a, b)`` of a tree that share a face across a constrained feature,
    ``b`` on the upper side of the face; and the sign of that feature's constraint.

    Two leaves share a face across ``f`` only below a split on ``f``, ``a`` in its
    left subtree touching the threshold from below and ``b`` in its right subtree
    touching it from above (any other common ancestor would separate them on
    another feature). From every such split, both subtrees are descended together,
    keeping only pairs of nodes that still touch: the node boxes of a subtree
    contain those of its leaves.
    """
    n_nodes = left.shape[0]
    out_a = []
    out_b = []
    out_sign = []
    stack = np.empty((n_nodes + 2, 2), dtype=np.intp)
    for v in range(n_nodes):
        f = feature[v]
        if left[v] == -1 or cst[f] == 0 or not np.isfinite(threshold[v]):
            continue  # a threshold of +inf separates the missing values: not a face between real values
        t = threshold[v]
        top = 0
        stack[0, 0] = left[v]
        stack[0, 1] = left[v] + 1
        top = 1
        while top > 0:
            top -= 1
            a, b = stack[top, 0], stack[top, 1]
            if upper[a, f] != t or lower[b, f] != t or not _touching(lower, upper, missing, a, b, f):
                continue
            if left[a] == -1 and left[b] == -1:
                out_a.append(a)
                out_b.append(b)
                out_sign.append(cst[f])
            elif left[a] != -1:
                stack[top, 0], stack[top, 1] = left[a], b
                stack[top + 1, 0], stack[top + 1, 1] = left[a] + 1, b
                top += 2
            else:
                stack[top, 0], stack[top, 1] = a, left[b]
                stack[top + 1, 0], stack[top + 1, 1] = a, left[b] + 1
                top += 2
    n = len(out_a)
    pairs = np.empty((n, 2), dtype=np.intp)
    sign = np.empty(n, dtype=np.int8)
    for i in range(n):
        pairs[i, 0] = out_a[i]
        pairs[i, 1] = out_b[i]
        sign[i] = out_sign[i]
    return pairs, sign


def face_order(
    children_left: NDArray[np.intp],
    feature: NDArray[np.intp],
    threshold: NDArray[np.float64],
    missing_go_to_left: NDArray[np.bool_],
    monotonic_cst: NDArray[np.int8],
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The order pairs of a tree's leaves that share a face across a constrained feature.

    ``(below[e], above[e])`` (node ids): the leaves touch across a face of a
    feature with ``monotonic_cst[f] = +1`` and ``above`` lies on the upper side
    (the lower side for ``-1``), and they overlap on every other feature: their
    open intervals intersect, or both hold the missing values of that feature
    (the boxes of :func:`trees.leaf_boxes` with ``missing=True``). A prediction
    that never decreases from ``below`` to ``above`` is monotone along every line
    parallel to a constrained feature (docs/design.md section 4b). The right
    child of a node is ``children_left + 1`` (breadth-first ids).

    Returns
    -------
    below, above : ndarray of shape (n_pairs,)

    Notes
    -----
    From every split on a constrained feature, its two subtrees are descended
    together, pruning pairs of nodes that do not touch: about O(n_pairs * depth)
    pair visits after the O(n_nodes * n_features) node boxes.

    Examples
    --------
    >>> import numpy as np
    >>> from trees._monotone import face_order
    >>> left, feature = np.array([1, -1, -1]), np.array([0, -2, -2])
    >>> threshold, missing = np.array([0.5, -2.0, -2.0]), np.zeros(3, dtype=bool)
    >>> [p.tolist() for p in face_order(left, feature, threshold, missing, np.array([1], np.int8))]
    [[1], [2]]
    >>> [p.tolist() for p in face_order(left, feature, threshold, missing, np.array([-1], np.int8))]
    [[2], [1]]
    """

    left = np.ascontiguousarray(children_left, dtype=np.intp)
    right = np.where(left == -1, -1, left + 1)
    feature = np.ascontiguousarray(feature, dtype=np.intp)
    threshold = np.ascontiguousarray(threshold, dtype=np.float64)
    missing_left = np.ascontiguousarray(missing_go_to_left, dtype=np.bool_)
    cst = np.ascontiguousarray(monotonic_cst, dtype=np.int8)
    lower, upper, missing = _node_boxes(left, right, feature, threshold, missing_left, cst.shape[0])
    pairs, sign = _face_pairs(left, feature, threshold, lower, upper, missing, cst)
    up = sign > 0
    return np.where(up, pairs[:, 0], pairs[:, 1]), np.where(up, pairs[:, 1], pairs[:, 0])


def tree_leaf_order(tree: Any, monotonic_cst: NDArray[np.int8]) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """``(leaf_ids, below, above)``: the leaves of a fitted structure and their order pairs
    (:func:`face_order`); ``below`` and ``above`` index ``leaf_ids``."""
    below, above = face_order(tree.children_left, tree.feature, tree.threshold, tree.missing_go_to_left,
                              monotonic_cst)
    leaves = np.flatnonzero(tree.children_left == -1).astype(np.intp)
    position = np.zeros(tree.children_left.shape[0], dtype=np.intp)
    position[leaves] = np.arange(leaves.shape[0])
    return leaves, position[below], position[above]


def project_leaf_means(tree: Any, monotonic_cst: NDArray[np.int8]) -> None:
    """Replace the ``mean_index`` of a tree's leaves by their isotonic projection.

    The weighted least-squares projection (leaf weights: the training weight in
    each leaf) of the leaves' mean class indices onto :func:`tree_leaf_order`;
    the monotone values of ``monotonic_method="isotonic"``.
    """

    leaves, below, above = tree_leaf_order(tree, monotonic_cst)
    values = tree.mean_index[leaves]
    weights = tree.weighted_n_node_samples[leaves]
    tree.mean_index[leaves] = isotonic_regression(values, weights, below, above)


def monotone_leaf_labels(tree: Any, monotonic_cst: NDArray[np.int8]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``(leaf_ids, labels)``: class indices of the leaves minimising the training rows'
    weighted absolute error under :func:`tree_leaf_order` (the monotone leaf median)."""

    leaves, below, above = tree_leaf_order(tree, monotonic_cst)
    return leaves, isotonic_labels(tree.value[leaves], below, above)


def neighbour_bounds(nodes: Any, size: int, frontier: NDArray[np.intp], monotonic_cst: NDArray[np.int8]) -> None:
    """Set the bounds of the frontier nodes from their neighbours' values (``"intermediate"``).

    The current partition is the first ``size`` nodes' leaves (finished leaves and
    the frontier). Each cell's value is its mean class index clipped into its
    bounds. A frontier node's lower bound is the largest value of the cells below
    it across a face of a constrained feature, its upper bound the smallest value
    above it; a frontier neighbour counts with the midpoint of the two values, so
    that two neighbours split at the same level stay in order. Writes
    ``nodes.lower`` / ``nodes.upper`` at the frontier.

    Invariant (by induction over the levels): the partition's values never go
    against a constraint across a face. A frontier node's value lies in its new
    bounds; its children's values are clipped into them; a split on a
    constrained feature orders its children; a child's faces are faces of its
    parent or the one between the siblings.
    """
    left = nodes.left[:size]
    below, above = face_order(left, nodes.feature[:size], nodes.threshold[:size], nodes.missing_left[:size],
                              monotonic_cst)
    value = nodes.value[:size]
    mean = (value @ np.arange(value.shape[1])) / value.sum(axis=1)
    v = np.minimum(np.maximum(mean, nodes.lower[:size]), nodes.upper[:size])
    is_frontier = np.zeros(size, dtype=bool)
    is_frontier[frontier] = True
    both = is_frontier[below] & is_frontier[above]
    mid = v[below] / 2.0 + v[above] / 2.0
    lo = np.full(size, -np.inf)
    hi = np.full(size, np.inf)
    np.maximum.at(lo, above, np.where(both, mid, v[below]))
    np.minimum.at(hi, below, np.where(both, mid, v[above]))
    nodes.lower[frontier] = lo[frontier]
    nodes.upper[frontier] = hi[frontier]
