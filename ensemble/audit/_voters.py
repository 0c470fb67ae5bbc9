"""A sufficient proof for votes: voters each consistent at the notion make a consistent vote.

Every notion the audit decides is a relation on pairs of points (x, y) "close" to each
other: pointwise (both near one point p, so the boxes holding them have closures that
meet at p), at a resolution r, or at the data's resolution (pointwise, or one feature
moved inside one gap of its training values). If every voter's classes at x and y differ
by at most one, so do the lower median's (an order statistic moves by at most the largest
move of its arguments) and the rounded mean's (the mean moves by at most one, and
``floor(s + 1/2)`` by at most one when ``s`` does): docs/design.md section 14.

So a vote is proved when, for every voter, no two of its boxes that the notion relates
carry labels two or more apart. The check below reads the boxes and labels the audit
read (not the models' certificates) and tests every such pair, pruning candidates one
axis at a time. It is sufficient, not necessary: a vote of inconsistent voters may still
be consistent, and the audit's other methods then decide it.
"""

from __future__ import annotations

from types import SimpleNamespace

import time

import numpy as np
from numpy.typing import NDArray

__all__ = ["voters_proof", "far_pair"]

_PAIRS_PER_BLOCK = 1_000_000


def _next_above(values: list | None, upper: NDArray, movable: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Per box and feature: the smallest training value strictly above its upper end (+inf past the
    last, where the feature has no values, or on a category)."""
    out = np.full(upper.shape, np.inf)
    if values is None:
        return out
    for f in np.flatnonzero(movable):
        v = values[f]
        if v is None or v.shape[0] == 0:
            continue
        k = np.searchsorted(v, upper[:, f], side="right")
        out[:, f] = np.where(k < v.shape[0], v[np.minimum(k, v.shape[0] - 1)], np.inf)
    return out


def _axis(lo_a, up_a, lo_b, up_b, nxt_a, nxt_b, movable: bool, notion: str, r_f: float):
    """On one axis: pointwise (or r-) closeness, no open overlap, and "a move inside one gap" (arrays
    broadcast together)."""
    start = np.maximum(lo_a, lo_b)
    gap = start - np.minimum(up_a, up_b)  # < 0: open overlap, 0: closures meet
    if movable:
        ok = gap <= 0.0
        if notion == "resolution" and r_f > 0:
            ok |= gap < r_f
    else:  # a category keeps its cell
        ok = gap < 0.0
    apart = gap >= 0.0
    step = None
    if notion == "data" and movable:  # one gap: the upper box starts below the next value above the lower's top
        step = apart & (start < np.where(up_a <= up_b, nxt_a, nxt_b))
    return ok, apart, step


def _close(lo, up, nxt, rows, T, movable, notion, r, axes) -> tuple[NDArray, NDArray]:
    """Candidate pairs (I[k], J[k]) of boxes in ``rows`` x ``T`` the notion relates.

    The first axis is compared as a dense block (no index arrays); the pairs it keeps are then
    pruned one axis at a time.
    """
    rf = (lambda f: float(r[f]) if r is not None else 0.0)
    f = axes[0]
    ok, apart, step = _axis(lo[rows, f][:, None], up[rows, f][:, None], lo[T, f][None, :], up[T, f][None, :],
                            nxt[rows, f][:, None], nxt[T, f][None, :], bool(movable[f]), notion, rf(f))
    line = (~apart | step) if step is not None else ~apart if notion == "data" else np.zeros_like(ok)
    i, j = np.nonzero(ok | line)
    near, line, moved = ok[i, j], line[i, j], apart[i, j]
    I, J = rows[i], T[j]
    for f in axes[1:]:
        if I.shape[0] == 0:
            break
        ok, apart, step = _axis(lo[I, f], up[I, f], lo[J, f], up[J, f], nxt[I, f], nxt[J, f], bool(movable[f]),
                                notion, rf(f))
        near &= ok
        if notion == "data":
            line &= ~apart | (step & ~moved) if step is not None else ~apart
            moved |= apart
        keep = near | line
        I, J, near, line, moved = I[keep], J[keep], near[keep], line[keep], moved[keep]
    return I, J


def far_pair(lower: NDArray, upper: NDArray, labels: NDArray, movable: NDArray[np.bool_], notion: str,
             r: NDArray | None = None, values: list | None = None,
             deadline: float = float("inf")) -> tuple[int, int] | None:
    """Two boxes the notion relates whose labels are two or more apart, or None.

    Raises TimeoutError when ``deadline`` (a ``time.perf_counter()`` value) passes before the
    search ends: neither answer is known then.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_boxes, n_features)
        Half-open boxes ``lower < x <= upper`` partitioning the space.
    labels : ndarray of int, shape (n_boxes,)
        Class index of every box.
    movable : ndarray of bool, shape (n_features,)
        False on categorical features (a point keeps its category).
    notion : {"pointwise", "resolution", "data"}
        ``"data"`` needs ``values`` (sorted training values per feature, None where unknown).
    r : ndarray, optional
        Resolution per feature for ``notion="resolution"``.
    deadline : float, optional
        ``time.perf_counter()`` value past which the search gives up (checked between blocks).

    Examples
    --------
    >>> import numpy as np
    >>> lo = np.array([[-np.inf], [0.0], [1.0]]); up = np.array([[0.0], [1.0], [np.inf]])
    >>> far_pair(lo, up, np.array([0, 1, 2]), np.array([True]), "pointwise") is None
    True
    >>> far_pair(lo, up, np.array([0, 2, 1]), np.array([True]), "pointwise")
    (0, 1)
    """
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape[0] < 2 or labels.max() - labels.min() < 2:
        return None
    nxt = _next_above(values if notion == "data" else None, upper, movable)
    # Axes cut most often first: they prune the most candidate pairs.
    cuts = [np.unique(np.concatenate((lower[:, f], upper[:, f]))).shape[0] for f in range(lower.shape[1])]
    axes = np.argsort(cuts)[::-1]
    for a in range(int(labels.min()), int(labels.max()) - 1):
        S, T = np.flatnonzero(labels == a), np.flatnonzero(labels >= a + 2)
        if S.shape[0] == 0 or T.shape[0] == 0:
            continue
        block = max(1, _PAIRS_PER_BLOCK // T.shape[0])
        for s in range(0, S.shape[0], block):
            if time.perf_counter() > deadline:
                raise TimeoutError("far_pair: the deadline passed before the pair search ended")
            I, J = _close(lower, upper, nxt, S[s:s + block], T, movable, notion, r, axes)
            if I.shape[0]:
                return int(I[0]), int(J[0])
    return None


def _voter_jump_on_grid(comp, labels: NDArray, movable, notion, r, values) -> int | None:
    """The voter's largest jump at ``notion`` on the grid of its own thresholds (exact), or None when
    that grid is larger than the pair search would be."""
    from ensemble.audit._grid import grid_audit, grid_size
    from ensemble.audit._read import _thresholds

    d = comp.lower.shape[1]
    thresholds = _thresholds([comp], d)
    cells = grid_size(thresholds)
    R = comp.lower.shape[0]
    if d > 6 or cells > 2_000_000 or cells * 3.0 ** d > 4.0 * R * R:
        return None
    voter = SimpleNamespace(thresholds=thresholds, categorical=~movable)
    out = grid_audit(voter, notion, r, values if values is not None else [None] * d, None,
                     lambda P: labels[(comp.own_apply or comp.apply)(P)], comp.grid_labels)
    return int(out["jump"])


def voters_proof(reading, notion: str, r: NDArray | None, values: list | None,
                 deadline: float = float("inf")) -> bool:
    """True when every voter of a lower-median or rounded-mean vote is consistent at ``notion``.

    False as well when ``deadline`` (a ``time.perf_counter()`` value) passes first: not proved.

    Each voter is decided exactly, on the grid of its own thresholds when that is small, else by
    :func:`far_pair` over its boxes. A voter in a projected space of its own is decided there,
    pointwise only: the map from x is continuous, so points near one point of x map near one
    point of the space (docs/design.md section 14).
    """
    from ensemble.base._voting import VOTES

    if reading.vote is None or not VOTES[reading.vote].keeps_consistency or reading.labels is None:
        return False
    if notion == "data" and values is None:
        return False
    if reading.projected and notion != "pointwise":  # a move of one feature is a curve in a voter's space
        return False
    movables = reading.voter_movable or [~reading.categorical] * len(reading.components)
    if reading.projected:
        values = None  # the training values are values of x, not of the voters' spaces
    for comp, lab, movable in zip(reading.components, reading.labels, movables, strict=True):
        if time.perf_counter() > deadline:
            return False
        lab = np.asarray(lab, dtype=np.int64)
        if lab.shape[0] < 2 or lab.max() - lab.min() < 2:
            continue
        jump = _voter_jump_on_grid(comp, lab, movable, notion, r, values)
        if jump is None:
            try:
                if far_pair(comp.lower, comp.upper, lab, movable, notion, r, values, deadline) is not None:
                    return False
            except TimeoutError:
                return False
        elif jump >= 2:
            return False
    return True
