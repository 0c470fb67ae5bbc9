"""Breadth-first tree growth: every node of a level is split at once.

The per-feature presorted sample orders are kept grouped by node (each node a
contiguous segment, sorted by the feature inside it). For a level, one
cumulative sum of the weighted one-hot class matrix along each feature's order
gives the left counts of every candidate split of every node; the criterion
scores them all, and a segment-wise maximum picks each node's split (lowest
feature, then lowest threshold on ties). The orders of the next level come from
a stable partition, so no sort is repeated.

Two growers build the same trees: ``_grow_numpy`` runs each level as vectorised
numpy passes (no Python loop over samples or thresholds), ``_grow_compiled`` runs
each level as one compiled pass with the same floating-point operations (on small
data the numpy passes' fixed cost per call dominates). :func:`grow_tree` picks the
compiled one for the criteria made of arithmetic only.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from trees.criteria import _CRITERIA, _encode, _mass, _mass_encoded

__all__ = ["OrdinalTree", "grow_tree"]

_EPSILON = np.finfo(np.float64).eps
# Bounds the (features x samples x classes) cumulative count block of one pass.
_BLOCK_ELEMENTS = 1 << 22
_TIE_RTOL = 1e-11


class OrdinalTree:
    """Array structure of a fitted tree, shaped like scikit-learn's ``tree_``.

    Node ids are assigned breadth-first, siblings adjacent
    (``children_right == children_left + 1``), so a parent's id is smaller
    than its children's ids.

    Attributes
    ----------
    children_left, children_right : ndarray of shape (node_count,)
        Child ids, ``-1`` at leaves. ``x[feature] <= threshold`` goes left.
    feature : ndarray of shape (node_count,)
        Split feature, ``-2`` at leaves.
    threshold : ndarray of shape (node_count,)
        Split threshold, ``-2.0`` at leaves.
    value : ndarray of shape (node_count, n_classes)
        Weighted class counts of the training rows in each node.
    n_node_samples : ndarray of shape (node_count,)
        Number of training rows with positive weight in each node.
    weighted_n_node_samples : ndarray of shape (node_count,)
        Sum of their weights.
    impurity : ndarray of shape (node_count,)
        The node's impurity under the tree's criterion.
    mean_index : ndarray of shape (node_count,)
        Weighted mean class index ``sum_k k n_k / n`` (classes 0..K-1) of every
        node, clipped into the node's monotone bounds (``lower_bound``,
        ``upper_bound``) when the tree was grown with monotone constraints: the
        value that is monotone in every constrained feature.
    lower_bound, upper_bound : ndarray of shape (node_count,)
        The bounds each node inherits from the splits of its ancestors on
        constrained features (``-inf``/``+inf`` without constraints).
    monotonic_cst : ndarray of shape (n_features,), int8
        The constraints the tree was grown with (zeros without constraints).
    depth : ndarray of shape (node_count,)
        Depth of every node (root 0).
    node_count, max_depth, n_features, n_classes, n_leaves : int
        Sizes of the tree.

    Examples
    --------
    >>> import numpy as np
    >>> from trees import OrdinalTreeClassifier
    >>> tree = OrdinalTreeClassifier().fit([[0.0], [1.0], [2.0]], [0, 1, 2]).tree_
    >>> tree.children_left.tolist(), tree.children_right.tolist(), tree.threshold.tolist()
    ([1, -1, 3, -1, -1], [2, -1, 4, -1, -1], [0.5, -2.0, 1.5, -2.0, -2.0])
    >>> tree.apply(np.array([[0.2], [1.7]])).tolist()
    [1, 4]
    """

    def __init__(
        self,
        *,
        children_left,
        feature,
        threshold,
        value,
        n_node_samples,
        impurity,
        depth,
        n_features,
        lower_bound=None,
        upper_bound=None,
        monotonic_cst=None,
    ):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.where(self.children_left == -1, -1, self.children_left + 1).astype(np.intp)
        self.feature = np.asarray(feature, dtype=np.intp)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.value = np.asarray(value, dtype=np.float64)
        self.n_node_samples = np.asarray(n_node_samples, dtype=np.intp)
        self.weighted_n_node_samples = self.value.sum(axis=1)
        self.impurity = np.asarray(impurity, dtype=np.float64)
        self.depth = np.asarray(depth, dtype=np.intp)
        self.node_count = int(self.children_left.shape[0])
        self.max_depth = int(self.depth.max())
        self.n_features = int(n_features)
        self.n_classes = int(self.value.shape[1])
        is_leaf = self.children_left == -1
        self.n_leaves = int(is_leaf.sum())
        self.lower_bound = (
            np.full(self.node_count, -np.inf) if lower_bound is None else np.asarray(lower_bound, dtype=np.float64)
        )
        self.upper_bound = (
            np.full(self.node_count, np.inf) if upper_bound is None else np.asarray(upper_bound, dtype=np.float64)
        )
        self.monotonic_cst = (
            np.zeros(self.n_features, dtype=np.int8) if monotonic_cst is None else np.asarray(monotonic_cst, np.int8)
        )
        w = self.weighted_n_node_samples
        mean = np.divide(self.value @ np.arange(self.n_classes), w, out=np.zeros(self.node_count), where=w > 0)
        self.mean_index = np.minimum(np.maximum(mean, self.lower_bound), self.upper_bound)
        # Traversal tables: a leaf points to itself and never goes right (x > inf is false).
        ids = np.arange(self.node_count, dtype=np.intp)
        self._next = np.where(is_leaf, ids, self.children_left)
        self._feat = np.where(is_leaf, 0, self.feature)
        self._thr = np.where(is_leaf, np.inf, self.threshold)

    def set_thresholds(self, threshold: NDArray[np.float64]) -> None:
        """Replace the split thresholds (entries of leaves are ignored).

        The certified forest moves every threshold inside the gap between the
        training values it separates; the traversal table follows.

        Parameters
        ----------
        threshold : ndarray of shape (node_count,)
            New thresholds, finite at internal nodes.

        Examples
        --------
        >>> import numpy as np
        >>> from trees import OrdinalTreeClassifier
        >>> tree = OrdinalTreeClassifier().fit([[0.0], [1.0]], [0, 1]).tree_
        >>> tree.set_thresholds(np.array([0.9, -2.0, -2.0]))
        >>> tree.apply(np.array([[0.8]])).tolist()
        [1]
        """
        threshold = np.asarray(threshold, dtype=np.float64)
        if threshold.shape != (self.node_count,):
            raise ValueError(f"threshold must have shape ({self.node_count},); got {threshold.shape}")
        is_leaf = self.children_left == -1
        if not np.all(np.isfinite(threshold[~is_leaf])):
            raise ValueError("threshold must be finite at internal nodes")
        self.threshold = np.where(is_leaf, -2.0, threshold)
        self._thr = np.where(is_leaf, np.inf, self.threshold)

    def apply(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """Leaf id of every row of a validated float64 matrix.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Finite float64 data (the estimator's ``apply`` validates it).

        Returns
        -------
        ndarray of shape (n_samples,)
            Leaf node ids (intp).

        Notes
        -----
        All rows advance one level per numpy step, and rows that reached a
        leaf are dropped every four levels: O(n_samples * max_depth).
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        n, d = X.shape
        node = np.zeros(n, dtype=np.intp)
        if self.max_depth == 0 or n == 0:
            return node
        flat = X.ravel()
        base = np.arange(0, n * d, d, dtype=np.intp)
        nxt, feat, thr = self._next, self._feat, self._thr
        # Compact the active rows every few levels: deep unbalanced trees would
        # otherwise drag every finished row through every remaining level.
        active = np.arange(n, dtype=np.intp)
        cur = node
        rows_base = base
        for level in range(self.max_depth):
            x = flat.take(rows_base + feat.take(cur))
            cur = nxt.take(cur) + (x > thr.take(cur))
            if level % 4 == 3 and level + 1 < self.max_depth:
                node[active] = cur
                keep = self.children_left.take(cur) != -1
                if not keep.all():
                    active = active[keep]
                    cur = cur[keep]
                    rows_base = rows_base[keep]
                    if active.size == 0:
                        return node
        node[active] = cur
        return node


class _Store:
    """Growable per-node arrays (capacity doubles)."""

    def __init__(self, capacity: int, n_classes: int):
        self.size = 0
        self.left = np.full(capacity, -1, dtype=np.intp)
        self.feature = np.full(capacity, -2, dtype=np.intp)
        self.threshold = np.full(capacity, -2.0)
        self.value = np.zeros((capacity, n_classes))
        self.n_samples = np.zeros(capacity, dtype=np.intp)
        self.depth = np.zeros(capacity, dtype=np.intp)
        self.lower = np.full(capacity, -np.inf)
        self.upper = np.full(capacity, np.inf)

    def add(self, value: NDArray, n_samples: NDArray, depth: NDArray) -> NDArray[np.intp]:
        k = value.shape[0]
        need = self.size + k
        if need > self.left.shape[0]:
            cap = max(need, 2 * self.left.shape[0])
            grown = (
                ("left", -1),
                ("feature", -2),
                ("threshold", -2.0),
                ("n_samples", 0),
                ("depth", 0),
                ("lower", -np.inf),
                ("upper", np.inf),
            )
            for name, fill in grown:
                old = getattr(self, name)
                new = np.full(cap, fill, dtype=old.dtype)
                new[: self.size] = old[: self.size]
                setattr(self, name, new)
            new_value = np.zeros((cap, self.value.shape[1]))
            new_value[: self.size] = self.value[: self.size]
            self.value = new_value
        ids = np.arange(self.size, need, dtype=np.intp)
        self.value[ids] = value
        self.n_samples[ids] = n_samples
        self.depth[ids] = depth
        self.size = need
        return ids


def _segment_rank(flags: NDArray[np.bool_], seg_of_pos: NDArray[np.intp], seg_start: NDArray[np.intp]) -> NDArray:
    """0-based rank of each position among earlier positions of its segment with the same flag."""
    m = flags.shape[-1]
    c_true = np.cumsum(flags, axis=-1)
    off = np.zeros(flags.shape[:-1] + (seg_start.shape[0],), dtype=c_true.dtype)
    has = seg_start > 0
    off[..., has] = c_true[..., seg_start[has] - 1]
    within = c_true - off.take(seg_of_pos, axis=-1)  # flagged positions so far in the segment
    offset = np.arange(m) - seg_start.take(seg_of_pos)  # positions before this one in the segment
    return np.where(flags, within - 1, offset - within)


def _mean_index(crit, rows: NDArray) -> NDArray:
    """Mean class index ``sum_k k n_k / n`` of encoded rows (classes on the first axis).

    Cumulative encodings hold ``C_0 .. C_{K-2}, n``, and ``sum_k k n_k =
    (K - 1) n - sum_{j<K-1} C_j``. Empty nodes give NaN, which every comparison rejects.
    """
    K = rows.shape[0]
    if crit.cumulative:
        n = rows[-1]
        total = (K - 1) * n
        for c in rows[:-1]:
            total -= c
    else:
        n = rows[0].copy()
        total = np.zeros_like(n)
        for k in range(1, K):
            n += rows[k]
            total += k * rows[k]
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / n


def _monotone_ok(crit, left, right, cst, lower, upper) -> NDArray[np.bool_]:
    """Candidates of constrained features whose children keep the order and the node's bounds.

    ``left``/``right`` are encoded child counts of shape (K, c, m), ``cst`` the c
    features' constraints (+1/-1) and ``lower``/``upper`` the bounds of the node of
    every position (m,). The rule is scikit-learn's: both children's (unclipped)
    mean class indices lie in the node's bounds and ``cst * (mean_right -
    mean_left) >= 0``.
    """
    mean_left = _mean_index(crit, left)
    mean_right = _mean_index(crit, right)
    ok = (mean_right - mean_left) * cst[:, None] >= 0
    ok &= (mean_left >= lower) & (mean_left <= upper)
    ok &= (mean_right >= lower) & (mean_right <= upper)
    return ok


def _bound_children(child_value: NDArray, split_cst: NDArray, lower: NDArray, upper: NDArray) -> None:
    """Narrow, in place, the bounds of the children of splits on constrained features.

    ``child_value`` holds the (left, right) class counts of every split, ``lower`` /
    ``upper`` the bounds inherited from the parents (two per split, left first).
    For +1 the left child's upper and the right child's lower bound become the
    middle of the two children's mean class indices (mirrored for -1); the middle
    is clipped into the parent's bounds so that bounds always nest.
    """
    w = child_value.sum(axis=1)
    mean = (child_value @ np.arange(child_value.shape[1])) / w
    mid = mean[0::2] / 2.0 + mean[1::2] / 2.0
    mid = np.minimum(np.maximum(mid, lower[0::2]), upper[0::2])
    up, down = split_cst == 1, split_cst == -1
    # Strided views: the assignments below write into ``lower`` and ``upper``.
    left_lower, right_lower = lower[0::2], lower[1::2]
    left_upper, right_upper = upper[0::2], upper[1::2]
    left_upper[up] = mid[up]
    right_lower[up] = mid[up]
    left_lower[down] = mid[down]
    right_upper[down] = mid[down]


def _grow_numpy(
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
) -> OrdinalTree:
    """:func:`grow_tree` in numpy, every level in vectorised passes.

    The reference the compiled grower is tested against, and the grower of the
    criteria with logarithms (``entropy``, ``wig``). Time per level is
    O(n_features * n_active * K) plus the criterion's O(K) per candidate (twice
    that for the candidates of constrained features); the initial presort costs
    O(n_features * n log n).
    """
    crit = _CRITERIA[criterion]
    n, d = X.shape
    K = n_classes
    power = float(wig_power)
    depth_limit = np.iinfo(np.intp).max if max_depth is None else int(max_depth)
    min_split = max(int(min_samples_split), 2 * int(min_samples_leaf))
    msl = int(min_samples_leaf)
    total_w = float(sample_weight.sum())
    cst = None
    if monotonic_cst is not None and np.any(monotonic_cst):
        cst = np.asarray(monotonic_cst, dtype=np.int8)

    # Classes on the first axis: every per-class step is then contiguous.
    YwT = np.zeros((K, n))
    YwT[y, np.arange(n)] = sample_weight
    YwT = np.ascontiguousarray(_encode(crit, YwT))
    # Integer weights keep every cumulative count exact: no clipping of rounding residues.
    exact = bool(np.all(sample_weight == np.round(sample_weight))) and total_w < 2.0**52
    XT = np.ascontiguousarray(X.T)
    XT_flat = XT.ravel()
    feature_offset = (np.arange(d, dtype=np.intp) * n)[:, None]
    order = np.argsort(XT, axis=1, kind="stable")

    store = _Store(min(2 * n, 1024), K)
    root_value = np.bincount(y, weights=sample_weight, minlength=K)[None, :]
    root = store.add(root_value, np.array([n]), np.array([0]))

    def continues(value, n_samples, depth):
        return (depth < depth_limit) & (n_samples >= min_split) & ((value > 0).sum(axis=1) > 1)

    if continues(root_value, np.array([n]), np.array([0]))[0]:
        frontier = root
        seg = np.array([0, n], dtype=np.intp)
    else:
        frontier = np.zeros(0, dtype=np.intp)
        seg = np.array([0], dtype=np.intp)

    go_right = np.zeros(n, dtype=bool)
    child_slot = np.full(n, -1, dtype=np.intp)
    while frontier.size:
        nf = frontier.size
        m = int(seg[-1])
        starts = seg[:-1]
        sizes = np.diff(seg)
        seg_of_pos = np.repeat(np.arange(nf, dtype=np.intp), sizes)
        pos = np.arange(m, dtype=np.intp)
        n_left = pos - starts[seg_of_pos] + 1
        base_valid = (n_left >= msl) & (sizes[seg_of_pos] - n_left >= msl)

        vals = XT_flat.take(order + feature_offset)
        valid = np.zeros((d, m), dtype=bool)
        np.less(vals[:, :-1], vals[:, 1:], out=valid[:, :-1])
        valid &= base_valid

        if max_features < d:
            # Like scikit-learn, features without any candidate in the node are
            # skipped and do not count towards max_features.
            has = np.logical_or.reduceat(valid, starts, axis=1).T  # (nf, d)
            keys = rng.random_sample((nf, d))
            keys[~has] = 2.0
            kth = np.partition(keys, max_features - 1, axis=1)[:, max_features - 1]
            chosen = (keys <= kth[:, None]) & has
            valid &= chosen.T[:, seg_of_pos]

        parent_value = store.value[frontier]
        parent_vt = np.ascontiguousarray(parent_value.T)  # (K, nf)
        parent_present = parent_vt > 0 if crit.uses_parent_classes else None
        parent_mass = _mass(crit, parent_vt, parent_present, power)
        parent_enc = np.ascontiguousarray(_encode(crit, parent_vt))
        parent_w = parent_value.sum(axis=1)

        best_gain = np.full(nf, -np.inf)
        best_feat = np.full(nf, -1, dtype=np.intp)
        best_pos = np.full(nf, -1, dtype=np.intp)
        block = max(1, _BLOCK_ELEMENTS // max(1, m * K))

        parent_at = parent_enc.take(seg_of_pos, axis=1)[:, None, :]  # (K, 1, m)
        mass_at = parent_mass.take(seg_of_pos)
        present_at = None if parent_present is None else parent_present.take(seg_of_pos, axis=1)[:, None, :]
        scale_at = 1.0 / parent_w.take(seg_of_pos) if crit.weighted else None
        # Gains are computed from cumulative sums whose rounding depends on the
        # accumulation order: differences below 1e-11 of the parent's impurity
        # are treated as exact ties so that the tie-break stays deterministic.
        parent_imp = parent_mass / parent_w if crit.weighted else parent_mass
        tol = _TIE_RTOL * np.abs(parent_imp)
        inner_starts = starts[1:]
        previous_total = parent_enc[:, None, :-1]
        if cst is not None:
            lower_at = store.lower.take(frontier).take(seg_of_pos)
            upper_at = store.upper.take(frontier).take(seg_of_pos)
        for f0 in range(0, d, block):
            f1 = min(d, f0 + block)
            if not valid[f0:f1].any():
                continue
            left = YwT.take(order[f0:f1], axis=1)  # (K, c, m)
            # Subtracting the previous node's total at each segment start makes
            # one cumulative sum restart at every node: left counts, no gather.
            left[:, :, inner_starts] -= previous_total
            np.cumsum(left, axis=2, out=left)
            right = parent_at - left
            if not exact:
                np.maximum(left, 0.0, out=left)
                np.maximum(right, 0.0, out=right)
            gain = mass_at - _mass_encoded(crit, left, present_at, power)
            gain -= _mass_encoded(crit, right, present_at, power)
            if scale_at is not None:
                gain *= scale_at
            allowed = valid[f0:f1]
            if cst is not None:
                constrained = np.flatnonzero(cst[f0:f1])
                if constrained.size:
                    allowed = allowed.copy()
                    allowed[constrained] &= _monotone_ok(
                        crit,
                        left[:, constrained],
                        right[:, constrained],
                        cst[f0:f1][constrained],
                        lower_at,
                        upper_at,
                    )
            G = np.where(allowed, gain, -np.inf)
            node_max = np.maximum.reduceat(G, starts, axis=1)  # (c, nf)
            top = node_max.max(axis=0)
            # Candidates within the rounding tolerance of the best are ties: the
            # lowest feature, then the lowest threshold, wins.
            feat_c = np.argmax(node_max >= top - tol, axis=0)
            better = top > best_gain + tol  # an earlier chunk keeps ties
            if not better.any():
                continue
            row = feat_c.take(seg_of_pos) * m + pos
            hit = G.ravel().take(row) >= (top - tol).take(seg_of_pos)
            first = np.minimum.reduceat(np.where(hit, pos, m), starts)
            chosen = G.ravel().take(feat_c * m + np.minimum(first, m - 1))
            best_gain[better] = chosen[better]
            best_feat[better] = feat_c[better] + f0
            best_pos[better] = first[better]

        # A gain within the tie tolerance of zero is zero (its sign is the accumulation
        # order's), so whether such a node splits does not depend on how it was summed.
        weighted_gain = parent_w / total_w * (best_gain + tol)
        split = np.isfinite(best_gain) & (weighted_gain + _EPSILON >= min_impurity_decrease)
        split_nodes = frontier[split]
        if split_nodes.size == 0:
            break
        sf = best_feat[split]
        sp = best_pos[split]
        a = vals[sf, sp]
        b = vals[sf, sp + 1]
        thr = a / 2.0 + b / 2.0
        bad = (thr == b) | ~np.isfinite(thr)
        thr[bad] = a[bad]
        store.feature[split_nodes] = sf
        store.threshold[split_nodes] = thr

        # Side of every active row, read in the first feature's order.
        rows = order[0]
        slot_of_seg = np.full(nf, -1, dtype=np.intp)
        slot_of_seg[split] = np.arange(split_nodes.size)
        row_slot = slot_of_seg[seg_of_pos]
        in_split = row_slot >= 0
        r_rows = rows[in_split]
        r_slot = row_slot[in_split]
        right_side = XT[sf[r_slot], r_rows] > thr[r_slot]
        go_right[r_rows] = right_side
        child = 2 * r_slot + right_side
        n_child = 2 * split_nodes.size
        child_value = np.bincount(child * K + y[r_rows], weights=sample_weight[r_rows], minlength=n_child * K)
        child_value = child_value.reshape(n_child, K)
        child_n = np.bincount(child, minlength=n_child)
        child_depth = np.repeat(store.depth[split_nodes] + 1, 2)
        child_ids = store.add(child_value, child_n, child_depth)
        store.left[split_nodes] = child_ids[0::2]
        lower = np.repeat(store.lower[split_nodes], 2)
        upper = np.repeat(store.upper[split_nodes], 2)
        if cst is not None:
            _bound_children(child_value, cst[sf], lower, upper)
        store.lower[child_ids] = lower
        store.upper[child_ids] = upper

        cont = continues(child_value, child_n, child_depth)
        new_slot = np.full(n_child, -1, dtype=np.intp)
        new_slot[cont] = np.arange(int(cont.sum()))
        child_slot[rows] = -1
        child_slot[r_rows] = new_slot[child]
        frontier = child_ids[cont]
        new_sizes = child_n[cont]
        seg = np.concatenate(([0], np.cumsum(new_sizes))).astype(np.intp)
        if frontier.size == 0:
            break

        # Stable partition of every feature's order into the continuing children.
        key = child_slot.take(order)  # (d, m)
        keep = key >= 0
        rank = _segment_rank(go_right.take(order), seg_of_pos, starts)
        dest = seg.take(np.where(keep, key, 0)) + rank
        m_new = int(seg[-1])
        new_order = np.empty((d, m_new), dtype=np.intp)
        row_base = (np.arange(d, dtype=np.intp) * m_new)[:, None]
        new_order.ravel()[(row_base + dest)[keep]] = order[keep]
        order = new_order

    size = store.size
    value = store.value[:size]
    node_impurity = _mass(crit, value.T, value.T > 0, power)
    if crit.weighted:
        w = value.sum(axis=1)
        node_impurity = np.divide(node_impurity, w, out=np.zeros_like(node_impurity), where=w > 0)
    return OrdinalTree(
        children_left=store.left[:size],
        feature=store.feature[:size],
        threshold=store.threshold[:size],
        value=value,
        n_node_samples=store.n_samples[:size],
        impurity=node_impurity,
        depth=store.depth[:size],
        n_features=d,
        lower_bound=store.lower[:size],
        upper_bound=store.upper[:size],
        monotonic_cst=monotonic_cst,
    )


# ----------------------------------------------------------------------------------
# The compiled grower: the same level-wise algorithm, one compiled pass per level.
#
# It repeats the numpy grower's floating-point operations in the same order (the
# running sums along each feature's order restarted at every node by subtracting the
# previous node's total, the criterion's sums class by class from 0.0, the gain as
# ``(mass(parent) - mass(left)) - mass(right)`` times ``1 / w(parent)``, the same tie
# tolerance, feature blocks and lowest-feature-then-lowest-position rule), so the
# trees are identical, not merely equivalent: tests/test_trees_engines.py compares
# every array on random data. Only criteria made of +, -, *, / are compiled: numpy's
# vectorised logarithm (entropy, wig) is not bitwise the compiled one, so those keep
# the numpy grower. Reductions whose rounding numpy does not promise (a node's total
# weight, a sum over classes) stay in numpy unless the weights are integers, where
# every order of summation is exact.

_COMPILED = {"gini": 0, "ogini": 1, "ranking": 2}
_GINI, _OGINI, _RANKING = 0, 1, 2


def _compiled(function):
    """``njit`` with an on-disk cache; without a writable cache directory, compiled per process.

    The same helper as ``relabel._backends._pseudoflow._compiled``: trees and relabel
    do not import each other (docs/design.md section 1).
    """
    from numba import njit

    # The default error model, as relabel's kernels: cached kernels compiled with different
    # error models share helper symbols and crashed the process once loaded together.
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


@_compiled
def _mass_of(crit, v):
    """``n * I`` (``I`` for ranking) of one node's encoded counts, as ``_mass_encoded`` sums it."""
    K = v.shape[0]
    if crit == _GINI:
        n = v[0]
        for k in range(1, K):
            n = n + v[k]
        sq = 0.0
        for k in range(K):
            sq = sq + v[k] * v[k]
        return n - (sq / n if n > 0 else 0.0)
    n = v[K - 1]
    if crit == _OGINI:
        lin = 0.0
        sq = 0.0
        for k in range(K - 1):
            lin = lin + v[k]
            sq = sq + v[k] * v[k]
        return lin - (sq / n if n > 0 else 0.0)
    total = 0.0
    for k in range(K - 1):
        total = total + v[k] * (n - v[k])
    return total


@_compiled
def _mean_of(crit, v):
    """Mean class index of one node's encoded counts, as ``_mean_index`` computes it (NaN if empty)."""
    K = v.shape[0]
    if crit != _GINI:
        n = v[K - 1]
        total = (K - 1) * n
        for k in range(K - 1):
            total = total - v[k]
    else:
        n = v[0]
        total = 0.0
        for k in range(1, K):
            n = n + v[k]
            total = total + k * v[k]
    if n == 0.0:
        # numpy's total / 0: NaN for 0 / 0, else an infinity with the quotient's sign.
        if total == 0.0 or total != total:
            return np.nan
        return math.copysign(np.inf, total) * math.copysign(1.0, n)
    return total / n


@_compiled
def _kth_smallest(values, k):
    """The k-th smallest value (1-based), as ``np.sort(values)[k - 1]``.

    Written out rather than calling numba's sort: numba compiles its sort and argsort
    helpers under the same names with different bodies, and cached kernels from other
    modules that use them (``ensemble._kernels``) then collide when loaded together
    (measured: a segmentation fault), as in numba issue 10486.
    """
    work = values.copy()
    for i in range(1, work.shape[0]):
        v = work[i]
        j = i - 1
        while j >= 0 and work[j] > v:
            work[j + 1] = work[j]
            j -= 1
        work[j + 1] = v
    return work[k - 1]


@_compiled
def _grow_level(XT, YW, y, w, order, seg, frontier, parent_w, keys, max_features,
                left_of, feature_of, threshold_of, value_of, n_of, depth_of, lower_of, upper_of, size,
                crit, exact, msl, min_split, depth_limit, min_decrease, total_w, cst, block_elements,
                child_slot):
    """Split one level; returns the next level and what the monotone bounds need.

    Mirrors one iteration of the numpy grower's loop (see its comments). ``keys``
    holds the level's random keys for ``max_features`` (ignored when every feature
    is a candidate), ``parent_w`` the total weight of each frontier node.
    Returns ``(order, seg, frontier, size, child_value, split_feature, first_child)``.
    """
    d, m = order.shape
    nf = frontier.shape[0]
    K = value_of.shape[1]
    weighted = crit != _RANKING
    cumulative = crit != _GINI
    has_cst = False
    for f in range(d):
        if cst[f] != 0:
            has_cst = True

    penc = np.empty((nf, K))
    pmass = np.empty(nf)
    tol = np.empty(nf)
    for s in range(nf):
        node = frontier[s]
        if cumulative:
            acc = value_of[node, 0]
            penc[s, 0] = acc
            for k in range(1, K):
                acc = acc + value_of[node, k]
                penc[s, k] = acc
        else:
            for k in range(K):
                penc[s, k] = value_of[node, k]
        pm = _mass_of(crit, penc[s])
        pmass[s] = pm
        imp = pm / parent_w[s] if weighted else pm
        tol[s] = _TIE_RTOL * abs(imp)

    # Candidate features per node (max_features): those with a valid split compete.
    chosen = np.ones((nf, d), dtype=np.bool_)
    if max_features < d:
        key_row = np.empty(d)
        has = np.zeros(d, dtype=np.bool_)
        for s in range(nf):
            st, en = seg[s], seg[s + 1]
            size_s = en - st
            for f in range(d):
                has[f] = False
                for p in range(st, en - 1):
                    n_left = p - st + 1
                    if n_left >= msl and size_s - n_left >= msl and \
                            XT[f, order[f, p]] < XT[f, order[f, p + 1]]:
                        has[f] = True
                        break
                key_row[f] = keys[s, f] if has[f] else 2.0
            kth = _kth_smallest(key_row, max_features)
            for f in range(d):
                chosen[s, f] = key_row[f] <= kth and has[f]

    best_gain = np.full(nf, -np.inf)
    best_feat = np.full(nf, -1, dtype=np.intp)
    best_pos = np.full(nf, -1, dtype=np.intp)
    block = max(1, block_elements // max(1, m * K))
    run = np.empty(K)
    lv = np.empty(K)
    rv = np.empty(K)
    for f0 in range(0, d, block):
        f1 = min(d, f0 + block)
        c = f1 - f0
        G = np.full((c, m), -np.inf)
        for fi in range(c):
            f = f0 + fi
            for s in range(nf):
                st, en = seg[s], seg[s + 1]
                size_s = en - st
                use = chosen[s, f]
                scale = 1.0 / parent_w[s]
                for p in range(st, en):
                    row = order[f, p]
                    # Running sums along the whole order, restarted at each node by
                    # subtracting the previous node's total (numpy's cumsum, exactly).
                    for k in range(K):
                        x = YW[row, k]
                        if p == st and s > 0:
                            x = x - penc[s - 1, k]
                        run[k] = x if p == 0 else run[k] + x
                    if not use or p == en - 1:
                        continue
                    n_left = p - st + 1
                    if n_left < msl or size_s - n_left < msl:
                        continue
                    if not XT[f, row] < XT[f, order[f, p + 1]]:
                        continue
                    for k in range(K):
                        a = run[k]
                        b = penc[s, k] - a
                        if not exact:
                            # np.maximum(x, 0.0): NaN stays NaN.
                            if not (a >= 0.0 or a != a):
                                a = 0.0
                            if not (b >= 0.0 or b != b):
                                b = 0.0
                        lv[k] = a
                        rv[k] = b
                    gain = pmass[s] - _mass_of(crit, lv)
                    gain = gain - _mass_of(crit, rv)
                    if weighted:
                        gain = gain * scale
                    if has_cst and cst[f] != 0:
                        mean_left = _mean_of(crit, lv)
                        mean_right = _mean_of(crit, rv)
                        lo, hi = lower_of[frontier[s]], upper_of[frontier[s]]
                        if not ((mean_right - mean_left) * cst[f] >= 0 and mean_left >= lo
                                and mean_left <= hi and mean_right >= lo and mean_right <= hi):
                            continue
                    G[fi, p] = gain
        for s in range(nf):
            st, en = seg[s], seg[s + 1]
            top = -np.inf
            for fi in range(c):
                for p in range(st, en):
                    if G[fi, p] > top:
                        top = G[fi, p]
            if not top > best_gain[s] + tol[s]:
                continue
            cut = top - tol[s]
            # Lowest feature, then lowest position, within the tolerance of the best.
            done = False
            for fi in range(c):
                for p in range(st, en):
                    if G[fi, p] >= cut:
                        best_gain[s] = G[fi, p]
                        best_feat[s] = f0 + fi
                        best_pos[s] = p
                        done = True
                        break
                if done:
                    break

    split_slot = np.full(nf, -1, dtype=np.intp)
    n_split = 0
    for s in range(nf):
        bg = best_gain[s]
        # Within the tie tolerance of zero is zero, as in the numpy grower.
        if np.isfinite(bg) and parent_w[s] / total_w * (bg + tol[s]) + _EPSILON >= min_decrease:
            split_slot[s] = n_split
            n_split += 1
    n_child = 2 * n_split
    split_feature = np.empty(n_split, dtype=np.intp)
    child_value = np.zeros((n_child, K))
    child_n = np.zeros(n_child, dtype=np.intp)
    first_child = size
    for s in range(nf):
        slot = split_slot[s]
        if slot < 0:
            for p in range(seg[s], seg[s + 1]):
                child_slot[order[0, p]] = -1
            continue
        node = frontier[s]
        f = best_feat[s]
        p = best_pos[s]
        a = XT[f, order[f, p]]
        b = XT[f, order[f, p + 1]]
        thr = a / 2.0 + b / 2.0
        if thr == b or not np.isfinite(thr):
            thr = a
        feature_of[node] = f
        threshold_of[node] = thr
        left_of[node] = first_child + 2 * slot
        split_feature[slot] = f
        for p in range(seg[s], seg[s + 1]):
            row = order[0, p]
            child = 2 * slot + (1 if XT[f, row] > thr else 0)
            child_value[child, y[row]] += w[row]
            child_n[child] += 1
            child_slot[row] = child
    cont = np.zeros(n_child, dtype=np.bool_)
    new_slot = np.full(n_child, -1, dtype=np.intp)
    n_cont = 0
    for s in range(nf):
        slot = split_slot[s]
        if slot < 0:
            continue
        parent = frontier[s]
        for side in range(2):
            child = 2 * slot + side
            node = first_child + child
            present = 0
            for k in range(K):
                value_of[node, k] = child_value[child, k]
                if child_value[child, k] > 0:
                    present += 1
            n_of[node] = child_n[child]
            depth_of[node] = depth_of[parent] + 1
            lower_of[node] = lower_of[parent]
            upper_of[node] = upper_of[parent]
            cont[child] = depth_of[node] < depth_limit and child_n[child] >= min_split and present > 1
    for child in range(n_child):
        if cont[child]:
            new_slot[child] = n_cont
            n_cont += 1
    size = first_child + n_child
    new_frontier = np.empty(n_cont, dtype=np.intp)
    new_seg = np.zeros(n_cont + 1, dtype=np.intp)
    for child in range(n_child):
        if cont[child]:
            new_frontier[new_slot[child]] = first_child + child
            new_seg[new_slot[child] + 1] = child_n[child]
    for i in range(n_cont):
        new_seg[i + 1] += new_seg[i]
    # Rows of continuing children, each feature's order kept (a stable partition).
    for p in range(m):
        row = order[0, p]
        child = child_slot[row]
        child_slot[row] = new_slot[child] if child >= 0 else -1
    m_new = new_seg[n_cont]
    new_order = np.empty((d, m_new), dtype=np.intp)
    ptr = np.empty(n_cont, dtype=np.intp)
    for f in range(d):
        for i in range(n_cont):
            ptr[i] = new_seg[i]
        for p in range(m):
            row = order[f, p]
            slot = child_slot[row]
            if slot >= 0:
                new_order[f, ptr[slot]] = row
                ptr[slot] += 1
    return new_order, new_seg, new_frontier, size, child_value, split_feature, first_child


@_compiled
def _grow_levels(XT, YW, y, w, order, seg, frontier, left_of, feature_of, threshold_of, value_of, n_of,
                 depth_of, lower_of, upper_of, size, crit, exact, msl, min_split, depth_limit, min_decrease,
                 total_w, cst, block_elements, child_slot):
    """Every level in one call: integer weights (``exact``: sums exact in any order), all features,
    no constraints. ``exact`` is an argument, not the constant True, so that ``_grow_level`` is
    compiled once for both callers."""
    no_keys = np.empty((0, 0))
    d = order.shape[0]
    K = value_of.shape[1]
    while frontier.shape[0] > 0:
        parent_w = np.empty(frontier.shape[0])
        for s in range(frontier.shape[0]):
            total = 0.0
            for k in range(K):
                total += value_of[frontier[s], k]
            parent_w[s] = total
        order, seg, frontier, size, _, _, _ = _grow_level(
            XT, YW, y, w, order, seg, frontier, parent_w, no_keys, d,
            left_of, feature_of, threshold_of, value_of, n_of, depth_of, lower_of, upper_of, size,
            crit, exact, msl, min_split, depth_limit, min_decrease, total_w, cst, block_elements, child_slot)
    return size


def _grow_compiled(X, y, sample_weight, n_classes, *, criterion, max_depth, min_samples_split,
                   min_samples_leaf, max_features, min_impurity_decrease, wig_power, rng,
                   monotonic_cst=None):
    """:func:`grow_tree` with the compiled level kernel (criteria in ``_COMPILED``)."""
    crit = _CRITERIA[criterion]
    code = _COMPILED[criterion]
    n, d = X.shape
    K = n_classes
    depth_limit = np.iinfo(np.intp).max if max_depth is None else int(max_depth)
    min_split = max(int(min_samples_split), 2 * int(min_samples_leaf))
    msl = int(min_samples_leaf)
    total_w = float(sample_weight.sum())
    cst = np.zeros(d, dtype=np.int8)
    if monotonic_cst is not None and np.any(monotonic_cst):
        cst = np.asarray(monotonic_cst, dtype=np.int8)
    constrained = bool(cst.any())

    YwT = np.zeros((K, n))
    YwT[y, np.arange(n)] = sample_weight
    YW = np.ascontiguousarray(_encode(crit, YwT).T)  # (n, K): a row's classes are contiguous
    exact = bool(np.all(sample_weight == np.round(sample_weight))) and total_w < 2.0**52
    XT = np.ascontiguousarray(X.T)
    order = np.ascontiguousarray(np.argsort(XT, axis=1, kind="stable"), dtype=np.intp)
    # Fresh writable copies: a read-only input would compile another specialisation.
    y = np.array(y, dtype=np.intp)
    w = np.array(sample_weight, dtype=np.float64)

    # A leaf holds at least one row: at most 2n - 1 nodes.
    capacity = max(1, 2 * n - 1)
    left_of = np.full(capacity, -1, dtype=np.intp)
    feature_of = np.full(capacity, -2, dtype=np.intp)
    threshold_of = np.full(capacity, -2.0)
    value_of = np.zeros((capacity, K))
    n_of = np.zeros(capacity, dtype=np.intp)
    depth_of = np.zeros(capacity, dtype=np.intp)
    lower_of = np.full(capacity, -np.inf)
    upper_of = np.full(capacity, np.inf)
    root_value = np.bincount(y, weights=sample_weight, minlength=K)
    value_of[0] = root_value
    n_of[0] = n
    size = 1
    if 0 < depth_limit and n >= min_split and (root_value > 0).sum() > 1:
        frontier = np.zeros(1, dtype=np.intp)
        seg = np.array([0, n], dtype=np.intp)
    else:
        frontier = np.zeros(0, dtype=np.intp)
        seg = np.zeros(1, dtype=np.intp)
    child_slot = np.full(n, -1, dtype=np.intp)
    args = (left_of, feature_of, threshold_of, value_of, n_of, depth_of, lower_of, upper_of)
    if exact and max_features >= d and not constrained:
        size = _grow_levels(XT, YW, y, w, order, seg, frontier, *args, size, code, exact, msl, min_split,
                            depth_limit, float(min_impurity_decrease), total_w, cst, _BLOCK_ELEMENTS,
                            child_slot)
    else:
        no_keys = np.empty((0, 0))
        while frontier.size:
            parent_w = value_of[frontier].sum(axis=1)
            keys = rng.random_sample((frontier.size, d)) if max_features < d else no_keys
            order, seg, frontier, size, child_value, split_feature, first = _grow_level(
                XT, YW, y, w, order, seg, frontier, parent_w, keys, int(max_features), *args, size,
                code, exact, msl, min_split, depth_limit, float(min_impurity_decrease), total_w, cst,
                _BLOCK_ELEMENTS, child_slot)
            if constrained and split_feature.size:
                children = np.arange(first, first + child_value.shape[0])
                lower, upper = lower_of[children], upper_of[children]
                _bound_children(child_value, cst[split_feature], lower, upper)
                lower_of[children] = lower
                upper_of[children] = upper

    value = value_of[:size].copy()
    node_impurity = _mass(crit, value.T, value.T > 0, float(wig_power))
    if crit.weighted:
        wn = value.sum(axis=1)
        node_impurity = np.divide(node_impurity, wn, out=np.zeros_like(node_impurity), where=wn > 0)
    return OrdinalTree(
        children_left=left_of[:size].copy(),
        feature=feature_of[:size].copy(),
        threshold=threshold_of[:size].copy(),
        value=value,
        n_node_samples=n_of[:size].copy(),
        impurity=node_impurity,
        depth=depth_of[:size].copy(),
        n_features=d,
        lower_bound=lower_of[:size].copy(),
        upper_bound=upper_of[:size].copy(),
        monotonic_cst=monotonic_cst,
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
) -> OrdinalTree:
    """Grow a tree on rows with positive weight (validated inputs).

    ``y`` holds class indices 0..n_classes-1 and ``sample_weight`` is positive.
    ``monotonic_cst`` (int8, -1/0/+1 per feature, or None) constrains the nodes'
    mean class index as scikit-learn constrains a regression tree's values: a
    split on a constrained feature must order its children's means and keep them
    inside the node's bounds, and gives its children the bounds ``[lower, mid]``
    and ``[mid, upper]`` (in the constraint's direction), ``mid`` the average of
    the two means; every node's ``mean_index`` is clipped into its bounds.
    ``rng`` draws the feature subsets of ``max_features`` (unused, and may be None,
    when ``max_features >= n_features``). Returns the fitted :class:`OrdinalTree`.

    The criteria ``gini``, ``ogini`` and ``ranking`` run the compiled level kernel
    (``_grow_compiled``), ``entropy`` and ``wig`` the numpy one (``_grow_numpy``);
    both build the same tree. Time per level is O(n_features * n_active * K) plus
    the criterion's O(K) per candidate (twice that for the candidates of
    constrained features); the initial presort costs O(n_features * n log n).
    """
    grow = _grow_compiled if criterion in _COMPILED else _grow_numpy
    return grow(X, y, sample_weight, n_classes, criterion=criterion, max_depth=max_depth,
                min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                max_features=max_features, min_impurity_decrease=min_impurity_decrease,
                wig_power=wig_power, rng=rng, monotonic_cst=monotonic_cst)
