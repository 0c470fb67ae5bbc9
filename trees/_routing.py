"""The one routing rule of the trees: which child a value goes to.

Every place of ``trees`` that sends a value down a split uses the kernels of
this module: the growers' partition of the training rows, ``apply`` (and so
``predict``) and the leaf boxes; so do the ensembles, walking many trees at once
(:func:`apply_trees`, :func:`sum_trees`) and finding the gaps of training values
around their thresholds (:func:`node_gaps`). The rule is scikit-learn's:

* a number ``x`` goes left when ``x <= threshold`` and right otherwise; so a
  leaf is the half-open box ``lower < x <= upper`` (docs/design.md section 3);
* a missing value (NaN) goes left when the node's ``missing_go_to_left`` is
  true and right otherwise, whatever the threshold. A split with threshold
  ``+inf`` sends every number left and only the missing values right.
"""

from __future__ import annotations

import numpy as np

from trees._compile import compiled

__all__ = ["apply_nodes", "apply_trees", "goes_left", "leaf_of", "node_gaps", "split_box", "sum_trees",
           "traversal_tables"]


@compiled
def goes_left(x, threshold, missing_left):
    """Whether the value ``x`` goes to the left child of a split (``missing_left`` for NaN).

    Examples
    --------
    >>> from trees._routing import goes_left
    >>> goes_left(0.5, 0.5, False), goes_left(0.6, 0.5, True), goes_left(float("nan"), 0.5, True)
    (True, False, True)
    """
    if x != x:
        return missing_left
    return x <= threshold


def traversal_tables(children_left, feature, threshold, missing_go_to_left):
    """The tables of :func:`apply_nodes` for a tree whose right child is ``left + 1``.

    A leaf points to itself with threshold ``+inf`` and missing values sent left, so
    :func:`goes_left` keeps every value there: a row that reached its leaf stays.
    """
    leaf = children_left == -1
    ids = np.arange(children_left.shape[0], dtype=np.intp)
    return (
        np.where(leaf, ids, children_left).astype(np.intp),
        np.where(leaf, 0, feature).astype(np.intp),
        np.where(leaf, np.inf, threshold).astype(np.float64),
        np.where(leaf, True, missing_go_to_left).astype(np.bool_),
    )


@compiled
def apply_nodes(X, next_left, feature, threshold, missing_left, max_depth):
    """Leaf id of every row of ``X`` (float64, C order) from :func:`traversal_tables`.

    All rows go down one level per pass (the passes have no branch on the tree, and
    the rows of one pass are independent, so the processor overlaps their memory
    reads: measured 1.8 to 3.5 times faster than walking each row to its leaf); the
    passes stop when no row moved. O(n_samples * depth).
    """
    n = X.shape[0]
    out = np.zeros(n, dtype=np.intp)
    for _ in range(max_depth):
        moved = False
        for i in range(n):
            node = out[i]
            child = next_left[node] + (0 if goes_left(X[i, feature[node]], threshold[node], missing_left[node]) else 1)
            moved |= child != node
            out[i] = child
        if not moved:
            break
    return out


@compiled(inline=True)
def leaf_of(X, i, node, left, right, feature, threshold, missing_left):
    """The leaf row ``i`` of ``X`` reaches from ``node``, down scikit-learn-style node arrays.

    ``left[n] == -1`` at a leaf; every split sends the value by :func:`goes_left`.

    Examples
    --------
    >>> import numpy as np
    >>> from trees._routing import leaf_of
    >>> left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
    >>> feature, threshold = np.array([0, -2, -2]), np.array([0.5, -2.0, -2.0])
    >>> X = np.array([[0.5], [0.7], [np.nan]])
    >>> [int(leaf_of(X, i, 0, left, right, feature, threshold, np.array([0, 0, 0], np.uint8))) for i in range(3)]
    [1, 2, 2]
    """
    while left[node] != -1:
        if goes_left(X[i, feature[node]], threshold[node], missing_left[node] != 0):
            node = left[node]
        else:
            node = right[node]
    return node


@compiled
def apply_trees(X, roots, left, right, feature, threshold, missing_left):
    """The leaf every row of ``X`` reaches in every tree: shape ``(n_rows, n_trees)``, int64.

    The trees' node arrays are concatenated, child ids global (``roots[t]`` is the id
    of tree t's root), so a leaf id is the tree's own id plus ``roots[t]``.

    Examples
    --------
    >>> import numpy as np
    >>> from trees._routing import apply_trees
    >>> stump = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]), np.array([0.5, -2.0, -2.0]))
    >>> two = [np.concatenate((a, np.where(a >= 0, a + 3, a))) for a in stump[:2]]  # the stump twice
    >>> apply_trees(np.array([[0.2], [0.9]]), np.array([0, 3]), *two, np.tile(stump[2], 2),
    ...             np.tile(stump[3], 2), np.zeros(6, np.uint8)).tolist()
    [[1, 4], [2, 5]]
    """
    out = np.empty((X.shape[0], roots.shape[0]), dtype=np.int64)
    for i in range(X.shape[0]):
        for t in range(roots.shape[0]):
            out[i, t] = leaf_of(X, i, roots[t], left, right, feature, threshold, missing_left)
    return out


@compiled
def sum_trees(X, roots, left, right, feature, threshold, missing_left, value, out):
    """``out[i] += sum over the trees of value[leaf row i reaches]``, the node arrays as in :func:`apply_trees`.

    ``value`` and ``out`` are integers in the ensembles (exact sums in any order).

    Examples
    --------
    >>> import numpy as np
    >>> from trees._routing import sum_trees
    >>> nodes = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]), np.array([0.5, -2.0, -2.0]))
    >>> out = np.zeros(2, np.int64)
    >>> sum_trees(np.array([[0.2], [0.9]]), np.array([0]), *nodes, np.zeros(3, np.uint8), np.array([0, 1, 5]), out)
    >>> out.tolist()
    [1, 5]
    """
    for i in range(X.shape[0]):
        total = out[i]
        for t in range(roots.shape[0]):
            total += value[leaf_of(X, i, roots[t], left, right, feature, threshold, missing_left)]
        out[i] = total


@compiled
def node_gaps(left, right, feature, threshold, missing_left, X):
    """Largest value sent left and smallest value sent right at every node.

    Every row of ``X`` is walked down the tree by :func:`goes_left`. For an internal
    node, ``lo`` is the largest ``X[i, feature]`` among its rows sent left and ``hi``
    the smallest among those sent right (``-inf``/``inf`` when a side has no row). Any
    threshold in ``[lo, hi)`` sends the rows exactly as before; a missing value follows
    ``missing_left`` whatever the threshold, so it takes no part. O(n_rows * depth).

    Examples
    --------
    >>> import numpy as np
    >>> from trees._routing import node_gaps
    >>> nodes = (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]), np.array([0.5, -2.0, -2.0]))
    >>> lo, hi = node_gaps(*nodes, np.zeros(3, np.uint8), np.array([[0.1], [0.4], [0.9], [np.nan]]))
    >>> float(lo[0]), float(hi[0])
    (0.4, 0.9)
    """
    n_nodes = left.shape[0]
    lo = np.full(n_nodes, -np.inf)
    hi = np.full(n_nodes, np.inf)
    for i in range(X.shape[0]):
        node = 0
        while left[node] != -1:
            v = X[i, feature[node]]
            # A missing value compares false with every bound: it moves neither.
            if goes_left(v, threshold[node], missing_left[node] != 0):
                if v > lo[node]:
                    lo[node] = v
                node = left[node]
            else:
                if v < hi[node]:
                    hi[node] = v
                node = right[node]
    return lo, hi


@compiled
def split_box(lower, upper, missing, parent, left, right, feature, threshold, missing_left):
    """Write the boxes of the two children of ``parent`` (rows of ``lower``/``upper``/``missing``).

    The box form of :func:`goes_left`: the left child keeps the numbers up to
    ``threshold`` (its upper bound becomes ``min(upper, threshold)``), the right
    child those above (lower bound ``max(lower, threshold)``), and only the child
    that receives the missing values keeps the parent's ``missing`` flag on
    ``feature``. Other features are inherited unchanged.
    """
    for g in range(lower.shape[1]):
        lower[left, g] = lower[parent, g]
        upper[left, g] = upper[parent, g]
        missing[left, g] = missing[parent, g]
        lower[right, g] = lower[parent, g]
        upper[right, g] = upper[parent, g]
        missing[right, g] = missing[parent, g]
    upper[left, feature] = min(upper[parent, feature], threshold)
    lower[right, feature] = max(lower[parent, feature], threshold)
    missing[left, feature] = missing[parent, feature] and missing_left
    missing[right, feature] = missing[parent, feature] and not missing_left
