"""Every consistency and monotonicity certificate of the ensembles, in one place.

A certificate is a function of a fitted model that a test can re-derive by brute
force (docs/design.md sections 5, 9 and 10):

- :func:`voters_certificate`: a vote of consistent voters (OTreeBagger's relabelled
  groups) is consistent when the vote keeps consistency (Theorem 1; the registry
  :data:`ensemble.base._voting.VOTES` records which votes do).
- :func:`sum_certificate`: a sum of trees with distinct thresholds (the certified
  forest's mean, certified boosting's weighted sum) moves by at most the sum of the
  ``n_boundaries`` largest per-tree jumps near any point; cut points at least that
  far apart give consistent classes (:func:`is_certified`).
- :func:`trees_are_monotone`: a sum of trees each monotone along its face contacts
  is monotone.
- :func:`gap_loads`: a move of one feature inside one gap between consecutive
  training values crosses the thresholds the trees put in that gap; the sum of their
  face jumps there bounds how far the sum moves (docs/design.md section 13).

Trees are read as scikit-learn-style node arrays (``left``, ``right``, ``feature``,
``threshold``; ``left == -1`` at a leaf; ``x <= threshold`` goes left), from
scikit-learn's trees or ours, with integer leaf values so that every sum and bound
is exact.

This module assembles the certificates and is where the rest of the package imports
them from; each topic lives in its own module: the trees' node arrays, the per-tree
jumps and the oscillation bound in :mod:`ensemble.certificates._jumps`, the face steps
of one tree in :mod:`ensemble.certificates._faces`, the gap loads at the data's
resolution in :mod:`ensemble.certificates._gaps`, the monotone certificate in
:mod:`ensemble.certificates._monotone`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from ensemble.certificates._faces import face_jumps, face_pairs, face_steps
from ensemble.certificates._gaps import MAX_LOCALISED_PAIRS, GapLoads, GapPairs, gap_loads, gap_pairs
from ensemble.certificates._jumps import (NodeArrays, bound_ratio, exact_jump, is_certified, oscillation_bound,
                                         threshold_clusters, threshold_multiplicity, tree_jump, tree_missing_left,
                                         tree_nodes)
from ensemble.certificates._monotone import monotone_leaf_pairs, trees_are_monotone
from ensemble.base._voting import VOTES, check_vote

__all__ = [
    "MAX_LOCALISED_PAIRS",
    "NodeArrays",
    "SumCertificate",
    "GapLoads",
    "GapPairs",
    "exact_jump",
    "face_jumps",
    "face_pairs",
    "face_steps",
    "gap_loads",
    "gap_pairs",
    "is_certified",
    "monotone_leaf_pairs",
    "NOTIONS",
    "bound_ratio",
    "check_notion",
    "oscillation_bound",
    "split_thresholds",
    "sum_certificate",
    "threshold_clusters",
    "threshold_multiplicity",
    "tree_jump",
    "tree_missing_left",
    "tree_nodes",
    "trees_are_monotone",
    "voters_certificate",
    "VERDICTS",
    "certified_notion",
    "default_notion",
]


#: The consistency notions a certificate checks (docs/design.md section 13): ``"data"``,
#: at the data's resolution (the default); ``"pointwise"``, the paper's.
NOTIONS = ("data", "pointwise")


def check_notion(notion: Any) -> str:
    """``notion`` if it is one of :data:`NOTIONS`, else a ValueError naming the parameter.

    Examples
    --------
    >>> check_notion("data")
    'data'
    """
    if notion not in NOTIONS:
        raise ValueError(f"notion must be one of {NOTIONS}; got {notion!r}")
    return notion


#: A verdict in words, by the strongest notion a model's certificate proves (None: neither). The
#: command line, the demo and the docs print these and nothing else.
VERDICTS = {"data": "consistent at the data's resolution", "pointwise": "consistent pointwise only",
            None: "not certified"}


def default_notion(model: Any) -> str:
    """The notion ``is_consistent()`` checks without arguments: the one the model claims, else the one it was fitted for.

    The claim is ``consistency_notion_`` (a monotone forest fitted for ``"data"``
    claims ``"pointwise"``); a model that claims none is checked for its fitted notion.
    """
    claimed = getattr(model, "consistency_notion_", None)
    if claimed in NOTIONS:
        return claimed
    fitted = model.__dict__.get("_consistency", getattr(model, "consistency", "pointwise"))
    return fitted if fitted in NOTIONS else "pointwise"


def certified_notion(model: Any) -> str | None:
    """The strongest notion the model's certificate proves, recomputed (``is_consistent`` for each), or None.

    ``"data"`` includes ``"pointwise"`` (section 13): it is tried first.
    """
    checks = getattr(model, "is_consistent", None)
    if checks is None:
        return None
    for notion in NOTIONS:
        if checks(notion=notion):
            return notion
    return None


def voters_certificate(voters_consistent: Iterable[bool], vote: str) -> bool:
    """Whether a vote of consistent voters is consistent.

    Parameters
    ----------
    voters_consistent : iterable of bool
        Each voter's own certificate (a relabelled group: no adjacent regions of
        its partition two classes apart).
    vote : str
        A key of :data:`ensemble.base._voting.VOTES`.

    Returns
    -------
    bool
        True when every voter is consistent and the vote keeps consistency (the
        median and the rounded mean do; the mode (majority vote) carries no guarantee).

    Notes
    -----
    Theorem 1 (Sousa & Cardoso 2011; docs/design.md section 5): near any point x
    every consistent voter takes at most two adjacent classes {c_l, c_l + 1}. An
    order statistic is non-decreasing in every voter and moves by at most one
    when all voters move by at most one, so the lower median takes at most two
    adjacent classes. The mean of the voters then varies inside an interval of
    length at most 1, and ``floor(. + 1/2)`` maps such an interval to at most two
    adjacent classes (docs/design.md section 9), so the rounded mean is
    consistent too.

    Examples
    --------
    >>> voters_certificate([True, True], "median"), voters_certificate([True], "mode")
    (True, False)
    """
    rule = VOTES[check_vote(vote)]
    return rule.keeps_consistency and all(bool(c) for c in voters_consistent)


@dataclass(frozen=True)
class SumCertificate:
    """The oscillation certificate of a sum of trees (docs/design.md sections 9 and 10).

    Attributes
    ----------
    bound : int
        Sum of the ``n_boundaries`` largest jumps (integer value units).
    spacing : int
        The smallest gap between consecutive cut points of the sum.
    n_boundaries : int
        Largest number of trees that can have a boundary through one point.
    multiplicity : ndarray of shape (n_features,)
        Per feature, the largest number of trees sharing one threshold (or window).
    jumps : ndarray of shape (n_trees,)
        J_t where computed exactly, else the tree's value range (an upper bound).
    exact : ndarray of shape (n_trees,), bool
        Which jumps are exact.
    gaps : GapLoads or None
        The loads of the gaps between training values (:func:`gap_loads`), when
        consistency at the data's resolution was checked.
    """

    bound: int
    spacing: int
    n_boundaries: int
    multiplicity: NDArray[np.int64]
    jumps: NDArray[np.int64]
    exact: NDArray[np.bool_]
    gaps: GapLoads | None = None

    @property
    def pointwise(self) -> bool:
        """Pointwise (or r-) consistency: :func:`is_certified` of the oscillation bound and the spacing."""
        return is_certified(self.bound, self.spacing)

    @property
    def certified(self) -> bool:
        """The bound and, where computed, every gap's load are at most the spacing."""
        return self.pointwise and (self.gaps is None or is_certified(self.gaps.bound, self.spacing))

    @property
    def largest(self) -> int:
        """The larger of the oscillation bound and the largest gap load: the spacing the cut points need."""
        return max(self.bound, 0 if self.gaps is None else self.gaps.bound)

    @property
    def ratio(self) -> float:
        """:func:`bound_ratio` of :attr:`largest` and the spacing."""
        return bound_ratio(self.largest, self.spacing)

    def with_spacing(self, spacing: int) -> "SumCertificate":
        """The same bounds against the final cut points' spacing."""
        return replace(self, spacing=int(spacing))


def split_thresholds(nodes: Sequence[tuple]) -> tuple:
    """Feature, threshold and tree index of every split of the given trees' node arrays.

    Splits at an infinite threshold (present values one way, missing ones the other,
    as scikit-learn grows them) are left out: no point of space lies on them, and
    moving between a value and a missing one is not a small move (docs/design.md
    section 11).
    """
    if not nodes:
        return np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64)
    internal = [(np.asarray(n[0]) >= 0) & np.isfinite(np.asarray(n[3], dtype=np.float64)) for n in nodes]
    return (
        np.concatenate([np.asarray(n[2])[i] for n, i in zip(nodes, internal, strict=True)]).astype(np.int64),
        np.concatenate([np.asarray(n[3])[i] for n, i in zip(nodes, internal, strict=True)]).astype(np.float64),
        np.repeat(np.arange(len(nodes)), [int(i.sum()) for i in internal]),
    )


def sum_certificate(nodes: Sequence[tuple], values: Sequence[NDArray[np.int64]], n_features: int,
                    countable: NDArray[np.bool_], spacing: int, resolution: NDArray[np.float64] | None = None, *,
                    exact: bool = False, cache: dict | None = None, ranges_only: bool = False,
                    grid=None, pairs: GapPairs | None = None, verdict_only: bool = False) -> SumCertificate:
    """Oscillation certificate of a sum of trees, recomputed from the trees' geometry alone.

    Parameters
    ----------
    nodes : sequence of tuple
        ``(left, right, feature, threshold)`` of every tree, thresholds as ``predict``
        compares with them (:func:`tree_nodes`).
    values : sequence of ndarray of int64
        Integer value of every node of every tree as it enters the sum (the forest's
        leaf means, boosting's steps times leaf values; only leaves matter).
    n_features : int
        Dimension d.
    countable : ndarray of bool, shape (d,)
        Features that count in the bound (categorical features do not).
    spacing : int
        The smallest gap between consecutive cut points of the sum: certified when
        the bound is at most this.
    resolution : ndarray of shape (d,), optional
        Window widths r_f (docs/design.md section 4c); ``None`` is r = 0.
    exact : bool, default=False
        Compute every tree's jump J_t exactly; by default a tree's value range (an
        upper bound of J_t) is used while it suffices to certify.
    cache : dict, optional
        Exact jumps already computed, by tree index (kept across rounds of growth).
    ranges_only : bool, default=False
        Bound every tree's jump by its value range, never by the exact jump
        between touching leaves: for functions that change only across a tree's
        own thresholds but not only between touching leaves (monotone envelopes).
    grid : relabel.DataGrid, optional
        Check consistency at the data's resolution too: the loads of the gaps
        between training values (:func:`gap_loads`) must be at most ``spacing``
        (docs/design.md section 13).
    pairs : GapPairs, optional
        The trees' face pairs, if already found (:func:`gap_pairs`).
    verdict_only : bool, default=False
        Find face pairs only in the gaps whose plain sums pass ``spacing``
        (``gap_loads(localise_above=spacing)``): ``certified`` is the same, at a
        fraction of the cost, but the loads at or below the spacing may read
        larger than their localised values (``is_consistent()``; a fit keeps its
        cut points the largest load apart and needs them exact).

    Returns
    -------
    SumCertificate

    Notes
    -----
    Per feature, the thresholds of all trees are sorted and their multiplicity
    found (:func:`threshold_multiplicity`); ``n_boundaries`` is their sum. Exact
    jumps are computed only where they can change the sum of the
    ``n_boundaries`` largest: the trees of the current top, until the top holds
    exact values only (then no other tree can enter). O(T log T + thresholds log
    thresholds) plus the exact jumps needed.

    Examples
    --------
    >>> import numpy as np
    >>> stump = lambda t: (np.array([1, -1, -1]), np.array([2, -1, -1]), np.array([0, -2, -2]),
    ...                    np.array([t, -2.0, -2.0]))
    >>> values = [np.array([0, 0, 4]), np.array([0, 0, 5])]
    >>> c = sum_certificate([stump(0.2), stump(0.7)], values, 1, np.array([True]), spacing=5)
    >>> c.bound, c.n_boundaries, c.certified
    (5, 1, True)
    """
    r = np.zeros(n_features) if resolution is None else np.asarray(resolution, dtype=np.float64)
    internal = [np.asarray(n[0]) >= 0 for n in nodes]
    feature, threshold, owner = split_thresholds(nodes)
    multiplicity = np.zeros(n_features, dtype=np.int64)
    for f in np.flatnonzero(countable):
        on_f = feature == f
        multiplicity[f] = threshold_multiplicity(threshold[on_f], owner[on_f], resolution=float(r[f]))
    n_boundaries = int(multiplicity.sum())
    jumps = np.array([np.ptp(v[~i]) if (~i).any() else 0 for v, i in zip(values, internal, strict=True)],
                     dtype=np.int64)
    is_exact = np.zeros(len(nodes), dtype=bool)
    cache = {} if cache is None else cache
    if not ranges_only and (exact or not is_certified(oscillation_bound(jumps, n_boundaries), spacing)):
        while True:
            todo = np.arange(len(nodes)) if exact else np.argsort(-jumps, kind="stable")[:n_boundaries]
            todo = todo[~is_exact[todo]]
            if todo.shape[0] == 0:
                break
            for t in todo:
                if t not in cache:
                    cache[t] = exact_jump(nodes[t], values[t], n_features, r)
                jumps[t] = cache[t]
                is_exact[t] = True
    # For a verdict, only the gaps whose plain sums pass the spacing need their pairs (the verdict is the
    # same; the loads below the spacing, which a fit keeps its cut points apart by, may read larger).
    gaps = None if grid is None else gap_loads(nodes, values, grid, countable, ranges_only=ranges_only, pairs=pairs,
                                               localise_above=int(spacing) if verdict_only else None)
    return SumCertificate(oscillation_bound(jumps, n_boundaries), int(spacing), n_boundaries, multiplicity,
                          jumps, is_exact, gaps)
