"""The certificate of certified gradient boosting: per-tree jumps, threshold multiplicities, step budget.

docs/design.md section 10. These pieces belong with the forest's certificate
(docs/design.md section 9, :func:`ensemble._forest.forest_certificate`): the same
bound (sum of the n_boundaries largest per-tree jumps) on a sum instead of a mean.
They live here until the ensembles share one certificate module.
"""

from __future__ import annotations

import bisect

import numpy as np
from numpy.typing import NDArray

from ensemble import _kernels
from ensemble._voting import oscillation_bound, threshold_multiplicity
from relabel import SNAP_ULPS
from trees import leaf_boxes

__all__ = ["boosting_certificate", "tree_jump"]

#: Thresholds of different trees closer than this many ulps count as colliding: twice
#: the snapping distance, so that no chain of snapped thresholds joins two trees.
_COLLISION_ULPS = 2 * SNAP_ULPS
_REDRAWS = 8


class _Tree:
    """One boosted tree on raw thresholds, ``tree_``-like for :func:`trees.leaf_boxes`.

    ``value`` holds the integer step-scaled leaf values (0 at internal nodes).
    """

    __slots__ = ("children_left", "children_right", "feature", "threshold", "value", "n_features")

    def __init__(self, left, right, feature, threshold, value, n_features):
        self.children_left, self.children_right, self.feature = left, right, feature
        self.threshold, self.value, self.n_features = threshold, value, n_features

    @property
    def tree_(self) -> "_Tree":
        return self


def tree_jump(tree: _Tree, reach: NDArray[np.float64] | None = None) -> int:
    """J_t of one tree: the largest value difference between leaves whose closures meet.

    With ``reach`` (the resolution r_f), between leaves closer than r_f on every
    feature. Belongs with the forest's certificate (same kernel,
    :func:`ensemble._kernels.tree_jump`).
    """
    boxes = leaf_boxes(tree, tree.n_features)
    leaves = boxes.leaf_ids.astype(np.int64)
    value = tree.value
    centre = (value[leaves].max() + value[leaves].min()) / 2.0
    order = np.argsort(-np.abs(value[leaves] - centre), kind="stable")
    reach = np.zeros(tree.n_features) if reach is None else reach
    return int(_kernels.tree_jump(tree.children_left, tree.children_right, tree.feature, tree.threshold, value,
                                  leaves, boxes.lower, boxes.upper, reach, order))


def boosting_certificate(trees: list, n_features: int, countable: NDArray[np.bool_], spacing: int,
                         resolution: NDArray[np.float64] | None = None, *, exact: bool = False,
                         cache: dict | None = None) -> dict:
    """Oscillation bound of a sum of trees, recomputed from the trees' geometry alone.

    Parameters
    ----------
    trees : list of _Tree
        The trees with their raw thresholds and integer leaf values.
    n_features : int
        Dimension d.
    countable : ndarray of bool
        Features that count (categorical ones do not: a valid point never lies
        on their thresholds).
    spacing : int
        The smallest gap between consecutive cut points (integer units).
    resolution : ndarray of shape (d,), optional
        r_f for r-consistency (docs/design.md section 4c).
    exact : bool, default=False
        Compute every exact jump (else only where the value ranges do not certify).
    cache : dict, optional
        Exact jumps already known, by tree index.

    Returns
    -------
    dict
        ``bound`` (sum of the ``n_boundaries`` largest J_t), ``n_boundaries``,
        ``multiplicity`` (per feature), ``jumps``, ``exact`` and ``certified``
        (``bound <= spacing``).

    Notes
    -----
    docs/design.md section 10: near any point at most ``n_boundaries`` trees have a
    boundary (one per feature when the thresholds of different trees are distinct;
    the multiplicity of a feature counts the trees sharing one threshold, or one
    window of width r_f), each moves the sum by at most its J_t, so the sum stays in
    an interval of length ``bound``; with ``bound <= spacing`` it meets at most one
    cut point there. The forest's certificate (section 9) is the same argument with
    the mean; this function belongs with it in the shared certificate module.
    """
    reach = np.zeros(n_features) if resolution is None else np.asarray(resolution, dtype=np.float64)
    inner = [t.children_left >= 0 for t in trees]
    if trees:
        feature = np.concatenate([t.feature[i] for t, i in zip(trees, inner)])
        threshold = np.concatenate([t.threshold[i] for t, i in zip(trees, inner)])
        owner = np.repeat(np.arange(len(trees)), [int(i.sum()) for i in inner])
    else:
        feature, threshold, owner = np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64)
    multiplicity = np.zeros(n_features, dtype=np.int64)
    for f in np.flatnonzero(countable):
        on_f = feature == f
        multiplicity[f] = threshold_multiplicity(threshold[on_f], owner[on_f], window=float(reach[f]))
    n_boundaries = int(multiplicity.sum())
    jumps = np.array([np.ptp(t.value[~i]) if (~i).any() else 0 for t, i in zip(trees, inner)], dtype=np.int64)
    is_exact = np.zeros(len(trees), dtype=bool)
    cache = {} if cache is None else cache
    if exact or oscillation_bound(jumps, n_boundaries) > spacing:
        while True:
            todo = np.arange(len(trees)) if exact else np.argsort(-jumps, kind="stable")[:n_boundaries]
            todo = todo[~is_exact[todo]]
            if todo.shape[0] == 0:
                break
            for t in todo:
                if t not in cache:
                    cache[t] = tree_jump(trees[t], reach)
                jumps[t] = cache[t]
                is_exact[t] = True
    bound = oscillation_bound(jumps, n_boundaries)
    return {"bound": bound, "n_boundaries": n_boundaries, "multiplicity": multiplicity, "jumps": jumps,
            "exact": is_exact, "certified": bound <= spacing}


class _ThresholdBook:
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


class _Budget:
    """The sorted jumps J_t so far: how large a new tree's jump may be while the model stays certified.

    Invariant: the sum of the k largest jumps is at most the cut spacing g, with
    k = max(d_eff, n_boundaries). A new tree may then jump by
    ``g - (sum of the k - 1 largest)`` (docs/design.md section 10).
    """

    def __init__(self, spacing: int, d_eff: int):
        self.spacing, self.d_eff, self.jumps = spacing, max(d_eff, 1), []

    def top(self, k: int) -> int:
        return int(sum(self.jumps[-k:])) if k > 0 else 0

    def allowance(self, n_boundaries: int) -> int:
        """Largest jump of a new tree, or -1 when the trees so far already fill the bound."""
        k = max(self.d_eff, n_boundaries)
        if self.top(k) > self.spacing:
            return -1
        return self.spacing - self.top(k - 1)

    def add(self, jump: int) -> None:
        bisect.insort(self.jumps, int(jump))


def _step_cap(spacing: int, d_eff: int) -> int:
    """Largest jump J_t of one tree: ``g / d_eff``, so that d_eff trees with boundaries through one point move
    the sum by at most g (docs/design.md section 10)."""
    return max(spacing // max(d_eff, 1), 2)
