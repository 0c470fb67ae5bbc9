"""Compiled loops over tree structures: threshold gaps, leaf lookup and monotone envelopes.

The per-tree jump kernel of the certificates lives in :mod:`ensemble.certificates._certificates`;
the walks down the trees (:func:`tree_apply`, :func:`node_gaps`) are those of
:mod:`trees._routing`.

Trees are given as scikit-learn-style node arrays (``left``, ``right``, ``feature``,
``threshold``; ``left == -1`` at a leaf, ``x <= threshold`` goes left, a missing value
(NaN) goes left where ``missing_left`` is set and right otherwise), read in place from
the fitted trees (scikit-learn's are strided views of its node records).
"""

from __future__ import annotations

import numpy as np

from relabel import compiled as _compiled
from trees.utils import apply_trees, node_gaps

__all__ = ["compiled", "distinct_of_sorted", "missing_reach", "node_gaps", "sort_order", "sorted_distinct", "tree_apply",
           "tree_envelope"]

#: The project's numba decorator (cached, one set of compile flags) for ensemble kernels.
compiled = _compiled
_ONE_ROOT = np.zeros(1, dtype=np.int64)


@_compiled
def sort_order(values):
    """The order that sorts ``values`` ascending, ties in their order (for kernels that sort inside).

    A merge sort written out: numba's own ``np.sort``/``np.argsort`` (and ``np.unique``,
    which sorts) compile helpers under one name that collide between the cached kernels
    of two modules loaded together (a segmentation fault, numba issue 10486; see
    :func:`relabel.compiled`). Runs of 16 by insertion, then merged in passes of doubling
    width, keys beside their indices: O(n log n), about 1.5x numba's quicksort. No NaN.

    Examples
    --------
    >>> import numpy as np
    >>> sort_order(np.array([2.0, -np.inf, 1.0, 2.0])).tolist()
    [1, 2, 0, 3]
    """
    n = values.shape[0]
    key, order = values.copy(), np.arange(n)
    for first in range(0, n, _RUN):
        for i in range(first + 1, min(first + _RUN, n)):
            k, at = key[i], order[i]
            j = i - 1
            while j >= first and key[j] > k:
                key[j + 1], order[j + 1] = key[j], order[j]
                j -= 1
            key[j + 1], order[j + 1] = k, at
    key_to, order_to = np.empty_like(key), np.empty_like(order)
    width = _RUN
    while width < n:
        for first in range(0, n, 2 * width):
            _merge(key, order, key_to, order_to, first, min(first + width, n), min(first + 2 * width, n))
        key, key_to = key_to, key
        order, order_to = order_to, order
        width *= 2
    return order


#: Runs sorted by insertion before :func:`sort_order` merges them.
_RUN = 16


@_compiled
def _merge(key, order, key_to, order_to, first, middle, stop):
    """Merge the sorted runs ``first:middle`` and ``middle:stop`` of ``key`` (and ``order``) into ``key_to``."""
    i, j = first, middle
    for out in range(first, stop):
        if j >= stop or (i < middle and not key[j] < key[i]):
            key_to[out], order_to[out] = key[i], order[i]
            i += 1
        else:
            key_to[out], order_to[out] = key[j], order[j]
            j += 1


@_compiled
def sorted_distinct(values):
    """The distinct values of ``values``, ascending (``np.unique`` in a kernel, by :func:`sort_order`)."""
    return distinct_of_sorted(values[sort_order(values)])


@_compiled
def distinct_of_sorted(ordered):
    """The distinct values of ``ordered``, already ascending (the first of each run of equal values).

    Examples
    --------
    >>> import numpy as np
    >>> distinct_of_sorted(np.array([1.0, 1.0, 2.0, 5.0, 5.0])).tolist()
    [1.0, 2.0, 5.0]
    """
    keep = np.ones(ordered.shape[0], dtype=np.bool_)
    for i in range(1, ordered.shape[0]):
        keep[i] = ordered[i] != ordered[i - 1]
    return ordered[keep]


def tree_apply(X, left, right, feature, threshold, missing_left):
    """Node id of the leaf every row of ``X`` reaches (:func:`trees.utils.apply_trees` of one tree)."""
    return apply_trees(X, _ONE_ROOT, left, right, feature, threshold, missing_left)[:, 0]


@_compiled
def missing_reach(left, right, feature, missing_left, n_features):
    """For every node and feature, whether a point whose feature is missing (NaN) can reach the node.

    A node is reachable with ``x_f`` missing when every split on f above it sends
    missing values its way; the other features can take any value. Children have
    larger ids than their parent. O(n_nodes * n_features).
    """
    n_nodes = left.shape[0]
    reach = np.ones((n_nodes, n_features), dtype=np.bool_)
    for node in range(n_nodes):
        if left[node] != -1:
            f = feature[node]
            for child in (left[node], right[node]):
                reach[child, :] = reach[node, :]
            reach[left[node], f] = reach[node, f] and missing_left[node] != 0
            reach[right[node], f] = reach[node, f] and missing_left[node] == 0
    return reach


@_compiled
def tree_envelope(X, left, right, feature, threshold, missing_left, value, reach, upper):
    """A tree's monotone envelope at every row of ``X`` (docs/design.md section 9, "The rest of the model").

    With ``upper``, the largest leaf value over the points z that equal x in
    every feature with ``reach[f] == 0`` and lie on the lower side of x in
    the others (``z_f <= x_f`` where ``reach[f] == 1``, ``z_f >= x_f`` where
    ``reach[f] == -1``); without, the smallest. The envelope is monotone along
    every feature with ``reach != 0``: a step up (``reach == 1``) only enlarges
    the set the maximum runs over. Where x_f is missing, or at a split that
    separates missing from present values (infinite threshold), the walk follows
    the tree's own route. O(leaves reached) per row.

    Parameters
    ----------
    X : ndarray of shape (n_rows, d)
        Rows, compared with the raw thresholds as :func:`tree_apply` does.
    left, right, feature, threshold, missing_left : ndarray
        The tree's node arrays (:func:`ensemble.certificates._certificates.tree_nodes`).
    value : ndarray of shape (n_nodes,)
        Every node's value (only leaves are read).
    reach : ndarray of int64, shape (d,)
        -1, 0 or +1 per feature, as above.
    upper : bool
        The largest value below x (True) or the smallest (False).

    Returns
    -------
    ndarray of shape (n_rows,), the dtype of ``value``

    Examples
    --------
    >>> import numpy as np
    >>> nodes = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...          np.array([0.5, -2.0, -2.0]), np.zeros(3, np.uint8))
    >>> value = np.array([0, 3, 1])  # falls at x = 0.5: not monotone increasing
    >>> X = np.array([[0.2], [0.8]])
    >>> tree_envelope(X, *nodes, value, np.array([1]), True).tolist()
    [3, 3]
    >>> tree_envelope(X, *nodes, value, np.array([-1]), False).tolist()
    [1, 1]
    """
    n = X.shape[0]
    out = np.empty(n, dtype=value.dtype)
    stack = np.empty(left.shape[0] + 1, dtype=np.int64)
    for i in range(n):
        top = 1
        stack[0] = 0
        best = value[0]
        first = True
        while top > 0:
            top -= 1
            node = stack[top]
            if left[node] == -1:
                v = value[node]
                if first or (v > best if upper else v < best):
                    best = v
                    first = False
                continue
            f = feature[node]
            x = X[i, f]
            t = threshold[node]
            c = reach[f]
            if x != x:
                stack[top] = left[node] if missing_left[node] else right[node]
                top += 1
            elif c == 0 or not np.isfinite(t):
                stack[top] = left[node] if x <= t else right[node]
                top += 1
            elif c > 0:
                # Every present z_f <= x_f: the left side always holds some, the right one when x_f > t.
                stack[top] = left[node]
                top += 1
                if x > t:
                    stack[top] = right[node]
                    top += 1
            else:
                stack[top] = right[node]
                top += 1
                if x <= t:
                    stack[top] = left[node]
                    top += 1
        out[i] = best
    return out
