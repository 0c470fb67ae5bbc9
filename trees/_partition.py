"""Applying a level's splits: thresholds, the rows of every child, the next level.

* :func:`split_nodes` decides which nodes split (``min_impurity_decrease``),
  writes their feature, threshold and missing-value side, and sends every row
  of a split node to a child with the routing rule of :mod:`trees._routing`;
* :func:`next_level` writes the children, keeps those that may split again,
  and partitions every feature's order into them (stable: no sort repeated).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from trees._compile import compiled
from trees._routing import goes_left
from trees._splitter import Level, n_missing_at_end

__all__ = ["NodeArrays", "Splits", "next_level", "split_nodes"]

_EPSILON = np.finfo(np.float64).eps


class NodeArrays(NamedTuple):
    """The growing tree, one entry per node (capacity ``2 n - 1``; a numba-compatible tuple)."""

    left: NDArray[np.intp]  # left child, -1 at leaves (the right child is left + 1)
    feature: NDArray[np.intp]
    threshold: NDArray[np.float64]
    missing_left: NDArray[np.bool_]
    value: NDArray[np.float64]  # (capacity, K) weighted class counts
    n_samples: NDArray[np.intp]
    depth: NDArray[np.intp]
    lower: NDArray[np.float64]  # monotone bounds of the mean class index
    upper: NDArray[np.float64]


class Splits(NamedTuple):
    """The splits of one level: child ``2 i`` (left) and ``2 i + 1`` of the i-th split node."""

    first_child: int  # node id of child 0
    slot: NDArray[np.intp]  # split index of every node of the level, -1 for nodes left as leaves
    feature: NDArray[np.intp]
    value: NDArray[np.float64]  # (2 * n_split, K)
    n_samples: NDArray[np.intp]
    child_of_row: NDArray[np.intp]  # child of every row of a split node, -1 for other rows


@compiled
def _threshold(a, b):
    """The threshold between consecutive distinct values ``a < b``: their midpoint, or
    ``a`` when the midpoint rounds to ``b`` or overflows (as scikit-learn)."""
    thr = a / 2.0 + b / 2.0
    if thr == b or not np.isfinite(thr):
        thr = a
    return thr


@compiled
def split_nodes(data, level, best, stats, params, nodes, size, child_of_row):
    """Split the nodes whose best gain passes ``min_impurity_decrease``; route their rows.

    A best gain within the tie tolerance of zero counts as zero, so whether such a
    node splits does not depend on the rounding of the sums. Child counts are summed
    in the order of feature 0. A split that separates the real values from the
    missing ones has threshold ``+inf``. A split learnt without missing values in
    its feature sends them to the child with more rows (the right one on a tie), as
    scikit-learn's trees do.
    """
    XT, y, w, order, seg, frontier = data.XT, data.y, data.w, level.order, level.seg, level.frontier
    nf = frontier.shape[0]
    K = nodes.value.shape[1]
    slot_of = np.full(nf, -1, dtype=np.intp)
    n_split = 0
    for s in range(nf):
        gain = best.gain[s]
        if np.isfinite(gain) and (stats.weight[s] / params.total_weight * (gain + stats.tol[s]) + _EPSILON
                                  >= params.min_impurity_decrease):
            slot_of[s] = n_split
            n_split += 1
    feature = np.empty(n_split, dtype=np.intp)
    value = np.zeros((2 * n_split, K))
    n_samples = np.zeros(2 * n_split, dtype=np.intp)
    for s in range(nf):
        slot = slot_of[s]
        if slot < 0:
            for p in range(seg[s], seg[s + 1]):
                child_of_row[order[0, p]] = -1
            continue
        node = frontier[s]
        f, p = best.feature[s], best.position[s]
        seen_missing = n_missing_at_end(XT, order, f, seg[s], seg[s + 1]) > 0
        missing_left = best.missing_left[s]
        a, b = XT[f, order[f, p]], XT[f, order[f, p + 1]]
        if b != b:
            thr = np.inf  # the real values against the missing ones
        else:
            thr = _threshold(a, b)
        nodes.feature[node] = f
        nodes.threshold[node] = thr
        nodes.left[node] = size + 2 * slot
        feature[slot] = f
        for q in range(seg[s], seg[s + 1]):
            row = order[0, q]
            child = 2 * slot + (0 if goes_left(XT[f, row], thr, missing_left) else 1)
            value[child, y[row]] += w[row]
            n_samples[child] += 1
            child_of_row[row] = child
        if seen_missing:
            nodes.missing_left[node] = missing_left
        else:
            nodes.missing_left[node] = n_samples[2 * slot] > n_samples[2 * slot + 1]
    return Splits(size, slot_of, feature, value, n_samples, child_of_row)


@compiled
def next_level(level, splits, params, nodes):
    """Write the children of ``splits`` and return ``(next level, new tree size)``.

    A child is split again when it is above ``max_depth``, holds at least
    ``min_samples_split`` rows and more than one class. Every feature's order is
    partitioned into the continuing children keeping its order within each.
    """
    order, frontier = level.order, level.frontier
    d, m = order.shape
    K = nodes.value.shape[1]
    first = splits.first_child
    n_child = splits.n_samples.shape[0]
    new_slot = np.full(n_child, -1, dtype=np.intp)
    n_cont = 0
    for s in range(frontier.shape[0]):
        slot = splits.slot[s]
        if slot < 0:
            continue
        parent = frontier[s]
        for side in range(2):
            child = 2 * slot + side
            node = first + child
            present = 0
            for k in range(K):
                nodes.value[node, k] = splits.value[child, k]
                if splits.value[child, k] > 0:
                    present += 1
            nodes.n_samples[node] = splits.n_samples[child]
            nodes.depth[node] = nodes.depth[parent] + 1
            nodes.lower[node] = nodes.lower[parent]
            nodes.upper[node] = nodes.upper[parent]
    for child in range(n_child):
        node = first + child
        if (nodes.depth[node] < params.max_depth and splits.n_samples[child] >= params.min_samples_split
                and _n_present(nodes.value[node]) > 1):
            new_slot[child] = n_cont
            n_cont += 1
    new_frontier = np.empty(n_cont, dtype=np.intp)
    new_seg = np.zeros(n_cont + 1, dtype=np.intp)
    for child in range(n_child):
        if new_slot[child] >= 0:
            new_frontier[new_slot[child]] = first + child
            new_seg[new_slot[child] + 1] = splits.n_samples[child]
    for i in range(n_cont):
        new_seg[i + 1] += new_seg[i]
    slot_of_row = splits.child_of_row
    for p in range(m):
        row = order[0, p]
        child = slot_of_row[row]
        slot_of_row[row] = new_slot[child] if child >= 0 else -1
    new_order = np.empty((d, new_seg[n_cont]), dtype=np.intp)
    ptr = np.empty(n_cont, dtype=np.intp)
    for f in range(d):
        for i in range(n_cont):
            ptr[i] = new_seg[i]
        for p in range(m):
            row = order[f, p]
            slot = slot_of_row[row]
            if slot >= 0:
                new_order[f, ptr[slot]] = row
                ptr[slot] += 1
    return Level(new_order, new_seg, new_frontier), first + n_child


@compiled
def _n_present(value):
    count = 0
    for k in range(value.shape[0]):
        if value[k] > 0:
            count += 1
    return count
