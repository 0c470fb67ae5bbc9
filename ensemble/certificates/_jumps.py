"""Pointwise jumps of trees: their node arrays, the per-tree jump J_t and the oscillation bound.

docs/design.md sections 9 and 10. Trees are read as scikit-learn-style node arrays
(``left``, ``right``, ``feature``, ``threshold``, ``missing_left``; ``left == -1`` at a
leaf; ``x <= threshold`` goes left) with integer leaf values. :func:`exact_jump` is the
largest value difference between two leaves of one tree whose closures meet (or that
are r-close); :func:`threshold_multiplicity` counts the trees with a threshold through
one point of a feature; :func:`oscillation_bound` sums the largest jumps, and
:func:`is_certified` compares the sum with the spacing of the cut points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ensemble.base._kernels import compiled, missing_reach
from relabel import snap_table
from trees import leaf_boxes

__all__ = ["NodeArrays", "bound_ratio", "exact_jump", "is_certified", "oscillation_bound", "threshold_clusters",
           "threshold_multiplicity", "tree_jump", "tree_missing_left", "tree_nodes"]


def tree_nodes(tree: Any) -> tuple:
    """Node arrays ``(left, right, feature, threshold, missing_left)`` of a fitted tree.

    Read in place where possible (no copies). Accepts scikit-learn's trees,
    :class:`trees.OrdinalTreeClassifier` and anything with a scikit-learn-style
    ``tree_``; ``missing_left`` is :func:`tree_missing_left`. Functions taking such a
    tuple accept it with or without its fifth array (missing values then go right).
    """
    s = tree.tree_
    return s.children_left, s.children_right, s.feature, s.threshold, tree_missing_left(tree)


def _split_nodes(nodes: tuple) -> tuple:
    """``(left, right, feature, threshold, missing_left)`` from a 4- or 5-tuple of node arrays."""
    left, right, feature, threshold = nodes[:4]
    missing = nodes[4] if len(nodes) > 4 else None
    if missing is None:
        missing = np.zeros(np.asarray(left).shape[0], dtype=np.uint8)
    return left, right, feature, threshold, np.asarray(missing, dtype=np.uint8)


def tree_missing_left(tree: Any) -> NDArray[np.uint8]:
    """Per node, 1 where a missing value (NaN) goes to the left child (scikit-learn's ``missing_go_to_left``).

    A tree without that array sends missing values right (it never accepted them).
    """
    s = tree.tree_
    missing = getattr(s, "missing_go_to_left", None)
    if missing is None:
        return np.zeros(np.asarray(s.children_left).shape[0], dtype=np.uint8)
    return np.ascontiguousarray(missing, dtype=np.uint8)


@dataclass(frozen=True)
class NodeArrays:
    """A ``tree_``-like view of node arrays, accepted by :func:`trees.leaf_boxes`.

    Examples
    --------
    >>> import numpy as np
    >>> from trees import leaf_boxes
    >>> nodes = NodeArrays(np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...                    np.array([0.5, -2.0, -2.0]), 1)
    >>> leaf_boxes(nodes).upper.ravel().tolist()
    [0.5, inf]
    """

    children_left: NDArray
    children_right: NDArray
    feature: NDArray
    threshold: NDArray
    n_features: int


def oscillation_bound(jumps: ArrayLike, n_boundaries: int) -> int:
    """Sum of the ``n_boundaries`` largest per-tree jumps (the numerator of the bound).

    Parameters
    ----------
    jumps : array-like of int, shape (n_trees,)
        J_t of every tree: the largest value difference between two of its leaves
        whose closures touch (in integer value units).
    n_boundaries : int
        Largest number of trees that can have a boundary through one point:
        sum over the features of their threshold multiplicities
        (:func:`threshold_multiplicity`), at most one tree per feature when the
        thresholds are distinct.

    Returns
    -------
    int
        ``sum of the n_boundaries largest J_t``: how far the sum of the trees can
        move near any point (docs/design.md sections 9 and 10).

    Notes
    -----
    A tree without a boundary through x is constant near x; the others move by
    at most J_t each. O(n_trees log n_trees).

    Examples
    --------
    >>> oscillation_bound([3, 1, 4, 1, 5], 2)
    9
    """
    jumps = np.sort(np.asarray(jumps, dtype=np.int64))[::-1]
    return int(jumps[: max(int(n_boundaries), 0)].sum())


def is_certified(bound: int, spacing: int) -> bool:
    """Whether a sum that moves by at most ``bound`` near any point gives consistent classes.

    Parameters
    ----------
    bound : int
        Oscillation bound of the sum (:func:`oscillation_bound`).
    spacing : int
        Smallest gap between consecutive cut points of the sum
        (:func:`ensemble.base._voting.cut_spacing`).

    Returns
    -------
    bool
        ``bound <= spacing``: near any point the sum stays in a closed interval
        [u, u + L] with L <= spacing; two cut points inside (u, u + L] would be
        less than L apart, so at most one is crossed and the classes there are at
        most two adjacent ones (docs/design.md section 10, which covers the
        half-way cuts of section 9).

    Examples
    --------
    >>> is_certified(10, 10), is_certified(11, 10), is_certified(0, 0)
    (True, False, True)
    """
    return int(bound) <= int(spacing)


def bound_ratio(bound: int, spacing: int) -> float:
    """``bound / spacing`` as reported to users (``consistency_bound_``): certified when at most 1.

    Cut points that coincide (spacing 0) are certified only by a bound of 0, a sum
    constant near every point: the ratio is then 0, and infinite otherwise.

    Examples
    --------
    >>> bound_ratio(5, 10), bound_ratio(0, 0), bound_ratio(1, 0)
    (0.5, 0.0, inf)
    """
    if spacing > 0:
        return bound / spacing
    return 0.0 if bound == 0 else float("inf")


def threshold_clusters(thresholds: ArrayLike) -> NDArray[np.float64]:
    """The threshold each value is one with: its representative under :func:`relabel.snap_table`.

    Thresholds of one feature a few ulps apart are one threshold (docs/design.md
    section 4c); the same rule snaps the bounds in :func:`relabel.fuse`. Infinite
    values are their own clusters.

    Examples
    --------
    >>> threshold_clusters([0.325, 0.32500000000000007, 0.7]).tolist()
    [0.32500000000000007, 0.32500000000000007, 0.7]
    """
    t = np.asarray(thresholds, dtype=np.float64)
    out = t.copy()
    finite = np.isfinite(t)
    if finite.any():
        distinct, snapped = snap_table(t[finite])
        out[finite] = snapped[np.searchsorted(distinct, t[finite])]
    return out


def threshold_multiplicity(thresholds: ArrayLike, owners: ArrayLike, resolution: float = 0.0) -> int:
    """Largest number of distinct trees with a threshold in one window of one feature.

    Parameters
    ----------
    thresholds : array-like of float, shape (n_thresholds,)
        The split thresholds of all trees on one feature.
    owners : array-like of int, shape (n_thresholds,)
        The tree of each threshold.
    resolution : float, default=0.0
        Width of the window (the resolution r_f of docs/design.md section 4c). With
        0, thresholds count together only when they are one threshold
        (:func:`threshold_clusters`: a few ulps apart).

    Returns
    -------
    int
        0 for a feature no tree splits on; 1 when all trees' thresholds are
        distinct (more than a few ulps, or more than ``resolution``, apart).

    Notes
    -----
    A sort and a sliding window: O(n log n) plus the distinct owners inside the
    windows. Thresholds of one tree count once: the tree's own jump J_t covers
    every pair of its leaves that touch.

    Examples
    --------
    >>> threshold_multiplicity([0.325, 0.32500000000000007, 0.7], [0, 1, 2])
    2
    >>> threshold_multiplicity([0.1, 0.2, 0.3], [0, 1, 1], resolution=0.15)
    2
    """
    t = np.asarray(thresholds, dtype=np.float64)
    owners = np.asarray(owners)
    if t.size == 0:
        return 0
    if resolution <= 0:
        t = threshold_clusters(t)
    order = np.argsort(t, kind="stable")
    t, owners = t[order], owners[order]
    stop = np.searchsorted(t, t + max(resolution, 0.0), side="right")
    _, owner_ids = np.unique(owners, return_inverse=True)
    return int(_most_owners_in_a_window(owner_ids.astype(np.int64).ravel(), stop.astype(np.int64)))


@compiled
def _most_owners_in_a_window(owner_ids, stop):
    """Largest number of distinct ``owner_ids[i:stop[i]]`` over i (ids 0..n-1), at least 1."""
    seen = np.full(owner_ids.shape[0], -1, dtype=np.int64)
    best = 1
    for i in range(owner_ids.shape[0]):
        if stop[i] - i <= best:  # the window cannot hold more owners than its thresholds
            continue
        count = 0
        for j in range(i, stop[i]):
            if seen[owner_ids[j]] != i:
                seen[owner_ids[j]] = i
                count += 1
        best = max(best, count)
    return best


@compiled
def tree_jump(left, right, feature, threshold, missing_left, reach, value, leaves, lower, upper, resolution, order):
    """Largest ``|value[a] - value[b]|`` over leaves a, b whose boxes are ``resolution``-close.

    Leaves a and b are close when for every feature f the closed intervals
    ``[lower_a - r_f, upper_a + r_f]`` and ``[lower_b, upper_b]`` meet, or both
    leaves hold points whose feature f is missing (``reach[leaf, f]``: a missing
    value is its own category, and two points missing f are near on f);
    ``r = 0`` means their closures intersect (faces, edges and corners).
    ``leaves[j]`` is the node id of the box in row j of ``lower``/``upper``; ``order``
    lists the rows to query first (the extreme values first find large jumps early,
    which prunes the rest; sorted by the caller: numba's cached sort helpers can
    collide between modules, numba issue 10486). For every leaf a depth-first
    search visits the nodes whose closed half-space meets a's dilated box, skipping
    subtrees whose value range cannot beat the best jump found; it stops once the
    best jump equals the tree's value range. Worst case O(n_leaves * n_nodes), far
    less in practice.
    """
    n_nodes = left.shape[0]
    # Value range of every subtree: children have larger ids than their parent in
    # both scikit-learn's (depth-first) and our (breadth-first) numbering.
    sub_min = value.copy()
    sub_max = value.copy()
    for node in range(n_nodes - 1, -1, -1):
        # Internal nodes' own values (means) play no part: only leaves are reached.
        if left[node] != -1:
            sub_min[node] = min(sub_min[left[node]], sub_min[right[node]])
            sub_max[node] = max(sub_max[left[node]], sub_max[right[node]])
    span = sub_max[0] - sub_min[0]
    best = 0
    stack = np.empty(n_nodes, dtype=np.int64)
    for j in order:
        if best >= span:
            break
        v = value[leaves[j]]
        if max(sub_max[0] - v, v - sub_min[0]) <= best:
            continue
        top = 0
        stack[top] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if max(sub_max[node] - v, v - sub_min[node]) <= best:
                continue
            if left[node] == -1:
                best = max(best, abs(value[node] - v))
                continue
            f = feature[node]
            t = threshold[node]
            missing_a = reach[leaves[j], f]
            # Values of f in the leaf: an empty interval (lower == upper == inf) holds missing values only.
            present_a = lower[j, f] < upper[j, f]
            # Closed intervals: a box whose dilated end lies on the threshold touches both sides
            # (an infinite threshold separates present values, left, from missing ones). A leaf
            # holding points missing f meets every leaf on the side missing values take.
            if (present_a and lower[j, f] - resolution[f] <= t) or (missing_a and missing_left[node] != 0):
                stack[top] = left[node]
                top += 1
            if (present_a and upper[j, f] + resolution[f] >= t and t < np.inf) or \
                    (missing_a and missing_left[node] == 0):
                stack[top] = right[node]
                top += 1
    return best


def exact_jump(nodes: tuple, value: NDArray[np.int64], n_features: int,
               resolution: NDArray[np.float64] | None = None, missing_left: NDArray | None = None) -> int:
    """J_t of one tree: the largest value difference between two leaves whose closures meet.

    Parameters
    ----------
    nodes : tuple
        ``(left, right, feature, threshold)`` of the tree (:func:`tree_nodes`).
    value : ndarray of int64, shape (n_nodes,)
        Integer value of every node (only leaves matter).
    n_features : int
        Dimension d.
    resolution : ndarray of shape (d,), optional
        r-neighbours instead of closure contacts (docs/design.md section 4c).
    missing_left : ndarray of shape (n_nodes,), optional
        Where missing values go (:func:`tree_missing_left`); leaves that both hold
        points missing a feature are near on it (docs/design.md section 11).
        ``None``: missing values go right.

    Returns
    -------
    int
        A sound upper bound of the jump with missing values (exact without them:
        a leaf pair reached through missing values on one feature and intervals
        on another may be counted although no point pattern makes them touch).

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]), np.array([0.5, -2.0, -2.0]))
    >>> exact_jump(nodes, np.array([0, 3, 7]), 1)
    4
    """
    left, right, feature, threshold, missing = _split_nodes(nodes)
    if missing_left is not None:
        missing = np.asarray(missing_left, dtype=np.uint8)
    r = np.zeros(n_features) if resolution is None else np.asarray(resolution, dtype=np.float64)
    left, right, feature = (np.ascontiguousarray(a, dtype=np.int64) for a in (left, right, feature))
    reach = missing_reach(left, right, feature, missing, n_features)
    boxes = leaf_boxes(NodeArrays(left, right, feature, threshold, n_features), n_features)
    leaves = boxes.leaf_ids.astype(np.int64)
    centre = (value[leaves].max() + value[leaves].min()) / 2.0
    order = np.argsort(-np.abs(value[leaves] - centre), kind="stable")  # extreme values first
    return int(tree_jump(left, right, feature, np.ascontiguousarray(threshold, dtype=np.float64), missing, reach,
                         np.ascontiguousarray(value, dtype=np.int64), leaves, boxes.lower, boxes.upper, r, order))
