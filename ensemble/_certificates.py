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

Trees are read as scikit-learn-style node arrays (``left``, ``right``, ``feature``,
``threshold``; ``left == -1`` at a leaf; ``x <= threshold`` goes left), from
scikit-learn's trees or ours, with integer leaf values so that every sum and bound
is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    "exact_jump",
    "is_certified",
    "monotone_leaf_pairs",
    "bound_ratio",
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
    """

    bound: int
    spacing: int
    n_boundaries: int
    multiplicity: NDArray[np.int64]
    jumps: NDArray[np.int64]
    exact: NDArray[np.bool_]

    @property
    def certified(self) -> bool:
        """:func:`is_certified` of the bound and the spacing."""
        return is_certified(self.bound, self.spacing)

    @property
    def ratio(self) -> float:
        """:func:`bound_ratio` of the bound and the spacing."""
        return bound_ratio(self.bound, self.spacing)


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
                    exact: bool = False, cache: dict | None = None, ranges_only: bool = False) -> SumCertificate:
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
    return SumCertificate(oscillation_bound(jumps, n_boundaries), int(spacing), n_boundaries, multiplicity,
                          jumps, is_exact)


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
