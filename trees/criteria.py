"""Splitting criteria for ordered classes (docs/design.md section 3).

Every criterion is a function of a node's (weighted) class counts, vectorised
over any number of leading axes so that all candidate splits of a node, of all
features, of all nodes of a tree level are scored in one pass.

Internally each criterion is written as its *mass-weighted* impurity
``n * I(T)`` (or ``I(T)`` itself for ``ranking``, which is not weighted), so a
split score is always ``[nI(parent) - nI(left) - nI(right)] / n`` (respectively
``I(parent) - I(left) - I(right)``). The registry ``_CRITERIA`` dispatches the
names; :data:`trees.CRITERIA` is built from it.

Sample weights enter only through the counts: a node's class counts are the
sums of its rows' weights, so integer weights equal repeated rows for every
criterion. For ``wig`` this includes the node's mode ``m`` (the centre of the
weights ``|k - m|^a``): it is the class with the largest *weighted* count.
The public implementation of the splitting-criteria study (Ayllón-Gavilán et
al., 2025) takes the mode from the unweighted counts while weighting the
probabilities, so the two agree without weights and may differ with them, in
the nodes where the weighted and the unweighted modes differ. We keep the
repeated-rows reading: a weight is a multiplicity, as a bootstrap sample's
counts are.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["CRITERIA", "impurity", "split_gain"]

_LOG2 = np.log(2.0)
# wig's mode: counts within this share of the node's weight tie (the lowest class wins).
MODE_RTOL = 1e-11


# The mass functions take the classes on the FIRST axis, ``counts[k]`` being an
# array over nodes/candidates, and loop over the (few) classes in Python: every
# step is then one contiguous vectorised operation, much faster than numpy
# reductions over a short last axis. ``n`` is the total count of each node.


def _mass_gini(counts: NDArray, n: NDArray, present: NDArray | None, power: float) -> NDArray:
    # n * (1 - sum p_k^2) = n - sum n_k^2 / n
    sq = np.zeros_like(n)
    for c in counts:
        sq += c * c
    return n - np.divide(sq, n, out=np.zeros_like(sq), where=n > 0)


def _xlogx(c: NDArray) -> NDArray:
    # 0 log 0 = 0: the logarithm is evaluated on the positive entries only.
    out = np.zeros(np.shape(c))
    np.log(c, out=out, where=c > 0)
    out *= c
    return out


def _mass_entropy(counts: NDArray, n: NDArray, present: NDArray | None, power: float) -> NDArray:
    # n * H = n log2 n - sum n_k log2 n_k
    total = _xlogx(n)
    for c in counts:
        total -= _xlogx(c)
    return total / _LOG2


def _mass_ogini(cum: NDArray, n: NDArray, present: NDArray | None, power: float) -> NDArray:
    # Cumulative space: cum[k] = C_{k+1}, k < K - 1.
    # n * sum_k F_k (1 - F_k) = sum_{k<K} C_k - sum_{k<K} C_k^2 / n; F_K = 1 contributes 0.
    lin = np.zeros_like(n)
    sq = np.zeros_like(n)
    for c in cum:
        lin += c
        sq += c * c
    return lin - np.divide(sq, n, out=np.zeros_like(sq), where=n > 0)


def _mass_wig(counts: NDArray, n: NDArray, present: NDArray | None, power: float) -> NDArray:
    # n * (-sum_k w_k p_k log2 p_k) = -sum_k w_k n_k log2(n_k / n)
    #   = -[sum_k d_k n_k log n_k - log n * sum_k d_k n_k] / (log 2 * sum_{k present} d_k)
    # with d_k = |k - m|^a and m the node's (lowest) mode.
    if present is None:
        present = counts > 0
    # The lowest class within MODE_RTOL * n of the largest count: a tie that rounding
    # in the sums of the counts must not break.
    floor = np.max(counts, axis=0) - MODE_RTOL * n
    mode = np.argmax(counts >= floor, axis=0).astype(np.float64)
    norm = np.zeros_like(n)
    acc_xlogx = np.zeros_like(n)
    acc_lin = np.zeros_like(n)
    dist = np.empty(np.shape(n))
    for k, c in enumerate(counts):
        np.subtract(mode, k, out=dist)
        np.abs(dist, out=dist)
        if power != 1.0:
            dist **= power
        norm += dist * present[k]
        acc_xlogx += dist * _xlogx(c)
        acc_lin += dist * c
    acc_xlogx -= acc_lin * np.log(np.where(n > 0, n, 1.0))
    # Only the mode present: every weight is 0 and so is the impurity.
    return -np.divide(acc_xlogx, norm, out=np.zeros_like(acc_xlogx), where=norm > 0) / _LOG2


def _mass_ranking(cum: NDArray, n: NDArray, present: NDArray | None, power: float) -> NDArray:
    # Cumulative space. sum_{i<j} (j - i) n_i n_j = sum_{k<K} C_k (n - C_k): O(K) per node.
    total = np.zeros_like(n)
    for c in cum:
        total += c * (n - c)
    return total


class _Criterion(NamedTuple):
    mass_impurity: Callable[[NDArray, NDArray, NDArray | None, float], NDArray]
    weighted: bool  # children weighted by n_child / n (False: raw sum, for ranking)
    uses_parent_classes: bool  # wig: children's weights are normalised over the parent's classes
    cumulative: bool  # mass written on cumulative counts C_1..C_{K-1} (plus n) instead of n_1..n_K


_CRITERIA: dict[str, _Criterion] = {
    "gini": _Criterion(_mass_gini, True, False, False),
    "entropy": _Criterion(_mass_entropy, True, False, False),
    "ogini": _Criterion(_mass_ogini, True, False, True),
    "wig": _Criterion(_mass_wig, True, True, False),
    "ranking": _Criterion(_mass_ranking, False, False, True),
}

#: Names of the splitting criteria, in the order of docs/design.md section 3.
CRITERIA: tuple[str, ...] = tuple(_CRITERIA)


def _get(name: str) -> _Criterion:
    try:
        return _CRITERIA[name]
    except (KeyError, TypeError):
        raise ValueError(f"criterion must be one of {CRITERIA}; got {name!r}") from None


def _as_counts(counts: ArrayLike, what: str) -> NDArray[np.float64]:
    arr = np.asarray(counts, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] < 1:
        raise ValueError(f"{what} must have the classes along its last axis; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{what} must be finite and non-negative")
    return arr


def _encode(crit: _Criterion, counts: NDArray) -> NDArray:
    """The criterion's working rows of counts (classes on the first axis).

    Linear in the counts, so sums over samples and ``parent - left`` commute with
    it: the tree encodes its one-hot matrix once. Cumulative criteria use
    ``C_1..C_{K-1}, n`` (the last row is the total).
    """
    return np.cumsum(counts, axis=0) if crit.cumulative else counts


def _mass_encoded(crit: _Criterion, rows: NDArray, present: NDArray | None, power: float) -> NDArray:
    """``n * I`` (``I`` for ranking) from encoded rows (see :func:`_encode`)."""
    if crit.cumulative:
        return crit.mass_impurity(rows[:-1], rows[-1], present, power)
    n = rows[0].astype(np.float64, copy=True)
    for c in rows[1:]:
        n += c
    return crit.mass_impurity(rows, n, present, power)


def _mass(crit: _Criterion, counts: NDArray, present: NDArray | None, power: float) -> NDArray:
    """``n * I`` (``I`` for ranking) of counts with the classes on the first axis."""
    return _mass_encoded(crit, _encode(crit, counts), present, power)


def _last_to_first(arr: NDArray | None) -> NDArray | None:
    return None if arr is None else np.moveaxis(arr, -1, 0)


def impurity(
    name: str, counts: ArrayLike, *, wig_power: float = 1.0, present: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Impurity of nodes given their (weighted) class counts.

    Parameters
    ----------
    name : {"gini", "entropy", "ogini", "wig", "ranking"}
        The criterion (see :data:`trees.CRITERIA`).
    counts : array-like of shape (..., K)
        Class counts n_1..n_K of each node along the last axis, classes in
        their ordinal order.
    wig_power : float, default=1.0
        The exponent ``a`` of the ``wig`` weights.
    present : array-like of bool, broadcastable to ``counts``, optional
        For ``wig`` only: the classes over which the weights are normalised
        (by default the classes with a positive count in each node; a split
        uses the parent's classes for both children).

    Returns
    -------
    ndarray of shape (...)
        ``I(T)`` for every node; 0 for an empty node.

    Raises
    ------
    ValueError
        If ``name`` is not a known criterion or ``counts`` is negative or not
        finite.

    Notes
    -----
    docs/design.md section 3: gini ``1 - sum p_k^2``; entropy ``-sum p_k log2 p_k``;
    ogini ``sum_k F_k (1 - F_k)``; wig ``-sum_k w_k p_k log2 p_k`` with
    ``w_k = |k - m|^a / sum_{u present} |u - m|^a`` and ``m`` the node's mode
    (lowest on ties); ranking ``sum_{k<K} C_k (n - C_k)`` (in counts, not
    normalised). O(K) per node.

    Examples
    --------
    >>> from trees.criteria import impurity
    >>> float(impurity("gini", [2, 2]))
    0.5
    >>> impurity("ranking", [[1, 0, 1], [1, 1, 0]]).tolist()
    [2.0, 1.0]
    """
    crit = _get(name)
    arr = _as_counts(counts, "counts")
    mask = None if present is None else np.broadcast_to(np.asarray(present, dtype=bool), arr.shape)
    n = arr.sum(axis=-1)
    mass = _mass(crit, _last_to_first(arr), _last_to_first(mask), float(wig_power))
    if not crit.weighted:
        return mass
    return np.divide(mass, n, out=np.zeros_like(mass), where=n > 0)


def split_gain(
    name: str, left_counts: ArrayLike, right_counts: ArrayLike, *, wig_power: float = 1.0
) -> NDArray[np.float64]:
    """Score of splitting a parent ``L + R`` into ``L`` and ``R`` (maximised).

    Parameters
    ----------
    name : {"gini", "entropy", "ogini", "wig", "ranking"}
        The criterion (see :data:`trees.CRITERIA`).
    left_counts, right_counts : array-like of shape (..., K)
        Class counts of the two children, vectorised over candidate splits
        (leading axes broadcast).
    wig_power : float, default=1.0
        The exponent ``a`` of the ``wig`` weights.

    Returns
    -------
    ndarray of shape (...)
        ``I(T) - (n_L/n) I(L) - (n_R/n) I(R)`` for gini, entropy, ogini and
        wig; ``I(T) - I(L) - I(R)`` for ranking (docs/design.md section 3).

    Raises
    ------
    ValueError
        If ``name`` is unknown, the counts are negative or not finite, or the
        two count arrays have different numbers of classes.

    Notes
    -----
    For ``wig`` the weights of all three nodes are normalised over the classes
    present in the parent, and each node uses its own mode. O(K) per candidate.

    Examples
    --------
    >>> from trees.criteria import split_gain
    >>> round(float(split_gain("gini", [97, 3, 1, 2], [2, 85, 5, 6])), 6)
    0.388493
    >>> float(split_gain("ranking", [28, 20, 1, 2], [2, 5, 35, 67]))
    11326.0
    """
    crit = _get(name)
    left = _as_counts(left_counts, "left_counts")
    right = _as_counts(right_counts, "right_counts")
    if left.shape[-1] != right.shape[-1]:
        raise ValueError(
            f"left_counts and right_counts must have the same number of classes; "
            f"got {left.shape[-1]} and {right.shape[-1]}"
        )
    left, right = np.broadcast_arrays(left, right)
    parent = left + right
    power = float(wig_power)
    present = parent > 0 if crit.uses_parent_classes else None
    left, right, parent, present = (_last_to_first(a) for a in (left, right, parent, present))
    score = _mass(crit, parent, present, power) - _mass(crit, left, present, power) - _mass(crit, right, present, power)
    if not crit.weighted:
        return score
    n = parent.sum(axis=0)
    return np.divide(score, n, out=np.zeros_like(score), where=n > 0)
