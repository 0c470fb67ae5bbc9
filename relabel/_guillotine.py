"""Guillotine hierarchies over axis-aligned boxes, and pushing boxes down them.

The one search structure behind fusion and adjacency (docs/design.md section 4): a tree's
leaf boxes, or the faces of the regions ending on one hyperplane, are organised in a
binary splitting hierarchy rebuilt from the boxes alone (:func:`guillotine_tree`), and
other boxes are sent down it (:func:`push_down`), visiting only the nodes they meet.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from relabel._errors import TooManyRegionsError
from relabel._numba import compiled, float_array, index_array

__all__ = ["Hierarchy", "guillotine_tree", "push_down"]


class Hierarchy(NamedTuple):
    """A binary splitting hierarchy over boxes, as arrays indexed by node.

    Internal node ``v`` splits on ``feature[v]`` at ``threshold[v]`` into ``left[v]``
    (``x_f <= t``) and ``right[v]`` (``x_f > t``); a leaf node has ``feature[v] == -1``
    and ``leaf[v]``, the position of its box in the input (``-1`` for internal nodes and
    for unused slots).
    """

    feature: NDArray[np.int64]
    threshold: NDArray[np.float64]
    left: NDArray[np.int64]
    right: NDArray[np.int64]
    leaf: NDArray[np.int64]


def guillotine_tree(lower: ArrayLike, upper: ArrayLike, groups: ArrayLike | None = None, *,
                    name: str = "boxes") -> Hierarchy:
    """Rebuild a binary splitting hierarchy over a tree's leaf boxes.

    Parameters
    ----------
    lower, upper : array-like of shape (L, d)
        The boxes ``lower < x <= upper``.
    groups : array-like of shape (L,) of int, optional
        Dense group ids 0..G-1: a separate hierarchy is built per group, rooted at node
        ``g``. One group (rooted at node 0) by default.
    name : str, default="boxes"
        How the error message names the boxes.

    Returns
    -------
    Hierarchy
        Nodes numbered breadth-first, roots first.

    Raises
    ------
    ValueError
        If some group admits no guillotine cut (overlapping boxes, or a pinwheel).

    Notes
    -----
    Only the boxes are given, not the tree, so a hierarchy with the same leaves is
    recovered by guillotine cuts: a threshold ``t`` on a feature such that every box
    lies entirely on one side. A tree's partition always admits one (its root split),
    and so does each side, recursively (any subset of such a family does, so the
    greedy choice never fails on one). Choosing the most balanced cut (then the lowest
    feature, then the lowest position) keeps the hierarchy shallow, which is what makes
    pushing boxes down it cheap. Compiled; O(d L log L) for one sort per feature, then
    O(d L) per depth.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import guillotine_tree
    >>> h = guillotine_tree([[-np.inf], [0.5]], [[0.5], [np.inf]])
    >>> h.feature[:3].tolist(), float(h.threshold[0]), h.leaf[1:3].tolist()
    ([0, -1, -1], 0.5, [0, 1])
    """
    lower, upper = float_array(lower), float_array(upper)
    groups = np.zeros(lower.shape[0], dtype=np.int64) if groups is None else index_array(groups)
    n_roots = int(groups.max()) + 1 if groups.shape[0] else 1
    # Sorted here, not in the kernel (numba issue 10486, see relabel._numba.compiled).
    # Feature-major copies: the sort and the kernel's scans read one feature of many boxes at a time.
    lower_t, upper_t = float_array(lower.T), float_array(upper.T)
    by_lower = index_array(np.argsort(lower_t, axis=1, kind="stable"))
    n_leaves, n_features = lower.shape
    n_nodes = max(2 * n_leaves, n_roots)
    # Allocated here, not in the kernel: every numpy constructor a kernel uses is
    # compiled once more in a cold process (see relabel._numba).
    hierarchy = Hierarchy(np.full(n_nodes, -1, dtype=np.int64), np.full(n_nodes, np.nan),
                          np.full(n_nodes, -1, dtype=np.int64), np.full(n_nodes, -1, dtype=np.int64),
                          np.full(n_nodes, -1, dtype=np.int64))
    start = np.zeros(n_nodes + 1, dtype=np.int64)
    count = np.zeros(n_nodes, dtype=np.int64)
    np.cumsum(np.bincount(groups, minlength=n_roots)[:n_roots], out=start[1 : n_roots + 1])
    count[:n_roots] = np.diff(start[: n_roots + 1])
    # Every group's boxes as a contiguous range of each row, sorted by the lower bound
    # (ties in input order): a stable sort by (group, lower).
    orders = by_lower
    if n_roots > 1:  # one group: the rows are sorted already
        orders = index_array(np.take_along_axis(by_lower, np.argsort(groups[by_lower], axis=1, kind="stable"), axis=1))
    # Features that may still cut a node's boxes (the roots: all), and a row of ``orders``
    # kept sorted for each node (its parent's cut feature).
    active = np.zeros((n_nodes, n_features), dtype=np.bool_)
    active[:n_roots] = True
    row_of = np.zeros(n_nodes, dtype=np.int64)
    ok = _guillotine_kernel(lower_t, upper_t, start, count, orders, np.zeros(n_leaves, dtype=np.bool_),
                            np.empty(n_leaves, dtype=np.int64), n_roots, active, row_of, *hierarchy)
    if not ok:
        raise ValueError(
            f"{name} is not the leaf partition of a tree: some boxes "
            "overlap or cannot be separated by axis-aligned cuts"
        )
    return hierarchy


@compiled
def _guillotine_kernel(lower, upper, start, count, orders, goes_left, scratch, n_roots, active, row_of,
                       feature, threshold, left, right, leaf):
    """Fill the hierarchy of :func:`guillotine_tree`; False when a node has no cut.

    ``lower`` and ``upper`` are feature-major, (d, L): a node's scans read one feature's
    bounds of many boxes, contiguous that way.

    Node ``v`` holds the boxes ``orders[f, start[v]:start[v] + count[v]]``, sorted there
    by their lower bound on f (ties in input order) for every f with ``active[v, f]``,
    and in row ``row_of[v]``; the roots' ranges are given. A split partitions every
    active row's range stably, so nothing is sorted twice: O(d L) per level after one
    sort. A feature on which all of a node's boxes have one interval has no cut there
    nor below: its row is left as it is for the whole subtree (most features of a
    deep node of a fused partition).
    """
    n_features = lower.shape[0]
    next_node = n_roots
    node = 0
    # Breadth-first: nodes are processed in id order, children numbered as created.
    while node < next_node:
        size = count[node]
        first = start[node]
        if size == 1:
            leaf[node] = orders[row_of[node], first]
        elif size > 1:
            # The most balanced cut, then the lowest feature, then the lowest position.
            # A scan stops where no later cut can be strictly better: past the middle once
            # the imbalance reaches the best, and everywhere once the best is size % 2
            # (the least possible); the choice is that of the full scan.
            best_imbalance = size + 1
            best_feature = -1
            best_cut = -1
            least = size % 2
            for f in range(n_features):
                if best_imbalance == least:
                    break
                if not active[node, f]:
                    continue
                running = -np.inf
                for i in range(size - 1):
                    if 2 * (i + 1) - size >= best_imbalance:
                        break
                    hi = upper[f, orders[f, first + i]]
                    if hi > running:
                        running = hi
                    if running <= lower[f, orders[f, first + i + 1]]:
                        imbalance = abs(2 * (i + 1) - size)
                        if imbalance < best_imbalance:
                            best_imbalance = imbalance
                            best_feature = f
                            best_cut = i
            if best_feature < 0:
                return False
            for i in range(size):
                goes_left[orders[best_feature, first + i]] = i <= best_cut
            feature[node] = best_feature
            threshold[node] = lower[best_feature, orders[best_feature, first + best_cut + 1]]
            left[node] = next_node
            right[node] = next_node + 1
            n_left = best_cut + 1
            row_of[next_node] = row_of[next_node + 1] = best_feature
            for f in range(n_features):
                if not active[node, f]:
                    continue
                w_left = 0
                w_right = n_left
                # Whether each side's boxes all have the interval of its first box on f.
                lo_l = lower[f, orders[best_feature, first]]
                hi_l = upper[f, orders[best_feature, first]]
                lo_r = lower[f, orders[best_feature, first + n_left]]
                hi_r = upper[f, orders[best_feature, first + n_left]]
                varies_l = False
                varies_r = False
                for i in range(size):
                    m = orders[f, first + i]
                    if goes_left[m]:
                        scratch[w_left] = m
                        w_left += 1
                        varies_l |= (lower[f, m] != lo_l) | (upper[f, m] != hi_l)
                    else:
                        scratch[w_right] = m
                        w_right += 1
                        varies_r |= (lower[f, m] != lo_r) | (upper[f, m] != hi_r)
                for i in range(size):
                    orders[f, first + i] = scratch[i]
                active[next_node, f] = varies_l
                active[next_node + 1, f] = varies_r
            start[next_node] = first
            count[next_node] = n_left
            start[next_node + 1] = first + n_left
            count[next_node + 1] = size - n_left
            next_node += 2
        node += 1
    return True


def push_down(lower: ArrayLike, upper: ArrayLike, hierarchy: Hierarchy, *, start: ArrayLike | None = None,
              closed: bool | ArrayLike = False, max_pairs: int | None = None,
              jumps_of: tuple[ArrayLike, ArrayLike] | None = None) -> tuple[NDArray, NDArray]:
    """Send every box down a hierarchy; return the (box, leaf) pairs reached.

    Parameters
    ----------
    lower, upper : array-like of shape (Q, d)
        The query boxes.
    hierarchy : Hierarchy
        From :func:`guillotine_tree`.
    start : array-like of shape (Q,) of int, optional
        The root node of each box (with ``groups``); node 0 by default.
    closed : bool or array-like of shape (d,) of bool, default=False
        Treat the boxes as closed (a box touching a threshold visits both sides), on
        every feature or on those of a mask: contact detection needs closed boxes, and
        the categorical rule open ones on the categorical features (a box ending on a
        categorical threshold does not reach across it).
    max_pairs : int, optional
        Stop with :class:`TooManyRegionsError` (worded for :func:`relabel.fuse`'s
        ``max_regions``) as soon as more pairs are certain.
    jumps_of : (array-like of shape (Q,), array-like of shape (L,)) of int, optional
        Labels of the query boxes and of the hierarchy's boxes: only the pairs whose
        labels differ by two or more are returned (all of them that meet). A box
        skips every node whose boxes' labels all lie within one of its own, so
        looking for the jumps of a consistent labelling visits few nodes. Not with
        ``max_pairs``.

    Returns
    -------
    boxes, leaves : ndarray of shape (P,), int64
        Box ``boxes[p]`` reaches the input box ``leaves[p]`` of the hierarchy; grouped by
        box in increasing order (callers use them as a set).

    Notes
    -----
    A box enters the left child when it has points with ``x_f <= t`` (``lower_f < t``)
    and the right child when it has points with ``x_f > t`` (``upper_f > t``). The work
    is the number of (box, node) pairs visited: output-sensitive, never all
    combinations. Every (box, node) pair in flight reaches at least one leaf, so
    finished plus in-flight pairs bound the final count from below, which is what
    ``max_pairs`` compares. Compiled, depth first.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import guillotine_tree, push_down
    >>> h = guillotine_tree([[-np.inf], [0.5]], [[0.5], [np.inf]])
    >>> [a.tolist() for a in push_down([[0.0], [0.5]], [[1.0], [0.7]], h)]
    [[0, 0, 1], [0, 1, 1]]
    >>> [a.tolist() for a in push_down([[0.0], [0.5]], [[1.0], [0.7]], h, closed=True)]
    [[0, 0, 1, 1], [0, 1, 0, 1]]
    """
    lower, upper = float_array(lower), float_array(upper)
    n_features = lower.shape[1]
    if isinstance(closed, (bool, np.bool_)):
        closed_mask = np.full(n_features, bool(closed))
    else:
        closed_mask = np.ascontiguousarray(closed, dtype=np.bool_).copy()
    starts = np.zeros(lower.shape[0], dtype=np.int64) if start is None else index_array(start)
    if jumps_of is not None and max_pairs is not None:
        raise ValueError("push_down: max_pairs counts every pair reached and cannot be combined with jumps_of")
    if jumps_of is None:
        query_label = node_lo = node_hi = np.empty(0, dtype=np.int64)
    else:
        query_label = index_array(jumps_of[0])
        if query_label.shape != (lower.shape[0],):
            raise ValueError(f"jumps_of needs one label per query box ({lower.shape[0]}); got {query_label.shape}")
        node_lo, node_hi = _label_ranges(hierarchy.feature, hierarchy.left, hierarchy.right, hierarchy.leaf,
                                         index_array(jumps_of[1]))
    boxes, leaves, n_out, bound = _push_kernel(lower, upper, *hierarchy, starts, closed_mask,
                                               -1 if max_pairs is None else int(max_pairs),
                                               query_label, node_lo, node_hi)
    if bound >= 0:
        raise TooManyRegionsError(
            f"the fused partition would have more than max_regions={max_pairs} regions "
            f"(at least {bound} so far); fuse fewer or shallower trees "
            "(in OTreeBagger: a smaller group_size or max_depth) or raise max_regions"
        )
    return boxes[:n_out].copy(), leaves[:n_out].copy()


@compiled
def _label_ranges(feature, left, right, leaf, leaf_label):
    """The smallest and the largest label of the boxes below every node (empty: lo > hi)."""
    n_nodes = feature.shape[0]
    lo = np.full(n_nodes, 1 << 62, dtype=np.int64)
    hi = np.full(n_nodes, -(1 << 62), dtype=np.int64)
    # Children are numbered after their parent (breadth-first): one backward pass.
    for v in range(n_nodes - 1, -1, -1):
        if leaf[v] >= 0:
            lo[v] = leaf_label[leaf[v]]
            hi[v] = leaf_label[leaf[v]]
        elif feature[v] >= 0:
            lo[v] = min(lo[left[v]], lo[right[v]])
            hi[v] = max(hi[left[v]], hi[right[v]])
    return lo, hi


@compiled
def _push_kernel(region_lower, region_upper, feature, threshold, left, right, leaf, starts, closed, max_pairs,
                 query_label, node_lo, node_hi):
    """Pairs of :func:`push_down` (the first ``n_out``); the last output is -1, or the bound that passed ``max_pairs``.

    With labels (``query_label`` not empty), a node whose labels all lie within one of
    the box's is not entered: none of its boxes can make a pair two labels apart.
    """
    pruned = query_label.shape[0] > 0
    n_regions = region_lower.shape[0]
    capacity = max(16, 2 * n_regions)
    out_region = np.empty(capacity, dtype=np.int64)
    out_leaf = np.empty(capacity, dtype=np.int64)
    n_out = 0
    stack = np.empty(max(16, feature.shape[0] + 1), dtype=np.int64)
    for r in range(n_regions):
        stack[0] = starts[r]
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if pruned and node_lo[node] >= query_label[r] - 1 and node_hi[node] <= query_label[r] + 1:
                continue  # every box below is within one label (or there is none)
            if leaf[node] >= 0:
                if n_out == capacity:
                    capacity *= 2
                    # Loops, not slice assignments: those compile numba's broadcasting
                    # checks and their error messages (seconds of cold compilation).
                    grown_region = np.empty(capacity, dtype=np.int64)
                    grown_leaf = np.empty(capacity, dtype=np.int64)
                    for k in range(n_out):
                        grown_region[k] = out_region[k]
                        grown_leaf[k] = out_leaf[k]
                    out_region = grown_region
                    out_leaf = grown_leaf
                out_region[n_out] = r
                out_leaf[n_out] = leaf[node]
                n_out += 1
                if max_pairs >= 0 and n_out + top + (n_regions - r - 1) > max_pairs:
                    return out_region, out_leaf, 0, n_out + top + (n_regions - r - 1)
                continue
            f = feature[node]
            if f < 0:
                continue  # a root without boxes
            t = threshold[node]
            lo = region_lower[r, f]
            hi = region_upper[r, f]
            if closed[f]:
                go_left = lo <= t
                go_right = hi >= t
            else:
                go_left = lo < t
                go_right = hi > t
            # The left child is popped first.
            if go_right:
                stack[top] = right[node]
                top += 1
            if go_left:
                stack[top] = left[node]
                top += 1
    return out_region, out_leaf, n_out, -1


def far_on_one_value(t_a, label_a, t_b, label_b):
    """Masks of the a faces and the b faces that lie on a hyperplane with a face of the other side
    two or more labels away: the only faces a pair two labels apart can come from."""
    values, inverse = np.unique(np.concatenate((t_a, t_b)), return_inverse=True)
    inverse = inverse.ravel()
    ia, ib = inverse[: t_a.shape[0]], inverse[t_a.shape[0]:]
    ranges = []
    for i, lab in ((ia, label_a), (ib, label_b)):
        lo = np.full(values.shape[0], np.iinfo(np.int64).max // 2, dtype=np.int64)
        hi = np.full(values.shape[0], np.iinfo(np.int64).min // 2, dtype=np.int64)
        np.minimum.at(lo, i, lab)
        np.maximum.at(hi, i, lab)
        ranges.append((lo, hi))
    (lo_a, hi_a), (lo_b, hi_b) = ranges
    keep_a = (lo_b[ia] <= label_a - 2) | (hi_b[ia] >= label_a + 2)
    keep_b = (lo_a[ib] <= label_b - 2) | (hi_a[ib] >= label_b + 2)
    return keep_a, keep_b
