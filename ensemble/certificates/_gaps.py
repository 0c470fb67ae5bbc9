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

from ensemble.certificates._faces import _face_geometry, _node_face_pairs, _steps_of_geometry, face_steps
from ensemble.certificates._jumps import _split_nodes
from ensemble.base._kernels import compiled, distinct_of_sorted, sort_order, sorted_distinct

__all__ = ["MAX_LOCALISED_PAIRS", "GapLoads", "GapPairs", "gap_loads", "gap_pairs"]


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
def _pair_boxes(na, nb, leaf_row, lower, upper, reach, f):
    """The boxes of the pairs of leaves (``na``, ``nb``: node numbers among all trees') as ``(lo, hi, miss)``.

    Per feature the intersection of both leaves' closed intervals, and the slice of
    missing values both reach; on the threshold's own feature ``f`` the whole line, which
    plays no part in which lines cross there. One pass, where numpy's gathers and
    maxima built four temporaries of the same size.
    """
    n, d = na.shape[0], lower.shape[1]
    lo = np.empty((n, d))
    hi = np.empty((n, d))
    miss = np.empty((n, d), dtype=np.bool_)
    for i in range(n):
        a, b = na[i], nb[i]
        ra, rb = leaf_row[a], leaf_row[b]
        for g in range(d):
            lo[i, g] = max(lower[ra, g], lower[rb, g])
            hi[i, g] = min(upper[ra, g], upper[rb, g])
            miss[i, g] = reach[a, g] and reach[b, g]
        lo[i, f], hi[i, f], miss[i, f] = -np.inf, np.inf, True
    return lo, hi, miss


@compiled
def _pair_neighbours(tree, lo, hi, miss, starts, exact_limit, enough):
    """Per pair p, N(p): at least the number of distinct crossings along any one line through p's box.

    ``tree`` holds each pair's crossing (a tree and one of its threshold values, numbered
    0..C-1; a "tree" below is a crossing). Pairs are sorted by gap, ``starts`` bounds the
    groups. A box is, per feature, a closed interval (empty when ``lo >= hi``) and,
    where ``miss``, the slice of points missing the feature (the threshold's own feature
    is the whole line). Two bounds, the smaller kept (docs/design.md section 13):

    - in groups of at most ``exact_limit`` pairs, the crossings with a pair whose box
      meets p's (all pairs against all, O(n^2)): every crossing along a line in p's box
      has a pair holding the line, which meets p's box;
    - in every group, the smallest over the features g of the most crossings one
      coordinate of p's box on g lies in (:func:`_fewer_by_depth`, O(n log n) per
      feature): a line in p's box has one coordinate on g, which every crossing along it
      holds.

    Only the features some box restricts are tested (:func:`_restricted_features`): on
    the others every crossing holds every line. A pair whose count reaches ``enough`` or
    less is not counted further (a verdict needs no more): it keeps the crossings of its
    group, or the crossings whose hull of intervals meets it on some feature
    (:func:`_fewer_by_hulls`), both at least the full count; ``enough`` of -1 counts
    every pair.
    """
    n = tree.shape[0]
    out = np.zeros(n, dtype=np.int64)
    r_start, r_feature = _restricted_features(lo, hi)
    seen = np.full(tree.max() + 1 if n else 1, -1, dtype=np.int64)
    for s in range(starts.shape[0] - 1):
        first, stop = starts[s], starts[s + 1]
        # The group's trees, numbered 0..m-1, with their pairs in tree order.
        members = sorted_distinct(tree[first:stop])
        m = members.shape[0]
        active = np.zeros(stop - first, dtype=np.bool_)
        for i in range(first, stop):
            out[i] = m
            active[i - first] = m > enough[i]
        if not active.any():
            continue
        exact = stop - first <= exact_limit
        if exact:
            _count_exactly(out, first, stop, tree, lo, hi, miss, r_start, r_feature, active, seen)
            for i in range(first, stop):
                active[i - first] = active[i - first] and out[i] > enough[i]
            if not active.any():
                continue
        local = np.searchsorted(members, tree[first:stop])
        restricts = np.zeros(lo.shape[1], dtype=np.bool_)
        for i in range(first, stop):
            for k in range(r_start[i], r_start[i + 1]):
                restricts[r_feature[k]] = True
        if not exact and active.sum() * m < 8 * (stop - first):
            # Few pairs still count: the trees' hulls are cheaper than their unions, and often enough.
            _fewer_by_hulls(out, first, stop, lo, hi, miss, local, m, restricts, active)
            for i in range(first, stop):
                active[i - first] = active[i - first] and out[i] > enough[i]
            if not active.any():
                continue
        _fewer_by_unions(out, first, stop, lo, hi, miss, local, m, restricts, active)
    return out


@compiled
def _count_exactly(out, first, stop, tree, lo, hi, miss, r_start, r_feature, active, seen):
    """The exact count of every active pair of a group: each pair against all (``seen``: the last pair per tree)."""
    for i in range(first, stop):
        if not active[i - first]:
            continue
        count = 0
        for j in range(first, stop):
            t = tree[j]
            if seen[t] == i:
                continue
            if _meet_on(lo, hi, miss, i, j, r_start, r_feature) and _meet_on(lo, hi, miss, j, i, r_start, r_feature):
                seen[t] = i
                count += 1
        out[i] = count


@compiled
def _fewer_by_hulls(out, first, stop, lo, hi, miss, local, m, restricts, active):
    """Lower each active pair's count to the trees whose hull of non-empty intervals meets it on one feature.

    A tree holding a point of a pair's interval has its hull meet the interval, so the
    count stays at least :func:`_fewer_by_depth`'s.
    """
    hull_lo = np.empty(m)
    hull_hi = np.empty(m)
    missing = np.zeros(m, dtype=np.bool_)
    for g in range(lo.shape[1]):
        if not restricts[g]:
            continue
        hull_lo[:] = np.inf
        hull_hi[:] = -np.inf
        missing[:] = False
        for j in range(first, stop):
            t = local[j - first]
            if miss[j, g]:
                missing[t] = True
            if lo[j, g] < hi[j, g]:
                hull_lo[t] = min(hull_lo[t], lo[j, g])
                hull_hi[t] = max(hull_hi[t], hi[j, g])
        for i in range(first, stop):
            if not active[i - first]:
                continue
            present = lo[i, g] < hi[i, g]
            count = 0
            for t in range(m):
                if (miss[i, g] and missing[t]) or (present and hull_lo[t] <= hull_hi[t]
                                                   and max(lo[i, g], hull_lo[t]) <= min(hi[i, g], hull_hi[t])):
                    count += 1
            out[i] = min(out[i], count)


@compiled
def _fewer_by_unions(out, first, stop, lo, hi, miss, local, m, restricts, active):
    """Merge each tree's non-empty intervals per feature and lower each active pair's count by their depth there."""
    offset = np.zeros(m + 1, dtype=np.int64)
    for i in range(first, stop):
        offset[local[i - first] + 1] += 1
    for t in range(m):
        offset[t + 1] += offset[t]
    merged_lo = np.empty(stop - first)
    merged_hi = np.empty(stop - first)
    in_order = np.empty(stop - first, dtype=np.int64)
    merged_at = np.zeros(m + 1, dtype=np.int64)
    missing = np.zeros(m, dtype=np.bool_)
    for g in range(lo.shape[1]):
        if not restricts[g]:
            continue  # every box is the whole line on g: every tree meets every pair there (m)
        # Per tree, the union of its non-empty intervals on g as sorted disjoint intervals: the
        # group's pairs sorted by lo, then by tree keeping that order, and merged in one pass.
        by_lo = sort_order(lo[first:stop, g])
        fill = offset[:m].copy()
        for q in by_lo:  # a counting sort by tree keeps the order by lo within each tree
            in_order[fill[local[q]]] = q + first
            fill[local[q]] += 1
        k = 0
        for t in range(m):
            merged_at[t] = k
            missing[t] = False
            open_ = False
            cur_lo, cur_hi = 0.0, 0.0
            for j in in_order[offset[t]:offset[t + 1]]:
                if miss[j, g]:
                    missing[t] = True
                if not lo[j, g] < hi[j, g]:
                    continue
                if open_ and lo[j, g] <= cur_hi:
                    cur_hi = max(cur_hi, hi[j, g])
                    continue
                if open_:
                    merged_lo[k], merged_hi[k] = cur_lo, cur_hi
                    k += 1
                cur_lo, cur_hi, open_ = lo[j, g], hi[j, g], True
            if open_:
                merged_lo[k], merged_hi[k] = cur_lo, cur_hi
                k += 1
        merged_at[m] = k
        _fewer_by_depth(out, first, stop, lo, hi, miss, g, merged_lo, merged_hi, merged_at, missing, active)


@compiled
def _fewer_by_depth(out, first, stop, lo, hi, miss, g, merged_lo, merged_hi, merged_at, missing, active):
    """Lower each active pair's count to the most trees one point of its interval on feature g lies in.

    Tree t's intervals on g, merged (``merged_lo/hi[merged_at[t]:merged_at[t+1]]``), are
    disjoint, so the depth at a point x, the number of merged intervals holding x (closed),
    is the number of trees with a pair holding x on g. A line through p's box has one
    coordinate x_g in p's interval [l, h] (or lies in the slice missing g, which every
    tree with a pair holding it holds): the trees changing along it are at most the
    largest depth over [l, h], or the trees holding missing g. The depth only rises at an
    interval's start (closed: at a start, at least on the open piece after it), so its
    largest value over [l, h] is at l or at a start inside [l, h] (a sparse table over the
    starts answers each pair in O(log n)).
    """
    k = merged_at[merged_at.shape[0] - 1]
    n_missing = 0
    for t in range(merged_at.shape[0] - 1):
        n_missing += missing[t]
    starts = merged_lo[:k][sort_order(merged_lo[:k])]
    ends = merged_hi[:k][sort_order(merged_hi[:k])]
    points = distinct_of_sorted(starts)  # the depth is largest at an interval's start, or at l
    r = points.shape[0]
    levels = 1
    while (1 << levels) <= r:
        levels += 1
    table = np.zeros((levels, max(r, 1)), dtype=np.int64)
    closed = 0  # intervals ending before the point, swept in order
    for j in range(r):
        while closed < k and ends[closed] < points[j]:
            closed += 1
        table[0, j] = np.searchsorted(starts, points[j], side="right") - closed
    for q in range(1, levels):
        half = 1 << (q - 1)
        for j in range(r - (1 << q) + 1):
            table[q, j] = max(table[q - 1, j], table[q - 1, j + half])
    for i in np.arange(first, stop)[active]:
        count = n_missing if miss[i, g] else 0
        if lo[i, g] < hi[i, g]:
            # At l itself: the intervals starting at or before l less those ending before it.
            count = max(count, np.searchsorted(starts, lo[i, g], side="right")
                        - np.searchsorted(ends, lo[i, g], side="left"))
            u = np.searchsorted(points, lo[i, g], side="left")
            v = np.searchsorted(points, hi[i, g], side="right")  # the starts u..v-1 lie in [l, h]
            if v > u:
                q = 0
                while (1 << (q + 1)) <= v - u:
                    q += 1
                count = max(count, table[q, u], table[q, v - (1 << q)])
        out[i] = min(out[i], count)


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
        N(p), at least the number of *crossings* (a tree and one of its threshold
        values in the gap) that change along any one line crossing the gap through
        p's box (the points of both leaves' closures on the other features, or their
        common slice of missing values): each such crossing has a pair holding the
        line. A line crossing the gap through p's box changes only there, so at most
        N(p) times (:func:`_pair_neighbours` says how it is counted). A tree with two
        threshold values in one gap can change twice along one line, so it counts twice.
    """

    tree: NDArray[np.int64]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    node: NDArray[np.int64]
    feature: NDArray[np.int64]
    gap: NDArray[np.int64]
    neighbours: NDArray[np.int64]


def gap_pairs(nodes: Sequence[tuple], grid, countable: NDArray[np.bool_],
              max_pairs: int | None = None, only: dict | None = None, exact_limit: int = _EXACT_PAIRS,
              within: tuple | None = None) -> GapPairs | None:
    """Every tree's face pairs across its thresholds, with their gaps and neighbour counts (:class:`GapPairs`).

    None when the trees have more than ``max_pairs`` face pairs in all (deep trees in
    many dimensions have hundreds of thousands each): the callers then do without the
    localisation (:func:`gap_loads`, the forest's caps). With ``only`` (feature ->
    boolean mask over its gaps) the pairs of the other gaps are left out: N(p) only
    counts pairs of p's own gap, so the kept pairs' counts are unchanged. N(p) is the
    smaller of the crossings whose pairs meet p's box, counted in the gaps of at most
    ``exact_limit`` pairs (all pairs against all, O(n^2)), and of the depth per feature,
    the fewest over the features of the most crossings one coordinate of p's box lies in
    (O(n log n) per feature); Theorem 13.2 allows either. With ``within=(values, spacing)``
    (the trees' integer node values and a load), a pair is counted only until its step
    times its count is at most ``spacing`` (:meth:`_FoundPairs.enough`): which pairs step
    by more than ``spacing / N(p)``, and their counts, are as without it, and the other
    pairs' ``neighbours`` are only bounds at least N(p) under which their steps stay within.

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
    return _gap_pairs(nodes, grid, countable, max_pairs, only, exact_limit, None, within)


def _gap_pairs(nodes: Sequence[tuple], grid, countable: NDArray[np.bool_], max_pairs: int | None, only: dict | None,
               exact_limit: int, faces: list | None, within: tuple | None = None) -> GapPairs | None:
    """:func:`gap_pairs`, from the trees' faces when already read (:func:`_faces_of`)."""
    found = _FoundPairs.collect(nodes, grid, countable, max_pairs, only, faces)
    if found is None:
        return None
    enough = None if within is None else found.enough(*within)
    for f in range(grid.n_features):
        found.count(f, exact_limit, enough)
    return found.pairs()


def _node_gaps(geometries: list, grid, only: dict | None) -> tuple:
    """Every node of every tree (concatenated): its feature, the gap of its threshold, and whether its pairs are kept.

    A node's pairs are kept where its feature has training values (and, with ``only``,
    its gap is one of ``only``'s). The gaps are looked up once for all trees, feature by feature.
    """
    if not geometries:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.bool_)
    feature = np.concatenate([g[2] for g in geometries])
    threshold = np.concatenate([g[3] for g in geometries])
    inner = np.concatenate([g[0] >= 0 for g in geometries])
    gap = np.zeros(feature.shape[0], dtype=np.int64)
    keep = np.zeros(feature.shape[0], dtype=np.bool_)
    for f in np.unique(feature[inner]):
        if grid.values[f] is None or (only is not None and int(f) not in only):
            continue
        on = np.flatnonzero(inner & (feature == f))
        gap[on] = grid.threshold_gaps(int(f), threshold[on])
        keep[on] = True if only is None else only[int(f)][gap[on]]
    return feature, gap, keep


def _node_crossings(lefts: list, thresholds: list) -> NDArray[np.int64]:
    """One number per distinct (tree, threshold value) of the trees' internal nodes, at every node (-1 at leaves)."""
    if not lefts:
        return np.empty(0, np.int64)
    left = np.concatenate(lefts)
    threshold = np.concatenate(thresholds)
    tree = np.repeat(np.arange(len(lefts)), [len(f) for f in lefts])
    inner = np.flatnonzero(left >= 0)
    by = inner[np.lexsort((threshold[inner], tree[inner]))]
    new = np.ones(by.shape[0], dtype=bool)
    new[1:] = (tree[by][1:] != tree[by][:-1]) | (threshold[by][1:] != threshold[by][:-1])
    crossing = np.full(left.shape[0], -1, dtype=np.int64)
    crossing[by] = np.cumsum(new) - 1
    return crossing


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
                only: dict | None, faces: list | None = None) -> "_FoundPairs | None":
        """The pairs of every tree (None past ``max_pairs``), not yet counted.

        ``faces`` holds every tree's face geometry, and pairs, when already read (:func:`_faces_of`).
        """
        d = grid.n_features
        found, features, thresholds = [], [], []
        kept = []  # per tree: its leaf rows, boxes and missing-value reach, to build the pair boxes per feature
        total = 0
        geometries = [_face_geometry(tree, d, countable) if faces is None else faces[t][0]
                      for t, tree in enumerate(nodes)]
        node_feature, node_gap, node_keep = _node_gaps(geometries, grid, only)
        # Without ``only`` every node is searched, as the count against ``max_pairs`` always was.
        wanted = np.split(node_keep if only is not None else np.ones(node_keep.shape[0], dtype=np.bool_),
                          np.cumsum([g[0].shape[0] for g in geometries])[:-1])
        for t, geometry_t in enumerate(geometries):
            left, right, feature, threshold, reach, leaf_row, lower, upper, counted = geometry_t
            kept.append((leaf_row, lower, upper, reach))
            found.append(_node_face_pairs(*geometry_t, wanted[t]) if faces is None or faces[t][1] is None
                         else faces[t][1])
            features.append(feature)
            thresholds.append(np.asarray(threshold, np.float64))
            total += found[-1].shape[0]
            if max_pairs is not None and total > max_pairs:
                return None
        geometry = kept
        if not nodes:
            geometry = [(np.empty(0, np.int64), np.empty((0, d)), np.empty((0, d)), np.empty((0, d), bool))]
        per_tree = np.array([len(p) for p in found], dtype=np.int64)
        pairs = np.concatenate(found).reshape(-1, 3) if found else np.empty((0, 3), np.int64)
        tree = np.repeat(np.arange(len(found)), per_tree)
        # A pair takes its node's feature, gap and verdict. The pairs come in the order of their nodes
        # (``at``, the node's number among all trees'), so sorting the kept nodes by feature, then gap,
        # stably, and reading each one's run of pairs sorts the pairs as a stable sort of the pairs would.
        at = np.cumsum([0] + [len(f) for f in features])[tree] + pairs[:, 2]
        per_node = np.bincount(at, minlength=node_keep.shape[0])
        first_pair = np.cumsum(per_node) - per_node
        kept = np.flatnonzero(node_keep & (per_node > 0))
        span = int(node_gap[kept].max()) + 1 if kept.shape[0] else 1
        kept = kept[np.argsort(node_feature[kept] * span + node_gap[kept], kind="stable")]
        run = per_node[kept]
        order = np.repeat(first_pair[kept] - (np.cumsum(run) - run), run) + np.arange(int(run.sum()))
        at = at[order]
        cat = {"tree": tree[order], "a": pairs[order, 0], "b": pairs[order, 1], "node": pairs[order, 2],
               "feature": node_feature[at], "gap": node_gap[at]}
        # Every tree's leaf boxes and reach stacked, so each feature's pair boxes below are one
        # gather (a loop over the trees took 0.2 s of 1.05 s on a model of 1,686 trees).
        node_start = np.cumsum([0] + [len(g[0]) for g in geometry])
        leaf_start = np.cumsum([0] + [len(g[1]) for g in geometry])
        leaf_row = np.concatenate([np.where(g[0] >= 0, g[0] + leaf_start[t], -1) for t, g in enumerate(geometry)])
        lower, upper, reach = (np.concatenate([g[k] for g in geometry]) for k in (1, 2, 3))
        # N(p) counts crossings, (tree, threshold value): a line meets a tree once per threshold value.
        # Numbered on the trees' nodes, fewer than their pairs: a pair takes its node's number, and the
        # numbers the kept pairs use are made consecutive (the counts index arrays by them).
        crossing = _node_crossings([g[0] for g in geometries], thresholds)[at]
        used = np.zeros(int(crossing.max()) + 1 if crossing.shape[0] else 0, dtype=bool)
        used[crossing] = True
        crossing = (np.cumsum(used) - 1)[crossing]
        return cls(cat, (node_start, leaf_row, lower, upper, reach), crossing, d)

    def count(self, f: int, exact_limit: int, enough: NDArray[np.int64] | None = None) -> None:
        """N(p) of the pairs at thresholds on feature ``f`` (one feature at a time: only its pair boxes are held).

        ``enough`` (per pair, over all pairs): a bound at or below it is not refined
        (:func:`_pair_neighbours`); by default every pair is counted.
        """
        rows = np.arange(self.bounds[f], self.bounds[f + 1])
        if enough is not None and rows.shape[0]:
            rows = self._worth_counting(rows, enough)
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
        lo, hi, miss = _pair_boxes(na, nb, self.leaf_row, self.lower, self.upper, self.reach, f)
        enough = np.full(rows.shape[0], -1, dtype=np.int64) if enough is None else enough[rows]
        self.neighbours[rows] = _pair_neighbours(self.crossing[rows], lo, hi, miss, starts, exact_limit, enough)

    def enough(self, values: Sequence[NDArray[np.int64]], spacing: int) -> NDArray[np.int64]:
        """Per pair, the largest count at which its step times the count is still at most ``spacing``.

        A pair whose count falls to it cannot put a load over ``spacing`` (its step times
        N(p) <= step times the count): a question about ``spacing`` alone, a verdict or which
        pairs break their caps, needs it refined no further. Pairs without a step need none.
        """
        step = np.abs(_pair_steps(self.cat["tree"], self.cat["a"], self.cat["b"], values))
        return np.where(step > 0, spacing // np.maximum(step, 1), np.iinfo(np.int64).max)

    def _worth_counting(self, rows: NDArray[np.int64], enough: NDArray[np.int64]) -> NDArray[np.int64]:
        """The rows of the gaps where some pair's crossings pass its ``enough``; the others keep that count.

        Every pair's count starts at its gap's crossings (:func:`_pair_neighbours`): in a gap
        where none passes its ``enough``, nothing is refined, and its boxes need not be built.
        """
        gap, crossing = self.cat["gap"][rows], self.crossing[rows]
        group = np.cumsum(np.concatenate(([0], gap[1:] != gap[:-1])))
        key = np.unique(group * (int(crossing.max()) + 1) + crossing)
        crossings = np.bincount(key // (int(crossing.max()) + 1), minlength=int(group[-1]) + 1)[group]
        self.neighbours[rows] = crossings
        wanted = np.zeros(int(group[-1]) + 1, dtype=bool)
        wanted[group[crossings > enough[rows]]] = True
        return rows[wanted[group]]

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


def _faces_of(nodes: Sequence[tuple], n_features: int, countable: NDArray[np.bool_], with_pairs: bool) -> list | None:
    """Every tree's face geometry (:func:`_face_geometry`), and its face pairs ``with_pairs`` (else None).

    Read once for the steps and the pairs. With pairs, None past
    :data:`MAX_LOCALISED_PAIRS` of them in all, which are then not held (the
    localisation does without them, and the steps are found tree by tree).
    """
    out, total = [], 0
    for tree in nodes:
        geometry = _face_geometry(tree, n_features, countable)
        out.append((geometry, _node_face_pairs(*geometry, np.ones(geometry[0].shape[0], dtype=np.bool_))
                    if with_pairs else None))
        total += out[-1][1].shape[0] if with_pairs else 0
        if total > MAX_LOCALISED_PAIRS:
            return None
    return out


def _steps_of_pairs(faces: list, values: Sequence[NDArray[np.int64]]) -> tuple:
    """Per node of every tree (concatenated), the largest rise and fall over its face pairs (0 where none).

    The same as :func:`face_steps` tree by tree, from pairs already found.
    """
    start = np.cumsum([0] + [len(v) for v in values])
    pairs = np.concatenate([p for _, p in faces]).reshape(-1, 3)
    tree = np.repeat(np.arange(len(faces)), [len(p) for _, p in faces])
    step = _pair_steps(tree, pairs[:, 0], pairs[:, 1], values)
    base = start[tree]
    rise, fall = np.zeros(start[-1], dtype=np.int64), np.zeros(start[-1], dtype=np.int64)
    np.maximum.at(rise, base + pairs[:, 2], np.maximum(step, 0))
    np.maximum.at(fall, base + pairs[:, 2], np.maximum(-step, 0))
    return rise, fall


def _step_sums(nodes: Sequence[tuple], values: Sequence[NDArray[np.int64]], grid, countable: NDArray[np.bool_],
               ranges_only: bool, faces: list | None) -> list:
    """R_k and D_k of every gap: per feature, rows 0 and 1 summing the trees' largest rises and falls there.

    Each tree contributes at each of its distinct thresholds on a counted feature the
    largest rise and the largest fall of its nodes there (:func:`face_steps`): along a
    move inside the gap the tree crosses each of its thresholds there at most once, and
    changes there by one of its nodes' face pairs at that threshold, or not at all
    where the move misses the node. With ``ranges_only`` (a tree read through its
    monotone envelope, which changes only across its own thresholds but between any of
    its leaf values) the jump at every threshold is the tree's value range. The trees'
    nodes are gathered first and summed feature by feature, not tree by tree.
    ``faces`` holds every tree's face geometry, and pairs, when already read
    (:func:`_faces_of`).
    """
    d = grid.n_features
    sums = [np.zeros((2, grid.n_gaps(f)), dtype=np.int64) if countable[f] and grid.values[f] is not None else None
            for f in range(d)]
    if not nodes:
        return sums
    use = np.array([total is not None for total in sums], dtype=bool)
    if faces is not None and faces[0][1] is not None:
        rise, fall = _steps_of_pairs(faces, values)
    else:
        steps = [face_steps(tree, value, d, countable, ranges_only=ranges_only) if faces is None else
                 _steps_of_geometry(faces[t][0], value) for t, (tree, value) in enumerate(zip(nodes, values, strict=True))]
        rise, fall = (np.concatenate([np.asarray(step[k], dtype=np.int64) for step in steps]) for k in (0, 1))
    split = [_split_nodes(tree_nodes) for tree_nodes in nodes]
    left, feature = (np.concatenate([np.asarray(n[k], dtype=np.int64) for n in split]) for k in (0, 2))
    threshold = np.concatenate([np.asarray(n[3], dtype=np.float64) for n in split])
    tree = np.repeat(np.arange(len(split)), [len(n[0]) for n in split])
    keep = (left >= 0) & np.isfinite(threshold)
    keep[keep] = use[feature[keep]]
    keep = np.flatnonzero(keep)
    keep = keep[np.lexsort((threshold[keep], tree[keep], feature[keep]))]
    feature, tree, threshold, rise, fall = (a[keep] for a in (feature, tree, threshold, rise, fall))
    # One row per tree and distinct threshold value: a line crosses it once, at one of its nodes.
    new = np.ones(feature.shape[0], dtype=bool)
    new[1:] = (feature[1:] != feature[:-1]) | (tree[1:] != tree[:-1]) | (threshold[1:] != threshold[:-1])
    first = np.flatnonzero(new)
    if not first.shape[0]:
        return sums
    rise, fall = np.maximum.reduceat(rise, first), np.maximum.reduceat(fall, first)
    feature, threshold = feature[first], threshold[first]
    for f in np.unique(feature):
        at = feature == f
        gaps = grid.threshold_gaps(int(f), threshold[at])
        np.add.at(sums[f][0], gaps, rise[at])
        np.add.at(sums[f][1], gaps, fall[at])
    return sums


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
        (:func:`_step_sums`).
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
    p_t that all hold the line, so every N(p_t) >= n (:class:`GapPairs`);
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
    # Every pair is needed when all are localised (then the steps come from them too); a verdict
    # finds them only in the gaps over the spacing, often none (the steps then come from the
    # trees' geometry alone).
    faces = None if ranges_only else _faces_of(nodes, grid.n_features, countable,
                                               with_pairs=pairs is None and localise_above is None)
    sums = _step_sums(nodes, values, grid, countable, ranges_only, faces)
    if not ranges_only:
        # The localised bound (GapPairs): along a line the changing trees' pairs all meet the
        # box of the pair p holding the line, so the sum rises by at most max_p rise_p N(p).
        if pairs is None and localise_above is not None:
            _localise_for_a_verdict(sums, nodes, values, grid, countable, localise_above, faces)
        else:
            if pairs is None:
                pairs = _gap_pairs(nodes, grid, countable, MAX_LOCALISED_PAIRS, None, _EXACT_PAIRS, faces)
            if pairs is not None:
                _localise(sums, pairs, values)
    loads = [None if total is None else total.max(axis=0) for total in sums]
    bound, where = 0, (-1, -1)
    for f, load in enumerate(loads):
        if load is not None and load.shape[0] and int(load.max()) > bound:
            bound, where = int(load.max()), (f, int(np.argmax(load)))
    return GapLoads(tuple(loads), bound, where)


def _pair_steps(tree: NDArray[np.int64], a: NDArray[np.int64], b: NDArray[np.int64],
                values: Sequence[NDArray[np.int64]]) -> NDArray[np.int64]:
    """Each pair's step, the value of its leaf above the threshold less the value below."""
    offset = np.cumsum([0] + [len(v) for v in values])
    flat = np.concatenate([np.asarray(v, dtype=np.int64).reshape(-1) for v in values])
    return flat[offset[tree] + b] - flat[offset[tree] + a]


def _localise(sums: list, pairs: GapPairs, values: Sequence[NDArray[np.int64]]) -> None:
    """Lower each gap's R_k and D_k in ``sums`` to max_p rise_p N(p) and max_p fall_p N(p) over its pairs, in place.

    Only the gaps whose pairs were found are localised; the others keep R_k and D_k.
    """
    if not pairs.tree.shape[0]:
        return
    step = _pair_steps(pairs.tree, pairs.a, pairs.b, values)
    for f in np.unique(pairs.feature):
        at = pairs.feature == f
        local = np.zeros_like(sums[f])
        np.maximum.at(local[0], pairs.gap[at], np.maximum(step[at], 0) * pairs.neighbours[at])
        np.maximum.at(local[1], pairs.gap[at], np.maximum(-step[at], 0) * pairs.neighbours[at])
        found = np.zeros(local.shape[1], dtype=bool)
        found[pairs.gap[at]] = True
        sums[f] = np.where(found, np.minimum(sums[f], local), sums[f])


def _localise_for_a_verdict(sums: list, nodes: Sequence[tuple], values: Sequence[NDArray[np.int64]], grid,
                            countable: NDArray[np.bool_], spacing: int, faces: list | None = None) -> None:
    """Localise only the gaps whose R_k or D_k pass ``spacing``, the feature most over first, in place.

    Whether every load is at most ``spacing`` is then decided as with all pairs. A sum that
    fails usually fails on that feature (trees grown without caps, checked at the data's
    resolution): the other features' pairs are then not counted, the verdict being no.
    """
    over = {f: total.max(axis=0) > spacing for f, total in enumerate(sums) if total is not None}
    only = {f: mask for f, mask in over.items() if mask.any()}
    if not only:
        return
    found = _FoundPairs.collect(nodes, grid, countable, MAX_LOCALISED_PAIRS, only, faces)
    if found is None:
        return
    enough = found.enough(values, spacing)
    worst = max(only, key=lambda f: int(sums[f].max()))
    for features in ([worst], [f for f in only if f != worst]):
        for f in features:
            found.count(f, _EXACT_PAIRS, enough)
        _localise(sums, found.pairs(features), values)
        if int(sums[worst].max()) > spacing:
            return
