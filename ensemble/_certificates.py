"""Every consistency and monotonicity certificate of the ensembles, in one place.

A certificate is a function of a fitted model that a test can re-derive by brute
force (docs/design.md sections 5, 9 and 10):

- :func:`voters_certificate`: a vote of consistent voters (OTreeBagger's relabelled
  groups) is consistent when the vote keeps consistency (Theorem 1; the registry
  :data:`ensemble._voting.VOTES` records which votes do).
- :func:`sum_certificate`: a sum of trees with distinct thresholds (the certified
  forest's mean, certified boosting's weighted sum) moves by at most the sum of the
  ``n_boundaries`` largest per-tree jumps near any point; cut points at least that
  far apart give consistent classes (:func:`is_certified`).
- :func:`trees_are_monotone`: a sum of trees each monotone along its face contacts
  is monotone.
- :func:`gap_loads`: a move of one feature inside one gap between consecutive
  training values crosses the thresholds the trees put in that gap; the sum of their
  face jumps there bounds how far the sum moves (docs/design.md section 13).

Trees are read as scikit-learn-style node arrays (``left``, ``right``, ``feature``,
``threshold``; ``left == -1`` at a leaf; ``x <= threshold`` goes left), from
scikit-learn's trees or ours, with integer leaf values so that every sum and bound
is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

import relabel
from ensemble._kernels import compiled, missing_reach
from ensemble._voting import VOTES, check_vote
from relabel import snap_table
from trees import leaf_boxes

__all__ = [
    "NodeArrays",
    "SumCertificate",
    "GapLoads",
    "GapPairs",
    "exact_jump",
    "face_jumps",
    "face_pairs",
    "face_steps",
    "gap_loads",
    "gap_pairs",
    "is_certified",
    "monotone_leaf_pairs",
    "NOTIONS",
    "bound_ratio",
    "check_notion",
    "oscillation_bound",
    "sum_certificate",
    "threshold_clusters",
    "threshold_multiplicity",
    "tree_jump",
    "tree_missing_left",
    "tree_nodes",
    "trees_are_monotone",
    "voters_certificate",
]


#: The consistency notions a certificate checks (docs/design.md section 13): ``"data"``,
#: at the data's resolution (the default); ``"pointwise"``, the paper's.
NOTIONS = ("data", "pointwise")


def check_notion(notion: Any) -> str:
    """``notion`` if it is one of :data:`NOTIONS`, else a ValueError naming the parameter.

    Examples
    --------
    >>> check_notion("data")
    'data'
    """
    if notion not in NOTIONS:
        raise ValueError(f"notion must be one of {NOTIONS}; got {notion!r}")
    return notion


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


def voters_certificate(voters_consistent: Iterable[bool], vote: str) -> bool:
    """Whether a vote of consistent voters is consistent.

    Parameters
    ----------
    voters_consistent : iterable of bool
        Each voter's own certificate (a relabelled group: no adjacent regions of
        its partition two classes apart).
    vote : str
        A key of :data:`ensemble._voting.VOTES`.

    Returns
    -------
    bool
        True when every voter is consistent and the vote keeps consistency (the
        median and the rounded mean do; the mode (majority vote) carries no guarantee).

    Notes
    -----
    Theorem 1 (Sousa & Cardoso 2011; docs/design.md section 5): near any point x
    every consistent voter takes at most two adjacent classes {c_l, c_l + 1}. An
    order statistic is non-decreasing in every voter and moves by at most one
    when all voters move by at most one, so the lower median takes at most two
    adjacent classes. The mean of the voters then varies inside an interval of
    length at most 1, and ``floor(. + 1/2)`` maps such an interval to at most two
    adjacent classes (docs/design.md section 9), so the rounded mean is
    consistent too.

    Examples
    --------
    >>> voters_certificate([True, True], "median"), voters_certificate([True], "mode")
    (True, False)
    """
    rule = VOTES[check_vote(vote)]
    return rule.keeps_consistency and all(bool(c) for c in voters_consistent)


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
        (:func:`ensemble._voting.cut_spacing`).

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
    crowded = np.flatnonzero(stop - np.arange(t.size) > 1)
    best = 1
    for i in crowded:
        best = max(best, np.unique(owners[i : stop[i]]).size)
    return int(best)


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


@compiled
def _boundary_leaves(left, right, feature, threshold, leaf_row, lower, upper, n, below, above):
    """The leaves of node n's left subtree whose interval on its feature ends at its threshold t
    (into ``below``) and of its right subtree that start there (into ``above``); returns both counts.

    Inside the left subtree a split on f at s has s < t, so only its right child can
    end at t; inside the right subtree only left children can start at t.
    """
    f = feature[n]
    t = threshold[n]
    stack = np.empty(left.shape[0], dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)
    for side in range(2):
        top = 1
        stack[0] = left[n] if side == 0 else right[n]
        while top > 0:
            top -= 1
            m = stack[top]
            if left[m] == -1:
                r = leaf_row[m]
                if lower[r, f] < upper[r, f]:
                    if side == 0 and upper[r, f] == t:
                        below[counts[0]] = m
                        counts[0] += 1
                    elif side == 1 and lower[r, f] == t:
                        above[counts[1]] = m
                        counts[1] += 1
                continue
            if feature[m] == f and side == 0 and threshold[m] < t:
                stack[top] = right[m]
                top += 1
            elif feature[m] == f and side == 1 and threshold[m] > t:
                stack[top] = left[m]
                top += 1
            else:
                stack[top] = left[m]
                stack[top + 1] = right[m]
                top += 2
    return counts[0], counts[1]


@compiled
def _share_face(ra, rb, a, b, f, lower, upper, reach):
    """Whether leaves a and b (rows ra, rb of the boxes) overlap on every feature but f, or meet on
    the slice of points missing it."""
    for g in range(lower.shape[1]):
        if g == f:
            continue
        if max(lower[ra, g], lower[rb, g]) < min(upper[ra, g], upper[rb, g]):
            continue
        if reach[a, g] and reach[b, g]:
            continue  # both hold the points missing g: they meet on the slice
        return False
    return True


@compiled
def _node_face_jumps(left, right, feature, threshold, reach, value, leaf_row, lower, upper, countable):
    """Per internal node n splitting a countable f at a finite t: the largest rise ``value[b] - value[a]``
    and the largest fall ``value[a] - value[b]`` (0 at least) over leaves a below t and b above t that share
    a face on t (see :func:`face_jumps`)."""
    n_nodes = left.shape[0]
    rise = np.zeros(n_nodes, dtype=np.int64)
    fall = np.zeros(n_nodes, dtype=np.int64)
    below = np.empty(n_nodes, dtype=np.int64)
    above = np.empty(n_nodes, dtype=np.int64)
    for n in range(n_nodes):
        if left[n] == -1 or not countable[feature[n]] or not np.isfinite(threshold[n]):
            continue
        n_below, n_above = _boundary_leaves(left, right, feature, threshold, leaf_row, lower, upper, n,
                                            below, above)
        up = 0
        down = 0
        for i in range(n_below):
            a = below[i]
            for j in range(n_above):
                b = above[j]
                step = value[b] - value[a]
                if step <= up and -step <= down:
                    continue
                if _share_face(leaf_row[a], leaf_row[b], a, b, feature[n], lower, upper, reach):
                    up = max(up, step)
                    down = max(down, -step)
        rise[n] = up
        fall[n] = down
    return rise, fall


@compiled
def _node_face_pairs(left, right, feature, threshold, reach, leaf_row, lower, upper, countable):
    """Every pair (a, b) of leaves sharing a face across the threshold of an internal node n (see
    :func:`face_pairs`), as rows (a, b, n) of node ids."""
    n_nodes = left.shape[0]
    below = np.empty(n_nodes, dtype=np.int64)
    above = np.empty(n_nodes, dtype=np.int64)
    out = np.empty((max(n_nodes, 1), 3), dtype=np.int64)
    n_out = 0
    for n in range(n_nodes):
        if left[n] == -1 or not countable[feature[n]] or not np.isfinite(threshold[n]):
            continue
        n_below, n_above = _boundary_leaves(left, right, feature, threshold, leaf_row, lower, upper, n,
                                            below, above)
        for i in range(n_below):
            for j in range(n_above):
                a = below[i]
                b = above[j]
                if _share_face(leaf_row[a], leaf_row[b], a, b, feature[n], lower, upper, reach):
                    if n_out == out.shape[0]:
                        grown = np.empty((2 * out.shape[0], 3), dtype=np.int64)
                        grown[:n_out] = out[:n_out]
                        out = grown
                    out[n_out, 0] = a
                    out[n_out, 1] = b
                    out[n_out, 2] = n
                    n_out += 1
    return out[:n_out]


def face_jumps(nodes: tuple, value: NDArray[np.int64], n_features: int,
               countable: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
    """Per internal node, the largest value change of the tree across its threshold, between leaves sharing a face.

    The larger of the two arrays of :func:`face_steps`.

    Parameters
    ----------
    nodes : tuple
        ``(left, right, feature, threshold[, missing_left])`` of the tree
        (:func:`tree_nodes`), raw thresholds as ``predict`` uses them.
    value : ndarray of int64, shape (n_nodes,)
        Integer value of every node (only leaves matter).
    n_features : int
        Dimension d.
    countable : ndarray of bool, shape (d,), optional
        Features whose splits count (0 is returned for the others); all by default.

    Returns
    -------
    ndarray of int64, shape (n_nodes,)
        0 at leaves, at splits on an uncounted feature and at infinite thresholds
        (present values one way, missing ones the other: no boundary in space).

    Notes
    -----
    A line parallel to feature f (the other coordinates fixed, any of them possibly
    missing) that crosses a threshold t of the tree goes from the leaf a holding
    ``x_f = t`` to the leaf b holding ``x_f`` just above t: a's interval on f ends at
    t, b's starts there, and on every other feature g the line's coordinate lies in
    both half-open intervals (they overlap with positive length) or is missing and
    reaches both leaves. Their lowest common ancestor separates them, so it splits f
    at t: the pairs of each node are those of its two subtrees, and a tree's change
    across t along any such line is at most the largest of its nodes' values at t
    (docs/design.md section 13). O(nodes x depth) plus the boundary leaf pairs.

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, 3, -1, -1]), np.array([2, -1, 4, -1, -1]), np.array([0, -2, 1, -2, -2]),
    ...          np.array([0.5, -2.0, 0.0, -2.0, -2.0]))
    >>> face_jumps(nodes, np.array([0, 1, 0, 2, 7]), 2).tolist()  # leaf 1 meets leaves 3 and 4 across x0 = 0.5
    [6, 0, 5, 0, 0]
    """
    return np.maximum(*face_steps(nodes, value, n_features, countable))


def face_steps(nodes: tuple, value: NDArray[np.int64], n_features: int,
               countable: NDArray[np.bool_] | None = None) -> tuple:
    """Per internal node, the largest rise and the largest fall of the tree across its threshold (both >= 0).

    A rise is ``value(b) - value(a)`` for leaves a below and b above the threshold
    sharing a face on it (see :func:`face_jumps` for the geometry), a fall its
    negative; each is 0 where no pair goes that way.

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, 3, -1, -1]), np.array([2, -1, 4, -1, -1]), np.array([0, -2, 1, -2, -2]),
    ...          np.array([0.5, -2.0, 0.0, -2.0, -2.0]))
    >>> [a.tolist() for a in face_steps(nodes, np.array([0, 3, 0, 2, 7]), 2)]  # 3 -> 2 falls, 3 -> 7 rises
    [[4, 0, 5, 0, 0], [1, 0, 0, 0, 0]]
    """
    left, right, feature, threshold, reach, leaf_row, lower, upper, counted = _face_geometry(
        nodes, n_features, countable)
    return _node_face_jumps(left, right, feature, threshold, reach, np.ascontiguousarray(value, dtype=np.int64),
                            leaf_row, lower, upper, counted)


def _face_geometry(nodes: tuple, n_features: int, countable: NDArray[np.bool_] | None) -> tuple:
    """The arrays the face kernels read: nodes, missing-value reach, leaf rows and leaf boxes."""
    left, right, feature, threshold, missing = _split_nodes(nodes)
    left, right, feature = (np.ascontiguousarray(a, dtype=np.int64) for a in (left, right, feature))
    counted = np.ones(n_features, dtype=bool) if countable is None else np.asarray(countable, dtype=bool)
    reach = missing_reach(left, right, feature, missing, n_features)
    boxes = leaf_boxes(NodeArrays(left, right, feature, threshold, n_features), n_features)
    leaf_row = np.full(left.shape[0], -1, dtype=np.int64)
    leaf_row[boxes.leaf_ids] = np.arange(boxes.leaf_ids.shape[0])
    return (left, right, feature, np.ascontiguousarray(threshold, dtype=np.float64), reach, leaf_row,
            boxes.lower, boxes.upper, counted)


def face_pairs(nodes: tuple, n_features: int, countable: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
    """Rows ``(a, b, n)``: leaves a below and b above the threshold of node n, sharing a face on it.

    The pairs :func:`face_steps` takes its rises and falls over: a's interval on the
    threshold's feature f ends where b's starts, and on every other feature their
    intervals overlap with positive length or both leaves hold the points missing
    it. Splits on features outside ``countable`` and at infinite thresholds have none.

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, 3, -1, -1]), np.array([2, -1, 4, -1, -1]), np.array([0, -2, 1, -2, -2]),
    ...          np.array([0.5, -2.0, 0.0, -2.0, -2.0]))
    >>> sorted(face_pairs(nodes, 2).tolist())
    [[1, 3, 0], [1, 4, 0], [3, 4, 2]]
    """
    left, right, feature, threshold, reach, leaf_row, lower, upper, counted = _face_geometry(
        nodes, n_features, countable)
    return _node_face_pairs(left, right, feature, threshold, reach, leaf_row, lower, upper, counted)


#: Above this many pairs in one gap, N(p) is bounded one feature at a time (see :func:`_pair_neighbours`).
_EXACT_PAIRS = 200
#: Above this many pairs on one feature, N(p) is bounded by the trees with a pair in the gap (no boxes held).
_MAX_BOXED_PAIRS = 2_000_000
#: The most face pairs of all trees the localised bound holds (about 50 bytes each, 250 MB).
MAX_LOCALISED_PAIRS = 5_000_000


@compiled
def _meet(lo, hi, miss, i, j, g):
    """Whether pairs i and j meet on feature g: closed non-empty intervals that overlap, or both missing."""
    if miss[i, g] and miss[j, g]:
        return True
    return lo[i, g] < hi[i, g] and lo[j, g] < hi[j, g] and max(lo[i, g], lo[j, g]) <= min(hi[i, g], hi[j, g])


@compiled
def _pair_neighbours(tree, lo, hi, miss, starts, exact_limit):
    """Per pair p, at least the number of distinct trees with a pair of the same gap whose box meets p's.

    Pairs are sorted by gap, ``starts`` bounds the groups. Boxes meet on every
    feature: closed non-empty intervals that overlap, or both holding the points
    missing the feature (the threshold's own feature meets always). Groups of at
    most ``exact_limit`` pairs are counted exactly (all pairs against all); larger
    ones get, per pair, the smallest over the features of the number of trees with a
    pair meeting it on that feature alone, which is at least the exact count
    (each tree's intervals merged and searched by bisection).
    """
    n = tree.shape[0]
    out = np.zeros(n, dtype=np.int64)
    n_trees = tree.max() + 1 if n else 1
    seen = np.full(n_trees, -1, dtype=np.int64)
    d = lo.shape[1]
    for s in range(starts.shape[0] - 1):
        first, stop = starts[s], starts[s + 1]
        if stop - first <= exact_limit:
            for i in range(first, stop):
                count = 0
                for j in range(first, stop):
                    t = tree[j]
                    if seen[t] == i:
                        continue
                    meet = True
                    for g in range(d):
                        if not _meet(lo, hi, miss, i, j, g):
                            meet = False
                            break
                    if meet:
                        seen[t] = i
                        count += 1
                out[i] = count
            continue
        # The group's trees, numbered 0..m-1, with their pairs in tree order.
        members = np.unique(tree[first:stop])
        m = members.shape[0]
        local = np.searchsorted(members, tree[first:stop])
        by_tree = np.argsort(local, kind="mergesort") + first
        offset = np.zeros(m + 1, dtype=np.int64)
        for i in range(first, stop):
            offset[local[i - first] + 1] += 1
        for t in range(m):
            offset[t + 1] += offset[t]
        for i in range(first, stop):
            out[i] = m
        merged_lo = np.empty(stop - first)
        merged_hi = np.empty(stop - first)
        merged_at = np.zeros(m + 1, dtype=np.int64)
        missing = np.zeros(m, dtype=np.bool_)
        for g in range(d):
            # Per tree, the union of its non-empty intervals on g as sorted disjoint intervals.
            k = 0
            for t in range(m):
                merged_at[t] = k
                missing[t] = False
                rows = by_tree[offset[t]:offset[t + 1]]
                keep = rows[lo[rows, g] < hi[rows, g]]
                for j in rows:
                    if miss[j, g]:
                        missing[t] = True
                if keep.shape[0]:
                    keep = keep[np.argsort(lo[keep, g])]
                    cur_lo, cur_hi = lo[keep[0], g], hi[keep[0], g]
                    for j in keep[1:]:
                        if lo[j, g] <= cur_hi:
                            cur_hi = max(cur_hi, hi[j, g])
                        else:
                            merged_lo[k], merged_hi[k] = cur_lo, cur_hi
                            k += 1
                            cur_lo, cur_hi = lo[j, g], hi[j, g]
                    merged_lo[k], merged_hi[k] = cur_lo, cur_hi
                    k += 1
            merged_at[m] = k
            for i in range(first, stop):
                count = 0
                present = lo[i, g] < hi[i, g]
                for t in range(m):
                    if miss[i, g] and missing[t]:
                        count += 1
                        continue
                    a, b = merged_at[t], merged_at[t + 1]
                    if not present or a == b:
                        continue
                    # The first merged interval ending at or after lo_i; it meets i when it starts by hi_i.
                    q = a + np.searchsorted(merged_hi[a:b], lo[i, g])
                    if q < b and merged_lo[q] <= hi[i, g]:
                        count += 1
                out[i] = min(out[i], count)
    return out


@dataclass(frozen=True)
class GapPairs:
    """The face pairs of every tree across its thresholds, grouped by gap between training values.

    Attributes
    ----------
    tree, a, b, node : ndarray of int64, shape (P,)
        The tree of each pair, its leaves below (a) and above (b) the threshold of
        ``node``.
    feature, gap : ndarray of int64, shape (P,)
        The threshold's feature and its gap (:meth:`relabel.DataGrid.threshold_gaps`).
    neighbours : ndarray of int64, shape (P,)
        N(p): the number of trees with a pair in the same gap whose box (the points
        of both leaves' closures on the other features, or their common slice of
        missing values) meets p's. A line crossing the gap through p's box meets a
        changing tree only where one of its pairs holds the line, and all those
        pairs meet p's box: at most N(p) trees change along it.
    """

    tree: NDArray[np.int64]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    node: NDArray[np.int64]
    feature: NDArray[np.int64]
    gap: NDArray[np.int64]
    neighbours: NDArray[np.int64]


def gap_pairs(nodes: Sequence[tuple], grid, countable: NDArray[np.bool_],
              max_pairs: int | None = None) -> GapPairs | None:
    """Every tree's face pairs across its thresholds, with their gaps and neighbour counts (:class:`GapPairs`).

    None when the trees have more than ``max_pairs`` face pairs in all (deep trees in
    many dimensions have hundreds of thousands each): the callers then do without the
    localisation (:func:`gap_loads`, the forest's caps).

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import DataGrid
    >>> stump = lambda f, t: (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([f, -2, -2]),
    ...                       np.array([t, -2.0, -2.0]))
    >>> pairs = gap_pairs([stump(0, 0.5), stump(0, 0.6), stump(1, 0.5)], DataGrid((np.array([0.0, 1.0]),) * 2),
    ...                   np.array([True, True]))
    >>> pairs.tree.tolist(), pairs.gap.tolist(), pairs.neighbours.tolist()
    ([0, 1, 2], [1, 1, 1], [2, 2, 1])
    """
    d = grid.n_features
    parts = {k: [] for k in ("tree", "a", "b", "node", "feature", "gap")}
    geometry = []  # per tree: its leaf rows, boxes and missing-value reach, to build the pair boxes per feature
    total = 0
    for t, tree in enumerate(nodes):
        left, right, feature, threshold, reach, leaf_row, lower, upper, counted = _face_geometry(tree, d, countable)
        geometry.append((leaf_row, lower, upper, reach))
        pairs = _node_face_pairs(left, right, feature, threshold, reach, leaf_row, lower, upper, counted)
        total += pairs.shape[0]
        if max_pairs is not None and total > max_pairs:
            return None
        if pairs.shape[0] == 0:
            continue
        a, b, node = pairs[:, 0], pairs[:, 1], pairs[:, 2]
        f = feature[node]
        has_grid = np.array([grid.values[int(g)] is not None for g in f], dtype=bool)
        a, b, node, f = a[has_grid], b[has_grid], node[has_grid], f[has_grid]
        gap = np.zeros(a.shape[0], dtype=np.int64)
        for g in np.unique(f):
            at = f == g
            gap[at] = grid.threshold_gaps(int(g), threshold[node[at]])
        for key, val in (("tree", np.full(a.shape[0], t, np.int64)), ("a", a), ("b", b), ("node", node),
                         ("feature", f), ("gap", gap)):
            parts[key].append(val)
    if not parts["tree"]:
        empty = np.empty(0, np.int64)
        return GapPairs(empty, empty, empty, empty, empty, empty, empty)
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    order = np.lexsort((cat["gap"], cat["feature"]))
    cat = {k: v[order] for k, v in cat.items()}
    neighbours = np.zeros(cat["tree"].shape[0], dtype=np.int64)
    # One feature at a time, so that the pair boxes (pairs x d) of only one feature are ever held.
    bounds = np.searchsorted(cat["feature"], np.arange(d + 1))
    for f in range(d):
        rows = np.arange(bounds[f], bounds[f + 1])
        if rows.shape[0] == 0:
            continue
        tree, gap = cat["tree"][rows], cat["gap"][rows]
        starts = np.flatnonzero(np.concatenate(([True], gap[1:] != gap[:-1], [True]))).astype(np.int64)
        if rows.shape[0] > _MAX_BOXED_PAIRS:
            # Too many to box: N(p) bounded by every tree with a pair in the gap (at least N(p)).
            for s0, s1 in zip(starts[:-1], starts[1:], strict=True):
                neighbours[rows[s0:s1]] = np.unique(tree[s0:s1]).shape[0]
            continue
        lo = np.empty((rows.shape[0], d))
        hi = np.empty((rows.shape[0], d))
        miss = np.empty((rows.shape[0], d), dtype=bool)
        for t in np.unique(tree):
            at = np.flatnonzero(tree == t)
            leaf_row, lower, upper, reach = geometry[t]
            ra, rb = leaf_row[cat["a"][rows[at]]], leaf_row[cat["b"][rows[at]]]
            lo[at], hi[at] = np.maximum(lower[ra], lower[rb]), np.minimum(upper[ra], upper[rb])
            miss[at] = reach[cat["a"][rows[at]]] & reach[cat["b"][rows[at]]]
        # The threshold's own feature plays no part in which lines cross there.
        lo[:, f], hi[:, f], miss[:, f] = -np.inf, np.inf, True
        neighbours[rows] = _pair_neighbours(tree, lo, hi, miss, starts, _EXACT_PAIRS)
    return GapPairs(cat["tree"], cat["a"], cat["b"], cat["node"], cat["feature"], cat["gap"], neighbours)


@dataclass(frozen=True)
class GapLoads:
    """How far a move inside one gap between training values can move a sum of trees, per feature and gap.

    Attributes
    ----------
    loads : tuple of (ndarray of int64 or None)
        Per feature, one load per gap of :class:`relabel.DataGrid` (``None`` where
        the feature has no grid or does not count): the larger of the sums over the
        trees of their largest rises and of their largest falls across their
        thresholds in that gap (:func:`gap_loads`).
    bound : int
        The largest load.
    where : tuple of (int, int)
        The feature and gap of the largest load ((-1, -1) when every load is 0).
    """

    loads: tuple
    bound: int
    where: tuple


def tree_gap_loads(nodes: tuple, value: NDArray[np.int64], grid, countable: NDArray[np.bool_], *,
                   ranges_only: bool = False) -> list:
    """One tree's contribution to :func:`gap_loads`: ``[(feature, gaps, steps), ...]`` per counted feature.

    ``steps`` has two rows, the largest rise and the largest fall of the tree at each
    of its distinct thresholds on the feature (:func:`face_steps`): along a move
    inside the gap the tree crosses each of its thresholds there at most once, and
    changes there by one of its nodes' face pairs at that threshold, or not at all
    where the move misses the node. With ``ranges_only``
    (a tree read through its monotone envelope, which changes only across its own
    thresholds but between any of its leaf values) the jump at every threshold is
    the tree's value range.
    """
    left, _, feature, threshold, _ = _split_nodes(nodes)
    d = grid.n_features
    if ranges_only:
        leaves = np.asarray(left) < 0
        rise = np.full(leaves.shape[0], int(np.ptp(np.asarray(value)[leaves])), dtype=np.int64)
        fall = rise
    else:
        rise, fall = face_steps(nodes, value, d, countable)
    internal = (np.asarray(left) >= 0) & np.isfinite(np.asarray(threshold, dtype=np.float64))
    out = []
    feature = np.asarray(feature)
    threshold = np.asarray(threshold, dtype=np.float64)
    for f in np.unique(feature[internal]):
        if not countable[f] or grid.values[f] is None:
            continue
        at = internal & (feature == f)
        t = threshold[at]
        # The largest rise and fall per distinct threshold (one node on any line crosses it).
        distinct, inverse = np.unique(t, return_inverse=True)
        steps = np.zeros((2, distinct.shape[0]), dtype=np.int64)
        np.maximum.at(steps[0], inverse.ravel(), rise[at])
        np.maximum.at(steps[1], inverse.ravel(), fall[at])
        out.append((int(f), grid.threshold_gaps(int(f), distinct), steps))
    return out


def gap_loads(nodes: Sequence[tuple], values: Sequence[NDArray[np.int64]], grid,
              countable: NDArray[np.bool_], *, ranges_only: bool = False, pairs: GapPairs | None = None) -> GapLoads:
    """Per feature and gap between training values, how far a move inside the gap can move the sum of the trees.

    Parameters
    ----------
    nodes : sequence of tuple
        ``(left, right, feature, threshold[, missing_left])`` of every tree.
    values : sequence of ndarray of int64
        Integer value of every node of every tree as it enters the sum.
    grid : relabel.DataGrid
        The training values of every feature.
    countable : ndarray of bool, shape (d,)
        Features whose moves count (not the categorical ones).
    ranges_only : bool, default=False
        Bound each tree's change at a threshold by its value range
        (:func:`tree_gap_loads`).
    pairs : GapPairs, optional
        The trees' face pairs (:func:`gap_pairs`) if already found: they depend
        on the thresholds only, not on the values.

    Returns
    -------
    GapLoads

    Notes
    -----
    A move of x_f inside the closed gap ``[v_{k-1}, v_k]`` (the other features fixed)
    crosses exactly the thresholds t on f with ``v_{k-1} <= t < v_k``; a tree without
    one is constant along it, and a tree changes at each of its thresholds there by
    a rise, a fall or nothing. Between any two points of the move the sum therefore
    rises by at most R_k, the sum of the trees' largest rises there, and falls by at
    most D_k: the load of gap k is max(R_k, D_k), and when every load is at most the
    cut spacing g the class changes by at most one along the move (the sum stays in
    an interval of length at most g, docs/design.md section 13). Without
    ``ranges_only``, R_k is also bounded by M = max_p rise_p N(p) over the gap's face
    pairs (:class:`GapPairs`): the n trees that change along a line do so at pairs
    p_t that all hold the line, so their boxes meet pairwise and every N(p_t) >= n;
    each rises by rise_{p_t} <= M / N(p_t) <= M / n, n of them by at most M. The
    smaller of the two bounds is kept (likewise for the falls).
    O(trees x nodes x depth).

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import DataGrid
    >>> stump = lambda t: (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...                    np.array([t, -2.0, -2.0]))
    >>> grid = DataGrid((np.array([0.0, 1.0, 2.0]),))
    >>> loads = gap_loads([stump(0.2), stump(0.7), stump(1.5)], [np.array([0, 0, 3])] * 3, grid, np.array([True]))
    >>> loads.loads[0].tolist(), loads.bound, loads.where
    ([0, 6, 3, 0], 6, (0, 1))
    """
    sums = [np.zeros((2, grid.n_gaps(f)), dtype=np.int64) if countable[f] and grid.values[f] is not None else None
            for f in range(grid.n_features)]
    for tree, value in zip(nodes, values, strict=True):
        for f, gaps, steps in tree_gap_loads(tree, value, grid, countable, ranges_only=ranges_only):
            np.add.at(sums[f], (slice(None), gaps), steps)
    if not ranges_only:
        # The localised bound (GapPairs): along a line the changing trees' pairs all meet the
        # box of the pair p holding the line, so the sum rises by at most max_p rise_p N(p).
        if pairs is None:
            pairs = gap_pairs(nodes, grid, countable, max_pairs=MAX_LOCALISED_PAIRS)
        if pairs is not None and pairs.tree.shape[0]:
            step = np.array([values[t][b] - values[t][a] for t, a, b in zip(pairs.tree.tolist(), pairs.a.tolist(),
                                                                                 pairs.b.tolist(), strict=True)],
                            dtype=np.int64).reshape(-1)
            for f in np.unique(pairs.feature):
                at = pairs.feature == f
                local = np.zeros_like(sums[f])
                np.maximum.at(local[0], pairs.gap[at], np.maximum(step[at], 0) * pairs.neighbours[at])
                np.maximum.at(local[1], pairs.gap[at], np.maximum(-step[at], 0) * pairs.neighbours[at])
                sums[f] = np.minimum(sums[f], local)
    loads = [None if total is None else total.max(axis=0) for total in sums]
    bound, where = 0, (-1, -1)
    for f, load in enumerate(loads):
        if load is not None and load.shape[0] and int(load.max()) > bound:
            bound, where = int(load.max()), (f, int(np.argmax(load)))
    return GapLoads(tuple(loads), bound, where)


@dataclass(frozen=True)
class SumCertificate:
    """The oscillation certificate of a sum of trees (docs/design.md sections 9 and 10).

    Attributes
    ----------
    bound : int
        Sum of the ``n_boundaries`` largest jumps (integer value units).
    spacing : int
        The smallest gap between consecutive cut points of the sum.
    n_boundaries : int
        Largest number of trees that can have a boundary through one point.
    multiplicity : ndarray of shape (n_features,)
        Per feature, the largest number of trees sharing one threshold (or window).
    jumps : ndarray of shape (n_trees,)
        J_t where computed exactly, else the tree's value range (an upper bound).
    exact : ndarray of shape (n_trees,), bool
        Which jumps are exact.
    gaps : GapLoads or None
        The loads of the gaps between training values (:func:`gap_loads`), when
        consistency at the data's resolution was checked.
    """

    bound: int
    spacing: int
    n_boundaries: int
    multiplicity: NDArray[np.int64]
    jumps: NDArray[np.int64]
    exact: NDArray[np.bool_]
    gaps: GapLoads | None = None

    @property
    def pointwise(self) -> bool:
        """Pointwise (or r-) consistency: :func:`is_certified` of the oscillation bound and the spacing."""
        return is_certified(self.bound, self.spacing)

    @property
    def certified(self) -> bool:
        """The bound and, where computed, every gap's load are at most the spacing."""
        return self.pointwise and (self.gaps is None or is_certified(self.gaps.bound, self.spacing))

    @property
    def largest(self) -> int:
        """The larger of the oscillation bound and the largest gap load: the spacing the cut points need."""
        return max(self.bound, 0 if self.gaps is None else self.gaps.bound)

    @property
    def ratio(self) -> float:
        """:func:`bound_ratio` of :attr:`largest` and the spacing."""
        return bound_ratio(self.largest, self.spacing)

    def with_spacing(self, spacing: int) -> "SumCertificate":
        """The same bounds against the final cut points' spacing."""
        return replace(self, spacing=int(spacing))


def split_thresholds(nodes: Sequence[tuple]) -> tuple:
    """Feature, threshold and tree index of every split of the given trees' node arrays.

    Splits at an infinite threshold (present values one way, missing ones the other,
    as scikit-learn grows them) are left out: no point of space lies on them, and
    moving between a value and a missing one is not a small move (docs/design.md
    section 11).
    """
    if not nodes:
        return np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64)
    internal = [(np.asarray(n[0]) >= 0) & np.isfinite(np.asarray(n[3], dtype=np.float64)) for n in nodes]
    return (
        np.concatenate([np.asarray(n[2])[i] for n, i in zip(nodes, internal, strict=True)]).astype(np.int64),
        np.concatenate([np.asarray(n[3])[i] for n, i in zip(nodes, internal, strict=True)]).astype(np.float64),
        np.repeat(np.arange(len(nodes)), [int(i.sum()) for i in internal]),
    )


def sum_certificate(nodes: Sequence[tuple], values: Sequence[NDArray[np.int64]], n_features: int,
                    countable: NDArray[np.bool_], spacing: int, resolution: NDArray[np.float64] | None = None, *,
                    exact: bool = False, cache: dict | None = None, ranges_only: bool = False,
                    grid=None, pairs: GapPairs | None = None) -> SumCertificate:
    """Oscillation certificate of a sum of trees, recomputed from the trees' geometry alone.

    Parameters
    ----------
    nodes : sequence of tuple
        ``(left, right, feature, threshold)`` of every tree, thresholds as ``predict``
        compares with them (:func:`tree_nodes`).
    values : sequence of ndarray of int64
        Integer value of every node of every tree as it enters the sum (the forest's
        leaf means, boosting's steps times leaf values; only leaves matter).
    n_features : int
        Dimension d.
    countable : ndarray of bool, shape (d,)
        Features that count in the bound (categorical features do not).
    spacing : int
        The smallest gap between consecutive cut points of the sum: certified when
        the bound is at most this.
    resolution : ndarray of shape (d,), optional
        Window widths r_f (docs/design.md section 4c); ``None`` is r = 0.
    exact : bool, default=False
        Compute every tree's jump J_t exactly; by default a tree's value range (an
        upper bound of J_t) is used while it suffices to certify.
    cache : dict, optional
        Exact jumps already computed, by tree index (kept across rounds of growth).
    ranges_only : bool, default=False
        Bound every tree's jump by its value range, never by the exact jump
        between touching leaves: for functions that change only across a tree's
        own thresholds but not only between touching leaves (monotone envelopes).
    grid : relabel.DataGrid, optional
        Check consistency at the data's resolution too: the loads of the gaps
        between training values (:func:`gap_loads`) must be at most ``spacing``
        (docs/design.md section 13).

    Returns
    -------
    SumCertificate

    Notes
    -----
    Per feature, the thresholds of all trees are sorted and their multiplicity
    found (:func:`threshold_multiplicity`); ``n_boundaries`` is their sum. Exact
    jumps are computed only where they can change the sum of the
    ``n_boundaries`` largest: the trees of the current top, until the top holds
    exact values only (then no other tree can enter). O(T log T + thresholds log
    thresholds) plus the exact jumps needed.

    Examples
    --------
    >>> import numpy as np
    >>> stump = lambda t: (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...                    np.array([t, -2.0, -2.0]))
    >>> values = [np.array([0, 0, 4]), np.array([0, 0, 5])]
    >>> c = sum_certificate([stump(0.2), stump(0.7)], values, 1, np.array([True]), spacing=5)
    >>> c.bound, c.n_boundaries, c.certified
    (5, 1, True)
    """
    r = np.zeros(n_features) if resolution is None else np.asarray(resolution, dtype=np.float64)
    internal = [np.asarray(n[0]) >= 0 for n in nodes]
    feature, threshold, owner = split_thresholds(nodes)
    multiplicity = np.zeros(n_features, dtype=np.int64)
    for f in np.flatnonzero(countable):
        on_f = feature == f
        multiplicity[f] = threshold_multiplicity(threshold[on_f], owner[on_f], resolution=float(r[f]))
    n_boundaries = int(multiplicity.sum())
    jumps = np.array([np.ptp(v[~i]) if (~i).any() else 0 for v, i in zip(values, internal, strict=True)],
                     dtype=np.int64)
    is_exact = np.zeros(len(nodes), dtype=bool)
    cache = {} if cache is None else cache
    if not ranges_only and (exact or not is_certified(oscillation_bound(jumps, n_boundaries), spacing)):
        while True:
            todo = np.arange(len(nodes)) if exact else np.argsort(-jumps, kind="stable")[:n_boundaries]
            todo = todo[~is_exact[todo]]
            if todo.shape[0] == 0:
                break
            for t in todo:
                if t not in cache:
                    cache[t] = exact_jump(nodes[t], values[t], n_features, r)
                jumps[t] = cache[t]
                is_exact[t] = True
    gaps = None if grid is None else gap_loads(nodes, values, grid, countable, ranges_only=ranges_only, pairs=pairs)
    return SumCertificate(oscillation_bound(jumps, n_boundaries), int(spacing), n_boundaries, multiplicity,
                          jumps, is_exact, gaps)


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
