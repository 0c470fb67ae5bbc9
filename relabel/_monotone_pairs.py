"""Monotone pairs of a box partition: the face contacts along a constrained feature, lower region first."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from relabel._adjacency import _bounds_of, _touching_pairs
from relabel._contacts import _face_flags
from relabel._features import check_monotonic_cst

__all__ = ["monotone_pairs"]


def monotone_pairs(partition: Any, monotonic_cst: Any, *, categorical_features: Any = None) -> NDArray[np.intp]:
    """Ordered region pairs ``(n, m)`` that a monotone labelling must keep: label(n) <= label(m).

    Parameters
    ----------
    partition : FusedPartition
        Regions as boxes (``lower``, ``upper`` of shape (N, d)).
    monotonic_cst : array-like of shape (d,)
        +1 (increasing), -1 (decreasing) or 0 (free) per feature, scikit-learn's
        convention (see :func:`check_monotonic_cst`).
    categorical_features : optional
        Mask or indices of the categorical features, only to refuse constraining one.

    Returns
    -------
    ndarray of shape (P, 2), intp
        For every face contact along a constrained feature f between n and m with m
        above n (``upper_n[f] == lower_m[f]``): ``(n, m)`` when the constraint is +1,
        ``(m, n)`` when it is -1. Unique rows, sorted.

    Raises
    ------
    ValueError
        If ``monotonic_cst`` is invalid (its message names ``monotonic_cst``) or the
        bounds are malformed.

    Notes
    -----
    docs/design.md section 4b. Face contacts suffice: with half-open boxes an axis-parallel
    segment crosses a chain of boxes whose consecutive members share a face of positive
    measure, so these pairs order the labels along every line parallel to f. The faces
    are found by the per-axis search of :func:`adjacency_edges`, on the constrained
    axes only: O(d (N + P) depth). Aliases of vanished float slivers (see
    :func:`fuse`) add the face contacts of their image, as in :func:`adjacency_edges`.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from relabel import monotone_pairs
    >>> inf = np.inf  # four quadrants around the origin
    >>> part = SimpleNamespace(lower=np.array([[-inf, -inf], [0, -inf], [-inf, 0], [0, 0]]),
    ...                        upper=np.array([[0, 0], [inf, 0], [0, inf], [inf, inf]]))
    >>> monotone_pairs(part, [1, 0]).tolist()  # increasing in x0: left <= right
    [[0, 1], [2, 3]]
    >>> monotone_pairs(part, [0, -1]).tolist()  # decreasing in x1: top <= bottom
    [[2, 0], [3, 1]]
    """
    lower, upper = _bounds_of(partition)
    n_features = lower.shape[1]
    cst = check_monotonic_cst(monotonic_cst, n_features, categorical_features)
    axes = np.flatnonzero(cst)
    no_categorical = np.zeros(n_features, dtype=bool)
    a, b, _, axis = _touching_pairs(lower, upper, face_only=True, max_edges=None,
                                    categorical=no_categorical, axes=axes.tolist())
    up = cst[axis] > 0
    low = np.where(up, a, b)
    high = np.where(up, b, a)
    extra = _alias_monotone(partition, lower, upper, cst)
    if extra is not None:
        low = np.concatenate((low, extra[0]))
        high = np.concatenate((high, extra[1]))
    if low.shape[0] == 0:
        return np.zeros((0, 2), dtype=np.intp)
    n = max(lower.shape[0], 1)
    keys = np.unique(low.astype(np.int64) * n + high)
    return np.column_stack((keys // n, keys % n)).astype(np.intp)


def _alias_monotone(partition, lower, upper, cst):
    """Face contacts of the loose sliver images along constrained axes, as ordered pairs (or None)."""
    images = getattr(partition, "alias_images", None)
    if images is None or images[2].shape[0] == 0:
        return None
    img_lo, img_hi, target = images
    lows, highs = [], []
    for i in range(target.shape[0]):
        lo_i = np.broadcast_to(img_lo[i], lower.shape)
        hi_i = np.broadcast_to(img_hi[i], upper.shape)
        face = _face_flags(lo_i, hi_i, lower, upper)
        for f in np.flatnonzero(cst):
            above = face & (hi_i[:, f] == lower[:, f])  # the region lies above the image on f
            below = face & (upper[:, f] == lo_i[:, f])
            for others, image_is_low in ((np.flatnonzero(above), True), (np.flatnonzero(below), False)):
                others = others[others != target[i]]
                t = np.full(others.shape[0], target[i], dtype=np.intp)
                increasing = (cst[f] > 0) == image_is_low
                lows.append(t if increasing else others)
                highs.append(others if increasing else t)
    if not lows:
        return None
    return np.concatenate(lows).astype(np.intp), np.concatenate(highs).astype(np.intp)
