"""Face steps of one tree: its value changes across each of its thresholds, between leaves sharing a face.

docs/design.md section 13. Along a line parallel to feature f a tree changes only where
the line crosses one of its thresholds on f, from a leaf whose interval on f ends there
to one whose interval starts there, the two sharing a face (:func:`face_pairs`). The
largest rise and fall per node (:func:`face_steps`) are what the gap loads of
:mod:`ensemble.certificates._gaps` add up.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ensemble.certificates._jumps import NodeArrays, _split_nodes
from ensemble.base._kernels import compiled, missing_reach
from trees import leaf_boxes

__all__ = ["face_jumps", "face_pairs", "face_steps"]


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
def _node_face_pairs(left, right, feature, threshold, reach, leaf_row, lower, upper, countable, wanted):
    """Every pair (a, b) of leaves sharing a face across the threshold of an internal node n with ``wanted[n]``
    (see :func:`face_pairs`), as rows (a, b, n) of node ids."""
    n_nodes = left.shape[0]
    below = np.empty(n_nodes, dtype=np.int64)
    above = np.empty(n_nodes, dtype=np.int64)
    out = np.empty((max(n_nodes, 1), 3), dtype=np.int64)
    n_out = 0
    for n in range(n_nodes):
        if left[n] == -1 or not wanted[n] or not countable[feature[n]] or not np.isfinite(threshold[n]):
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
               countable: NDArray[np.bool_] | None = None, *, ranges_only: bool = False) -> tuple:
    """Per internal node, the largest rise and the largest fall of the tree across its threshold (both >= 0).

    A rise is ``value(b) - value(a)`` for leaves a below and b above the threshold
    sharing a face on it (see :func:`face_jumps` for the geometry), a fall its
    negative; each is 0 where no pair goes that way. With ``ranges_only`` (a tree read
    through its monotone envelope, which changes across its own thresholds by up to
    its value range) both are the tree's value range at every node.

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, 3, -1, -1]), np.array([2, -1, 4, -1, -1]), np.array([0, -2, 1, -2, -2]),
    ...          np.array([0.5, -2.0, 0.0, -2.0, -2.0]))
    >>> [a.tolist() for a in face_steps(nodes, np.array([0, 3, 0, 2, 7]), 2)]  # 3 -> 2 falls, 3 -> 7 rises
    [[4, 0, 5, 0, 0], [1, 0, 0, 0, 0]]
    """
    if ranges_only:
        leaves = np.asarray(nodes[0]) < 0
        rise = np.full(leaves.shape[0], int(np.ptp(np.asarray(value)[leaves])), dtype=np.int64)
        return rise, rise
    return _steps_of_geometry(_face_geometry(nodes, n_features, countable), value)


def _steps_of_geometry(geometry: tuple, value: NDArray[np.int64]) -> tuple:
    """:func:`face_steps` of a tree whose :func:`_face_geometry` is already read."""
    left, right, feature, threshold, reach, leaf_row, lower, upper, counted = geometry
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
    return _node_face_pairs(left, right, feature, threshold, reach, leaf_row, lower, upper, counted,
                            np.ones(left.shape[0], dtype=np.bool_))
