"""Region pairs that one bounded move can join: the data's resolution in a projected space.

docs/design.md section 13, "Projected spaces". A move is described on the partition's
own axes: two points of one move differ by ``tau * step + s + e`` with ``tau`` in
``[-1, 1]``, ``|s_j| <= spread_j`` and ``|e_j| <= slack_j``. Two regions can hold the
two ends of such a move exactly when some ``tau`` puts ``tau * step_j`` within the
difference of their boxes on every axis, widened by ``spread_j + slack_j``; on an axis
that neither moves nor rounds (``step_j = spread_j = slack_j = 0``) both half-open
boxes must hold the same coordinate, so their intervals overlap with positive length.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from relabel._numba import compiled, float_array

__all__ = ["move_pairs", "unique_pairs"]

# Slack on tau: a quotient of two float differences is off by a relative ulp or two,
# and tau lives in [-1, 1], so 1e-9 covers it many times over.
_TAU_SLACK = 1e-9


@compiled
def _pair_moves(lo, hi, clo, chi, a, b, step, spread, slack):
    """Whether some move (a row of ``step``) joins regions a and b (the module docstring's predicate)."""
    p = lo.shape[1]
    for m in range(step.shape[0]):
        tmin, tmax, ok = -1.0, 1.0, True
        for j in range(p):
            if step[m, j] == 0.0 and spread[m, j] == 0.0 and slack[j] == 0.0:
                # Both half-open intervals hold the one coordinate the move keeps.
                if max(lo[a, j], lo[b, j]) >= min(hi[a, j], hi[b, j]):
                    ok = False
                    break
                continue
            low = clo[b, j] - chi[a, j] - slack[j] - spread[m, j]
            high = chi[b, j] - clo[a, j] + slack[j] + spread[m, j]
            if step[m, j] == 0.0:
                if low > 0.0 or high < 0.0:
                    ok = False
                    break
                continue
            if step[m, j] > 0.0:
                t0, t1 = low / step[m, j], high / step[m, j]
            else:
                t0, t1 = high / step[m, j], low / step[m, j]
            tmin, tmax = max(tmin, t0), min(tmax, t1)
            if tmin > tmax + _TAU_SLACK:
                ok = False
                break
        if ok:
            return True
    return False


@compiled
def _pairs_of_moves(lo, hi, clo, chi, order, sweep, reach, step, spread, slack, labels, out_a, out_b):
    """Every pair some move joins, by a sweep along axis ``sweep`` (pairs farther than ``reach`` apart there never are)."""
    n = lo.shape[0]
    n_out = 0
    for ia in range(n):
        a = order[ia]
        limit = chi[a, sweep] + reach
        for ib in range(ia + 1, n):
            b = order[ib]
            if clo[b, sweep] > limit:
                break
            if labels.shape[0] and abs(labels[a] - labels[b]) < 2:
                continue
            if _pair_moves(lo, hi, clo, chi, a, b, step, spread, slack):
                if n_out == out_a.shape[0]:
                    return n_out, False
                out_a[n_out] = min(a, b)
                out_b[n_out] = max(a, b)
                n_out += 1
    return n_out, True


def move_pairs(lower: ArrayLike, upper: ArrayLike, step: ArrayLike, spread: ArrayLike, slack: ArrayLike,
               bound_lower: ArrayLike, bound_upper: ArrayLike, *, jumps_of: ArrayLike | None = None) -> NDArray[np.intp]:
    """Pairs of regions (half-open boxes) that some move of some row of ``step`` joins.

    Parameters
    ----------
    lower, upper : array-like of shape (n_regions, n_axes)
        The regions' boxes ``lower < z <= upper``.
    step, spread : array-like of shape (n_moves, n_axes)
        Per move, its direction per unit of ``tau`` in ``[-1, 1]`` and the free spread on top.
    slack : array-like of shape (n_axes,)
        Float error allowed between the two ends of any move (with the snapping of
        the partition's bounds). Closed intervals are compared where it or the move
        is nonzero.
    bound_lower, bound_upper : array-like of shape (n_axes,)
        Every point a move can reach lies in this box (``-inf``/``inf`` where not bounded):
        a region outside it is never reached, and only its part inside counts.
    jumps_of : array-like of int, optional
        Region labels: only the pairs whose labels differ by two or more are kept
        (a certificate's question: none, when the labelling is consistent).

    Returns
    -------
    ndarray of shape (n_pairs, 2)
        Distinct pairs ``(a, b)``, ``a < b``, sorted.

    Examples
    --------
    >>> import numpy as np
    >>> lower = np.array([[0.0], [1.0], [3.0]]); upper = np.array([[1.0], [3.0], [4.0]])
    >>> move_pairs(lower, upper, [[1.5]], [[0.0]], [0.0], [0.0], [4.0]).tolist()  # 0 -> 2 needs 2 units
    [[0, 1], [1, 2]]
    >>> move_pairs(lower, upper, [[2.5]], [[0.0]], [0.0], [0.0], [4.0]).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    lo, hi = float_array(lower), float_array(upper)
    step = float_array(np.atleast_2d(step))
    spread = float_array(np.atleast_2d(spread))
    slack = float_array(slack)
    blo, bhi = np.asarray(bound_lower, dtype=np.float64), np.asarray(bound_upper, dtype=np.float64)
    labels = np.empty(0, np.int64) if jumps_of is None else np.ascontiguousarray(jumps_of, dtype=np.int64)
    # Only the part of a region the moves can reach counts; one wholly outside is dropped.
    reached = np.all((hi >= blo) & (lo <= bhi), axis=1)
    keep = np.flatnonzero(reached)
    clo = float_array(np.maximum(lo, blo)[keep])
    chi = float_array(np.minimum(hi, bhi)[keep])
    lo, hi = lo[keep], hi[keep]
    if labels.shape[0]:
        labels = np.ascontiguousarray(labels[keep])
    # Differences of bounds round too: an ulp of the largest finite bound per axis, generously.
    finite = np.where(np.isfinite(clo), np.abs(clo), 0.0).max(axis=0, initial=0.0)
    finite = np.maximum(finite, np.where(np.isfinite(chi), np.abs(chi), 0.0).max(axis=0, initial=0.0))
    widened = float_array(np.where(slack > 0, slack + 8 * 2.0**-53 * finite, slack))
    if step.shape[0] == 0 or keep.shape[0] == 0:
        return np.empty((0, 2), np.intp)
    moved = np.where((step == 0) & (spread == 0) & (widened == 0), 0.0, np.abs(step) + spread + widened)
    reach = moved.max(axis=0)
    # Sweep along the axis where a region meets the fewest others within reach: the shortest
    # mean length (plus reach) relative to the regions' span. Unbounded axes never.
    with np.errstate(invalid="ignore"):
        span = chi.max(axis=0) - clo.min(axis=0)
        cost = np.where(np.isfinite(span) & (span > 0), np.mean(chi - clo, axis=0) + reach, np.inf) / np.where(
            np.isfinite(span) & (span > 0), span, 1.0)
    sweep = int(np.argmin(cost)) if np.isfinite(cost).any() else 0
    order = np.argsort(clo[:, sweep], kind="stable").astype(np.int64)
    capacity = max(1024, 8 * keep.shape[0])
    while True:
        out_a = np.empty(capacity, np.int64)
        out_b = np.empty(capacity, np.int64)
        n_out, complete = _pairs_of_moves(lo, hi, clo, chi, order, sweep, float(reach[sweep]), step, spread,
                                          widened, labels, out_a, out_b)
        if complete:
            break
        capacity *= 4
    found = [np.column_stack([out_a[:n_out], out_b[:n_out]])]
    return unique_pairs(keep[np.concatenate(found)])


def unique_pairs(pairs: NDArray) -> NDArray[np.intp]:
    """Distinct rows ``(a, b)`` (``a < b``) of ``pairs``, sorted (one integer key per row: ``np.unique``
    with ``axis=0`` sorts rows as structured records, tens of times slower)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if pairs.shape[0] == 0:
        return np.empty((0, 2), np.intp)
    n = int(pairs.max()) + 1
    keys = np.unique(pairs[:, 0] * n + pairs[:, 1])
    return np.column_stack([keys // n, keys % n]).astype(np.intp)
