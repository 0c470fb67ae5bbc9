"""Moves of one feature inside one gap of its training values, as a projected group space sees them.

A projected group space (PLS, additive or kernel score, monotone index) reads every
continuous feature through its *rank map* (:class:`RankMap`): the training values
``v_0 < ... < v_{m-1}`` go to ``0, ..., m - 1``, linearly in between and constant
beyond both ends. Every gap of the data's resolution is then one unit long, so a move
of one feature inside one gap moves the group's point ``z`` by at most a fixed vector
per feature (:func:`space_moves`), and the float evaluation of the map stays within a
bound computed from the fitted space (docs/design.md section 13, "Projected spaces").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ensemble.spaces._rank_map import EPS, RankMap

__all__ = ["SpaceMoves", "affine_bounds", "gap_swing", "move_edges", "move_search", "space_moves", "with_ranks"]


def gap_swing(score, i: int, top: float) -> float:
    """The largest change of an additive score's curve ``g_i`` inside one rank gap ``[k, k + 1]``, k < ``top``.

    For a score read on ranks (docs/design.md section 13): on each gap the extremes of
    every cubic piece it meets (the gap's ends, the pieces' ends, the roots of the
    derivative), plus a margin of 1e-9 of the largest coefficient for their rounding.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble.spaces._spaces import _additive_score
    >>> X = np.repeat(np.arange(5.0), 20)[:, None]; y = (X[:, 0] > 2).astype(int)
    >>> score = _additive_score(X, y, np.arange(100), np.array([0]), np.ones(100), on_ranks=True)
    >>> bool(0 < gap_swing(score, 0, 4) <= 1.0)
    True
    """
    from scipy.interpolate import PPoly

    t = score.knots[i]
    if top < 1 or t[-1] <= t[0]:
        return 0.0
    poly = PPoly.from_spline((np.array(t), np.array(score.coefs[i]), 3))
    edges = np.clip(np.arange(top + 1.0) / score.scale[i] - score.center[i], t[0], t[-1])
    roots = poly.derivative().roots(extrapolate=False)
    points = np.unique(np.concatenate([edges, t, roots[np.isfinite(roots)]]))
    points = points[(points >= t[0]) & (points <= t[-1])]
    values = np.concatenate([poly(points)] * 2)
    # A point inside a gap belongs to it; an end of gaps to the gap below and the gap above.
    gaps = np.concatenate([np.searchsorted(edges, points, side="left") - 1,
                           np.searchsorted(edges, points, side="right") - 1]).clip(0, int(top) - 1)
    high, low = np.full(int(top), -np.inf), np.full(int(top), np.inf)
    np.maximum.at(high, gaps, values)
    np.minimum.at(low, gaps, values)
    swing = np.where(np.isfinite(high) & np.isfinite(low), high - low, 0.0)
    return float(np.max(swing, initial=0.0)) + 1e-9 * float(np.max(np.abs(score.coefs[i]), initial=1.0))


def with_ranks(score, ranks: RankMap):
    """A score fitted on ``ranks``' ranks, reading its features through them (an additive one keeps its swings)."""
    from dataclasses import replace

    from ensemble.spaces._spaces import AdditiveScore

    if not isinstance(score, AdditiveScore):
        return replace(score, ranks=ranks)
    sizes = ranks.size_by_feature()
    swings = [gap_swing(score, i, sizes.get(int(f), 1.0) - 1.0) for i, f in enumerate(score.features)]
    return replace(score, ranks=ranks, swings=np.array(swings))


@dataclass(frozen=True)
class SpaceMoves:
    """What a move of one feature inside one gap does to a group's point ``z`` (docs/design.md section 13).

    For every moving feature (row ``i``), two float points ``z, z'`` of one such move
    satisfy ``z' - z = tau * step[i] + s + e`` with ``tau`` in ``[-1, 1]``,
    ``|s_j| <= spread[i, j]`` and ``|e_j| <= slack[j]`` on every axis ``j``.

    Attributes
    ----------
    features : ndarray of int
        The features whose moves change ``z``.
    step : ndarray of shape (n_moves, n_axes)
        How far ``z`` moves per rank unit of the feature along every axis (exact map).
    spread : ndarray of shape (n_moves, n_axes)
        How far a score axis may move, either way, on top (a curve inside one gap).
    slack : ndarray of shape (n_axes,)
        Twice the float evaluation's largest error on every axis (0 where ``z`` is
        a feature's own rank or value, computed without rounding).
    lower, upper : ndarray of shape (n_axes,)
        Every float ``z`` the map can give lies in ``[lower, upper]`` (infinite on
        axes it does not bound: kept categorical features).
    grid : ndarray of int, shape (n_moves,), optional
        Per move, the axis of the feature's own rank when that is all the move
        changes (inside one gap, or by one float step, it then stays inside one
        unit ``[k, k + 1]`` of that axis, Lemma 13.5); -1 otherwise.
    """

    features: NDArray[np.intp]
    step: NDArray[np.float64]
    spread: NDArray[np.float64]
    slack: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    grid: NDArray[np.intp] | None = None


def affine_bounds(space, low: NDArray[np.float64], high: NDArray[np.float64]) -> tuple:
    """Per component: (largest |term| sum, float error bound) of ``offset + sum_i fl(u_i) W_ij``.

    ``u_i = q_i / s_i - c_i`` for inputs ``q_i`` of the projected features within
    ``[low_i, high_i]`` (ranks in ``[0, m - 1]``, or values clipped to their range).
    """
    scale, center = space._scale, space._center
    U = np.maximum(np.abs(low / scale - center), np.abs(high / scale - center))
    magnitude = np.abs(space.offset) + U @ np.abs(space.weights)
    n = space.projected.shape[0]
    # Each term rounds twice (the centring, the product) and n + 1 additions follow: a
    # classical bound gamma_(n + 3), doubled for the terms of second order.
    return magnitude, 2.0 * (n + 3) * EPS * magnitude * (1 + 1e-6)


def _score_bounds(score, sizes_of) -> tuple:
    """(low, high, float error bound, largest swing inside one rank gap, the argument's rounding) of a score.

    The last two per feature: a move inside one gap moves the score by at most their sum.
    """
    from ensemble.spaces._spaces import AdditiveScore

    n = score.features.shape[0]
    if isinstance(score, AdditiveScore):
        top = [float(np.max(np.abs(c), initial=0.0)) for c in score.coefs]
        ends = [float(max(abs(t[0]), abs(t[-1]))) for t in score.knots]
        slopes = score.lipschitz() * score.scale  # per unit of the scaled column
        low = score.intercept + sum(float(np.min(c, initial=0.0)) for c in score.coefs)
        high = score.intercept + sum(float(np.max(c, initial=0.0)) for c in score.coefs)
        # Sums of n curves (gamma_(n + 3) on the magnitudes), de Boor's evaluation of each
        # (a convex combination of its coefficients: 32 roundings of the largest, generously),
        # and the rounded argument x / s - c (an ulp of the knots' span through the slope).
        error = 2.0 * (n + 3) * EPS * (abs(score.intercept) + sum(top)) + sum(
            32 * EPS * t + 4 * EPS * e * s for t, e, s in zip(top, ends, slopes, strict=True))
        # The curve's largest swing inside one rank gap (exact extremes of its cubic pieces); the
        # argument's two ends round by an ulp each, worth at most the slope times that.
        if score.swings is not None:
            swings = score.swings
        else:
            swings = np.array([gap_swing(score, i, sizes_of(f) - 1.0) for i, f in enumerate(score.features)])
        return low, high, error * (1 + 1e-6), swings, 4 * EPS * np.array(ends) * slopes
    total = float(np.sum(np.abs(score.coefs)))
    gamma, p, L = float(score.gamma), n, score.coefs.shape[0]
    tops = np.array([sizes_of(f) - 1.0 for f in score.features])
    # Error of each standardised coordinate t_f = ((q / s - c) - mu) / sigma: three roundings.
    delta = 4 * EPS * (tops / score.scale + np.abs(score.center) + np.abs(score.mean)) / score.std
    # Each kernel: exp's own error, the squared distance's roundings (relative, through
    # gamma d exp(-gamma d) <= 1/e) and the coordinates' errors (through the peak slope
    # sqrt(gamma / (2e)) of exp(-gamma u^2)); then L + 1 additions.
    per_kernel = 3 * EPS + (2 * p + 4) * EPS + 2.0 * np.sqrt(gamma) * float(np.sum(delta))
    error = 2.0 * ((L + 3) * EPS * (abs(score.intercept) + total) + total * per_kernel)
    peak = np.sqrt(2.0 * gamma / np.e) * total
    return score.intercept - total, score.intercept + total, error * (1 + 1e-6), score.lipschitz() * (1 + 1e-9), \
        2 * peak * delta


def space_moves(space, ranks: RankMap, categorical: NDArray[np.bool_] | None, reach: str = "gap") -> SpaceMoves:
    """The moves of every continuous feature a projected, rank-mapped group space reads.

    ``categorical``: per feature of the group's input (missing-value indicators
    included), whether it is a category (no move of it is small). ``reach``:
    ``"gap"``, a move anywhere inside one gap of the training values (one rank unit:
    the data's resolution); ``"float"``, one float step (the pointwise notion, exact
    in floats: :meth:`RankMap.float_reach` rank units).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemble.spaces._spaces import GroupSpace
    >>> ranks = RankMap(np.array([0, 1]), (np.arange(5.0), np.arange(3.0)))
    >>> space = GroupSpace(np.array([0, 1]), np.array([[1.0], [2.0]]), np.zeros(1), np.empty(0, np.intp),
    ...                    np.ones(2), np.zeros(2), ranks=ranks)
    >>> moves = space_moves(space, ranks, None)
    >>> moves.features.tolist(), moves.step.tolist()
    ([0, 1], [[1.0], [2.0]])
    """
    n_axes = space.n_components + space.kept.shape[0]
    sizes = ranks.size_by_feature()

    def size_of(f) -> float:
        return sizes.get(int(f), 1.0)

    lower, upper = np.full(n_axes, -np.inf), np.full(n_axes, np.inf)
    slack = np.zeros(n_axes)
    k = space.n_components
    if k:
        tops = np.array([size_of(f) - 1.0 for f in space.projected])
        magnitude, error = affine_bounds(space, np.zeros_like(tops), tops)
        lower[:k], upper[:k] = space.offset - magnitude - error, space.offset + magnitude + error
        slack[:k] = 2.0 * error
    score_spread = {}
    rho = dict(zip(ranks.features.tolist(), ranks.float_reach().tolist(), strict=True))
    if space.additive is not None:
        low, high, error, swing, rounding = _score_bounds(space.additive, size_of)
        lower[0], upper[0], slack[0] = low - error, high + error, 2.0 * error
        if reach == "float":
            # One float step covers rho_f of a gap: the curve moves at most its slope times that.
            share = np.array([rho.get(int(f), 1.0) for f in space.additive.features])
            swing = np.minimum(swing, space.additive.lipschitz() * (1 + 1e-9) * share)
        spread = swing + rounding
        score_spread = dict(zip(space.additive.features.tolist(), spread.tolist(), strict=True))
    for i, f in enumerate(space.kept):
        if int(f) in sizes:  # a continuous kept feature: its own rank, exact
            lower[k + i], upper[k + i] = 0.0, sizes[int(f)] - 1.0
    moving = set(int(f) for f in ranks.features)
    if categorical is not None:
        moving -= set(np.flatnonzero(categorical).tolist())
    features, steps, spreads, grid = [], [], [], []
    for f in sorted(moving):
        if size_of(f) <= 1:
            continue
        step, spread = np.zeros(n_axes), np.zeros(n_axes)
        hit = np.flatnonzero(space.projected == f)
        if k and hit.shape[0]:
            step[:k] = space.weights[hit[0]] / space._scale[hit[0]]
        if f in score_spread:
            spread[0] = score_spread[f]
        step[k:][space.kept == f] = 1.0
        if reach == "float":
            step = step * rho.get(f, 1.0)
        if np.any(step) or np.any(spread):
            features.append(f)
            steps.append(step)
            spreads.append(spread)
            # Only its own rank moves, inside one gap (one float step too): the move stays in one unit of it.
            own = np.flatnonzero(step)
            grid.append(int(own[0]) if own.shape[0] == 1 and own[0] >= k and not np.any(spread) and f in sizes
                        and space.kept[own[0] - k] == f else -1)
    shape = (len(features), n_axes)
    return SpaceMoves(np.asarray(features, dtype=np.intp),
                      np.asarray(steps, dtype=np.float64).reshape(shape),
                      np.asarray(spreads, dtype=np.float64).reshape(shape), slack, lower, upper,
                      np.asarray(grid, dtype=np.intp))


def snap_reach(trees: list, n_axes: int) -> NDArray[np.float64]:
    """Per axis, how far fusion's snapping moved any of the trees' thresholds (docs/design.md section 4c).

    A point of a raw leaf intersection lies within this distance of its region's
    (or its alias region's) snapped box, on every axis.
    """
    import relabel
    from ensemble.certificates._certificates import tree_nodes

    values = [[] for _ in range(n_axes)]
    for tree in trees:
        left, _, feature, threshold, _ = tree_nodes(tree)
        inner = np.asarray(left) >= 0
        for j, t in zip(np.asarray(feature)[inner], np.asarray(threshold)[inner], strict=True):
            values[j].append(t)
    out = np.zeros(n_axes)
    for j, v in enumerate(values):
        if v:
            distinct, snapped = relabel.snap_table(np.asarray(v, dtype=np.float64))
            out[j] = float(np.max(snapped - distinct, initial=0.0))
    return out


def move_search(trees: list, space, categorical: NDArray[np.bool_] | None, *, reach: str = "gap",
                snapped: bool = True) -> Callable[..., NDArray[np.intp]]:
    """:func:`move_edges` of one group, its moves and slack computed once: ``search(partition, **options)``.

    A relabelling that asks for the broken pairs round by round asks the same group's moves
    each time (on winequality-red's groups the moves and the snapping's reach were a quarter of
    the search). ``options``: those of :func:`move_edges` after ``snapped``.
    """
    import relabel

    moves = space_moves(space, space.ranks, categorical, reach)
    slack = moves.slack.copy()
    if snapped:
        slack += 2.0 * snap_reach(trees, moves.slack.shape[0])

    def search(partition, *, jumps_of: NDArray | None = None, max_pairs: int | None = None,
               among: NDArray[np.bool_] | None = None) -> NDArray[np.intp]:
        if moves.features.shape[0] == 0 or partition.n_regions == 0:
            return np.empty((0, 2), np.intp)
        return relabel.move_pairs(partition.lower, partition.upper, moves.step, moves.spread, slack,
                                  moves.lower, moves.upper, jumps_of=jumps_of, grid=moves.grid,
                                  max_pairs=max_pairs, among=among)

    return search


def move_edges(partition, trees: list, space, categorical: NDArray[np.bool_] | None, *, reach: str = "gap",
               jumps_of: NDArray | None = None, snapped: bool = True,
               max_pairs: int | None = None, among: NDArray[np.bool_] | None = None) -> NDArray[np.intp]:
    """The region pairs of a rank-mapped group's partition that a move inside one gap can join.

    Theorem 13.3 of docs/design.md: with these pairs among its edges, a labelling
    consistent on every closure contact is consistent at the data's resolution in the
    features, in floats (``reach="float"``: pointwise, one float step of one feature).
    ``jumps_of``: only the pairs whose labels are two or more apart (the certificate's
    question). ``snapped``: the partition's bounds were snapped by fusion. ``max_pairs``:
    :class:`relabel.TooManyRegionsError` past that many pairs. ``among``: only the pairs with a
    region where it is True (:func:`relabel.move_pairs`).
    """
    return move_search(trees, space, categorical, reach=reach, snapped=snapped)(
        partition, jumps_of=jumps_of, max_pairs=max_pairs, among=among)
