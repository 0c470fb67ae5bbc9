"""Compiled loops over tree structures: threshold gaps, leaf lookup and per-tree jumps.

Trees are given as scikit-learn-style node arrays (``left``, ``right``, ``feature``,
``threshold``; ``left == -1`` at a leaf, ``x <= threshold`` goes left), read in place
from the fitted trees (scikit-learn's are strided views of its node records).
"""

from __future__ import annotations

import numpy as np

from relabel import compiled as _compiled

__all__ = ["node_gaps", "tree_apply", "tree_jump"]


@_compiled
def node_gaps(left, right, feature, threshold, X):
    """Largest value sent left and smallest value sent right at every node.

    Every row of ``X`` is walked down the tree. For an internal node, ``lo`` is the
    largest ``X[i, feature]`` among its rows with ``x <= threshold`` and ``hi`` the
    smallest among those with ``x > threshold`` (``-inf``/``inf`` when a side has no
    row). Any threshold in ``[lo, hi)`` sends the rows exactly as before.
    O(n_rows * depth).
    """
    n_nodes = left.shape[0]
    lo = np.full(n_nodes, -np.inf)
    hi = np.full(n_nodes, np.inf)
    for i in range(X.shape[0]):
        node = 0
        while left[node] != -1:
            v = X[i, feature[node]]
            if v <= threshold[node]:
                if v > lo[node]:
                    lo[node] = v
                node = left[node]
            else:
                if v < hi[node]:
                    hi[node] = v
                node = right[node]
    return lo, hi


@_compiled
def tree_apply(X, left, right, feature, threshold):
    """Node id of the leaf every row of ``X`` reaches (``x <= threshold`` goes left)."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        node = 0
        while left[node] != -1:
            if X[i, feature[node]] <= threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = node
    return out


@_compiled
def tree_jump(left, right, feature, threshold, value, leaves, lower, upper, reach, order):
    """Largest ``|value[a] - value[b]|`` over leaves a, b whose boxes are ``reach``-close.

    Leaves a and b are close when for every feature f the closed intervals
    ``[lower_a - reach_f, upper_a + reach_f]`` and ``[lower_b, upper_b]`` meet;
    ``reach = 0`` means their closures intersect. ``leaves[j]`` is the node id of the
    box in row j of ``lower``/``upper``; ``order`` lists the rows to query first (the
    extreme values first find large jumps early, which prunes the rest; sorted by the
    caller: numba's cached sort helpers can collide between modules, numba issue
    10486). For every leaf a depth-first search visits the
    nodes whose closed half-space meets a's dilated box, skipping subtrees whose
    value range cannot beat the best jump found; it stops once the best jump equals
    the tree's value range. Worst case O(n_leaves * n_nodes), far less in practice.
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
            if lower[j, f] - reach[f] <= t:
                stack[top] = left[node]
                top += 1
            if upper[j, f] + reach[f] >= t:
                stack[top] = right[node]
                top += 1
    return best
