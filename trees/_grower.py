"""Breadth-first tree growth: every node of a level is split at once.

The builder of the trees. Per level it runs the phases of :mod:`trees._splitter`
(node statistics, candidate features, the best split of every node) and of
:mod:`trees._partition` (thresholds and the rows of every child, the next level),
then narrows the monotone bounds of the new children (:mod:`trees._monotone`).
The per-feature sample orders are sorted once, at the root, and kept grouped by
node with stable partitions, so no sort is repeated.

When every weight is an integer, every feature competes and nothing is
constrained, all levels run in one compiled call; otherwise each level is one
compiled call, and the steps whose rounding numpy defines (a node's total of
real weights, the monotone bounds) or that draw random numbers (``max_features``)
run in numpy between them, so the trees are those of the numpy level passes the
kernels replaced.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from trees._compile import compiled
from trees._criterion import criterion_kernel
from trees._monotone import bound_children, neighbour_bounds, project_leaf_means, tree_leaf_order
from trees._partition import NodeArrays, next_level, split_nodes
from trees._splitter import GrowParams, Level, TrainingData, candidate_features, find_splits, node_statistics
from trees._tree import OrdinalTree
from trees.criteria import _CRITERIA, _encode, _mass

__all__ = ["grow_tree", "grower_cached"]

# Bounds the (features x rows) gain block of one pass, and so the memory of a level.
_BLOCK_ELEMENTS = 1 << 22


@compiled
def _grow_level(data, level, parent_w, keys, kern, tables, params, cst, nodes, size, child_of_row):
    """Split the nodes of one level; returns ``(next level, tree size, the level's splits)``."""
    stats = node_statistics(kern, tables, nodes.value, level.frontier, parent_w)
    chosen = candidate_features(data, level, keys, params)
    best = find_splits(data, level, stats, chosen, kern, tables, params, cst, nodes.lower, nodes.upper)
    splits = split_nodes(data, level, best, stats, params, nodes, size, child_of_row)
    following, size = next_level(level, splits, params, nodes)
    return following, size, splits


@compiled
def _grow_levels(data, level, kern, tables, params, cst, nodes, size, child_of_row):
    """Every level in one call (integer weights: a node's total is exact in any order;
    every feature competes; no constraints). Returns the tree size."""
    no_keys = np.empty((0, 0))
    K = nodes.value.shape[1]
    while level.frontier.shape[0] > 0:
        parent_w = np.empty(level.frontier.shape[0])
        for s in range(level.frontier.shape[0]):
            total = 0.0
            for k in range(K):
                total += nodes.value[level.frontier[s], k]
            parent_w[s] = total
        level, size, _ = _grow_level(data, level, parent_w, no_keys, kern, tables, params, cst, nodes, size,
                                     child_of_row)
    return size


def _new_nodes(capacity: int, n_classes: int) -> NodeArrays:
    return NodeArrays(
        left=np.full(capacity, -1, dtype=np.intp),
        feature=np.full(capacity, -2, dtype=np.intp),
        threshold=np.full(capacity, -2.0),
        missing_left=np.zeros(capacity, dtype=np.bool_),
        value=np.zeros((capacity, n_classes)),
        n_samples=np.zeros(capacity, dtype=np.intp),
        depth=np.zeros(capacity, dtype=np.intp),
        lower=np.full(capacity, -np.inf),
        upper=np.full(capacity, np.inf),
    )


def _training_data(X, y, sample_weight, crit, n_classes) -> TrainingData:
    n = X.shape[0]
    YwT = np.zeros((n_classes, n))
    YwT[y, np.arange(n)] = sample_weight
    # Fresh writable copies: a read-only input would compile another specialisation.
    return TrainingData(
        XT=np.ascontiguousarray(X.T),
        YW=np.ascontiguousarray(_encode(crit, YwT).T),
        y=np.array(y, dtype=np.intp),
        w=np.array(sample_weight, dtype=np.float64),
    )


def grow_tree(
    X: NDArray[np.float64],
    y: NDArray[np.intp],
    sample_weight: NDArray[np.float64],
    n_classes: int,
    *,
    criterion: str,
    max_depth: int | None,
    min_samples_split: int,
    min_samples_leaf: int,
    max_features: int,
    min_impurity_decrease: float,
    wig_power: float,
    rng: np.random.RandomState | None,
    monotonic_cst: NDArray[np.int8] | None = None,
    monotonic_method: str = "basic",
) -> OrdinalTree:
    """Grow a tree on rows with positive weight (validated inputs).

    ``y`` holds class indices 0..n_classes-1 and ``sample_weight`` is positive.
    ``monotonic_cst`` (int8, -1/0/+1 per feature, or None) makes the leaves' mean
    class index (``mean_index``) monotone, by the rule ``monotonic_method``:

    * ``"basic"``, scikit-learn's rule for regression trees: a split on a
      constrained feature must order its children's means and keep them inside
      the node's bounds, and gives its children the bounds ``[lower, mid]`` and
      ``[mid, upper]`` (in the constraint's direction), ``mid`` the average of the
      two means; every node's ``mean_index`` is clipped into its bounds. Monotone
      whatever the thresholds.
    * ``"intermediate"``: the same, but before every level each frontier node's
      bounds are recomputed from the values of the cells it touches across a
      constrained face (:func:`trees._monotone.neighbour_bounds`), which is
      looser than bounds inherited from the ancestors.
    * ``"isotonic"``: the tree grows as without constraints, then the leaves'
      means are projected onto the order of their faces
      (:func:`trees._monotone.project_leaf_means`).

    ``rng`` draws the feature subsets of ``max_features`` (unused, and may be None,
    when ``max_features >= n_features``). Returns the fitted :class:`OrdinalTree`.

    Time per level is O(n_features * n_active * K): every candidate is scored in
    O(K) by the criterion; the presort costs O(n_features * n log n).
    """
    crit = _CRITERIA[criterion]
    n, d = X.shape
    K = int(n_classes)
    total_w = float(sample_weight.sum())
    # Integer weights keep every running count exact: no clipping of rounding residues.
    exact = bool(np.all(sample_weight == np.round(sample_weight))) and total_w < 2.0**52
    params = GrowParams(
        min_samples_leaf=int(min_samples_leaf),
        min_samples_split=max(int(min_samples_split), 2 * int(min_samples_leaf)),
        max_depth=np.iinfo(np.intp).max if max_depth is None else int(max_depth),
        max_features=int(max_features),
        min_impurity_decrease=float(min_impurity_decrease),
        total_weight=total_w,
        exact=exact,
        block_elements=int(_BLOCK_ELEMENTS),
    )
    kern, tables = criterion_kernel(criterion, K, float(wig_power), total_w if exact else None,
                                    any_missing=bool(np.isnan(X).any()))
    cst = np.zeros(d, dtype=np.int8)
    if monotonic_cst is not None and np.any(monotonic_cst):
        cst = np.asarray(monotonic_cst, dtype=np.int8)
    rule = monotonic_method if cst.any() else None
    growth_cst = np.zeros(d, dtype=np.int8) if rule == "isotonic" else cst
    data = _training_data(X, y, sample_weight, crit, K)
    order = np.ascontiguousarray(np.argsort(data.XT, axis=1, kind="stable"), dtype=np.intp)

    nodes = _new_nodes(max(1, 2 * n - 1), K)  # a leaf holds at least one row
    nodes.value[0] = np.bincount(y, weights=sample_weight, minlength=K)
    nodes.n_samples[0] = n
    if 0 < params.max_depth and n >= params.min_samples_split and (nodes.value[0] > 0).sum() > 1:
        level = Level(order, np.array([0, n], dtype=np.intp), np.zeros(1, dtype=np.intp))
    else:
        level = Level(order, np.zeros(1, dtype=np.intp), np.zeros(0, dtype=np.intp))
    child_of_row = np.full(n, -1, dtype=np.intp)
    size = 1
    if exact and max_features >= d and not growth_cst.any():
        size = _grow_levels(data, level, kern, tables, params, growth_cst, nodes, size, child_of_row)
    else:
        size = _level_by_level(data, level, kern, tables, params, growth_cst, nodes, size, child_of_row, rng, rule)
    tree = _finish(nodes, size, crit, float(wig_power), d, monotonic_cst)
    if rule == "isotonic":
        project_leaf_means(tree, cst)
    elif rule == "intermediate":
        # The bounds keep the means monotone (neighbour_bounds); should rounding ever break
        # a pair, the projection repairs it.
        leaves, below, above = tree_leaf_order(tree, cst)
        if np.any(tree.mean_index[leaves[below]] > tree.mean_index[leaves[above]]):
            project_leaf_means(tree, cst)
    return tree


def _level_by_level(data, level, kern, tables, params, cst, nodes, size, child_of_row, rng, rule) -> int:
    """Grow level by level, with feature subsets drawn in numpy and the monotone bounds
    of ``rule`` ("basic", "intermediate" or None) between the levels; returns the size."""
    d = level.order.shape[0]
    no_keys = np.empty((0, 0))
    while level.frontier.size:
        if rule == "intermediate":
            neighbour_bounds(nodes, size, level.frontier, cst)
        parent_w = nodes.value[level.frontier].sum(axis=1)
        keys = rng.random_sample((level.frontier.size, d)) if params.max_features < d else no_keys
        level, size, splits = _grow_level(data, level, parent_w, keys, kern, tables, params, cst, nodes,
                                          size, child_of_row)
        if rule in ("basic", "intermediate") and splits.feature.size:
            children = np.arange(splits.first_child, splits.first_child + splits.value.shape[0])
            lower, upper = nodes.lower[children], nodes.upper[children]
            bound_children(splits.value, cst[splits.feature], lower, upper)
            nodes.lower[children] = lower
            nodes.upper[children] = upper
    return size


def _finish(nodes: NodeArrays, size: int, crit, wig_power: float, n_features: int, monotonic_cst) -> OrdinalTree:
    """The :class:`OrdinalTree` of the first ``size`` nodes, with every node's impurity."""
    value = nodes.value[:size].copy()
    node_impurity = _mass(crit, value.T, value.T > 0, wig_power)
    if crit.weighted:
        wn = value.sum(axis=1)
        node_impurity = np.divide(node_impurity, wn, out=np.zeros_like(node_impurity), where=wn > 0)
    return OrdinalTree(
        children_left=nodes.left[:size].copy(),
        feature=nodes.feature[:size].copy(),
        threshold=nodes.threshold[:size].copy(),
        missing_go_to_left=nodes.missing_left[:size].copy(),
        value=value,
        n_node_samples=nodes.n_samples[:size].copy(),
        impurity=node_impurity,
        depth=nodes.depth[:size].copy(),
        n_features=n_features,
        lower_bound=nodes.lower[:size].copy(),
        upper_bound=nodes.upper[:size].copy(),
        monotonic_cst=monotonic_cst,
    )


def grower_cached() -> bool:
    """Whether numba's disk cache holds a current tree grower (False after an installation or an edit).

    Every model grows trees, so an empty index of the grower means that nothing was
    compiled yet. Read through numba's cache internals; when they differ the answer is
    True (callers then warm nothing ahead).

    Examples
    --------
    >>> from trees._grower import grower_cached
    >>> isinstance(grower_cached(), bool)
    True
    """
    try:
        return bool(_grow_levels._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - numba internals: any failure means "cached"
        return True
