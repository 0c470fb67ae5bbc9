"""Certificates at the data's resolution: how far a move inside one gap between training values moves a sum.

docs/design.md section 13. A move of one feature inside the gap between two consecutive
distinct training values crosses only the thresholds the trees put in that gap;
:func:`gap_loads` bounds the sum's change there by the trees' face steps
(:mod:`ensemble.certificates._faces`), localised by the face pairs whose boxes meet
(:func:`gap_pairs`, :class:`GapPairs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from ensemble.certificates._faces import _face_geometry, _node_face_pairs, face_steps
from ensemble.certificates._jumps import _split_nodes
from ensemble.base._kernels import compiled

__all__ = ["MAX_LOCALISED_PAIRS", "GapLoads", "GapPairs", "gap_loads", "gap_pairs", "tree_gap_loads"]


#: Above this many pairs in one gap, N(p) is bounded one feature at a time (see :func:`_pair_neighbours`).
_EXACT_PAIRS = 200
#: Above this many pairs on one feature, N(p) is bounded by the trees with a pair in the gap (no boxes held).
_MAX_BOXED_PAIRS = 2_000_000
#: The most face pairs of all trees the localised bound holds (about 50 bytes each, 250 MB).
MAX_LOCALISED_PAIRS = 5_000_000


@compiled
def _meet(lo, hi, miss, i, j, g):
    """Whether pairs i and j meet on feature g: closed non-empty intervals that overlap, or both missing."""
    if miss[i, g] and miss[j, g]:
        return True
    return lo[i, g] < hi[i, g] and lo[j, g] < hi[j, g] and max(lo[i, g], lo[j, g]) <= min(hi[i, g], hi[j, g])


@compiled
def _restricted_features(lo, hi):
    """Per pair, the features its box restricts (not the whole line): CSR ``(start, feature)``.

    Two boxes meet on a feature neither restricts (both the whole line), so only the
    features either restricts need testing; trees of a few leaves restrict few of
    many features.
    """
    n, d = lo.shape
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        c = 0
        for g in range(d):
            if lo[i, g] != -np.inf or hi[i, g] != np.inf:
                c += 1
        start[i + 1] = start[i] + c
    feature = np.empty(start[n], dtype=np.int64)
    for i in range(n):
        k = start[i]
        for g in range(d):
            if lo[i, g] != -np.inf or hi[i, g] != np.inf:
                feature[k] = g
                k += 1
    return start, feature


@compiled
def _meet_on(lo, hi, miss, i, j, r_start, r_feature):
    """Whether the boxes of pairs i and j meet on every feature i restricts."""
    for k in range(r_start[i], r_start[i + 1]):
        if not _meet(lo, hi, miss, i, j, r_feature[k]):
            return False
    return True


@compiled
def _pair_neighbours(tree, lo, hi, miss, starts, exact_limit):
    """Per pair p, at least the number of distinct crossings with a pair of the same gap whose box meets p's.

    ``tree`` holds each pair's crossing (a tree and one of its threshold values, numbered
    0..C-1; a "tree" below is a crossing). Pairs are sorted by gap, ``starts`` bounds the groups. Boxes meet on every
    feature: closed non-empty intervals that overlap, or both holding the points
    missing the feature (the threshold's own feature meets always). Groups of at
    most ``exact_limit`` pairs are counted exactly (all pairs against all); larger
    ones get, per pair, the smallest over the features of the number of trees with a
    pair meeting it on that feature alone, which is at least the exact count
    (each tree's intervals merged and searched by bisection). Only the features
    some box restricts are tested (:func:`_restricted_features`): the others meet.
    """
    n = tree.shape[0]
    out = np.zeros(n, dtype=np.int64)
    n_trees = tree.max() + 1 if n else 1
    seen = np.full(n_trees, -1, dtype=np.int64)
    d = lo.shape[1]
    r_start, r_feature = _restricted_features(lo, hi)
    for s in range(starts.shape[0] - 1):
        first, stop = starts[s], starts[s + 1]
        if stop - first <= exact_limit:
            for i in range(first, stop):
                count = 0
                for j in range(first, stop):
                    t = tree[j]
                    if seen[t] == i:
                        continue
                    if _meet_on(lo, hi, miss, i, j, r_start, r_feature) and \
                            _meet_on(lo, hi, miss, j, i, r_start, r_feature):
                        seen[t] = i
                        count += 1
                out[i] = count
            continue
        # The group's trees, numbered 0..m-1, with their pairs in tree order.
        members = np.unique(tree[first:stop])
        m = members.shape[0]
        local = np.searchsorted(members, tree[first:stop])
        by_tree = np.argsort(local, kind="mergesort") + first
        offset = np.zeros(m + 1, dtype=np.int64)
        for i in range(first, stop):
            offset[local[i - first] + 1] += 1
        for t in range(m):
            offset[t + 1] += offset[t]
        for i in range(first, stop):
            out[i] = m
        merged_lo = np.empty(stop - first)
        merged_hi = np.empty(stop - first)
        merged_at = np.zeros(m + 1, dtype=np.int64)
        missing = np.zeros(m, dtype=np.bool_)
        restricts = np.zeros(d, dtype=np.bool_)
        for i in range(first, stop):
            for k in range(r_start[i], r_start[i + 1]):
                restricts[r_feature[k]] = True
        for g in range(d):
            if not restricts[g]:
                continue  # every box is the whole line on g: every tree meets every pair there (m)
            # Per tree, the union of its non-empty intervals on g as sorted disjoint intervals.
            k = 0
            for t in range(m):
                merged_at[t] = k
                missing[t] = False
                rows = by_tree[offset[t]:offset[t + 1]]
                keep = rows[lo[rows, g] < hi[rows, g]]
                for j in rows:
                    if miss[j, g]:
                        missing[t] = True
                if keep.shape[0]:
                    keep = keep[np.argsort(lo[keep, g])]
                    cur_lo, cur_hi = lo[keep[0], g], hi[keep[0], g]
                    for j in keep[1:]:
                        if lo[j, g] <= cur_hi:
                            cur_hi = max(cur_hi, hi[j, g])
                        else:
                            merged_lo[k], merged_hi[k] = cur_lo, cur_hi
                            k += 1
                            cur_lo, cur_hi = lo[j, g], hi[j, g]
                    merged_lo[k], merged_hi[k] = cur_lo, cur_hi
                    k += 1
            merged_at[m] = k
            # A pair that is the whole line on g meets every tree with an interval there, or
            # with missing values when it holds them too.
            with_interval = 0
            with_either = 0
            for t in range(m):
                if merged_at[t + 1] > merged_at[t]:
                    with_interval += 1
                    with_either += 1
                elif missing[t]:
                    with_either += 1
            for i in range(first, stop):
                if lo[i, g] == -np.inf and hi[i, g] == np.inf:
                    out[i] = min(out[i], with_either if miss[i, g] else with_interval)
                    continue
                count = 0
                present = lo[i, g] < hi[i, g]
                for t in range(m):
                    if miss[i, g] and missing[t]:
                        count += 1
                        continue
                    a, b = merged_at[t], merged_at[t + 1]
                    if not present or a == b:
                        continue
                    # The first merged interval ending at or after lo_i; it meets i when it starts by hi_i.
                    q = a + np.searchsorted(merged_hi[a:b], lo[i, g])
                    if q < b and merged_lo[q] <= hi[i, g]:
                        count += 1
                out[i] = min(out[i], count)
    return out


@dataclass(frozen=True)
class GapPairs:
    """The face pairs of every tree across its thresholds, grouped by gap between training values.

    Attributes
    ----------
    tree, a, b, node : ndarray of int64, shape (P,)
        The tree of each pair, its leaves below (a) and above (b) the threshold of
        ``node``.
    feature, gap : ndarray of int64, shape (P,)
        The threshold's feature and its gap (:meth:`relabel.DataGrid.threshold_gaps`).
    neighbours : ndarray of int64, shape (P,)
        N(p): the number of *crossings*, a tree and one of its threshold values in the
        gap, with a pair in the same gap whose box (the points of both leaves'
        closures on the other features, or their common slice of missing values)
        meets p's. A line crossing the gap through p's box changes only where it
        crosses one of these thresholds at a pair holding the line, and all those
        pairs meet p's box: at most N(p) changes along it. A tree with two threshold
        values in one gap can change twice along one line, so it counts twice.
    """

    tree: NDArray[np.int64]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    node: NDArray[np.int64]
    feature: NDArray[np.int64]
    gap: NDArray[np.int64]
    neighbours: NDArray[np.int64]


def gap_pairs(nodes: Sequence[tuple], grid, countable: NDArray[np.bool_],
              max_pairs: int | None = None, only: dict | None = None, exact_limit: int = _EXACT_PAIRS
              ) -> GapPairs | None:
    """Every tree's face pairs across its thresholds, with their gaps and neighbour counts (:class:`GapPairs`).

    None when the trees have more than ``max_pairs`` face pairs in all (deep trees in
    many dimensions have hundreds of thousands each): the callers then do without the
    localisation (:func:`gap_loads`, the forest's caps). With ``only`` (feature ->
    boolean mask over its gaps) the pairs of the other gaps are left out: N(p) only
    counts pairs of p's own gap, so the kept pairs' counts are unchanged. N(p) is counted
    exactly in the gaps of at most ``exact_limit`` pairs (all pairs against all, O(n^2));
    elsewhere it is bounded from above by the fewest crossings with a pair meeting p's box
    on one feature alone (O(n log n) per feature), which Theorem 13.2 allows as well.

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import DataGrid
    >>> stump = lambda f, t: (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([f, -2, -2]),
    ...                       np.array([t, -2.0, -2.0]))
    >>> pairs = gap_pairs([stump(0, 0.5), stump(0, 0.6), stump(1, 0.5)], DataGrid((np.array([0.0, 1.0]),) * 2),
    ...                   np.array([True, True]))
    >>> pairs.tree.tolist(), pairs.gap.tolist(), pairs.neighbours.tolist()
    ([0, 1, 2], [1, 1, 1], [2, 2, 1])
    """
    found = _FoundPairs.collect(nodes, grid, countable, max_pairs, only)
    if found is None:
        return None
    for f in range(grid.n_features):
        found.count(f, exact_limit)
    return found.pairs()


class _FoundPairs:
    """Every tree's face pairs in the gaps (sorted by feature and gap) and their boxes, counted feature by feature.

    :func:`gap_pairs` counts every feature; a verdict may count one first and stop
    (:func:`_localise_for_a_verdict`), without finding the pairs twice.
    """

    def __init__(self, cat: dict, stacked: tuple, crossing: NDArray[np.int64], n_features: int):
        self.cat, self.crossing = cat, crossing
        self.node_start, self.leaf_row, self.lower, self.upper, self.reach = stacked
        self.neighbours = np.zeros(cat["tree"].shape[0], dtype=np.int64)
        self.bounds = np.searchsorted(cat["feature"], np.arange(n_features + 1))

    @classmethod
    def collect(cls, nodes: Sequence[tuple], grid, countable: NDArray[np.bool_], max_pairs: int | None,
                only: dict | None) -> "_FoundPairs | None":
        """The pairs of every tree (None past ``max_pairs``), not yet counted."""
        d = grid.n_features
        parts = {k: [] for k in ("tree", "a", "b", "node", "feature", "gap", "threshold")}
        geometry = []  # per tree: its leaf rows, boxes and missing-value reach, to build the pair boxes per feature
        total = 0
        gridded = np.array([v is not None for v in grid.values], dtype=bool)
        for t, tree in enumerate(nodes):
            left, right, feature, threshold, reach, leaf_row, lower, upper, counted = _face_geometry(tree, d, countable)
            geometry.append((leaf_row, lower, upper, reach))
            pairs = _node_face_pairs(left, right, feature, threshold, reach, leaf_row, lower, upper, counted)
            total += pairs.shape[0]
            if max_pairs is not None and total > max_pairs:
                return None
            if pairs.shape[0] == 0:
                continue
            a, b, node = pairs[:, 0], pairs[:, 1], pairs[:, 2]
            f = feature[node]
            has_grid = gridded[f]
            a, b, node, f = a[has_grid], b[has_grid], node[has_grid], f[has_grid]
            gap = np.zeros(a.shape[0], dtype=np.int64)
            for g in np.unique(f):
                at = f == g
                gap[at] = grid.threshold_gaps(int(g), threshold[node[at]])
            if only is not None:
                keep = np.zeros(a.shape[0], dtype=bool)
                for g in only.keys() & set(np.unique(f).tolist()):
                    at = f == g
                    keep[at] = only[g][gap[at]]
                a, b, node, f, gap = a[keep], b[keep], node[keep], f[keep], gap[keep]
            for key, val in (("tree", np.full(a.shape[0], t, np.int64)), ("a", a), ("b", b), ("node", node),
                             ("feature", f), ("gap", gap), ("threshold", np.asarray(threshold, np.float64)[node])):
                parts[key].append(val)
        if not parts["tree"]:
            parts = {k: [np.empty(0, np.float64 if k == "threshold" else np.int64)] for k in parts}
            geometry = [(np.empty(0, np.int64), np.empty((0, d)), np.empty((0, d)), np.empty((0, d), bool))]
        cat = {k: np.concatenate(v) for k, v in parts.items()}
        # Every tree's leaf boxes and reach stacked, so each feature's pair boxes below are one
        # gather (a loop over the trees took 0.2 s of 1.05 s on a model of 1,686 trees).
        node_start = np.cumsum([0] + [len(g[0]) for g in geometry])
        leaf_start = np.cumsum([0] + [len(g[1]) for g in geometry])
        leaf_row = np.concatenate([np.where(g[0] >= 0, g[0] + leaf_start[t], -1) for t, g in enumerate(geometry)])
        lower, upper, reach = (np.concatenate([g[k] for g in geometry]) for k in (1, 2, 3))
        order = np.lexsort((cat["gap"], cat["feature"]))
        cat = {k: v[order] for k, v in cat.items()}
        # N(p) counts crossings, (tree, threshold value): a line meets a tree once per threshold value.
        threshold = cat.pop("threshold")
        by = np.lexsort((threshold, cat["tree"]))
        new = np.ones(by.shape[0], dtype=bool)
        new[1:] = (cat["tree"][by][1:] != cat["tree"][by][:-1]) | (threshold[by][1:] != threshold[by][:-1])
        crossing = np.empty(by.shape[0], dtype=np.int64)
        crossing[by] = np.cumsum(new) - 1
        return cls(cat, (node_start, leaf_row, lower, upper, reach), crossing, d)

    def count(self, f: int, exact_limit: int) -> None:
        """N(p) of the pairs at thresholds on feature ``f`` (one feature at a time: only its pair boxes are held)."""
        rows = np.arange(self.bounds[f], self.bounds[f + 1])
        if rows.shape[0] == 0:
            return
        tree, gap = self.cat["tree"][rows], self.cat["gap"][rows]
        starts = np.flatnonzero(np.concatenate(([True], gap[1:] != gap[:-1], [True]))).astype(np.int64)
        if rows.shape[0] > _MAX_BOXED_PAIRS:
            # Too many to box: N(p) bounded by every crossing with a pair in the gap (at least N(p)).
            for s0, s1 in zip(starts[:-1], starts[1:], strict=True):
                self.neighbours[rows[s0:s1]] = np.unique(self.crossing[rows[s0:s1]]).shape[0]
            return
        na, nb = self.node_start[tree] + self.cat["a"][rows], self.node_start[tree] + self.cat["b"][rows]
        ra, rb = self.leaf_row[na], self.leaf_row[nb]
        lo, hi = np.maximum(self.lower[ra], self.lower[rb]), np.minimum(self.upper[ra], self.upper[rb])
        miss = self.reach[na] & self.reach[nb]
        # The threshold's own feature plays no part in which lines cross there.
        lo[:, f], hi[:, f], miss[:, f] = -np.inf, np.inf, True
        self.neighbours[rows] = _pair_neighbours(self.crossing[rows], lo, hi, miss, starts, exact_limit)

    def pairs(self, features: Sequence[int] | None = None) -> GapPairs:
        """The counted pairs as :class:`GapPairs` (of the given features only)."""
        keep = slice(None) if features is None else np.concatenate(
            [np.zeros(0, np.int64)] + [np.arange(self.bounds[f], self.bounds[f + 1]) for f in features])
        c = self.cat
        return GapPairs(c["tree"][keep], c["a"][keep], c["b"][keep], c["node"][keep], c["feature"][keep],
                        c["gap"][keep], self.neighbours[keep])


@dataclass(frozen=True)
class GapLoads:
    """How far a move inside one gap between training values can move a sum of trees, per feature and gap.

    Attributes
    ----------
    loads : tuple of (ndarray of int64 or None)
        Per feature, one load per gap of :class:`relabel.DataGrid` (``None`` where
        the feature has no grid or does not count): the larger of the sums over the
        trees of their largest rises and of their largest falls across their
        thresholds in that gap (:func:`gap_loads`).
    bound : int
        The largest load.
    where : tuple of (int, int)
        The feature and gap of the largest load ((-1, -1) when every load is 0).
    """

    loads: tuple
    bound: int
    where: tuple


def tree_gap_loads(nodes: tuple, value: NDArray[np.int64], grid, countable: NDArray[np.bool_], *,
                   ranges_only: bool = False) -> list:
    """One tree's contribution to :func:`gap_loads`: ``[(feature, gaps, steps), ...]`` per counted feature.

    ``steps`` has two rows, the largest rise and the largest fall of the tree at each
    of its distinct thresholds on the feature (:func:`face_steps`): along a move
    inside the gap the tree crosses each of its thresholds there at most once, and
    changes there by one of its nodes' face pairs at that threshold, or not at all
    where the move misses the node. With ``ranges_only``
    (a tree read through its monotone envelope, which changes only across its own
    thresholds but between any of its leaf values) the jump at every threshold is
    the tree's value range.
    """
    left, _, feature, threshold, _ = _split_nodes(nodes)
    d = grid.n_features
    rise, fall = face_steps(nodes, value, d, countable, ranges_only=ranges_only)
    internal = (np.asarray(left) >= 0) & np.isfinite(np.asarray(threshold, dtype=np.float64))
    out = []
    feature = np.asarray(feature)
    threshold = np.asarray(threshold, dtype=np.float64)
    for f in np.unique(feature[internal]):
        if not countable[f] or grid.values[f] is None:
            continue
        at = internal & (feature == f)
        t = threshold[at]
        # The largest rise and fall per distinct threshold (one node on any line crosses it).
        distinct, inverse = np.unique(t, return_inverse=True)
        steps = np.zeros((2, distinct.shape[0]), dtype=np.int64)
        np.maximum.at(steps[0], inverse.ravel(), rise[at])
        np.maximum.at(steps[1], inverse.ravel(), fall[at])
        out.append((int(f), grid.threshold_gaps(int(f), distinct), steps))
    return out


def gap_loads(nodes: Sequence[tuple], values: Sequence[NDArray[np.int64]], grid,
              countable: NDArray[np.bool_], *, ranges_only: bool = False, pairs: GapPairs | None = None,
              localise_above: int | None = None) -> GapLoads:
    """Per feature and gap between training values, how far a move inside the gap can move the sum of the trees.

    Parameters
    ----------
    nodes : sequence of tuple
        ``(left, right, feature, threshold[, missing_left])`` of every tree.
    values : sequence of ndarray of int64
        Integer value of every node of every tree as it enters the sum.
    grid : relabel.DataGrid
        The training values of every feature.
    countable : ndarray of bool, shape (d,)
        Features whose moves count (not the categorical ones).
    ranges_only : bool, default=False
        Bound each tree's change at a threshold by its value range
        (:func:`tree_gap_loads`).
    pairs : GapPairs, optional
        The trees' face pairs (:func:`gap_pairs`) if already found: they depend
        on the thresholds only, not on the values.
    localise_above : int, optional
        When the pairs are not given, find them only in the gaps whose R_k or D_k
        exceeds this (a certificate's spacing): the other gaps keep R_k and D_k,
        which already meet it, so whether every load is at most this is decided
        exactly as with all pairs, at a fraction of the cost (most gaps carry a few
        trees); the loads below it may then be larger than the localised ones.

    Returns
    -------
    GapLoads

    Notes
    -----
    A move of x_f inside the closed gap ``[v_{k-1}, v_k]`` (the other features fixed)
    crosses exactly the thresholds t on f with ``v_{k-1} <= t < v_k``; a tree without
    one is constant along it, and a tree changes at each of its thresholds there by
    a rise, a fall or nothing. Between any two points of the move the sum therefore
    rises by at most R_k, the sum of the trees' largest rises there, and falls by at
    most D_k: the load of gap k is max(R_k, D_k), and when every load is at most the
    cut spacing g the class changes by at most one along the move (the sum stays in
    an interval of length at most g, docs/design.md section 13). Without
    ``ranges_only``, R_k is also bounded by M = max_p rise_p N(p) over the gap's face
    pairs (:class:`GapPairs`): the n trees that change along a line do so at pairs
    p_t that all hold the line, so their boxes meet pairwise and every N(p_t) >= n;
    each rises by rise_{p_t} <= M / N(p_t) <= M / n, n of them by at most M. The
    smaller of the two bounds is kept (likewise for the falls).
    O(trees x nodes x depth).

    Examples
    --------
    >>> import numpy as np
    >>> from relabel import DataGrid
    >>> stump = lambda t: (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...                    np.array([t, -2.0, -2.0]))
    >>> grid = DataGrid((np.array([0.0, 1.0, 2.0]),))
    >>> loads = gap_loads([stump(0.2), stump(0.7), stump(1.5)], [np.array([0, 0, 3])] * 3, grid, np.array([True]))
    >>> loads.loads[0].tolist(), loads.bound, loads.where
    ([0, 6, 3, 0], 6, (0, 1))
    """
    sums = [np.zeros((2, grid.n_gaps(f)), dtype=np.int64) if countable[f] and grid.values[f] is not None else None
            for f in range(grid.n_features)]
    for tree, value in zip(nodes, values, strict=True):
        for f, gaps, steps in tree_gap_loads(tree, value, grid, countable, ranges_only=ranges_only):
            np.add.at(sums[f], (slice(None), gaps), steps)
    if not ranges_only:
        # The localised bound (GapPairs): along a line the changing trees' pairs all meet the
        # box of the pair p holding the line, so the sum rises by at most max_p rise_p N(p).
        if pairs is None and localise_above is not None:
            _localise_for_a_verdict(sums, nodes, values, grid, countable, localise_above)
        else:
            if pairs is None:
                pairs = gap_pairs(nodes, grid, countable, max_pairs=MAX_LOCALISED_PAIRS)
            if pairs is not None:
                _localise(sums, pairs, values)
    loads = [None if total is None else total.max(axis=0) for total in sums]
    bound, where = 0, (-1, -1)
    for f, load in enumerate(loads):
        if load is not None and load.shape[0] and int(load.max()) > bound:
            bound, where = int(load.max()), (f, int(np.argmax(load)))
    return GapLoads(tuple(loads), bound, where)


def _localise(sums: list, pairs: GapPairs, values: Sequence[NDArray[np.int64]]) -> None:
    """Lower each gap's R_k and D_k in ``sums`` to max_p rise_p N(p) and max_p fall_p N(p) over its pairs, in place.

    Only the gaps whose pairs were found are localised; the others keep R_k and D_k.
    """
    if not pairs.tree.shape[0]:
        return
    offset = np.cumsum([0] + [len(v) for v in values])
    flat = np.concatenate([np.asarray(v, dtype=np.int64).reshape(-1) for v in values])
    step = flat[offset[pairs.tree] + pairs.b] - flat[offset[pairs.tree] + pairs.a]
    for f in np.unique(pairs.feature):
        at = pairs.feature == f
        local = np.zeros_like(sums[f])
        np.maximum.at(local[0], pairs.gap[at], np.maximum(step[at], 0) * pairs.neighbours[at])
        np.maximum.at(local[1], pairs.gap[at], np.maximum(-step[at], 0) * pairs.neighbours[at])
        found = np.zeros(local.shape[1], dtype=bool)
        found[pairs.gap[at]] = True
        sums[f] = np.where(found, np.minimum(sums[f], local), sums[f])


def _localise_for_a_verdict(sums: list, nodes: Sequence[tuple], values: Sequence[NDArray[np.int64]], grid,
                            countable: NDArray[np.bool_], spacing: int) -> None:
    """Localise only the gaps whose R_k or D_k pass ``spacing``, the feature most over first, in place.

    Whether every load is at most ``spacing`` is then decided as with all pairs. A sum that
    fails usually fails on that feature (trees grown without caps, checked at the data's
    resolution): the other features' pairs are then not counted, the verdict being no.
    """
    over = {f: total.max(axis=0) > spacing for f, total in enumerate(sums) if total is not None}
    only = {f: mask for f, mask in over.items() if mask.any()}
    if not only:
        return
    found = _FoundPairs.collect(nodes, grid, countable, MAX_LOCALISED_PAIRS, only)
    if found is None:
        return
    worst = max(only, key=lambda f: int(sums[f].max()))
    for features in ([worst], [f for f in only if f != worst]):
        for f in features:
            found.count(f, _EXACT_PAIRS)
        _localise(sums, found.pairs(features), values)
        if int(sums[worst].max()) > spacing:
            return
