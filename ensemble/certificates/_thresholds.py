"""Distinct thresholds: every split threshold of an ensemble inside its training gap, apart from the others'.

The certified forest and certified boosting (docs/design.md sections 9 and 10) need
thresholds that no two trees share on a feature, each inside the gap between the
two training values it separates (the training rows keep their sides). This module
holds the pieces: the ranks the trees grow on (so units do not matter,
docs/design.md section 12), the gaps in raw values, the draws, the redraws of
colliding thresholds, the even spreading for a resolution, and writing thresholds
back into fitted trees.
"""

from __future__ import annotations

import bisect
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

import relabel
from ensemble.base._estimator import draw_in_gaps
from ensemble.certificates._certificates import split_thresholds, threshold_clusters, tree_nodes
from trees import OrdinalTreeClassifier
from trees._hist import _gap_room

__all__ = ["Gaps", "Ranks", "ThresholdBook", "float32_margins", "separate_thresholds", "set_thresholds",
           "spread_thresholds", "thresholds_of", "warn_crowded"]

_MAX_REDRAW_ROUNDS = 50


def set_thresholds(tree: Any, threshold: NDArray[np.float64]) -> None:
    """Write new thresholds into a fitted tree (ours, or scikit-learn's through its pickle state)."""
    if isinstance(tree, OrdinalTreeClassifier):
        tree.tree_.set_thresholds(threshold)
        return
    # scikit-learn's Tree exposes its nodes only through the pickle protocol, which
    # is stable across its versions (tests pin it).
    state = tree.tree_.__getstate__()
    nodes = state["nodes"].copy()
    nodes["threshold"] = threshold
    state["nodes"] = nodes
    tree.tree_.__setstate__(state)


def float32_margins(lo: NDArray, hi: NDArray) -> tuple[NDArray, NDArray]:
    """Narrow [lo, hi) so that every float64 rounding to float32 lo (hi) stays on its side.

    A fitted scikit-learn tree's own ``predict`` casts ``X`` to float32: with the
    narrowed gaps it routes the training values as the forest does. Where float32
    cannot separate the gap's ends (values beyond its range, or closer than its
    spacing, e.g. an offset of 1e9), the gap is kept whole: the forest itself
    always compares in float64 (:func:`ensemble.base._kernels.tree_apply`).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        lo32, hi32 = lo.astype(np.float32), hi.astype(np.float32)
        up = (np.nextafter(lo32, np.float32(np.inf)).astype(np.float64) - lo) / 2.0
        down = (hi - np.nextafter(hi32, np.float32(-np.inf)).astype(np.float64)) / 2.0
    narrow_lo = lo + np.where(np.isfinite(up) & np.isfinite(lo32), up, 0.0)
    narrow_hi = hi - np.where(np.isfinite(down) & np.isfinite(hi32), down, 0.0)
    fits = narrow_lo < narrow_hi
    return np.where(fits, narrow_lo, lo), np.where(fits, narrow_hi, hi)


#: The certified forest: consecutive training values closer than this many ulps (of the larger
#: magnitude) share a rank, so no tree splits between them, and a gap a threshold goes into
#: holds about RANK_GAP_ULPS / (2 SNAP_ULPS) = 8 thresholds of different trees kept apart
#: (:func:`separate_thresholds`). Closer values (an offset of 1e9 on small differences) left
#: many trees on one threshold and the bound up. Measured on 11,000 rows of 20 features + 1e9
#: (``make_ordinal_synthetic``): 0 ulps, 280 trees, multiplicity 13, MAE 0.5393; 64: 113
#: trees, multiplicity 1, 0.5395; 256: 127 trees, 0.548, and predictions that moved with the
#: units (7% of a test at offset 1e10). Boosting, whose thousands of trees may share a gap,
#: keeps 1024 (``trees.utils.MIN_GAP_ULPS``).
RANK_GAP_ULPS = 64


@dataclass(frozen=True)
class Ranks:
    """Each feature's sorted distinct training values: the trees grow on their ranks.

    scikit-learn's trees split a float32 copy of ``X`` and ignore differences below
    1e-7, so on features in small units (1e-10), huge ones (1e50) or offset ones
    (1e9 + x) they find no split at all. Grown on the ranks of the distinct values
    (exact in float32 up to 2**24 values per feature, merged beyond), a tree makes
    the same splits in any units; every threshold is then placed in the float64 gap
    between the raw training values it separates. With ``min_gap_ulps``, values
    that close share a rank: no tree splits between them, so every gap a threshold
    goes into has room for that many distinct thresholds.
    """

    values: tuple
    code_lo: tuple
    code_hi: tuple
    codes: tuple  # per feature: the code of every distinct value, and one past the largest
    merged: tuple  # per feature: whether values closer than min_gap_ulps share a code

    @classmethod
    def fit(cls, X: NDArray[np.float64], min_gap_ulps: int = 0) -> "Ranks":
        values, lo, hi, codes, merged = [], [], [], [], []
        for f in range(X.shape[1]):
            column = X[:, f]
            v = np.unique(column[~np.isnan(column)])  # a missing value is no rank: it stays NaN
            starts = np.ones(v.shape[0], dtype=bool)
            if min_gap_ulps and v.shape[0] > 1:
                starts[1:] = ~(np.diff(v) <= _gap_room(v[:-1], v[1:], min_gap_ulps))  # an infinite end starts a rank
            rank = np.cumsum(starts) - 1
            n_ranks = int(rank[-1]) + 1 if v.shape[0] else 0
            code = cls._code(np.append(rank, n_ranks), n_ranks)
            # A column missing in every row has no values and no codes: no tree can split it.
            last = np.concatenate((code[1:-1] != code[:-2], [True]))[: v.shape[0]]
            first = np.concatenate(([True], code[1:-1] != code[:-2]))[: v.shape[0]]
            values.append(v)
            codes.append(code)
            merged.append(n_ranks < v.shape[0])
            hi.append(v[first])  # smallest raw value of every code
            lo.append(v[last])   # largest raw value of every code
        return cls(tuple(values), tuple(lo), tuple(hi), tuple(codes), tuple(merged))

    @staticmethod
    def _code(rank: NDArray, n_values: int) -> NDArray[np.int64]:
        limit = 1 << 24  # float32 holds every integer up to 2**24 exactly
        if n_values <= limit:
            return rank.astype(np.int64)
        return (rank.astype(np.int64) * (limit - 1)) // (n_values - 1)

    def crowded(self) -> NDArray[np.intp]:
        """Features whose training values closer than ``min_gap_ulps`` ulps share a code.

        float64 could not hold the distinct thresholds of many trees between them
        (the values may be an offset of 1e9 plus small differences): the trees do not
        split there, which a user should hear of.
        """
        return np.flatnonzero(np.array(self.merged, dtype=bool)).astype(np.intp)

    def transform(self, X: NDArray[np.float64]) -> NDArray[np.float32]:
        """The code (rank) of every training value, float32, C order (NaN stays NaN); a value
        between two training values takes the code of the larger."""
        out = np.empty(X.shape, dtype=np.float32)
        for f, v in enumerate(self.values):
            column = X[:, f]
            codes = self.codes[f][np.searchsorted(v, column)].astype(np.float32)
            out[:, f] = np.where(np.isnan(column), np.float32(np.nan), codes)
        return out

    def raw_gaps(self, feature: NDArray, lo: NDArray, hi: NDArray) -> tuple[NDArray, NDArray]:
        """Gaps between codes (as :func:`ensemble.base._kernels.node_gaps` finds them) in raw values."""
        raw_lo, raw_hi = lo.copy(), hi.copy()
        for f in np.unique(feature):
            at = feature == f
            for raw, codes, table in ((raw_lo, lo, self.code_lo[f]), (raw_hi, hi, self.code_hi[f])):
                finite = at & np.isfinite(codes)
                raw[finite] = table[codes[finite].astype(np.int64)]
        return raw_lo, raw_hi


def warn_crowded(estimator: Any, crowded: NDArray[np.intp], categorical: NDArray[np.bool_]) -> None:
    """Name the features whose close training values share a code (:meth:`Ranks.crowded`)."""
    crowded = crowded[~categorical[crowded]]
    if crowded.shape[0] == 0:
        return
    names = getattr(estimator, "feature_names_in_", None)
    shown = [repr(str(names[f])) if names is not None else str(int(f)) for f in crowded[:5]]
    warnings.warn(
        f"feature(s) {', '.join(shown)}{' ...' if crowded.shape[0] > 5 else ''}: training values closer than "
        f"{RANK_GAP_ULPS} units in the last place count as one value (float64 has no room between them for the "
        "distinct thresholds of many trees), so the trees do not split between them. If the values carry a "
        "large offset (such as 1e9 + x), subtract it",
        UserWarning,
        stacklevel=4,
    )


class Gaps(NamedTuple):
    """The thresholds of a batch of new trees, one entry per internal node, with their gaps."""

    feature: NDArray[np.int64]
    threshold: NDArray[np.float64]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    owner: NDArray[np.int64]


def separate_thresholds(new: Gaps, fixed_feature: NDArray, fixed_threshold: NDArray, fixed_owner: NDArray,
                         rng: np.random.RandomState, countable: NDArray[np.bool_]) -> int:
    """Redraw new thresholds that are one threshold with another tree's on the same feature.

    Thresholds a few ulps apart are one threshold (:func:`threshold_clusters`, the
    rule :func:`relabel.fuse` snaps with). In every such cluster shared by several
    trees, one threshold stays (a ``fixed`` one, from an earlier batch, if any) and
    the new thresholds of the other trees are drawn again inside their own gaps. A
    gap too narrow for two distinct thresholds may leave a collision: the
    certificate then counts the trees sharing it (threshold multiplicity). Features
    outside ``countable`` (categorical) are left alone. Works one feature at a time,
    so its temporaries stay small. Returns the number of rounds that moved something.
    """
    movable = new.hi > np.nextafter(new.lo, np.inf)
    for rounds in range(_MAX_REDRAW_ROUNDS):
        again = []
        for f in np.flatnonzero(countable):
            rows = np.flatnonzero(new.feature == f)
            if rows.shape[0] == 0:
                continue
            old = np.flatnonzero(fixed_feature == f)
            cluster = threshold_clusters(np.concatenate((new.threshold[rows], fixed_threshold[old])))
            owner = np.concatenate((new.owner[rows], fixed_owner[old]))
            slot = np.concatenate((rows, np.full(old.shape[0], -1)))  # -1: a fixed threshold
            # Per cluster, fixed thresholds first, then new ones by tree: the first tree keeps its place.
            order = np.lexsort((owner, slot >= 0, cluster))
            cluster, owner, slot = cluster[order], owner[order], slot[order]
            starts = np.concatenate(([True], cluster[1:] != cluster[:-1]))
            keeper = owner[np.maximum.accumulate(np.where(starts, np.arange(cluster.shape[0]), 0))]
            clash = (owner != keeper) & (slot >= 0)
            again.append(slot[clash][movable[slot[clash]]])
        again = np.unique(np.concatenate(again)) if again else np.empty(0, np.int64)
        if again.shape[0] == 0:
            return rounds
        new.threshold[again] = draw_in_gaps(rng, new.lo[again], new.hi[again])
    return _MAX_REDRAW_ROUNDS


def spread_thresholds(estimators: list, X_walk: NDArray[np.float64], countable: NDArray[np.bool_],
                       rng: np.random.RandomState, *, float32: bool) -> None:
    """Place the thresholds that fall in one gap between training values evenly across it.

    For r-consistency (docs/design.md section 4c) what counts is how many trees have a
    threshold within r_f of one another; drawn at random, thresholds sharing a gap
    cluster by chance. Every threshold of feature f lies in a gap between two
    consecutive distinct training values a < b (inside its node's own gap, so the
    training rows keep their sides); the k trees with a threshold in one gap put
    them at a + (i + 1/2) (b - a) / k, i = 0..k-1, in a random order of the trees
    (all of one tree's thresholds in that gap at its slot).
    """
    feature, threshold, owner = thresholds_of(estimators)
    nodes = [np.flatnonzero(np.asarray(tree_nodes(tree)[0]) >= 0) for tree in estimators]
    new = threshold.copy()
    for f in np.flatnonzero(countable):
        on_f = np.flatnonzero(feature == f)
        if on_f.shape[0] == 0:
            continue
        values = np.unique(X_walk[:, f])
        values = values[~np.isnan(values)]
        gap = np.searchsorted(values, threshold[on_f], side="right")  # values[gap - 1] <= t < values[gap]
        inside = (gap > 0) & (gap < values.shape[0])
        on_f, gap = on_f[inside], gap[inside]
        lo, hi = values[gap - 1], values[gap]
        if float32:
            lo, hi = float32_margins(lo, hi)
        # One slot per tree and gap (a tree counts once, whatever its branches), the
        # trees of a gap in random order.
        tree = owner[on_f]
        slot_key = np.unique(np.column_stack((gap, tree)), axis=0, return_inverse=True)[1].ravel()
        n_slots = int(slot_key.max()) + 1
        slot_gap = np.zeros(n_slots, dtype=np.int64)
        slot_gap[slot_key] = gap
        order = np.lexsort((rng.random_sample(n_slots), slot_gap))
        starts = np.concatenate(([True], slot_gap[order][1:] != slot_gap[order][:-1]))
        run = np.cumsum(starts) - 1
        first = np.flatnonzero(starts)[run]
        rank = np.empty(n_slots, dtype=np.int64)
        rank[order] = np.arange(n_slots) - first
        count = np.empty(n_slots, dtype=np.int64)
        count[order] = np.bincount(run)[run]
        spread = lo + (rank[slot_key] + 0.5) * (hi - lo) / count[slot_key]
        new[on_f] = np.where(hi > lo, np.minimum(spread, np.nextafter(hi, -np.inf)), lo)
    start = 0
    for tree, inner in zip(estimators, nodes, strict=True):
        moved = new[start : start + inner.shape[0]]
        current = np.array(tree_nodes(tree)[3], dtype=np.float64)
        if not np.array_equal(current[inner], moved):
            current[inner] = moved
            set_thresholds(tree, current)
        start += inner.shape[0]


def thresholds_of(estimators: list) -> tuple:
    """Feature, threshold and tree index of every split of the fitted trees."""
    return split_thresholds([tree_nodes(tree) for tree in estimators])


#: Thresholds of different trees closer than this many ulps count as colliding in a
#: :class:`ThresholdBook`: twice the snapping distance, so that no chain of snapped
#: thresholds joins two trees.
_COLLISION_ULPS = 2 * relabel.SNAP_ULPS
_REDRAWS = 8


class ThresholdBook:
    """Per feature, the sorted thresholds of all trees so far, to place new ones apart.

    A new threshold of a gap ``[lo, hi)`` is drawn uniformly; if it lies within the
    collision distance (a few ulps, or r_f with a resolution) of another tree's, it
    is drawn again, then placed in the middle of the widest free stretch of the gap;
    only when the gap has no room left does it collide, and the feature's
    multiplicity (trees sharing one threshold) grows. O(log n) per threshold.
    """

    def __init__(self, n_features: int, resolution: NDArray[np.float64] | None):
        self.values = [[] for _ in range(n_features)]
        self.owners = [[] for _ in range(n_features)]
        self.multiplicity = np.zeros(n_features, dtype=np.int64)
        self.reach = np.zeros(n_features) if resolution is None else resolution
        self.spread = resolution is not None

    def _tolerance(self, f: int, t: float) -> float:
        # The spacing of the larger magnitude, as snapping measures (a neighbour is at most 2x larger here).
        return max(float(self.reach[f]), _COLLISION_ULPS * 2.0 * float(np.spacing(abs(t) + 0.0)))

    def _clashes(self, f: int, t: float, owner: int) -> list:
        """Other trees with a threshold within the collision distance of t."""
        values, owners, tol = self.values[f], self.owners[f], self._tolerance(f, t)
        a = bisect.bisect_left(values, t - tol)
        b = bisect.bisect_right(values, t + tol)
        return [o for o in owners[a:b] if o != owner]

    def _widest(self, f: int, lo: float, hi: float, owner: int) -> float | None:
        """The middle of the widest stretch of [lo, hi) between thresholds, if it clashes with none."""
        values = self.values[f]
        edges = [lo] + values[bisect.bisect_left(values, lo):bisect.bisect_left(values, hi)] + [hi]
        widths = np.diff(edges)
        j = int(np.argmax(widths))
        spot = edges[j] + widths[j] / 2.0
        return None if self._clashes(f, spot, owner) or not lo <= spot < hi else spot

    def place(self, f: int, lo: float, hi: float, owner: int, rng: np.random.RandomState) -> float:
        """A threshold in [lo, hi) for tree ``owner``, apart from every other tree's; recorded."""
        t = lo
        for attempt in range(_REDRAWS + 1):
            if attempt == _REDRAWS or (self.spread and attempt > 0):
                spot = self._widest(f, lo, hi, owner)
                t = spot if spot is not None else t
                break
            t = lo + rng.random_sample() * (hi - lo)
            t = min(t, float(np.nextafter(hi, -np.inf))) if hi > lo else lo
            if not self._clashes(f, t, owner):
                break
        t = max(lo, min(t, float(np.nextafter(hi, -np.inf)) if hi > lo else lo))
        others = set(self._clashes(f, t, owner))
        self.multiplicity[f] = max(self.multiplicity[f], len(others) + 1)
        i = bisect.bisect_right(self.values[f], t)
        self.values[f].insert(i, t)
        self.owners[f].insert(i, owner)
        return t
