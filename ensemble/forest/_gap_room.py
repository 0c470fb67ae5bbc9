"""Thresholds moved to nearby gaps with room, so that few face pairs need capping (docs/design.md section 13).

Bootstrap trees agree on their strongest splits: a hundred trees put the threshold of
their root in the one gap between the same two training values, and the load of that gap
(the sum of the trees' largest steps there, :func:`ensemble.certificates._certificates.gap_loads`) is
then far above the budget; capping every pair to its share budget / N(p) flattens each
tree's steps where the signal is. Moving some of those thresholds a few training values
away spreads the same steps over several gaps instead. :func:`spread_thresholds_into_room`
does that greedily, before the caps: the trees keep their structure and their leaf values
(a training row between the old and the new threshold changes leaf), every threshold stays
strictly between the thresholds on its feature of its ancestors and descendants (no leaf
becomes empty or unreachable), and the certificate is computed on the final trees as
before, so nothing here needs to be right for the model to be certified, only useful.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ensemble.base._estimator import draw_in_gaps
from ensemble.certificates._faces import face_steps
from ensemble.base._kernels import compiled, tree_apply
from ensemble.certificates._jumps import tree_nodes
from ensemble.certificates._thresholds import Gaps, float32_margins, separate_thresholds, set_thresholds

__all__ = ["REROUTE_SHARE", "ROOM_WINDOW", "draw_moved_apart", "move_thresholds_into_room", "spread_thresholds_into_room"]

#: How many gaps (distinct training values) a threshold may move to each side. Measured on
#: split 0 of six shared sets (test MAE of the default forest; 2 / 8 / 32 gaps):
#: stock10 0.571 / 0.307 / 0.307, machine10 0.906 / 0.811 / 0.906, ESL 0.377 / 0.377 / 0.393,
#: LEV 0.452 / 0.464 / 0.468, SWD 0.424 / 0.424 / 0.412, winequality-red 0.347 / 0.333 / 0.333
#: (without moves: 0.966, 1.151, 0.393, 0.464, 0.420, 0.357).
ROOM_WINDOW = 8
#: The largest share of a node's training rows a move may send to its other side: a split moved
#: that little changes its node's fit little, and never empties a leaf of the rows it was grown on
#: (integer features of few values, where one value holds a tenth of the rows, keep their splits).
REROUTE_SHARE = 0.05


def draw_moved_apart(nodes: list, new: list, moved: tuple, rng: np.random.RandomState,
                     countable: NDArray[np.bool_], *, float32: bool) -> list:
    """The moved thresholds drawn again apart from every other tree's, in their ranges (float32's margins).

    Section 9's distinct thresholds (:func:`ensemble.certificates._thresholds.separate_thresholds`); a
    tree whose redraw crossed another of its moved thresholds (a leaf box would empty)
    keeps the thresholds it had. Returns every tree's thresholds.

    Examples
    --------
    >>> import numpy as np
    >>> stump = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...          np.array([2.5, -2.0, -2.0]), np.zeros(3, np.uint8))
    >>> moved = (np.array([1]), np.array([0]), np.array([1.0]), np.array([2.0]))
    >>> out = draw_moved_apart([stump, stump], [stump[3].copy(), np.array([1.5, -2.0, -2.0])], moved,
    ...                        np.random.RandomState(0), np.array([True]), float32=False)
    >>> bool(1.0 <= out[1][0] < 2.0)
    True
    """
    owner, node, lo, hi = moved
    if float32:
        lo, hi = float32_margins(lo, hi)
    feature = np.array([nodes[t][2][m] for t, m in zip(owner.tolist(), node.tolist(), strict=True)], np.int64)
    batch = Gaps(feature, draw_in_gaps(rng, lo, hi), lo, hi, owner.astype(np.int64))
    start = np.cumsum([0] + [len(t) for t in new])
    fixed = np.concatenate([(np.asarray(n[0]) >= 0) & np.isfinite(t) for n, t in zip(nodes, new, strict=True)])
    fixed[start[owner] + node] = False
    all_feature = np.concatenate([np.asarray(n[2]) for n in nodes]).astype(np.int64)
    all_owner = np.repeat(np.arange(len(nodes)), [len(t) for t in new])
    separate_thresholds(batch, all_feature[fixed], np.concatenate(new)[fixed], all_owner[fixed], rng, countable)
    for t, m, value in zip(owner.tolist(), node.tolist(), batch.threshold.tolist(), strict=True):
        new[t][m] = value
    for t in np.unique(owner).tolist():
        if not _tree_is_valid(nodes[t], new[t]):
            new[t] = np.asarray(nodes[t][3], dtype=np.float64)
    return new


@compiled
def _allowed_intervals(left, right, feature, threshold):
    """Per internal node, the open interval its threshold may move in without emptying a leaf.

    Strictly above every threshold on the node's feature of an ancestor whose right side
    holds it and of a node in its own left subtree, strictly below those of an ancestor
    whose left side holds it and of a node in its right subtree.
    """
    n = left.shape[0]
    parent = np.full(n, -1, dtype=np.int64)
    for m in range(n):
        if left[m] >= 0:
            parent[left[m]] = m
            parent[right[m]] = m
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    for m in range(n):
        if left[m] < 0:
            continue
        child, a = m, parent[m]
        while a >= 0:
            if left[a] >= 0 and feature[a] == feature[m]:
                if left[a] == child:  # m lies left of a: m below a's threshold, a above m's
                    hi[m] = min(hi[m], threshold[a])
                    lo[a] = max(lo[a], threshold[m])
                else:
                    lo[m] = max(lo[m], threshold[a])
                    hi[a] = min(hi[a], threshold[m])
            child, a = a, parent[a]
    return lo, hi


@compiled
def _row_paths(left, right, feature, threshold, missing_left, X):
    """Every (internal node, value on its feature) a row of X meets on its way down (missing values follow
    the node's side and are not recorded)."""
    depth = np.zeros(left.shape[0], dtype=np.int64)
    for m in range(left.shape[0]):  # parents come before their children in both trees' node orders
        if left[m] >= 0:
            depth[left[m]] = depth[right[m]] = depth[m] + 1
    capacity = X.shape[0] * (depth.max() + 1)
    nodes = np.empty(capacity, dtype=np.int64)
    values = np.empty(capacity)
    k = 0
    for i in range(X.shape[0]):
        m = 0
        while left[m] >= 0:
            x = X[i, feature[m]]
            if np.isnan(x):
                m = left[m] if missing_left[m] else right[m]
                continue
            nodes[k], values[k] = m, x
            k += 1
            m = left[m] if x <= threshold[m] else right[m]
    return nodes[:k], values[:k]


def _node_values(left, right, feature, threshold, missing_left, X) -> tuple:
    """Per internal node, the values on its feature of the rows of X reaching it (CSR ``start, values``; unsorted)."""
    nodes, values = _row_paths(left, right, feature, threshold, missing_left, X)
    return _group_by_node(nodes, values, left.shape[0])


@compiled
def _group_by_node(nodes, values, n_nodes):
    """``values`` grouped by ``nodes`` (a counting sort): CSR ``start`` over the nodes, and the grouped values."""
    start = np.zeros(n_nodes + 1, dtype=np.int64)
    for m in nodes:
        start[m + 1] += 1
    for m in range(n_nodes):
        start[m + 1] += start[m]
    fill = start[:-1].copy()
    grouped = np.empty(values.shape[0])
    for i in range(nodes.shape[0]):
        grouped[fill[nodes[i]]] = values[i]
        fill[nodes[i]] += 1
    return start, grouped


@compiled
def _reroutes_few(values, old, new):
    """Whether moving a split from ``old`` to ``new`` sends at most REROUTE_SHARE of its rows (``values``, in any
    order) the other way, leaving a row on the side that loses some."""
    low, high = min(old, new), max(old, new)
    moved = 0
    left_after = 0
    for x in values:
        moved += low < x <= high
        left_after += x <= new
    return moved <= REROUTE_SHARE * values.shape[0] and 0 < left_after < values.shape[0]


def _tree_is_valid(tree: tuple, threshold: NDArray[np.float64]) -> bool:
    """Whether every internal node's threshold lies strictly inside its allowed interval (no empty leaf)."""
    left = np.asarray(tree[0], np.int64)
    lo, hi = _allowed_intervals(left, np.asarray(tree[1], np.int64), np.asarray(tree[2], np.int64), threshold)
    inner = (left >= 0) & np.isfinite(threshold)
    return bool(np.all((lo[inner] < threshold[inner]) & (threshold[inner] < hi[inner])))


def spread_thresholds_into_room(nodes: list, values: list, grid, countable: NDArray[np.bool_], budget: int,
                                rng: np.random.RandomState, X: NDArray[np.float64] | None = None,
                                window: int = ROOM_WINDOW, ranges_only: bool = False) -> tuple:
    """New thresholds for every tree: each node's threshold in the nearest gap whose loads have room for its steps.

    Parameters
    ----------
    nodes : list of tuple
        ``(left, right, feature, threshold, missing_left)`` of every tree.
    values : list of ndarray of int64
        Every tree's integer node values (as grown).
    grid : relabel.DataGrid
        The training values of every feature.
    countable : ndarray of bool
        Features whose moves count (not the categorical ones).
    budget : int
        The load a gap may carry (the cut spacing the certificate must meet).
    rng : numpy.random.RandomState
        Draws the new threshold inside its gap.
    X : ndarray of shape (n_samples, n_features), optional
        The training rows (of positive weight): a threshold moves only where it sends
        at most ``REROUTE_SHARE`` of its node's rows the other way and leaves a row on
        each side. Without it, every move the loads ask for is made.
    window : int, default=ROOM_WINDOW
        The farthest gap, in distinct training values to either side.
    ranges_only : bool, default=False
        Count every threshold's steps as its tree's value range (trees read through
        their monotone envelopes, which change across their thresholds by up to it).

    Returns
    -------
    thresholds : list of ndarray of float64
        Every tree's thresholds (moved or not).
    moved : tuple of ndarray
        ``(tree, node, lo, hi)`` of every moved threshold: the half-open range
        ``[lo, hi)`` it was drawn in (inside one gap and inside its allowed interval),
        for separating it from other trees' thresholds.

    Notes
    -----
    Trees are taken in order and each node's largest rise and fall across its
    threshold (:func:`ensemble.certificates._certificates.face_steps`) are added to the loads of
    the gap it ends in: its own gap when the loads there stay within ``budget``, else
    the nearest gap (one value away, then two, ..., up to ``window``) where they do and
    that its allowed interval reaches; a node with no such gap stays. Gaps beyond the
    smallest and largest training values are never used.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import DataGrid
    >>> stump = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...          np.array([2.5, -2.0, -2.0]), np.zeros(3, np.uint8))
    >>> grid = DataGrid((np.arange(6.0),))
    >>> new, moved = spread_thresholds_into_room([stump] * 3, [np.array([0, 0, 4])] * 3, grid, np.array([True]), 8,
    ...                                          np.random.RandomState(0))
    >>> [int(grid.threshold_gaps(0, t[:1])[0]) for t in new]  # the third step has no room left in gap 3
    [3, 3, 2]
    """
    d = grid.n_features
    # Every feature's training values and gap loads end to end, for the compiled walk.
    usable = np.array([bool(countable[f]) and grid.values[f] is not None for f in range(d)])
    lengths = [0 if grid.values[f] is None else grid.values[f].shape[0] for f in range(d)]
    v_start = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    all_values = np.concatenate([np.zeros(0)] + [v for v in grid.values if v is not None]).astype(np.float64)
    g_start = v_start + np.arange(d + 1)  # m + 1 gaps for m values
    rise_load, fall_load = np.zeros(g_start[-1], np.int64), np.zeros(g_start[-1], np.int64)
    out, moved = [], ([], [], [], [])
    no_rows = (np.zeros(1, np.int64), np.zeros(0))
    for t, (tree, value) in enumerate(zip(nodes, values, strict=True)):
        left, right, feature, threshold = (np.asarray(a) for a in tree[:4])
        threshold = np.array(threshold, dtype=np.float64)
        rise, fall = (np.asarray(s, np.int64) for s in face_steps(tree, value, d, countable, ranges_only=ranges_only))
        arrays = (np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(feature, np.int64))
        lo, hi = _allowed_intervals(*arrays, threshold)
        grown = threshold.copy()
        start, rows = no_rows if X is None else _node_values(*arrays, threshold, np.asarray(tree[4], np.bool_), X)
        internal = np.flatnonzero((left >= 0) & np.isfinite(threshold)).astype(np.int64)
        at = 0
        while at < internal.shape[0]:
            # The walk stops at each node that moves, for a draw of this generator (the same draws as a
            # node-by-node loop here), and goes on after it.
            at, m, a, b = _walk_to_next_move(internal, at, arrays[2], threshold, grown, lo, hi, rise, fall, usable,
                                             all_values, v_start, g_start, rise_load, fall_load, budget, window,
                                             X is not None, start, rows)
            if m < 0:
                break
            threshold[m] = min(a + rng.uniform() * (b - a), np.nextafter(b, -np.inf))
            for col, val in zip(moved, (t, m, a, b), strict=True):
                col.append(val)
            lo, hi = _allowed_intervals(*arrays, threshold)  # the tree's other nodes on f see the move
            at += 1
        out.append(threshold)
    return out, tuple(np.asarray(col) for col in moved)


@compiled
def _walk_to_next_move(internal, at, feature, threshold, grown, lo, hi, rise, fall, usable, all_values, v_start,
                       g_start, rise_load, fall_load, budget, window, with_rows, start, rows):
    """Walk the nodes ``internal[at:]``, adding each node's steps to the loads of the gap it ends in, and stop at
    the first node that moves: ``(its position, node, lo, hi)`` of its new gap, or ``(n, -1, 0, 0)`` at the end.

    A node stays in its own gap when the loads there keep ``budget``; else it takes the nearest gap (below
    first, one value away, then two, ..., up to ``window``) that keeps them, that its allowed interval
    reaches and, with rows, that reroutes at most ``REROUTE_SHARE`` of its rows (leaving a row each side).
    """
    for p in range(at, internal.shape[0]):
        m = internal[p]
        f = feature[m]
        if not usable[f]:
            continue
        v = all_values[v_start[f]:v_start[f + 1]]
        g = g_start[f]
        home = np.searchsorted(v, threshold[m], side="right")
        if rise_load[g + home] + rise[m] <= budget and fall_load[g + home] + fall[m] <= budget:
            rise_load[g + home] += rise[m]
            fall_load[g + home] += fall[m]
            continue
        for step in range(1, window + 1):
            for k in (home - step, home + step):
                if k < 1 or k > v.shape[0] - 1:
                    continue
                # The floats t of gap k (v_{k-1} <= t < v_k) strictly inside the allowed interval.
                a, b = max(v[k - 1], np.nextafter(lo[m], np.inf)), min(v[k], hi[m])
                if not (a < b and rise_load[g + k] + rise[m] <= budget and fall_load[g + k] + fall[m] <= budget):
                    continue
                if with_rows and not _reroutes_few(rows[start[m]:start[m + 1]], grown[m], (a + b) / 2):
                    continue
                rise_load[g + k] += rise[m]
                fall_load[g + k] += fall[m]
                return p, m, a, b
        rise_load[g + home] += rise[m]  # no gap with room: the node stays
        fall_load[g + home] += fall[m]
    return internal.shape[0], -1, 0.0, 0.0


def move_thresholds_into_room(trees: list, values: list, oob_leaves: list, grid, countable: NDArray[np.bool_],
                              budget: int, X: NDArray[np.float64], weight: NDArray[np.float64] | None, rng, *,
                              ranges_only: bool, float32: bool) -> None:
    """Move the forest's thresholds to nearby gaps with room for their steps (:func:`spread_thresholds_into_room`).

    ``values`` are the trees' values as grown (the caps come after). The moved thresholds
    are drawn apart from every other tree's (section 9's distinct thresholds) and inside
    float32's margins for scikit-learn's own trees (``float32``); the leaves keep their
    values, and the out-of-bag rows (``oob_leaves``, updated in place) are routed again.
    """
    nodes = [tree_nodes(tree) for tree in trees]
    new, (owner, node, lo, hi) = spread_thresholds_into_room(nodes, values, grid, countable, budget, rng,
                                                              X=X if weight is None else X[weight > 0],
                                                              ranges_only=ranges_only)
    if owner.shape[0] == 0:
        return
    new = draw_moved_apart(nodes, new, (owner, node, lo, hi), rng, countable, float32=float32)
    for i, tree in enumerate(trees):
        set_thresholds(tree, new[i])
        # Envelope forests keep their out-of-bag sums as grown (their cut points barely move).
        if i < len(oob_leaves) and oob_leaves[i] is not None:
            rows = oob_leaves[i][0]
            oob_leaves[i] = (rows, tree_apply(np.ascontiguousarray(X[rows]), *tree_nodes(tree)).astype(np.int32))
