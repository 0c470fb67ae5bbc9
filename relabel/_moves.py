"""Region pairs that one bounded move can join: the data's resolution in a projected space.

docs/design.md section 13, "Projected spaces". A move is described on the partition's
own axes: two points of one move differ by ``tau * step + s + e`` with ``tau`` in
``[-1, 1]``, ``|s_j| <= spread_j`` and ``|e_j| <= slack_j``. Two regions can hold the
two ends of such a move exactly when some ``tau`` puts ``tau * step_j`` within the
difference of their boxes on every axis, widened by ``spread_j + slack_j``; on an axis
that neither moves nor rounds (``step_j = spread_j = slack_j = 0``) both half-open
boxes must hold the same coordinate, so their intervals overlap with positive length.

A move whose only moving axis is a feature's own rank (``grid``: a move inside one gap
of the feature's training values, or one float step, stays inside one unit ``[k, k + 1]``
there, k an integer) joins two regions only when both widened boxes also meet one such
unit: regions two cells apart along that axis are within one unit of each other, yet no
move inside one gap reaches both (docs/design.md section 13, Lemma 13.5).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from relabel._contacts import largest_finite
from relabel._numba import compiled, float_array, index_array

__all__ = ["move_pairs"]

# Slack on tau: a quotient of two float differences is off by a relative ulp or two,
# and tau lives in [-1, 1], so 1e-9 covers it many times over.
_TAU_SLACK = 1e-9


@compiled
def _units_met(lo, hi, w):
    """The integers k (as floats, ``(first, last)``) with ``[k, k + 1]`` meeting ``[lo - w, hi + w]``, rounded outwards."""
    return np.ceil(np.nextafter(lo - w, -np.inf)) - 1.0, np.floor(np.nextafter(hi + w, np.inf))


@compiled
def _pair_moves(lo, hi, clo, chi, a, b, step, spread, slack, grid):
    """Whether some move (a row of ``step``) joins regions a and b (the module docstring's predicate)."""
    p = lo.shape[1]
    for m in range(step.shape[0]):
        tmin, tmax, ok = -1.0, 1.0, True
        for j in range(p):
            if j == grid[m]:
                # A unit of the rank axis that both widened boxes meet (the move's only moving axis); the
                # move's own reach is then tested below (for a move inside a gap, one unit: implied).
                first_a, last_a = _units_met(clo[a, j], chi[a, j], slack[j] + spread[m, j])
                first_b, last_b = _units_met(clo[b, j], chi[b, j], slack[j] + spread[m, j])
                if max(first_a, first_b) > min(last_a, last_b):
                    ok = False
                    break
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
def _joined(lo, hi, clo, chi, a, b, step, spread, slack, grid, keep_out):
    """Mark the candidate pairs (a[r], b[r]) some move joins."""
    for r in range(a.shape[0]):
        keep_out[r] = _pair_moves(lo, hi, clo, chi, a[r], b[r], step, spread, slack, grid)


def move_pairs(lower: ArrayLike, upper: ArrayLike, step: ArrayLike, spread: ArrayLike, slack: ArrayLike,
               bound_lower: ArrayLike, bound_upper: ArrayLike, *, jumps_of: ArrayLike | None = None,
               grid: ArrayLike | None = None, max_pairs: int | None = None,
               among: ArrayLike | None = None) -> NDArray[np.intp]:
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
    grid : array-like of int, shape (n_moves,), optional
        Per move, the axis of a feature's own rank when that is the move's only
        moving axis (no spread) and the move stays inside one unit ``[k, k + 1]``
        of it, which both boxes must then meet besides the step; -1 for the other
        moves (the default).
    max_pairs : int, optional
        A budget: :class:`relabel.TooManyRegionsError` once more pairs than this are
        found (the search stops there).
    among : array-like of bool, shape (n_regions,), optional
        Only the pairs with at least one region where ``among`` is True (a search
        asked from those regions alone): after a relabelling, the pairs that can have
        broken are those of the regions whose labels changed.

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
    >>> cells = np.array([[0.5], [1.5], [2.5]])  # cells (-0.5, 0.5], (0.5, 1.5], (1.5, 2.5] of a rank axis
    >>> move_pairs(cells - 1, cells, [[1.0]], [[0.0]], [0.0], [0.0], [2.0]).tolist()  # 0 -> 2: 1 unit apart
    [[0, 1], [0, 2], [1, 2]]
    >>> move_pairs(cells - 1, cells, [[1.0]], [[0.0]], [0.0], [0.0], [2.0], grid=[0]).tolist()  # no unit meets both
    [[0, 1], [1, 2]]
    """
    lo, hi = float_array(lower), float_array(upper)
    step = float_array(np.atleast_2d(step))
    spread = float_array(np.atleast_2d(spread))
    slack = float_array(slack)
    blo, bhi = np.asarray(bound_lower, dtype=np.float64), np.asarray(bound_upper, dtype=np.float64)
    labels = np.empty(0, np.int64) if jumps_of is None else np.ascontiguousarray(jumps_of, dtype=np.int64)
    grid = np.full(step.shape[0], -1, np.int64) if grid is None else np.ascontiguousarray(grid, dtype=np.int64)
    # Only the part of a region the moves can reach counts; one wholly outside is dropped.
    reached = np.all((hi >= blo) & (lo <= bhi), axis=1)
    keep = np.flatnonzero(reached)
    clo = float_array(np.maximum(lo, blo)[keep])
    chi = float_array(np.minimum(hi, bhi)[keep])
    lo, hi = lo[keep], hi[keep]
    if labels.shape[0]:
        labels = np.ascontiguousarray(labels[keep])
    askers = None
    if among is not None:
        askers = np.asarray(among, dtype=bool)
        if askers.shape != (reached.shape[0],):
            raise ValueError(f"among must hold one bool per region ({reached.shape[0]}); got shape {askers.shape}")
        askers = askers[keep]
        if not askers.any():
            return np.empty((0, 2), np.intp)
    # Differences of bounds round too: an ulp of the largest finite bound per axis, generously.
    widened = float_array(np.where(slack > 0, slack + 8 * 2.0**-53 * largest_finite(clo, chi), slack))
    if step.shape[0] == 0 or keep.shape[0] == 0:
        return np.empty((0, 2), np.intp)
    moved = np.where((step == 0) & (spread == 0) & (widened == 0), 0.0, np.abs(step) + spread + widened)
    # Candidates: the regions whose clipped closed boxes lie within the largest reach of every
    # move on every axis (the r-neighbours of adjacency_edges, a guillotine search, which also
    # drops pairs on their labels), a superset of the pairs; then the predicate itself on each
    # as it is found, and only the pairs it keeps are sorted.
    from relabel._adjacency import near_pairs_where

    def joined(a, b):
        keep_out = np.empty(a.shape[0], dtype=np.bool_)
        _joined(lo, hi, clo, chi, index_array(a), index_array(b), step, spread, widened, grid, keep_out)
        return keep_out

    # No aliases: the slack covers the snapping. A box clipped to a point on an axis (a
    # constant score: one class) is widened by a float, which keeps the search a superset.
    pairs = near_pairs_where(np.where(chi > clo, clo, np.nextafter(chi, -np.inf)), chi, moved.max(axis=0), joined,
                             jumps_of=None if labels.shape[0] == 0 else labels, max_pairs=max_pairs,
                             among=askers)
    # ``keep`` increases: the pairs stay distinct and sorted.
    return keep[pairs].astype(np.intp)
