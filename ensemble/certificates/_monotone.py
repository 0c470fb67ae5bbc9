"""The monotone certificate of trees: every tree's leaf values ordered across its face contacts.

docs/design.md section 4b. A tree is monotone along a feature when the leaf above every
face across the feature holds a value at least the leaf below's (missing values
included, section 11); a sum of such trees with non-negative weights is monotone too.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import NDArray

import relabel
from ensemble.certificates._jumps import NodeArrays, _split_nodes
from ensemble.base._kernels import missing_reach
from trees import leaf_boxes

__all__ = ["monotone_leaf_pairs", "trees_are_monotone"]


def monotone_leaf_pairs(nodes: tuple, n_features: int, monotonic_cst: NDArray) -> tuple:
    """Ordered leaf pairs ``(a, b)`` of one tree whose values must satisfy value(a) <= value(b).

    Parameters
    ----------
    nodes : tuple
        ``(left, right, feature, threshold[, missing_left])`` of the tree
        (:func:`tree_nodes`), raw thresholds as ``predict`` uses them.
    n_features : int
        Dimension d.
    monotonic_cst : ndarray of shape (d,)
        -1, 0 or +1 per feature.

    Returns
    -------
    leaves : ndarray of shape (L,)
        The node ids of the leaves.
    pairs : ndarray of shape (P, 2)
        Rows into ``leaves``: for a +1 feature f, a lies below b across f; for -1,
        above.

    Notes
    -----
    Leaves a and b are a pair along a constrained feature f when a's box ends on
    f where b's begins (``upper_a[f] == lower_b[f]``) and on every other feature
    g their intervals overlap with positive length (they share a face), or both
    hold points whose g is missing (a missing value is its own category: the
    points of both leaves missing g meet along f; docs/design.md section 11).
    Along every line parallel to f, with any pattern of missing values on the
    other features, consecutive leaves are such pairs, so the order of these
    pairs makes the tree monotone in f (docs/design.md section 4b). Without
    missing values these are the face contacts of :func:`relabel.monotone_pairs`
    on the tree's partition. O(L d) plus the pairs, grouped by threshold.

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]), np.array([0.5, -2.0, -2.0]))
    >>> leaves, pairs = monotone_leaf_pairs(nodes, 1, np.array([1]))
    >>> leaves.tolist(), pairs.tolist()
    ([1, 2], [[0, 1]])
    """
    left, right, feature, threshold, missing = _split_nodes(nodes)
    left, right, feature = (np.ascontiguousarray(a, dtype=np.int64) for a in (left, right, feature))
    boxes = leaf_boxes(NodeArrays(left, right, feature, threshold, n_features), n_features)
    leaves = boxes.leaf_ids.astype(np.int64)
    reach = missing_reach(left, right, feature, missing, n_features)[leaves]
    lower, upper = boxes.lower, boxes.upper
    out = []
    for f in np.flatnonzero(np.asarray(monotonic_cst)):
        ends = upper[:, f]
        finite = np.isfinite(ends)
        for t in np.unique(ends[finite]):
            # Leaves with values of f on both sides of t (an empty interval holds missing values only).
            present = lower[:, f] < upper[:, f]
            below = np.flatnonzero((ends == t) & present)
            above = np.flatnonzero((lower[:, f] == t) & present)
            a, b = np.repeat(below, above.shape[0]), np.tile(above, below.shape[0])
            overlap = np.maximum(lower[a], lower[b]) < np.minimum(upper[a], upper[b])
            meet = overlap | (reach[a] & reach[b])
            meet[:, f] = True
            keep = np.all(meet, axis=1)
            pair = np.column_stack([a[keep], b[keep]])
            out.append(pair if monotonic_cst[f] > 0 else pair[:, ::-1])
    pairs = np.concatenate(out) if out else np.zeros((0, 2), dtype=np.int64)
    return leaves, np.unique(pairs, axis=0) if pairs.shape[0] else pairs


def trees_are_monotone(nodes: Sequence[tuple], values: Sequence[NDArray], n_features: int,
                       monotonic_cst: NDArray) -> bool:
    """Whether every tree's leaf values follow the constraints across every face contact.

    Parameters
    ----------
    nodes : sequence of tuple
        ``(left, right, feature, threshold)`` of every tree, raw thresholds as
        ``predict`` uses them.
    values : sequence of ndarray
        Value of every node of every tree (only leaves matter).
    n_features : int
        Dimension d.
    monotonic_cst : ndarray of shape (d,)
        -1, 0 or +1 per feature.

    Returns
    -------
    bool
        True when in every tree, for every pair of leaves sharing a face across a
        constrained feature (:func:`monotone_leaf_pairs`, missing values
        included), the leaf above has a value at least as high (+1; at most as
        high for -1) as the leaf below. Then every tree is monotone along
        every line parallel to the feature (docs/design.md section 4b), and so is
        any sum of them with non-negative weights.

    Notes
    -----
    No snapping: a leaf thinner than a few ulps is a leaf ``predict`` reaches, so
    its contacts count. O(leaves * d) per tree plus the face contacts.

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]), np.array([0.5, -2.0, -2.0]))
    >>> trees_are_monotone([nodes], [np.array([0, 1, 2])], 1, np.array([1])), \\
    ...     trees_are_monotone([nodes], [np.array([0, 2, 1])], 1, np.array([1]))
    (True, False)
    """
    cst = np.asarray(monotonic_cst)
    for tree, value in zip(nodes, values, strict=True):
        leaves, pairs = monotone_leaf_pairs(tree, n_features, cst)
        # Ranks of the leaf values: the same order, as the integer labels the check takes.
        ranks = np.unique(np.asarray(value)[leaves], return_inverse=True)[1].ravel()
        if not relabel.is_monotone(pairs, ranks):
            return False
    return True
