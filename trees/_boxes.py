"""Leaf boxes: the axis-aligned cell of every leaf of a fitted tree."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["LeafBoxes", "leaf_boxes"]


class LeafBoxes(NamedTuple):
    """The leaves of one tree as half-open boxes ``lower < x <= upper``.

    Attributes
    ----------
    leaf_ids : ndarray of shape (n_leaves,)
        Node ids of the leaves, as returned by the tree's ``apply``.
    lower, upper : ndarray of shape (n_leaves, n_features)
        Bounds of each leaf's box; ``-inf``/``+inf`` where the path to the leaf
        never splits on that feature.
    """

    leaf_ids: NDArray[np.intp]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]


def _tree_structure(tree: Any):
    """Return the ``tree_``-like structure of a fitted estimator (or the structure itself)."""
    structure = getattr(tree, "tree_", tree)
    for attr in ("children_left", "children_right", "feature", "threshold"):
        if not hasattr(structure, attr):
            raise TypeError(
                "tree must be a fitted OrdinalTreeClassifier, a fitted scikit-learn "
                f"decision tree or its tree_ structure; got {type(tree).__name__} "
                f"without attribute {attr!r}"
            )
    return structure


def leaf_boxes(tree: Any, n_features: int | None = None) -> LeafBoxes:
    """Compute the box of every leaf of a fitted tree.

    Works for :class:`trees.OrdinalTreeClassifier` and for scikit-learn's
    ``DecisionTreeClassifier`` / ``DecisionTreeRegressor`` (anything with a
    ``tree_`` holding ``children_left``, ``children_right``, ``feature`` and
    ``threshold``). The convention is scikit-learn's: ``x <= threshold`` goes
    left, so a point belongs to the half-open box ``lower < x <= upper``.

    Parameters
    ----------
    tree : fitted tree estimator or its ``tree_`` structure
        The tree whose leaves are wanted.
    n_features : int, optional
        Number of features; read from ``tree.n_features_in_`` (or the
        structure's ``n_features``) when omitted.

    Returns
    -------
    LeafBoxes
        ``(leaf_ids, lower, upper)`` with leaves in increasing node id order.

    Notes
    -----
    One depth-first pass over the nodes: O(n_nodes * n_features) time and memory.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from trees import leaf_boxes
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = [0, 0, 1, 1]
    >>> boxes = leaf_boxes(DecisionTreeClassifier(random_state=0).fit(X, y))
    >>> boxes.leaf_ids.tolist(), boxes.lower.ravel().tolist(), boxes.upper.ravel().tolist()
    ([1, 2], [-inf, 1.5], [1.5, inf])
    """
    structure = _tree_structure(tree)
    if n_features is None:
        n_features = getattr(tree, "n_features_in_", None)
        if n_features is None:
            n_features = getattr(structure, "n_features", None)
        if n_features is None:
            raise ValueError("n_features could not be read from the tree; pass it explicitly")
    left = np.asarray(structure.children_left)
    right = np.asarray(structure.children_right)
    feature = np.asarray(structure.feature)
    threshold = np.asarray(structure.threshold, dtype=np.float64)
    n_nodes = left.shape[0]

    lower = np.full((n_nodes, n_features), -np.inf)
    upper = np.full((n_nodes, n_features), np.inf)
    # Node ids are assigned in depth-first pre-order, so every parent precedes its
    # children; visiting ids in increasing order is therefore a valid top-down pass.
    order = np.arange(n_nodes) if np.all((left == -1) | (left > np.arange(n_nodes))) else None
    if order is None:  # pragma: no cover - defensive, for foreign structures
        order, stack = [], [0]
        while stack:
            node = stack.pop()
            order.append(node)
            if left[node] != -1:
                stack.extend((right[node], left[node]))
    for node in order:
        l, r = left[node], right[node]
        if l == -1:
            continue
        f, t = feature[node], threshold[node]
        lower[l] = lower[node]
        upper[l] = upper[node]
        upper[l, f] = min(upper[node, f], t)
        lower[r] = lower[node]
        upper[r] = upper[node]
        lower[r, f] = max(lower[node, f], t)
    leaves = np.flatnonzero(left == -1).astype(np.intp)
    return LeafBoxes(leaves, lower[leaves], upper[leaves])
