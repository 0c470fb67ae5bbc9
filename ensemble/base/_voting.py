"""Votes and cut points shared by every ensemble of the package.

An ensemble is voters, a vote and a certificate (docs/design.md section 5):

- :class:`~ensemble.OTreeBagger`: relabelled groups of trees (each consistent on its
  own) combined by a vote of :data:`VOTES`, the registry that records which votes
  keep consistency (Theorem 1).
- :class:`~ensemble.ConsistentForestClassifier` and certified boosting: a sum of
  tree values cut into classes at cut points (half-way, or learned out of bag and
  kept at least the certified bound apart).

The certificates themselves live in :mod:`ensemble.certificates._certificates`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "UNIT_BITS",
    "VOTES",
    "Vote",
    "DEPRECATED_VOTES",
    "check_vote",
    "combine_votes",
    "vote_counts",
    "rounded_mean",
    "half_cut_points",
    "learn_cut_points",
    "cut_spacing",
    "cumulative_proba",
    "fit_proba_scale",
]


#: Tree values of the sum-of-trees models (the certified forest, certified boosting) are
#: integer multiples of 2**-UNIT_BITS class indices: sums over the trees are then exact,
#: and so are the cut points and the certificate (no float error can turn a mean of
#: 1.4999999 and one of 2.5000001 into a jump of two).
UNIT_BITS = 20


@dataclass(frozen=True)
class Vote:
    """A way to combine voters' class indices, and whether it keeps their consistency.

    Attributes
    ----------
    name : str
        The value of an estimator's ``vote`` parameter.
    combine : callable
        ``combine(votes, n_classes) -> class index per row``; ``votes`` has shape
        (n_samples, n_voters).
    keeps_consistency : bool
        Whether the vote of consistent voters is consistent (docs/design.md section
        5, Theorem 1, and section 9 for the rounded mean).
    """

    name: str
    combine: Callable[[NDArray, int], NDArray[np.intp]]
    keeps_consistency: bool


def vote_counts(votes: NDArray[np.integer], n_classes: int) -> NDArray[np.float64]:
    """Number of voters per class for every sample.

    Parameters
    ----------
    votes : ndarray of shape (n_samples, n_voters)
        Class index of every voter.
    n_classes : int
        Number of classes K.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> vote_counts(np.array([[0, 2, 2]]), 3).tolist()
    [[1.0, 0.0, 2.0]]
    """
    # K is small: one vectorised comparison per class beats a scatter-add.
    return np.stack([(votes == k).sum(axis=1) for k in range(n_classes)], axis=1).astype(np.float64)


def rounded_mean(sums: ArrayLike, scale: int, n_classes: int) -> NDArray[np.intp]:
    """``clip(floor(sums / scale + 1/2), 0, K - 1)`` in exact integer arithmetic.

    Parameters
    ----------
    sums : array-like of int
        Sum of the voters' values, each value an integer multiple of
        ``scale / n_voters`` (class indices for a vote, quantised tree values for
        the certified forest).
    scale : int
        The sum that corresponds to a mean of 1 (``n_voters * unit``).
    n_classes : int
        Number of classes K.

    Returns
    -------
    ndarray of intp
        The rounded mean class index: ``floor((2 sums + scale) / (2 scale))``.

    Notes
    -----
    Integer floor division: no rounding error can move a mean that lies exactly
    half-way between two classes (docs/design.md section 9 rounds halves up).

    Examples
    --------
    >>> rounded_mean([0, 1, 2, 3, 9], 2, 4).tolist()
    [0, 1, 1, 2, 3]
    """
    sums = np.asarray(sums, dtype=np.int64)
    scale = np.int64(scale)
    return np.clip((2 * sums + scale) // (2 * scale), 0, n_classes - 1).astype(np.intp)


def half_cut_points(n_classes: int, scale: int) -> NDArray[np.int64]:
    """The cut points of ``floor(sum / scale + 1/2)`` on an integer sum: class k from ``(k - 1/2) scale`` on.

    Parameters
    ----------
    n_classes : int
        Number of classes K.
    scale : int
        The sum that means one class (``n_voters * unit``).

    Returns
    -------
    ndarray of shape (K - 1,), int64
        ``ceil((2k + 1) scale / 2)`` for k = 0..K-2: a sum reaching cut k means a
        class above k, so the class is ``searchsorted(cuts, sum, side="right")``,
        equal to :func:`rounded_mean` clipped to 0..K-1.

    Examples
    --------
    >>> half_cut_points(4, 10).tolist()
    [5, 15, 25]
    >>> import numpy as np
    >>> sums = np.arange(0, 40)
    >>> bool(np.all(np.searchsorted(half_cut_points(4, 10), sums, side="right") == rounded_mean(sums, 10, 4)))
    True
    """
    k = np.arange(n_classes - 1, dtype=np.int64)
    return -((-(2 * k + 1) * np.int64(scale)) // 2)


def cut_spacing(cuts: NDArray[np.int64]) -> int:
    """Smallest gap between consecutive cut points (the largest int64 with fewer than two cuts).

    A cut sum whose local oscillation is at most this gap takes at most two
    adjacent classes near any point; with K = 2 (one cut) any model is consistent.

    Examples
    --------
    >>> import numpy as np
    >>> cut_spacing(np.array([5, 15, 22])), cut_spacing(np.array([5])) == np.iinfo(np.int64).max
    (7, True)
    """
    return int(np.diff(cuts).min()) if cuts.shape[0] > 1 else int(np.iinfo(np.int64).max)


def learn_cut_points(values: ArrayLike, y: ArrayLike, n_classes: int, scale: int, *, spacing: int,
                     sample_weight: ArrayLike | None = None) -> NDArray[np.int64]:
    """Cut points on out-of-bag sums that minimise the absolute error, at least ``spacing`` apart.

    Parameters
    ----------
    values : array-like of float, shape (n_samples,)
        Out-of-bag sums (on the scale where ``scale`` means one class).
    y : array-like of int, shape (n_samples,)
        Class indices 0..K-1.
    n_classes : int
        Number of classes K.
    scale : int
        The sum that means one class; the half-way cuts :func:`half_cut_points` are
        the starting point and the tie-break.
    spacing : int
        Smallest allowed gap between consecutive cuts (the oscillation bound of the
        sum, so that the cut classes stay consistent).
    sample_weight : array-like of float, optional
        Weights of the samples.

    Returns
    -------
    ndarray of shape (K - 1,), int64
        Non-decreasing cuts, consecutive ones at least ``spacing`` apart when K > 2.

    Notes
    -----
    The absolute error of the class ``#{k: sum >= cut_k}`` is the sum over k of the
    errors of the binary decisions "class > k", so every cut is chosen on its own:
    among the intervals between consecutive sums with the fewest weighted errors,
    the one nearest the half-way cut, at that cut if it lies inside, else at the
    interval's middle. The cuts are then moved as little as possible (in squared
    distance, by isotonic regression of ``cut_k - k * spacing``) to respect the
    spacing. O(K n log n).

    Examples
    --------
    >>> import numpy as np
    >>> values = np.array([1.0, 2.0, 3.0, 12.0, 13.0, 14.0])  # sums with scale 10
    >>> learn_cut_points(values, [0, 0, 0, 1, 1, 1], 2, 10, spacing=0).tolist()
    [5]
    >>> learn_cut_points(values, [0, 0, 1, 1, 1, 1], 2, 10, spacing=0).tolist()
    [3]
    """
    values = np.asarray(values, dtype=np.float64)
    y = np.asarray(y)
    w = np.ones(values.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    half = half_cut_points(n_classes, scale).astype(np.float64)
    if values.shape[0] == 0:
        return half.astype(np.int64)
    order = np.argsort(values, kind="stable")
    v, y, w = values[order], y[order], w[order]
    distinct, cut_errors = _decision_errors(v, y, w, n_classes - 1)
    cuts = np.empty(n_classes - 1)
    for k, errors in enumerate(cut_errors):
        best = np.flatnonzero(errors <= errors.min() * (1 + 1e-12) + 1e-12)
        lo = np.concatenate(([-np.inf], distinct))[best]
        hi = np.concatenate((distinct, [np.inf]))[best]
        inside = (lo < half[k]) & (half[k] <= hi)
        if inside.any():
            cuts[k] = half[k]
            continue
        distance = np.minimum(np.abs(lo - half[k]), np.abs(hi - half[k]))
        j = int(np.argmin(distance))
        if np.isfinite(lo[j]) and np.isfinite(hi[j]):
            cuts[k] = (lo[j] + hi[j]) / 2
        elif np.isfinite(hi[j]):
            cuts[k] = hi[j] - scale / 2
        else:
            cuts[k] = lo[j] + scale / 2
    preferred = np.ceil(cuts)
    if n_classes > 2 and spacing > 0:
        if np.all(np.diff(preferred) >= spacing):
            return preferred.astype(np.int64)
        return _spaced_cuts(np.floor(v), y, w, preferred, int(spacing))
    return np.maximum.accumulate(preferred).astype(np.int64)


def _spaced_cuts(values: NDArray[np.float64], y: NDArray, w: NDArray[np.float64], preferred: NDArray[np.float64],
                 spacing: int) -> NDArray[np.int64]:
    """Integer cuts at least ``spacing`` apart with the fewest weighted errors in all, nearest ``preferred``.

    ``values``: the sorted sums, rounded down (an integer cut c puts a sum above it exactly
    when its floor is >= c). Moving each cut on its own to the spacing (a least-squares
    projection) ignored what each move costs: with 76% of the rows in the lowest class and
    the sums of the upper classes close together, it pushed the first cut below every sum,
    and the model never predicted the commonest class (test MAE 0.80 against 0.36 for that
    class alone). Instead an exact dynamic programme over the shifted cuts d_k = c_k - k s,
    which must not decrease: each decision's errors are constant between consecutive
    distinct sums, so an optimum lies on the ends of those pieces (or where ``preferred``
    is), shifted. Ties are then broken towards ``preferred``, each cut sliding inside the
    piece where its errors stay the same and its neighbours' spacing allows.
    O(K^2 m) for m distinct sums.
    """
    n_cuts = preferred.shape[0]
    distinct, cut_errors = _decision_errors(values, y, w, n_cuts)

    def errors(k: int, c: NDArray) -> NDArray:
        return cut_errors[k][np.searchsorted(distinct, c, side="left")]

    ends = np.concatenate((distinct, distinct + 1))
    steps = np.arange(n_cuts) * float(spacing)
    grid = np.unique(np.concatenate([ends - steps[k] for k in range(n_cuts)] + [preferred - steps]))
    total = errors(0, grid)
    pointers = []
    for k in range(1, n_cuts):
        # The best earlier total among shifted cuts at most d (non-decreasing d), and where it is.
        best_at = _prefix_argmin(total)
        pointers.append(best_at.astype(np.int32))  # K - 2 of them, each as long as the grid
        total = errors(k, grid + steps[k]) + total[best_at]
    chosen = np.empty(n_cuts, dtype=np.intp)
    chosen[-1] = int(np.argmin(total))
    for k in range(n_cuts - 1, 0, -1):
        chosen[k - 1] = pointers[k - 1][chosen[k]]
    cuts = grid[chosen] + steps
    # Towards the preferred cuts, inside each cut's piece of equal errors and the spacing.
    below = np.concatenate(([-np.inf], distinct))
    for _ in range(2 * n_cuts):
        moved = cuts.copy()
        for k in range(n_cuts):
            j = np.searchsorted(distinct, cuts[k], side="left")
            lo = max(below[j] + 1, cuts[k - 1] + spacing if k else -np.inf)
            hi = min(distinct[j] if j < distinct.shape[0] else np.inf,
                     cuts[k + 1] - spacing if k + 1 < n_cuts else np.inf)
            cuts[k] = min(max(preferred[k], lo), hi)
        if np.array_equal(moved, cuts):
            break
    return cuts.astype(np.int64)


def _decision_errors(values: NDArray[np.float64], y: NDArray, w: NDArray[np.float64],
                     n_cuts: int) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
    """The distinct sorted ``values`` and, per cut k, the weighted errors of "class > k" for a cut in each piece.

    ``errors[k][j]``: a cut in (distinct[j-1], distinct[j]] puts the first j distinct sums below it,
    missing the rows above k among them and wrongly lifting the others at or below k.
    """
    last = np.concatenate((values[1:] != values[:-1], [True]))  # last of each run of equal sums
    cut_errors = []
    for k in range(n_cuts):
        above = np.where(y > k, w, 0.0)
        below = np.where(y > k, 0.0, w)
        missed_above = np.concatenate(([0.0], np.cumsum(above)[last]))
        wrong_below = below.sum() - np.concatenate(([0.0], np.cumsum(below)[last]))
        cut_errors.append(missed_above + wrong_below)
    return values[last], cut_errors


def _prefix_argmin(values: NDArray[np.float64]) -> NDArray[np.intp]:
    """For every i, the index of the least of ``values[:i + 1]`` (the first one on ties)."""
    running = np.minimum.accumulate(values)
    new = np.concatenate(([True], running[1:] < running[:-1]))
    return np.maximum.accumulate(np.where(new, np.arange(values.shape[0]), 0))


def _median(votes: NDArray[np.integer], n_classes: int) -> NDArray[np.intp]:
    # The order statistic of rank ceil(L/2): the lower median.
    rank = (votes.shape[1] + 1) // 2 - 1
    return np.partition(votes, rank, axis=1)[:, rank]


def _mode(votes: NDArray[np.integer], n_classes: int) -> NDArray[np.intp]:
    # argmax returns the first maximum: ties go to the lower class.
    return np.argmax(vote_counts(votes, n_classes), axis=1)


def _mean(votes: NDArray[np.integer], n_classes: int) -> NDArray[np.intp]:
    return rounded_mean(votes.sum(axis=1, dtype=np.int64), votes.shape[1], n_classes)


#: The votes: lower median and rounded mean (both keep consistency), most frequent
#: class ("mode", as the trees' ``leaf_label="mode"``), lowest on ties (no guarantee).
VOTES: dict[str, Vote] = {
    "median": Vote("median", _median, keeps_consistency=True),
    "mode": Vote("mode", _mode, keeps_consistency=False),
    "mean": Vote("mean", _mean, keeps_consistency=True),
}

#: Former vote names, accepted with a FutureWarning: old name -> current name.
DEPRECATED_VOTES: dict[str, str] = {"majority": "mode"}


def check_vote(vote: str, *, warn: bool = True) -> str:
    """The current name of ``vote`` (a key of :data:`VOTES`), else a ValueError naming it.

    A deprecated name (:data:`DEPRECATED_VOTES`) is translated, with a FutureWarning
    when ``warn``.

    Examples
    --------
    >>> check_vote("median")
    'median'
    """
    if vote in DEPRECATED_VOTES:
        new = DEPRECATED_VOTES[vote]
        if warn:
            warnings.warn(f"vote={vote!r} is deprecated and will be removed; use vote={new!r} (the same "
                          "rule: the most frequent class, lowest on ties)", FutureWarning, stacklevel=3)
        return new
    if vote not in VOTES:
        raise ValueError(f"vote must be one of {tuple(VOTES)}; got {vote!r}")
    return vote


def combine_votes(votes: NDArray[np.integer], n_classes: int, vote: str = "median") -> NDArray[np.intp]:
    """Class index chosen by the voters of every sample (columns of ``votes``).

    Parameters
    ----------
    votes : ndarray of shape (n_samples, n_voters)
        Class index 0..K-1 of every voter.
    n_classes : int
        Number of classes K.
    vote : {"median", "mode", "mean"}, default="median"
        ``"median"``: the lower median, the order statistic of rank ceil(L/2),
        which keeps consistency (Theorem 1); ``"mode"``: the most frequent
        class, lowest on ties (no guarantee); ``"mean"``: the rounded mean
        ``floor(mean + 1/2)``, consistent too (docs/design.md section 9).

    Returns
    -------
    ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If ``vote`` is not one of :data:`VOTES`.

    Examples
    --------
    >>> import numpy as np
    >>> votes = np.array([[0, 2, 2, 1]])
    >>> [combine_votes(votes, 3, v).tolist() for v in ("median", "mode", "mean")]
    [[1], [2], [1]]
    """
    return VOTES[check_vote(vote)].combine(votes, n_classes)


def cumulative_proba(values: ArrayLike, cuts: ArrayLike, scale: float) -> NDArray[np.float64]:
    """Class probabilities of a value cut at ``cuts``: ``P(class > k) = Phi((value - cut_k) / scale)``.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        The model's value (a sum or mean of trees), on the scale of ``cuts``.
    cuts : array-like of shape (K - 1,)
        Non-decreasing cut points: the prediction is the number of cuts reached.
    scale : float
        Spread of the value around a cut (> 0), fitted by :func:`fit_proba_scale`.

    Returns
    -------
    ndarray of shape (n_samples, K)
        Rows sum to 1. ``P(class > k)`` is non-decreasing in the value and
        non-increasing in k (the cuts increase), so a model whose value is
        monotone along a feature has cumulative probabilities monotone along it
        (docs/design.md section 9), and the predicted class is the median of the
        distribution (``P(class > k) >= 1/2`` exactly when the value reaches cut k).

    Examples
    --------
    >>> p = cumulative_proba([0.0, 1.0, 2.0], [0.5, 1.5], 0.25)
    >>> p.round(3).tolist()
    [[0.977, 0.023, 0.0], [0.023, 0.954, 0.023], [0.0, 0.023, 0.977]]
    """
    from scipy.special import ndtr

    values = np.asarray(values, dtype=np.float64)
    cuts = np.asarray(cuts, dtype=np.float64)
    above = ndtr((values[:, None] - cuts[None, :]) / float(scale))
    P = np.empty((values.shape[0], cuts.shape[0] + 1))
    P[:, 0] = 1.0 - above[:, 0]
    P[:, 1:-1] = above[:, :-1] - above[:, 1:]
    P[:, -1] = above[:, -1]
    return np.clip(P, 0.0, 1.0)


def fit_proba_scale(values: ArrayLike, y: ArrayLike, cuts: ArrayLike, sample_weight: ArrayLike | None = None,
                    *, unit: float = 1.0) -> float:
    """The scale of :func:`cumulative_proba` that minimises the ranked probability score on held-out rows.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        Held-out (out-of-bag or validation) values of the model.
    y : array-like of shape (n_samples,)
        Their class indices 0..K-1.
    cuts : array-like of shape (K - 1,)
        The model's cut points.
    sample_weight : array-like of shape (n_samples,), optional
        Weights of the rows.
    unit : float, default=1.0
        One class on the values' scale: the search runs over 0.01 to 4 units.

    Returns
    -------
    float

    Notes
    -----
    RPS, the mean over rows of ``sum_k (F_k - [y <= k])^2``, is smooth in the
    scale: a bounded scalar search (Brent) over O(n K) evaluations.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> values = np.repeat([0.0, 1.0], 200) + rng.normal(scale=0.3, size=400)
    >>> y = (values + rng.normal(scale=0.3, size=400) > 0.5).astype(int)
    >>> 0.2 < fit_proba_scale(values, y, [0.5]) < 0.5
    True
    """
    from scipy.optimize import minimize_scalar

    values = np.asarray(values, dtype=np.float64)
    y = np.asarray(y)
    cuts = np.asarray(cuts, dtype=np.float64)
    w = np.ones(values.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if values.shape[0] == 0 or w.sum() <= 0:
        return 0.5 * unit
    # Equal (value, class) rows as one row of their summed weight, in sorted order: integer weights and
    # repeated rows then give the search the same numbers, whatever the rows' order (scikit-learn's check).
    order = np.lexsort((y, values))
    values, y, w = values[order], y[order], w[order]
    first = np.concatenate(([True], (np.diff(values) != 0) | (np.diff(y) != 0)))
    w = np.bincount(np.cumsum(first) - 1, weights=w)
    values, y = values[first], y[first]
    truth = y[:, None] <= np.arange(cuts.shape[0])[None, :]

    def rps(scale: float) -> float:
        cumulative = np.cumsum(cumulative_proba(values, cuts, scale), axis=1)[:, :-1]
        return float(np.average(np.sum((cumulative - truth) ** 2, axis=1), weights=w))

    return float(minimize_scalar(rps, bounds=(0.01 * unit, 4.0 * unit), method="bounded").x)
