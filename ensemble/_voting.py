"""Votes and consistency certificates shared by every ensemble of the package.

An ensemble is voters, a vote and a certificate (STYLE.md, item 13):

- :class:`~ensemble.OTreeBagger`: relabelled groups of trees (each consistent on its
  own), combined by the lower median or the rounded mean; certified by Theorem 1 of
  Sousa & Cardoso (2011) and its rounded-mean analogue (:func:`voters_certificate`).
- :class:`~ensemble.ConsistentForestClassifier`: trees with distinct thresholds whose
  values are averaged and rounded; certified by the oscillation bound of DESIGN.md
  section 9 (:func:`oscillation_bound`).

Both certificates are functions of the fitted model that tests re-derive by brute force.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "VOTES",
    "combine_votes",
    "vote_counts",
    "rounded_mean",
    "voters_certificate",
    "oscillation_bound",
    "threshold_multiplicity",
    "SNAP_ULPS",
]

#: The votes: lower median, most frequent class (lowest on ties), rounded mean.
VOTES = ("median", "majority", "mean")

#: Thresholds of one feature closer than this many units in the last place (of the
#: larger magnitude) are one threshold (DESIGN.md section 4c): two trees computing the
#: same midpoint through different pairs of values differ by an ulp or two.
SNAP_ULPS = 4


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
    half-way between two classes (DESIGN.md section 9 rounds halves up).

    Examples
    --------
    >>> rounded_mean([0, 1, 2, 3, 9], 2, 4).tolist()
    [0, 1, 1, 2, 3]
    """
    sums = np.asarray(sums, dtype=np.int64)
    scale = np.int64(scale)
    return np.clip((2 * sums + scale) // (2 * scale), 0, n_classes - 1).astype(np.intp)


def combine_votes(votes: NDArray[np.integer], n_classes: int, vote: str = "median") -> NDArray[np.intp]:
    """Class index chosen by the voters of every sample (columns of ``votes``).

    Parameters
    ----------
    votes : ndarray of shape (n_samples, n_voters)
        Class index 0..K-1 of every voter.
    n_classes : int
        Number of classes K.
    vote : {"median", "majority", "mean"}, default="median"
        ``"median"``: the lower median, the order statistic of rank ceil(L/2),
        which keeps consistency (Theorem 1); ``"majority"``: the most frequent
        class, lowest on ties (no guarantee); ``"mean"``: the rounded mean
        ``floor(mean + 1/2)``, consistent too (DESIGN.md section 9).

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
    >>> [combine_votes(votes, 3, v).tolist() for v in ("median", "majority", "mean")]
    [[1], [2], [1]]
    """
    if vote == "majority":
        # argmax returns the first maximum: ties go to the lower class.
        return np.argmax(vote_counts(votes, n_classes), axis=1)
    if vote == "median":
        rank = (votes.shape[1] + 1) // 2 - 1
        return np.partition(votes, rank, axis=1)[:, rank]
    if vote == "mean":
        return rounded_mean(votes.sum(axis=1, dtype=np.int64), votes.shape[1], n_classes)
    raise ValueError(f"vote must be one of {VOTES}; got {vote!r}")


def voters_certificate(voters_consistent: Iterable[bool], vote: str) -> bool:
    """Whether a vote of consistent voters is consistent.

    Parameters
    ----------
    voters_consistent : iterable of bool
        Each voter's own certificate (a relabelled group: no adjacent regions of
        its partition two classes apart).
    vote : str
        One of :data:`VOTES`.

    Returns
    -------
    bool
        True when every voter is consistent and the vote is the median or the
        rounded mean; the majority vote carries no guarantee.

    Notes
    -----
    Theorem 1 (Sousa & Cardoso 2011): near any point x every consistent voter
    takes at most two adjacent classes {c_l, c_l + 1}. An order statistic is
    non-decreasing in every voter and moves by at most one when all voters move
    by at most one, so the lower median takes at most two adjacent classes.
    The mean of the voters then varies inside an interval of length at most 1,
    and ``floor(. + 1/2)`` maps such an interval to at most two adjacent classes
    (DESIGN.md section 9), so the rounded mean is consistent too.

    Examples
    --------
    >>> voters_certificate([True, True], "median"), voters_certificate([True], "majority")
    (True, False)
    """
    if vote not in VOTES:
        raise ValueError(f"vote must be one of {VOTES}; got {vote!r}")
    return vote != "majority" and all(bool(c) for c in voters_consistent)


def oscillation_bound(jumps: ArrayLike, n_boundaries: int) -> int:
    """Sum of the ``n_boundaries`` largest per-tree jumps (the numerator of the bound).

    Parameters
    ----------
    jumps : array-like of int, shape (n_trees,)
        J_t of every tree: the largest value difference between two of its leaves
        whose closures touch (in the forest's integer value units).
    n_boundaries : int
        Largest number of trees that can have a boundary through one point:
        sum over the features of their threshold multiplicities
        (:func:`threshold_multiplicity`), at most one tree per feature when the
        thresholds are distinct.

    Returns
    -------
    int
        ``sum of the n_boundaries largest J_t``. The rounded mean of the trees is
        consistent when this is at most ``n_trees * unit`` (bound <= 1).

    Notes
    -----
    DESIGN.md section 9. A tree without a boundary through x is constant near x;
    the others move by at most J_t each, so the mean moves by at most this sum
    divided by the number of trees. O(n_trees log n_trees).

    Examples
    --------
    >>> oscillation_bound([3, 1, 4, 1, 5], 2)
    9
    """
    jumps = np.sort(np.asarray(jumps, dtype=np.int64))[::-1]
    return int(jumps[: max(int(n_boundaries), 0)].sum())


def threshold_multiplicity(thresholds: ArrayLike, owners: ArrayLike, window: float = 0.0) -> int:
    """Largest number of distinct trees with a threshold in one window of one feature.

    Parameters
    ----------
    thresholds : array-like of float, shape (n_thresholds,)
        The split thresholds of all trees on one feature.
    owners : array-like of int, shape (n_thresholds,)
        The tree of each threshold.
    window : float, default=0.0
        Width of the window (the resolution r_f of DESIGN.md section 4c). With 0,
        thresholds count together only when they differ by at most
        :data:`SNAP_ULPS` units in the last place.

    Returns
    -------
    int
        0 for a feature no tree splits on; 1 when all trees' thresholds are
        distinct (more than a few ulps, or more than ``window``, apart).

    Notes
    -----
    A sort and a sliding window: O(n log n) plus the distinct owners inside the
    windows. Thresholds of one tree count once: the tree's own jump J_t covers
    every pair of its leaves that touch.

    Examples
    --------
    >>> threshold_multiplicity([0.325, 0.32500000000000007, 0.7], [0, 1, 2])
    2
    >>> threshold_multiplicity([0.1, 0.2, 0.3], [0, 1, 1], window=0.15)
    2
    """
    t = np.asarray(thresholds, dtype=np.float64)
    owners = np.asarray(owners)
    if t.size == 0:
        return 0
    order = np.argsort(t, kind="stable")
    t, owners = t[order], owners[order]
    if window > 0:
        stop = np.searchsorted(t, t + window, side="right")
    else:
        # Chains of near-equal values form one cluster (a single linkage).
        tol = SNAP_ULPS * np.spacing(np.maximum(np.abs(t[:-1]), np.abs(t[1:])))
        new_cluster = np.concatenate(([True], np.diff(t) > tol))
        cluster = np.cumsum(new_cluster) - 1
        ends = np.flatnonzero(np.concatenate((new_cluster[1:], [True])))
        stop = ends[cluster] + 1
    if np.all(stop - np.arange(t.size) == 1):
        return 1
    best = 1
    for i in np.flatnonzero(stop - np.arange(t.size) > 1):
        best = max(best, np.unique(owners[i : stop[i]]).size)
    return int(best)
