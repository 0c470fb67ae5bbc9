"""Leaf boxes: the axis-aligned cell of every leaf of a fitted tree."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from trees._compile import compiled
from trees._routing import split_box

__all__ = ["LeafBoxes", "LeafBoxesWithMissing", "leaf_boxes"]


class LeafBoxes(NamedTuple):
    """The leaves of one tree as half-open boxes ``lower < x <= upper``.

    Attributes
    ----------
    leaf_ids : ndarray of shape (n_leaves,)
        Node ids of the leaves, as returned by the tree's ``apply``.
    lower, upper : ndarray of shape (n_leaves, n_features)
        Bounds of each leaf's box; ``-inf``/``+inf`` where the path to the leaf
        never splits on that feature.

    Examples
    --------
    >>> import numpy as np
    >>> from trees import LeafBoxes
    >>> box = LeafBoxes(np.array([1]), np.array([[-np.inf]]), np.array([[0.5]]))
    >>> bool(np.all((box.lower < 0.2) & (0.2 <= box.upper)))
    True
    """

    leaf_ids: NDArray[np.intp]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]


class LeafBoxesWithMissing(NamedTuple):
    """The leaves of one tree as half-open boxes, with where the missing values go.

    What :func:`leaf_boxes` returns with ``missing=True``. A point ``x`` (NaN
    for a missing value) lies in leaf ``i`` exactly when, for every feature ``f``:
    ``missing[i, f]`` if ``x[f]`` is NaN, and ``lower[i, f] < x[f] <= upper[i, f]``
    otherwise. So "missing" acts as one more category of every feature, beside
    its real values: each leaf holds a (possibly empty) interval of real values
    and possibly the missing values.

    * ``missing[i, f]`` is True when no split on the path to leaf ``i`` tests
      feature ``f``, or every such split sends missing values to the side the
      path takes (``missing_go_to_left``).
    * A split with threshold ``+inf`` sends all real values left and only the
      missing values right: its right subtree has ``lower[i, f] = upper[i, f] =
      +inf`` (an empty interval: no real value) and ``missing[i, f]`` True.

    Attributes
    ----------
    leaf_ids : ndarray of shape (n_leaves,)
        Node ids of the leaves, as returned by the tree's ``apply``.
    lower, upper : ndarray of shape (n_leaves, n_features)
        Bounds of each leaf's real values, as in :class:`LeafBoxes`.
    missing : ndarray of bool of shape (n_leaves, n_features)
        Whether the leaf holds the points whose feature ``f`` is missing.

    Examples
    --------
    A split learnt without missing values sends them to its larger child, the
    right one on a tie:

    >>> import numpy as np
    >>> from trees import OrdinalTreeClassifier, leaf_boxes
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = [0, 0, 1, 1]
    >>> boxes = leaf_boxes(OrdinalTreeClassifier().fit(X, y), missing=True)
    >>> boxes.upper.ravel().tolist(), boxes.missing.ravel().tolist()
    ([1.5, inf], [False, True])
    """

    leaf_ids: NDArray[np.intp]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    missing: NDArray[np.bool_]

    def boxes(self) -> LeafBoxes:
        """The :class:`LeafBoxes` triple (real values only)."""
        return LeafBoxes(self.leaf_ids, self.lower, self.upper)


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


def leaf_boxes(tree: Any, n_features: int | None = None, *, missing: bool = False) -> LeafBoxes | LeafBoxesWithMissing:
    """Compute the box of every leaf of a fitted tree.

    Works for :class:`trees.OrdinalTreeClassifier` and for scikit-learn's
    ``DecisionTreeClassifier`` / ``DecisionTreeRegressor`` (anything with a
    ``tree_`` holding ``children_left``, ``children_right``, ``feature`` and
    ``threshold``, and optionally ``missing_go_to_left``). The convention is
    scikit-learn's: ``x <= threshold`` goes left, so a point belongs to the
    half-open box ``lower < x <= upper``; a missing value goes where the node's
    ``missing_go_to_left`` says (the routing rule of :mod:`trees._routing`).

    Parameters
    ----------
    tree : fitted tree estimator or its ``tree_`` structure
        The tree whose leaves are wanted.
    n_features : int, optional
        Number of features; read from ``tree.n_features_in_`` (or the
        structure's ``n_features``) when omitted.
    missing : bool, default=False
        Also say which leaves hold the missing values of each feature
        (:class:`LeafBoxesWithMissing`). A structure without
        ``missing_go_to_left`` sends missing values right.

    Returns
    -------
    LeafBoxes or LeafBoxesWithMissing
        ``(leaf_ids, lower, upper)``, plus ``missing`` with ``missing=True``,
        leaves in increasing node id order.

    Raises
    ------
    TypeError
        If ``tree`` has no tree structure (not fitted, or not a tree).
    ValueError
        If ``n_features`` cannot be read or is smaller than a split feature.

    Notes
    -----
    One compiled depth-first pass: O(n_nodes * n_features) time and memory.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from trees import leaf_boxes
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = [0, 0, 1, 1]
    >>> boxes = leaf_boxes(DecisionTreeClassifier(random_state=0).fit(X, y))
    >>> boxes.leaf_ids.tolist(), boxes.lower.ravel().tolist(), boxes.upper.ravel().tolist()
    ([1, 2], [-inf, 1.5], [1.5, inf])
    >>> from trees import OrdinalTreeClassifier
    >>> ours = OrdinalTreeClassifier().fit(X, y)
    >>> leaf_boxes(ours).upper.ravel().tolist()
    [1.5, inf]
    """
    structure = _tree_structure(tree)
    if n_features is None:
        n_features = getattr(tree, "n_features_in_", None)
        if n_features is None:
            n_features = getattr(structure, "n_features", None)
        if n_features is None:
            raise ValueError("n_features could not be read from the tree; pass it explicitly")
    # Fresh copies: one array type for the compiled pass (scikit-learn's are read-only views).
    left = np.array(structure.children_left, dtype=np.intp)
    right = np.array(structure.children_right, dtype=np.intp)
    feature = np.array(structure.feature, dtype=np.intp)
    threshold = np.array(structure.threshold, dtype=np.float64)
    n_nodes = left.shape[0]
    if n_nodes and feature[left != -1].max(initial=-1) >= n_features:
        raise ValueError(f"the tree splits on feature {feature.max()} but n_features={n_features}")

    missing_left = getattr(structure, "missing_go_to_left", None)
    missing_left = np.zeros(n_nodes, dtype=np.bool_) if missing_left is None else np.array(missing_left, dtype=np.bool_)
    lower, upper, holds_missing = _node_boxes(left, right, feature, threshold, missing_left, int(n_features))
    leaves = np.flatnonzero(left == -1).astype(np.intp)
    if missing:
        return LeafBoxesWithMissing(leaves, lower[leaves], upper[leaves], holds_missing[leaves])
    return LeafBoxes(leaves, lower[leaves], upper[leaves])


@compiled
def _node_boxes(left, right, feature, threshold, missing_left, n_features):
    """The box and missing flags of every node reachable from the root (depth first,
    whatever the id order): children inherit the parent's box, and
    :func:`trees._routing.split_box` applies the routing rule on the split feature."""
    n_nodes = left.shape[0]
    lower = np.full((n_nodes, n_features), -np.inf)
    upper = np.full((n_nodes, n_features), np.inf)
    missing = np.ones((n_nodes, n_features), dtype=np.bool_)
    if n_nodes == 0:
        return lower, upper, missing
    stack = np.empty(n_nodes + 1, dtype=np.intp)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        lc = left[node]
        if lc == -1:
            continue
        rc = right[node]
        split_box(lower, upper, missing, node, lc, rc, feature[node], threshold[node], missing_left[node])
        stack[top] = rc
        stack[top + 1] = lc
        top += 2
    return lower, upper, missing
