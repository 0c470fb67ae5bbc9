"""Splitting the leaves the forest's caps move, at their tree's own thresholds (docs/design.md section 13).

A leaf whose step across a gap breaks its cap is moved whole by the capping, however
wide it is: on data whose classes jump two between neighbouring values (balance-scale),
a leaf of class 1 beside one of class 3 becomes a leaf of class 2 across all of its
width. Cut along the capped pair's feature at the threshold its tree already has nearest
to the face, strictly inside the leaf, the leaf gives the slab at the face to a leaf of
its own with its value, which the capping may move alone. The tree's function and its
threshold values (one per gap, drawn apart from the other trees') are unchanged; a line
along the feature may now cross the new node, so the face pairs and their counts are
found again on the cut trees, and the certificate is computed on the final trees, as
always.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ensemble.base._kernels import compiled, tree_apply
from ensemble.certificates._gaps import _pair_steps
from ensemble.certificates._jumps import NodeArrays, tree_nodes
from trees import OrdinalTreeClassifier, leaf_boxes
from trees._tree import OrdinalTree

__all__ = ["SplitTree", "split_capped_leaves", "split_leaves", "undo_splits"]


@compiled
def _cuts_inside(lo, hi, t_start, t_value, f):
    """The tree's thresholds on feature f strictly inside (lo, hi): their range in ``t_value``."""
    first = t_start[f]
    while first < t_start[f + 1] and t_value[first] <= lo:
        first += 1
    stop = first
    while stop < t_start[f + 1] and t_value[stop] < hi:
        stop += 1
    return first, stop


@compiled
def _kept(c, first, stop, side, reach):
    """Whether cut c of [first, stop) is among the ``reach`` nearest to a face of the leaf (``side``: bit 1 its
    upper end, bit 2 its lower end; all cuts with reach < 0)."""
    if reach < 0:
        return True
    return ((side & 1) != 0 and c >= stop - reach) or ((side & 2) != 0 and c < first + reach)


@compiled
def _n_kept(first, stop, side, reach):
    """How many cuts of [first, stop) :func:`_kept` keeps."""
    kept = 0
    for c in range(first, stop):
        kept += _kept(c, first, stop, side, reach)
    return kept


@compiled
def _new_node_count(leaves, s_start, s_feature, s_side, reach, leaf_row, lower, upper, t_start, t_value):
    """How many nodes splitting the listed leaves adds: per leaf, each feature multiplies its sub-leaves by
    (cuts + 1), and a leaf cut into m pieces adds 2 (m - 1) nodes."""
    total = 0
    for i in range(leaves.shape[0]):
        r = leaf_row[leaves[i]]
        pieces = 1
        for k in range(s_start[i], s_start[i + 1]):
            f = s_feature[k]
            first, stop = _cuts_inside(lower[r, f], upper[r, f], t_start, t_value, f)
            pieces *= _n_kept(first, stop, s_side[k], reach) + 1
        total += 2 * (pieces - 1)
    return total


@compiled
def _split(left, right, feature, threshold, missing, leaves, s_start, s_feature, s_side, reach, leaf_row, lower,
           upper, t_start, t_value, n_new):
    """The node arrays with every listed leaf split, feature after feature, by a chain of its cuts.

    A leaf cut at t_1 < ... < t_k on f becomes a chain: the leaf splits at t_1, its
    right child at t_2, ..., each left child and the last right child a new leaf (the
    two children of a node are consecutive ids, above their parent's). Each new leaf is
    split on the leaf's next feature the same way. Returns the arrays and, per node,
    the original leaf it descends from (itself for the old nodes).
    """
    n_old = left.shape[0]
    n = n_old + n_new
    o_left = np.full(n, -1, dtype=np.int64)
    o_right = np.full(n, -1, dtype=np.int64)
    o_feature = np.full(n, -2, dtype=np.int64)
    o_threshold = np.full(n, -2.0)
    o_missing = np.zeros(n, dtype=np.uint8)
    origin = np.arange(n)
    o_left[:n_old], o_right[:n_old], o_feature[:n_old] = left, right, feature
    o_threshold[:n_old], o_missing[:n_old] = threshold, missing
    top = n_old
    pending = np.empty(n, dtype=np.int64)
    for i in range(leaves.shape[0]):
        leaf = leaves[i]
        r = leaf_row[leaf]
        n_pending = 1
        pending[0] = leaf
        for k in range(s_start[i], s_start[i + 1]):
            f = s_feature[k]
            first, stop = _cuts_inside(lower[r, f], upper[r, f], t_start, t_value, f)
            if _n_kept(first, stop, s_side[k], reach) == 0:
                continue
            n_next = 0
            for p in range(n_pending):
                node = pending[p]
                for c in range(first, stop):
                    if not _kept(c, first, stop, s_side[k], reach):
                        continue
                    o_feature[node], o_threshold[node] = f, t_value[c]
                    o_missing[node] = 1  # a missing f goes to the first piece
                    o_left[node], o_right[node] = top, top + 1
                    origin[top], origin[top + 1] = leaf, leaf
                    pending[n_pending + n_next] = top  # each left child is a piece
                    n_next += 1
                    node = top + 1
                    top += 2
                pending[n_pending + n_next] = node  # and so is the last right child
                n_next += 1
            pending[:n_next] = pending[n_pending:n_pending + n_next]
            n_pending = n_next
    return o_left, o_right, o_feature, o_threshold, o_missing, origin


class SplitTree:
    """One tree's leaves split at its own thresholds: new node arrays, and what each node descends from.

    Attributes
    ----------
    nodes : tuple
        ``(left, right, feature, threshold, missing_left)`` of the split tree.
    origin : ndarray of int64, shape (n_nodes,)
        The node of the grown tree each node is (old nodes) or descends from (new ones,
        pieces of a leaf): a piece carries its leaf's value.
    share : ndarray of float64, shape (n_nodes,)
        The share of its leaf's weight each node of the split tree holds (1 for the old nodes):
        the share of the leaf's training rows in the piece, or an equal share where the
        leaf holds none.
    """

    def __init__(self, nodes: tuple, origin: NDArray[np.int64], share: NDArray[np.float64]):
        self.nodes, self.origin, self.share = nodes, origin, share

    def write(self, tree: Any) -> None:
        """Give ``tree`` (scikit-learn's or :class:`trees.OrdinalTreeClassifier`) the split structure.

        Pieces keep their leaf's value, impurity and class shares, with their share of its weight:
        the tree predicts as before, and its impurity decreases (feature importances) are those of
        its grown splits.
        """
        depth = _depths(self.nodes[0], self.nodes[1])
        if isinstance(tree, OrdinalTreeClassifier):
            _write_ordinal(tree, self, depth)
        else:
            _write_scikit_learn(tree, self, depth)


@compiled
def _depths(left, right):
    """Every node's depth (children sit above their parents: one pass in id order)."""
    depth = np.zeros(left.shape[0], dtype=np.int64)
    for node in range(left.shape[0]):
        if left[node] >= 0:
            depth[left[node]] = depth[node] + 1
            depth[right[node]] = depth[node] + 1
    return depth


@compiled
def _sums_below(left, right, leaf_value):
    """Every node's sum of its leaves' values (rows of ``leaf_value``; children sit above their parents)."""
    out = leaf_value.copy()
    for node in range(left.shape[0] - 1, -1, -1):
        if left[node] >= 0:
            out[node] = out[left[node]] + out[right[node]]
    return out


def _write_scikit_learn(tree: Any, split: SplitTree, depth: NDArray[np.int64]) -> None:
    from sklearn.tree._tree import Tree

    state = tree.tree_.__getstate__()
    old = state["nodes"]
    left, right, feature, threshold, missing = split.nodes
    nodes = np.zeros(left.shape[0], dtype=old.dtype)
    nodes["left_child"], nodes["right_child"], nodes["feature"] = left, right, feature
    nodes["threshold"], nodes["missing_go_to_left"] = threshold, missing
    grown = old[split.origin]
    leaf_weight = grown["weighted_n_node_samples"] * split.share
    nodes["weighted_n_node_samples"] = _sums_below(left, right, leaf_weight)
    nodes["n_node_samples"] = np.rint(_sums_below(left, right, grown["n_node_samples"] * split.share))
    nodes["impurity"] = grown["impurity"]  # a piece's, and its chain's: no impurity decrease
    state = dict(state, nodes=nodes, node_count=left.shape[0], max_depth=int(depth.max()),
                 values=np.ascontiguousarray(state["values"][split.origin]))
    # A fresh structure: setting more nodes than a fitted one holds overruns its buffers.
    fresh = Tree(tree.tree_.n_features, np.asarray(tree.tree_.n_classes, dtype=np.intp), tree.tree_.n_outputs)
    fresh.__setstate__(state)
    tree.tree_ = fresh


def _write_ordinal(tree: OrdinalTreeClassifier, split: SplitTree, depth: NDArray[np.int64]) -> None:
    old = tree.tree_
    left, _, feature, threshold, missing = split.nodes
    o = split.origin
    # A piece without rows keeps its leaf's class shares, at a weight of 1e-9 of the leaf's (its value follows).
    scale = np.where(split.share > 0, split.share, 1e-9)
    counts = _sums_below(left, left + 1, old.value[o] * scale[:, None])
    samples = np.rint(_sums_below(left, left + 1, old.n_node_samples[o] * split.share)).astype(np.intp)
    new = OrdinalTree(children_left=left, feature=feature, threshold=threshold, value=counts,
                      n_node_samples=samples, impurity=old.impurity[o], depth=depth, n_features=old.n_features,
                      lower_bound=old.lower_bound[o], upper_bound=old.upper_bound[o],
                      monotonic_cst=old.monotonic_cst, missing_go_to_left=missing.astype(bool))
    new.mean_index = old.mean_index[o].copy()  # a piece's value is its leaf's, whatever rows it holds
    tree.tree_ = new
    # What the classifier derives per node from its structure: a piece's label and shares are its leaf's.
    tree.leaf_label_ = tree.leaf_label_[o]
    tree.__dict__.pop("_proba", None)
    tree.__setstate__(tree.__dict__.copy())


def split_leaves(nodes: tuple, leaves: NDArray[np.int64], features: NDArray[np.int64], n_features: int,
                 X: NDArray[np.float64], sides: NDArray[np.int64] | None = None, reach: int = -1,
                 row_weight: NDArray[np.float64] | None = None) -> SplitTree | None:
    """Split every leaf ``leaves[i]`` along ``features[i]`` at the tree's own thresholds strictly inside it.

    Parameters
    ----------
    nodes : tuple
        ``(left, right, feature, threshold[, missing_left])`` of the tree.
    leaves, features : ndarray of int64, shape (P,)
        The leaves to split and the feature of each split (a leaf may be listed with several).
    n_features : int
        Dimension d.
    X : ndarray of shape (n_samples, d)
        Training rows: a piece's share of its leaf's weight is its share of the leaf's rows.
    sides : ndarray of int64, shape (P,), optional
        Which faces of the leaf on its feature are capped: 1 its upper end, 2 its lower
        end, 3 both (the default).
    reach : int, default=-1
        Cut only at the ``reach`` thresholds nearest to each listed face (1: the slab at
        the face becomes a leaf of its own); every threshold inside when negative.
    row_weight : ndarray of shape (n_samples,), optional
        Weights of the training rows (equal by default).

    Returns
    -------
    SplitTree or None
        None when no listed leaf has a threshold of its tree inside it on its feature.

    Examples
    --------
    Leaf 2 (x1 > 0.5) spans every x0; its tree cuts x0 at 0.5 under the other branch, and
    so cuts leaf 2 there too, into nodes 5 and 6 with leaf 2's value:

    >>> import numpy as np
    >>> nodes = (np.array([1, 3, -1, -1, -1]), np.array([2, 4, -1, -1, -1]), np.array([1, 0, -2, -2, -2]),
    ...          np.array([0.5, 0.5, -2.0, -2.0, -2.0]))
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 0.0]])
    >>> split = split_leaves(nodes, np.array([2]), np.array([0]), 2, X)
    >>> split.nodes[0].tolist(), split.nodes[2].tolist(), split.origin.tolist()
    ([1, 3, 5, -1, -1, -1, -1], [1, 0, 0, -2, -2, -2, -2], [0, 1, 2, 3, 4, 2, 2])
    >>> split.share[5:].tolist()  # one of leaf 2's three rows has x0 <= 0.5
    [0.3333333333333333, 0.6666666666666666]
    >>> split_leaves(nodes, np.array([3]), np.array([0]), 2, X) is None  # no cut of x0 inside leaf 3
    True
    """
    left, right, feature, threshold = (np.asarray(a) for a in nodes[:4])
    missing = np.zeros(left.shape[0], np.uint8) if len(nodes) < 5 or nodes[4] is None else np.asarray(nodes[4])
    left, right, feature = (np.ascontiguousarray(a, dtype=np.int64) for a in (left, right, feature))
    threshold = np.ascontiguousarray(threshold, dtype=np.float64)
    missing = np.ascontiguousarray(missing, dtype=np.uint8)
    boxes = leaf_boxes(NodeArrays(left, right, feature, threshold, n_features), n_features)
    leaf_row = np.full(left.shape[0], -1, dtype=np.int64)
    leaf_row[boxes.leaf_ids] = np.arange(boxes.leaf_ids.shape[0])
    inner = left >= 0
    t_by = [np.unique(threshold[inner & (feature == f)]) for f in range(n_features)]
    t_start = np.concatenate([[0], np.cumsum([t.shape[0] for t in t_by])]).astype(np.int64)
    t_value = np.concatenate(t_by + [np.empty(0)]).astype(np.float64)
    sides = np.full(leaves.shape[0], 3, dtype=np.int64) if sides is None else np.asarray(sides, dtype=np.int64)
    pairs, where = np.unique(np.column_stack([leaves, features]).astype(np.int64), axis=0, return_inverse=True)
    s_side = np.zeros(pairs.shape[0], dtype=np.int64)
    np.bitwise_or.at(s_side, where.ravel(), sides)
    listed, s_start = np.unique(pairs[:, 0], return_index=True)
    s_start = np.append(s_start, pairs.shape[0]).astype(np.int64)
    s_feature = np.ascontiguousarray(pairs[:, 1])
    n_new = _new_node_count(listed, s_start, s_feature, s_side, reach, leaf_row, boxes.lower, boxes.upper, t_start,
                            t_value)
    if n_new == 0:
        return None
    *arrays, origin = _split(left, right, feature, threshold, missing, listed, s_start, s_feature, s_side, reach,
                             leaf_row, boxes.lower, boxes.upper, t_start, t_value, n_new)
    new_nodes = tuple(arrays)
    # Each piece's share of its leaf: its share of the leaf's training rows, equal where it has none.
    n = origin.shape[0]
    rows = np.bincount(tree_apply(np.ascontiguousarray(X, dtype=np.float64), *new_nodes), weights=row_weight,
                       minlength=n)
    pieces = (new_nodes[0] < 0) & (origin != np.arange(n))
    total = np.bincount(origin[pieces], weights=rows[pieces], minlength=n)
    count = np.bincount(origin[pieces], minlength=n)
    share = np.ones(n)
    at = origin[pieces]
    share[pieces] = np.where(total[at] > 0, rows[pieces] / np.where(total[at] > 0, total[at], 1), 1.0 / count[at])
    return SplitTree(new_nodes, origin, share)


def split_capped_leaves(trees: list, voters: list, grown: list, oob_leaves: list, pairs: Any,
                        cap: NDArray[np.int64], X: NDArray[np.float64],
                        sample_weight: NDArray[np.float64] | None) -> list:
    """In every tree, split the leaves of its face pairs over their caps along the pairs' features, in place.

    ``trees``, ``voters`` (:class:`ensemble.forest._trees._Voter`), ``grown`` (the values as
    grown) and ``oob_leaves`` (out-of-bag rows and their leaves, or None) are the forest's
    lists, updated for the split trees; ``pairs`` (:class:`GapPairs`) and ``cap`` are the
    pairs of the trees as they were and their caps. Returns what :func:`undo_splits` needs
    to put the trees back (empty when no tree was split).
    """
    step = np.abs(_pair_steps(pairs.tree, pairs.a, pairs.b, grown))
    broken = np.flatnonzero(step > cap)
    if broken.shape[0] == 0:
        return []
    rows, row_weight = (X, None) if sample_weight is None else (X[sample_weight > 0], sample_weight[sample_weight > 0])
    by_tree = broken[np.argsort(pairs.tree[broken], kind="stable")]
    bounds = np.searchsorted(pairs.tree[by_tree], np.arange(len(trees) + 1))
    undo = []
    for i in range(len(trees)):
        mine = by_tree[bounds[i]:bounds[i + 1]]
        if mine.shape[0] == 0:
            continue
        leaves, features, sides = _faces_to_split(pairs, mine, step - cap)
        split = split_leaves(tree_nodes(trees[i]), leaves, features, X.shape[1], rows, sides, reach=1,
                             row_weight=row_weight)
        if split is None:
            continue
        # The whole fitted state: our trees also derive per-node labels and shares from the structure.
        undo.append((i, dict(trees[i].__dict__), voters[i], grown[i], oob_leaves[i]))
        split.write(trees[i])
        inner = split.nodes[0] >= 0
        value = np.where(inner, 0, voters[i].value[split.origin])
        leaf_row = np.where(inner, -1, voters[i].leaf_row[split.origin]).astype(np.int32)
        voters[i] = voters[i]._replace(value=value, leaf_row=leaf_row)
        grown[i] = np.where(inner, 0, grown[i][split.origin])
        if oob_leaves[i] is not None:
            out = oob_leaves[i][0]
            oob_leaves[i] = (out, tree_apply(np.ascontiguousarray(X[out]), *split.nodes).astype(np.int32))
    return undo


def undo_splits(undo: list, trees: list, voters: list, grown: list, oob_leaves: list) -> None:
    """Put back the trees :func:`split_capped_leaves` split."""
    for i, state, voter, values, out_of_bag in undo:
        trees[i].__dict__.clear()
        trees[i].__dict__.update(state)
        voters[i], grown[i], oob_leaves[i] = voter, values, out_of_bag


def _faces_to_split(pairs: Any, mine: NDArray[np.int64], excess: NDArray[np.int64]) -> tuple:
    """The leaves of the broken pairs ``mine``, each with the feature of its largest excess over a cap, and the
    sides of its faces on that feature (1: its upper end, where a pair's lower leaf a ends; 2: its lower end).

    One feature per leaf: cutting a leaf on several features multiplies its pieces (and the
    pairs every count and capping reads) for little more accuracy.
    """
    leaves = np.concatenate([pairs.a[mine], pairs.b[mine]])
    features = np.tile(pairs.feature[mine], 2)
    sides = np.repeat(np.array([1, 2], dtype=np.int64), mine.shape[0])
    order = np.lexsort((-np.tile(excess[mine], 2), leaves))
    leaves, features, sides = leaves[order], features[order], sides[order]
    lead = features[np.searchsorted(leaves, leaves, side="left")]  # each leaf's first listing: its largest excess
    keep = features == lead
    return leaves[keep], features[keep], sides[keep]

